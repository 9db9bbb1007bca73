"""A plain name bound to `None` is None until it is rebound: `c.get_seq_length() if c is not None
else 0` and `if c is not None:` do not run the call there (colossalai's Bloom pipeline forward binds
the cache to `None` on every path before it reads the length: the second fresh-packages round,
2026-12-05). Each silent shape has its must-report twin, where `c` may hold a cache at the test."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source

HEADER = """\
import torch


def forward(input_ids, past_key_values=None, flag=False, make=None, items=()):
"""

SILENT = {
    "bound to None, then a conditional expression": """
        past_key_values = None
        n = past_key_values.get_seq_length() if past_key_values is not None else 0
        return torch.arange(n, n + input_ids.shape[1])
    """,
    "bound to None, then an `if`": """
        past_key_values = None
        n = 0
        if past_key_values is not None:
            n = past_key_values.get_seq_length()
        return input_ids[:, n:]
    """,
    "bound to None on every path": """
        if flag:
            past_key_values = None
        else:
            past_key_values = None
        if past_key_values is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "`is None` with an early return": """
        past_key_values = None
        if past_key_values is None:
            return input_ids
        return input_ids[:, past_key_values.get_seq_length():]
    """,
}

MUST_REPORT = {
    "bound to None on one path only": """
        if flag:
            past_key_values = None
        if past_key_values is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "rebound after the None": """
        past_key_values = None
        past_key_values = make()
        n = past_key_values.get_seq_length() if past_key_values is not None else 0
        return input_ids[:, n:]
    """,
    "rebound at the end of a loop body": """
        past_key_values = None
        for item in items:
            if past_key_values is not None:
                input_ids = input_ids[:, past_key_values.get_seq_length():]
            past_key_values = make(item)
        return input_ids
    """,
    "rebound by a walrus in the test": """
        past_key_values = None
        if (past_key_values := make()) is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "rebound by a nested function through `nonlocal`": """
        past_key_values = None

        def fill():
            nonlocal past_key_values
            past_key_values = make()

        fill()
        if past_key_values is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "a loop target": """
        past_key_values = None
        for past_key_values in items:
            pass
        if past_key_values is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "a `with ... as` target": """
        past_key_values = None
        with make() as past_key_values:
            pass
        if past_key_values is not None:
            return input_ids[:, past_key_values.get_seq_length():]
        return input_ids
    """,
    "an attribute bound to None (another method may set it)": """
        self = make()
        self.cache = None
        self.fill()
        if self.cache is not None:
            return input_ids[:, self.cache.get_seq_length():]
        return input_ids
    """,
}


def codes(body: str) -> list[str]:
    source = HEADER + textwrap.indent(textwrap.dedent(body), "    ")
    return [finding.code for finding in analyze_source(source, "m.py")]


@pytest.mark.parametrize("case", SILENT)
def test_must_stay_silent(case: str) -> None:
    assert codes(SILENT[case]) == []


@pytest.mark.parametrize("case", MUST_REPORT)
def test_must_report(case: str) -> None:
    assert codes(MUST_REPORT[case]), "the cache may be there at the test"
