"""A module written from a class `Cache` (the template), one more part, and a use of the cache's
length that is reported when it may be a tensor; and the codes the engine reports in it. The
must-stay-silent and must-report tables of one fact share the template and differ in that part."""

from __future__ import annotations

import textwrap

from lint_rules.engine import analyze_source
from lint_rules.findings import Finding

COUNTER_CACHE = """\
    import torch


    class Cache:
        def __init__(self):
            self.n = 0

        def update(self, keys, q_len: int):
            self.n += q_len
            return keys

        def get_seq_length(self, layer_idx=0):
            return self.n
"""
"""A cache whose length is an int counter, `n`."""
USE = """

def trim(ids, cache: Cache):
    return ids[:, cache.get_seq_length():]
"""


def codes_with(template: str, more: str) -> list[str]:
    return [finding.code for finding in findings_in(textwrap.dedent(template) + textwrap.dedent(more) + USE)]


def findings_in(text: str) -> list[Finding]:
    return analyze_source(text, "m.py")
