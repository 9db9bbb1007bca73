"""Functions that call each other: their summaries settle together, once (`summarizer.settle`).

Before, a summary that read one still being computed was never kept, so every caller walked the
cycle again: a module of functions that all call each other cost exponentially many walks
(pydantic's schema generator, `_generate_schema.py`, with `--source-methods get`: some 59,000 walks,
34 s for one file).
"""

from __future__ import annotations

import gc
import textwrap
import weakref
from typing import Any

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.flow import summarizer
from lint_rules.engine.flow.call_cycles import CallCycles


def codes(code: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in analyze_source(textwrap.dedent(code), "m.py")]


def fully_connected(count: int) -> str:
    """`f0` hands a length to a cycle of `count` functions that all call each other; `f{count-1}`
    slices with it."""
    lines = ["def entry(cache, x):", "    return f0(x, cache.get_seq_length(), 0)", ""]
    for index in range(count):
        others = [other for other in range(count) if other != index]
        lines += [f"def f{index}(x, n, depth):", "    if depth > 9:"]
        lines += ["        return x[:n]" if index == count - 1 else "        return x"]
        lines += [f"    y = f{other}(x, n, depth + 1)" for other in others]
        lines += ["    return y", ""]
    return "\n".join(lines)


def walks_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each function walked from now on (`summarizer.summarize` counted)."""
    walks: list[str] = []
    summarize = summarizer.summarize

    def counted(scope: summarizer.Scope, run: summarizer.ModuleRun, seeded: bool) -> summarizer.Summary:
        walks.append(scope.name)
        return summarize(scope, run, seeded)

    monkeypatch.setattr(summarizer, "summarize", counted)
    return walks


def test_a_cycle_of_functions_calling_each_other_is_walked_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walks = walks_counted(monkeypatch)
    count = 7
    assert codes(fully_connected(count)) == [(2, "SLG002")]
    # 23 walks: the entry, then each function a few times. Walking the cycle again for every
    # caller took 12, 34, 132, 654 and 3,916 walks for 3 to 7 functions.
    assert len(walks) <= 4 * count, len(walks)


def test_a_length_that_goes_round_the_cycle_before_its_use_is_reported() -> None:
    """`a` passes `n` to `b`, `b` to `c`, and only `c`, when called back from `a`, slices with it."""
    assert codes(
        """
        def start(cache, x):
            return a(x, cache.get_seq_length(), 0)

        def a(x, n, k):
            return b(x, n, k + 1) if k < 3 else c(x, n, k)

        def b(x, n, k):
            return a(x, n, k + 1)

        def c(x, n, k):
            return x[:n]
        """
    ) == [(3, "SLG002")]


def test_a_cycle_that_never_uses_its_length_stays_silent() -> None:
    """The same cycle without the slice: nothing round it uses `n` as an int."""
    assert not codes(
        """
        def start(cache, x):
            return a(x, cache.get_seq_length(), 0)

        def a(x, n, k):
            return b(x, n, k + 1) if k < 3 else x

        def b(x, n, k):
            return a(x, n, k + 1)
        """
    )


def test_a_source_returned_through_mutual_recursion_is_found_whichever_function_comes_first() -> None:
    first = """
        def outer(cache, depth):
            return cache.get_seq_length() if depth == 0 else inner(cache, depth - 1)

        def inner(cache, depth):
            return outer(cache, depth)
    """
    second = """
        def inner(cache, depth):
            return outer(cache, depth)

        def outer(cache, depth):
            return cache.get_seq_length() if depth == 0 else inner(cache, depth - 1)
    """
    use = """
        def run(cache, x):
            n = inner(cache, 2)
            return x[:n]
    """
    assert [code for _, code in codes(first + use)] == [code for _, code in codes(second + use)] == ["SLG002"]


def test_cycles_are_the_strongly_connected_functions() -> None:
    """A calls B, B calls A and C, C calls itself, D calls A: {A, B} and {C} are cycles, D is in none."""

    class Node:
        def __init__(self, name: str) -> None:
            self.node = self
            self.name = name

    a, b, c, d = (Node(name) for name in "ABCD")
    calls = {a: [b], b: [a, c], c: [c], d: [a]}
    cycles, callees_of = CallCycles(), lambda definition: calls[definition]
    assert cycles.cycle_of(d, callees_of) == frozenset()  # type: ignore[arg-type]
    assert cycles.cycle_of(a, callees_of) == cycles.cycle_of(b, callees_of) == {id(a), id(b)}  # type: ignore[arg-type]
    assert cycles.cycle_of(c, callees_of) == frozenset({id(c)})  # type: ignore[arg-type]


def test_a_long_chain_of_calls_is_found_without_exhausting_the_stack() -> None:
    class Node:
        def __init__(self) -> None:
            self.node = self

    chain = [Node() for _ in range(5000)]
    following = {
        id(node): [chain[index + 1]] if index + 1 < len(chain) else [chain[0]] for index, node in enumerate(chain)
    }
    assert len(CallCycles().cycle_of(chain[0], lambda definition: following[id(definition)])) == len(chain)  # type: ignore[arg-type]


def test_the_summaries_are_freed_without_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run lets go of its summaries when its findings are made (`ModuleRun.release`), and they
    hold nothing that points back at them: one reference cycle through them (the cycle finder
    keeping a bound method of the summaries) kept every module's tree alive until the collector's
    rare full pass, and cost the whole-tree check 13% more instructions."""
    made: list[weakref.ref[summarizer.Summaries]] = []
    init = summarizer.Summaries.__init__

    def recorded(self: summarizer.Summaries, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(summarizer.Summaries, "__init__", recorded)
    gc.disable()
    try:
        assert [code for _, code in codes(fully_connected(3))] == ["SLG002"]
        assert made and all(reference() is None for reference in made)
    finally:
        gc.enable()


def chain(count: int) -> str:
    """`entry` hands a length to `f0`, each `f{i}` hands it on to the next, the last back to `f0`;
    only the last slices with it."""
    lines = ["def entry(cache, x):", "    return f0(x, cache.get_seq_length(), 0)", ""]
    for index in range(count):
        lines += [f"def f{index}(x, n, k):"]
        lines += ["    if k > 3:", "        return x[:n]"] if index == count - 1 else []
        lines += [f"    return f{(index + 1) % count}(x, n, k + 1)", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("count", [2, 5, 7, summarizer.MAX_DEPTH, 12, 40])
def test_a_use_at_the_far_end_of_a_cycle_reaches_its_first_caller(count: int) -> None:
    """The settling walks the functions asked last (the callees) first, so that a use found at the far
    end reaches the first caller within the passes. A cycle longer than `MAX_DEPTH` nested walks is
    closed where the depth cuts the walk (8, 12 and 40 functions were silent before)."""
    assert codes(chain(count)) == [(2, "SLG002")]


def test_a_long_chain_that_is_no_cycle_is_still_cut_at_the_depth() -> None:
    """Twenty functions each handing the length on to the next, the last slicing with it, and no
    call back: no cycle to settle, so the walk stops at `MAX_DEPTH` as before (silent, docs/limits.md)."""
    lines = ["def entry(cache, x):", "    return f0(x, cache.get_seq_length())", ""]
    for index in range(20):
        body = "    return x[:n]" if index == 19 else f"    return f{index + 1}(x, n)"
        lines += [f"def f{index}(x, n):", body, ""]
    assert codes("\n".join(lines)) == []


def test_a_long_cycle_is_walked_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forty functions in one ring: each walked a few times, not once per depth it was reached at."""
    walks = walks_counted(monkeypatch)
    assert codes(chain(40)) == [(2, "SLG002")]
    assert len(walks) <= 5 * 40, len(walks)
