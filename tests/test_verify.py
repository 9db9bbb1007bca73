"""The safety net (`fixers.verify`) on rewrites that the codemod would never produce: each must be
refused, wherever in the file the stray change sits (module, class, method, decorators, headers)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fixers.fixing import applicable_plans
from fixers.guard_text import guard_source, guarded_name
from fixers.guards import apply_plans
from fixers.verify import line_opcodes, rewrite_problem
from lint_rules.checking import check_text
from lint_rules.settings import Settings

BEFORE = textwrap.dedent(
    """
    import torch


    class Generator(
        Base,
    ):
        def untouched(self, x):
            return x

        def prefill(self, cache, input_ids):
            past_length = cache.get_seq_length()
            return input_ids[:, past_length:]

        def after(self, x):
            return x + 1
    """
).lstrip()
GUARD = "        if isinstance(past_length, torch.Tensor):\n            past_length = int(past_length.item())\n"
BINDING = "        past_length = cache.get_seq_length()\n"


def problem(new_text: str) -> str:
    plans = applicable_plans(check_text("m.py", BEFORE, Settings()).findings, False)
    assert len(plans) == 1
    return rewrite_problem(BEFORE, new_text, ast.parse(BEFORE), ast.parse(new_text), plans)


def fixed() -> str:
    plans = applicable_plans(check_text("m.py", BEFORE, Settings()).findings, False)
    return apply_plans(BEFORE, plans, ast.parse(BEFORE))


def test_the_codemod_output_is_accepted() -> None:
    assert fixed() == BEFORE.replace(BINDING, BINDING + GUARD)
    assert problem(fixed()) == ""


@pytest.mark.parametrize(
    ("where", "new_text"),
    [
        ("a statement added in the fixed method", fixed().replace(GUARD, GUARD + "        input_ids = None\n")),
        (
            "a statement added in another method",
            fixed().replace("        return x + 1\n", "        x = 0\n        return x + 1\n"),
        ),
        ("a method added to the class", fixed() + "\n    def extra(self):\n        pass\n"),
        ("a decorator added to a method", fixed().replace("    def after(", "    @staticmethod\n    def after(")),
        ("a base added to the class", fixed().replace("    Base,\n", "    Base,\n    Mixin,\n")),
        ("a guard of another name", fixed().replace(GUARD, GUARD.replace("past_length", "input_ids"))),
        ("a guard with an else", fixed().replace(GUARD, GUARD + "        else:\n            pass\n")),
        ("a guard that converts otherwise", fixed().replace(GUARD, GUARD.replace("int(", "float("))),
        ("a guard that assigns another name", fixed().replace(GUARD, GUARD.replace(" past_length = ", " n = "))),
        ("a statement added at module level", fixed() + "\nx = 1\n"),
    ],
)
def test_an_insertion_that_is_not_a_guard_is_refused(where: str, new_text: str) -> None:
    assert problem(new_text) == "the rewrite changes the code beyond the inserted guards", where


@pytest.mark.parametrize("torch_name", ["torch", "th", "torch_module"])
def test_the_guard_written_is_the_guard_recognized(torch_name: str) -> None:
    """One text for both sides: whatever module name torch has and whatever the indentation."""
    for indent in ("    ", "\t", "  "):
        guard = ast.parse(guard_source("past_length", torch_name, indent)).body[0]
        assert guarded_name(guard) == "past_length"
    assert guarded_name(ast.parse("if isinstance(n, torch.Tensor):\n    n = n.item()\n").body[0]) is None
    assert guarded_name(ast.parse("if isinstance(n, Tensor):\n    n = int(n.item())\n").body[0]) is None


def test_a_changed_original_line_is_refused() -> None:
    new_text = fixed().replace("return x\n", "return -x\n")
    assert problem(new_text) == "the rewrite changes original line 8"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nb\nc\n"),
        ("a\nb\nc\n", "a\nX\nb\nc\n"),
        ("", "x\n"),
        ("x\n", ""),
        ("b\nb\n", "b\nb\nb\n"),
        ("a\nb\nc\nd\n", "a\nB\nc\nX\nd\n"),
        ("a\r\nb", "a\r\nX\r\nb"),
    ],
)
def test_line_opcodes_are_a_diff_of_the_two_texts(old: str, new: str) -> None:
    """Matching the common first and last lines up front still gives a complete, ordered diff."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    rebuilt: list[str] = []
    old_at = new_at = 0
    for operation, old_start, old_end, new_start, new_end in line_opcodes(old, new):
        assert (old_start, new_start) == (old_at, new_at)
        if operation == "equal":
            assert old_lines[old_start:old_end] == new_lines[new_start:new_end]
        rebuilt += new_lines[new_start:new_end]
        old_at, new_at = old_end, new_end
    assert (old_at, new_at) == (len(old_lines), len(new_lines))
    assert rebuilt == new_lines
