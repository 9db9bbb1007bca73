"""A name bound to a test stands for it (`ok = isinstance(c, DynamicCache) and ...`; `if ok:` narrows
as the test would) only while nothing the test reads is rebound, and never for a test that reads the
name itself. `is_batched = is_batched or (isinstance(audio, list) and ...)` made narrowing by the
name expand the name again, until Python's recursion limit: the file's analysis ended in an internal
error and all its findings were lost (a stress run over the venv's site-packages, 2026-12-05: four
files of numpy, torch and transformers)."""

from __future__ import annotations

from lint_rules.engine import analyze_source

SELF_REFERENCE = """\
import torch
from transformers import StaticCache


def prefill(cache, ids, is_static=False):
    is_static = is_static or (cache is not None and isinstance(cache, StaticCache))
    if is_static:
        return ids
    n = cache.get_seq_length()
    return ids[:, n:]
"""

MUTUAL = """\
import torch
from transformers import StaticCache


def prefill(cache, ids, a=False, b=False):
    a = b or isinstance(cache, StaticCache)
    b = a or (cache is not None and isinstance(cache, StaticCache))
    if a and b:
        return ids
    n = cache.get_seq_length()
    return ids[:, n:]
"""


def test_a_flag_that_reads_its_own_name_is_analyzed() -> None:
    assert [finding.code for finding in analyze_source(SELF_REFERENCE, "m.py")] == ["SLG002"]


def test_flags_that_read_each_other_are_analyzed() -> None:
    assert [finding.code for finding in analyze_source(MUTUAL, "m.py")] == ["SLG002"]


OWN_CLASS_FLAG = """\
import torch


class CountingCache:
    def get_seq_length(self, layer_idx=0):
        return 0


def prefill(cache, ids, ready):
    ok = ready and isinstance(cache, CountingCache)
    {between}
    if ok:
        return ids[:, cache.get_seq_length():]
    return ids
"""


def test_a_flag_still_narrows_while_what_it_reads_is_unchanged() -> None:
    """The flag of a test about the cache decides the branch: the module's class counts an int."""
    assert analyze_source(OWN_CLASS_FLAG.format(between="pass"), "m.py") == []


def test_twin_a_flag_ends_when_a_name_it_reads_is_rebound() -> None:
    """`ok` no longer stands for `ready and ...` once `ready` is rebound (the narrowing of `cache` it
    gave would still hold, but a flag is kept only while its whole test is what it was)."""
    found = analyze_source(OWN_CLASS_FLAG.format(between="ready = None"), "m.py")
    assert [finding.code for finding in found] == ["SLG002"]
