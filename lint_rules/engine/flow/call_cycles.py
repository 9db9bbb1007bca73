"""The call cycles among a module's functions: the functions that call each other, directly or
through others, by the calls written in them. `summarizer` settles the summaries of a cycle together
instead of walking it again for every caller."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lint_rules.engine.facts.definitions import Definition

CalleesOf = Callable[[Definition], list[Definition]]
"""The same-module functions a function's calls may run."""


class CallCycles:
    def __init__(self) -> None:
        self._cycle: dict[int, frozenset[int]] = {}
        """Each function found so far (by its node's id): the node ids of its cycle, empty when it is
        in none."""

    def cycle_of(self, definition: Definition, callees_of: CalleesOf) -> frozenset[int]:
        """The node ids of the functions in a cycle with `definition` (itself included), or empty
        when no call leads back to it (`callees_of` is not kept: the summaries that ask hold this)."""
        key = id(definition.node)
        if key not in self._cycle:
            for component, calls_itself in strongly_connected(definition, callees_of, self._cycle):
                cycle = frozenset(component) if len(component) > 1 or calls_itself else frozenset()
                self._cycle.update(dict.fromkeys(component, cycle))
        return self._cycle[key]


def strongly_connected(
    start: Definition, callees_of: CalleesOf, known: dict[int, frozenset[int]]
) -> Iterator[tuple[list[int], bool]]:
    """Tarjan's components of the functions reachable from `start` and not in `known` (a function
    found before cannot reach back to one found now), each with whether its one function calls
    itself; iterative, so that a long chain of calls cannot exhaust Python's stack."""
    order: dict[int, int] = {}
    lowest: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    calls_itself: set[int] = set()
    pending: list[tuple[int, Iterator[Definition]]] = []

    def enter(definition: Definition) -> None:
        key = id(definition.node)
        order[key] = lowest[key] = len(order)
        stack.append(key)
        on_stack.add(key)
        pending.append((key, iter(callees_of(definition))))

    enter(start)
    while pending:
        key, callees = pending[-1]
        callee = next(callees, None)
        if callee is not None:
            callee_key = id(callee.node)
            if callee_key == key:
                calls_itself.add(key)
            if callee_key in known:
                continue
            if callee_key not in order:
                enter(callee)
            elif callee_key in on_stack:
                lowest[key] = min(lowest[key], order[callee_key])
            continue
        pending.pop()
        if pending:
            caller = pending[-1][0]
            lowest[caller] = min(lowest[caller], lowest[key])
        if lowest[key] == order[key]:
            component: list[int] = []
            while not component or component[-1] != key:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            yield component, key in calls_itself
