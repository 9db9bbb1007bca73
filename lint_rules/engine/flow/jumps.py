"""The states at which control leaves a block part way, for the statements that continue from them:
a loop from its `break`s (after the loop) and `continue`s (the next pass), and a `try` or `with`
from every statement boundary of its body (an exception raised there, caught by a handler, run
through `finally` or suppressed by the context manager)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lint_rules.engine.flow.taint import State

NOT_SUPPRESSING = frozenset(
    {
        "open",
        "torch.no_grad",
        "torch.enable_grad",
        "torch.inference_mode",
        "torch.set_grad_enabled",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.cuda.amp.autocast",
        "torch.cpu.amp.autocast",
        "torch.device",
        "torch.cuda.device",
        "torch.cuda.stream",
        "torch.profiler.record_function",
        "torch.autograd.profiler.record_function",
        "warnings.catch_warnings",
    }
)
"""Context managers whose `__exit__` lets every exception through (called: `with torch.no_grad():`).
Any other may suppress one, so the code after its `with` may start from any statement boundary of
the body."""

MAX_FINALLY_DEPTH = 3
"""`finally` blocks nested in `finally` blocks this deep are walked once, from every way out (the code
after them then starts from there too): each level walks its `finally` twice."""


class LoopJumps:
    """The states at the `break`s and `continue`s of one pass over a loop's body."""

    def __init__(self) -> None:
        self.breaks: list[State] = []
        self.continues: list[State] = []


class Jumps:
    """The loops and the `try`/`with` bodies a walk is inside, innermost last."""

    def __init__(self) -> None:
        self.loops: list[LoopJumps] = []
        self.boundaries: list[list[State]] = []
        self.finally_depth = 0
        self.unbroken = 0
        """How many statements being walked raise nothing between their parts (a guard)."""

    @contextlib.contextmanager
    def loop_pass(self) -> Iterator[LoopJumps]:
        jumps = LoopJumps()
        self.loops.append(jumps)
        try:
            yield jumps
        finally:
            self.loops.pop()

    def jump(self, is_break: bool, state: State) -> None:
        if self.loops:
            jumps = self.loops[-1]
            (jumps.breaks if is_break else jumps.continues).append(state.copy())

    @contextlib.contextmanager
    def left_part_way(self) -> Iterator[list[State]]:
        """Collects the state at each statement boundary of the blocks walked inside it (theirs inside
        too: what escapes an inner `try` reaches the outer one)."""
        states: list[State] = []
        self.boundaries.append(states)
        try:
            yield states
        finally:
            self.boundaries.pop()
            if self.boundaries:
                self.boundaries[-1].extend(states)

    @contextlib.contextmanager
    def without_boundaries(self) -> Iterator[None]:
        self.unbroken += 1
        try:
            yield
        finally:
            self.unbroken -= 1

    def at_boundary(self, state: State) -> None:
        if self.boundaries and not self.unbroken:
            self.boundaries[-1].append(state.copy())

    @contextlib.contextmanager
    def in_finally(self) -> Iterator[bool]:
        """Whether a `finally` block entered here may be walked twice (see `MAX_FINALLY_DEPTH`)."""
        self.finally_depth += 1
        try:
            yield self.finally_depth <= MAX_FINALLY_DEPTH
        finally:
            self.finally_depth -= 1
