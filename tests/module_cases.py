"""A module written from a class `Cache` (the template), one more part, and a use of the cache's
length that is reported when it may be a tensor; and the codes the engine reports in it. The
must-stay-silent and must-report tables of one fact share the template and differ in that part."""

from __future__ import annotations

import textwrap

from lint_rules.engine import analyze_source
from lint_rules.findings import Finding

USE = """

def trim(ids, cache: Cache):
    return ids[:, cache.get_seq_length():]
"""


def codes_with(template: str, more: str) -> list[str]:
    return [finding.code for finding in findings_in(textwrap.dedent(template) + textwrap.dedent(more) + USE)]


def findings_in(text: str) -> list[Finding]:
    return analyze_source(text, "m.py")
