"""Every rule's own examples are its tests: each invalid example is reported exactly on the lines
marked `# SLGnnn`, each valid example stays silent (its `why` says why it must)."""

from __future__ import annotations

import re

import pytest

from lint_rules.engine import analyze_source
from lint_rules.rules import RULES, Example, Rule

MARK = re.compile(r"# (SLG\d{3}(?:, SLG\d{3})*)$")


def expected_findings(example: Example) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(example.source.splitlines(), start=1):
        match = MARK.search(line)
        if match:
            found.extend((number, code) for code in match.group(1).split(", "))
    return sorted(found)


def reported(example: Example) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.code) for finding in analyze_source(example.source, "example.py"))


def cases(kind: str) -> list[object]:
    return [
        pytest.param(rule, example, id=f"{code}-{kind}-{index}")
        for code, rule in RULES.items()
        for index, example in enumerate(getattr(rule, kind))
    ]


@pytest.mark.parametrize(("rule", "example"), cases("invalid"))
def test_invalid_example_is_reported_where_marked(rule: Rule, example: Example) -> None:
    expected = expected_findings(example)
    assert any(code == rule.code for _, code in expected), "an invalid example must show its own rule"
    assert reported(example) == expected


@pytest.mark.parametrize(("rule", "example"), cases("valid"))
def test_valid_example_stays_silent(rule: Rule, example: Example) -> None:
    assert example.why, "a silent case says why it must stay silent"
    assert reported(example) == []


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
def test_documentation_is_complete(rule: Rule) -> None:
    for section in (rule.summary, rule.what_it_does, rule.why_bad, rule.example, rule.use_instead, rule.fix_safety):
        assert section.strip()
    assert rule.invalid and rule.valid


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
def test_documented_example_is_reported_and_its_replacement_is_not(rule: Rule) -> None:
    example = Example(f"def example(cache, input_ids, seq_length, torch):\n{indent(rule.example)}")
    replacement = Example(f"def example(cache, input_ids, seq_length, torch):\n{indent(rule.use_instead)}")
    assert rule.code in {code for _, code in reported(example)}
    assert reported(replacement) == []


def indent(code: str) -> str:
    import textwrap

    return textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", "    ")


def test_codes_are_the_fixed_five() -> None:
    assert list(RULES) == ["SLG001", "SLG002", "SLG003", "SLG004", "SLG005"]
