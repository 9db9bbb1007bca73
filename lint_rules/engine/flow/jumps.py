"""The states at which control leaves a block part way, for the statements that continue from them:
a loop from its `break`s (after the loop) and `continue`s (the next pass), and a `try` or `with`
from every statement boundary of its body (an exception raised there, caught by a handler, run
through `finally` or suppressed by the context manager)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lint_rules.engine.flow.taint import State


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

    def at_boundary(self, state: State) -> None:
        if self.boundaries:
            self.boundaries[-1].append(state.copy())
