"""What each same-module function does with what it is given and what it gives back.

A function's summary comes from one walk of it with every parameter seeded as its own origin:
- `parameter_uses`: the parameters that reach an int use (directly or through further calls), with
  that use: a tainted argument for one of them is a finding at the caller's argument;
- `parameters_returned`: the parameters whose value reaches a `return`;
- `returns_source`: a source's value reaches a `return`, so each call of the function is a source.

Summaries are computed on demand, once per function; the functions of a call cycle together, until
their summaries settle (a function still being walked has an empty summary at first), also a cycle
longer than the depth allows, closed where the depth cuts its walk. They are bounded: in depth, and
in the walks a module's summaries may take in all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_text import lines_mentioning
from lint_rules.engine.flow.call_cycles import CallCycles
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.summary import EMPTY, Signature, Summary
from lint_rules.engine.flow.taint import Origin, ParameterOrigin
from lint_rules.engine.flow.uses import Use
from lint_rules.engine.flow.walker import FunctionWalker

MAX_DEPTH = 8
MAX_SETTLING_PASSES = 6
WALKS = 400
WALKS_PER_DEFINITION = 8
"""The walks of callees one module's summaries take, `WALKS` and as many per module- and class-level
definition, before a callee not summarized yet is cut short like one beyond `MAX_DEPTH`: a bound
that real code never meets (the released packages of benchmarks/real_code.py take at most 19 walks
in a module), so that no module's cost grows beyond its size times the passes of its cycles."""
DISCOVERY_ROUNDS = 4

Key = tuple[int, bool]
"""A summary's function (its node's id) and whether its parameters are seeded."""


class ActiveWalk(NamedTuple):
    key: Key
    definition: Definition
    reads: set[Key | None]
    """The unfinished summaries the walk read (None: the depth limit or the budget of walks cut one
    short)."""


class SettlingCycle(NamedTuple):
    """A call cycle whose summaries are being settled together."""

    members: frozenset[int]
    """The node ids of its functions (`CallCycles`)."""
    root: Key
    root_definition: Definition
    depth: int
    """Where the root's walk stands among the active ones: the walks at or above it read the cycle's
    unsettled summaries."""
    keys: dict[Key, Definition]
    """The summaries asked of the cycle so far, in order."""


class Summaries:
    def __init__(self, run: ModuleRun, source_functions: frozenset[str] = frozenset()) -> None:
        self.run = run
        self.source_functions = source_functions
        """Names of the module's functions known to return a source's value."""
        self._done: dict[Key, Summary] = {}
        self._settling: dict[Key, Summary] = {}
        """The latest summary of each function of a cycle being settled."""
        self._cycles: list[SettlingCycle] = []
        self._active: list[ActiveWalk] = []
        """The summaries being computed, outermost first."""
        self.call_cycles = CallCycles()
        self.walks = 0

    def of(self, definition: Definition, seeded: bool = False) -> Summary:
        """The function's summary; `seeded`: with its parameters as origins (for `parameter_uses` and
        `parameters_returned`), else with its own sources only (for its findings and `returns_source`).

        The functions of a call cycle are summarized together: once a walk reaches a function that is
        still being walked, every function of the cycle is walked again in turn, each reading the
        others' latest summaries, until none changes (`settle`). A summary that read an unfinished one
        outside such a settling, or was cut short, is not kept; so no answer depends on the order in
        which functions are asked about.
        """
        key = (id(definition.node), seeded)
        if key in self._done:
            return self._done[key]
        cycle = self.settling_cycle_of(definition) or self.cycle_entered(definition, key) or self.cycle_cut(definition)
        if cycle is not None:
            cycle.keys.setdefault(key, definition)
            self.mark_read(cycle.root, cycle.depth)
            return self._settling.get(key, EMPTY)
        if self.is_cut_short() or self.is_active(key):
            self.mark_read(None if self.is_cut_short() else key)
            return EMPTY
        return self.compute(definition, key)

    def is_cut_short(self) -> bool:
        """A callee asked for now is not walked: too deep, or the module's walks are spent (a function
        asked for from outside any walk, as each checked function is, is always walked)."""
        return len(self._active) >= MAX_DEPTH or (bool(self._active) and self.walks_spent())

    def walks_spent(self) -> bool:
        return self.walks >= WALKS + WALKS_PER_DEFINITION * len(self.run.facts.definitions.outer)

    def is_active(self, key: Key) -> bool:
        return any(walk.key == key for walk in self._active)

    def mark_read(self, key: Key | None, depth: int = 0) -> None:
        """The walks from `depth` up read an unfinished summary (None: a cut-short one)."""
        for walk in self._active[depth:]:
            walk.reads.add(key)

    def settling_cycle_of(self, definition: Definition) -> SettlingCycle | None:
        return next((cycle for cycle in self._cycles if id(definition.node) in cycle.members), None)

    def cycle_entered(self, definition: Definition, key: Key) -> SettlingCycle | None:
        """The cycle a walk closes by reaching a function still being walked, to be settled when the
        outermost walk of one of its functions ends."""
        if not self.is_active(key) or self.is_cut_short():
            return None
        return self.register_cycle(definition)

    def cycle_cut(self, definition: Definition) -> SettlingCycle | None:
        """The cycle a walk would close beyond `MAX_DEPTH`: a function of a cycle that an active walk
        belongs to, asked for too deep (a length handed round a cycle of eight functions or more)."""
        if len(self._active) < MAX_DEPTH or self.walks_spent():
            return None
        return self.register_cycle(definition)

    def register_cycle(self, definition: Definition) -> SettlingCycle | None:
        """The cycle of `definition`'s function, rooted at the outermost active walk of one of its
        functions, with the active walks of its functions as its first summaries."""
        members = self.call_cycles.cycle_of(definition, self.called_functions)
        for depth, walk in enumerate(self._active):
            if walk.key[0] in members:
                keys = {active.key: active.definition for active in self._active[depth:] if active.key[0] in members}
                cycle = SettlingCycle(members, walk.key, walk.definition, depth, keys)
                self._cycles.append(cycle)
                return cycle
        return None

    def compute(self, definition: Definition, key: Key) -> Summary:
        summary, reads = self.walk(definition, key)
        rooted_here = (cycle for cycle in self._cycles if cycle.root == key and cycle.depth == len(self._active))
        cycle = next(rooted_here, None)
        if cycle is not None:
            return self.settle(cycle, summary)
        if not reads:
            self._done[key] = summary
        return summary

    def walk(self, definition: Definition, key: Key) -> tuple[Summary, set[Key | None]]:
        reads: set[Key | None] = set()
        self._active.append(ActiveWalk(key, definition, reads))
        self.walks += 1
        try:
            return summarize(self.run.function_scope(definition), self.run, key[1]), reads
        finally:
            self._active.pop()
            self.forget_cycles_above(len(self._active))

    def forget_cycles_above(self, depth: int) -> None:
        """Drops the cycles whose root walk ended without settling them (an exception went through)."""
        for cycle in [cycle for cycle in self._cycles if cycle.depth > depth]:
            self.forget(cycle)
            for key in cycle.keys:
                self._settling.pop(key, None)

    def forget(self, cycle: SettlingCycle) -> None:
        self._cycles = [other for other in self._cycles if other is not cycle]

    def settle(self, cycle: SettlingCycle, first: Summary) -> Summary:
        """Walks every summary asked of the cycle in turn, each reading the others' latest, until a
        pass asks for no new one and changes nothing a caller sees; keeps them when they settled
        within `MAX_SETTLING_PASSES` and no walk read anything but the cycle's own summaries."""
        self._settling[cycle.root] = first
        cycle.keys.setdefault(cycle.root, cycle.root_definition)
        kept = settled = False
        for _ in range(MAX_SETTLING_PASSES):
            before = self.signatures(cycle)
            kept, complete = self.walk_pass(cycle)
            settled = complete and before == self.signatures(cycle)
            if settled or not complete:
                break
        self.forget(cycle)
        summaries = {key: self._settling.pop(key, EMPTY) for key in cycle.keys}
        if kept and settled:
            self._done.update(summaries)
        else:
            self.mark_read(cycle.root)  # what its callers make of an unsettled summary is not kept either
        return summaries[cycle.root]

    def walk_pass(self, cycle: SettlingCycle) -> tuple[bool, bool]:
        """One pass over the cycle's summaries: those asked last (the callees) first, then those the
        pass asks for anew, until it asks for none. Whether every walk read only the cycle's own
        summaries, and whether the pass ended before the module's walks were spent."""
        walked: set[Key] = set()
        kept = True
        while True:
            pending = [(key, definition) for key, definition in reversed(list(cycle.keys.items())) if key not in walked]
            if not pending:
                return kept, True
            for key, definition in pending:
                if self.walks_spent():
                    return kept, False
                walked.add(key)
                self._settling[key], reads = self.walk(definition, key)
                kept = kept and reads <= {cycle.root}

    def signatures(self, cycle: SettlingCycle) -> dict[Key, Signature]:
        return {key: self._settling.get(key, EMPTY).signature for key in cycle.keys}

    def callees(self, call: ast.Call, caller: Scope) -> list[Definition]:
        return self.functions_called(call, self.run.calling_definition(caller))

    def functions_called(self, call: ast.Call, caller: Definition | None) -> list[Definition]:
        found = self.run.facts.calls.callees(call, caller, with_overrides=False)
        return [callee for callee in found if callee.is_function]

    def called_functions(self, definition: Definition) -> list[Definition]:
        """What the calls written in a function (those in its nested functions too) may run: the
        edges of `CallCycles`."""
        calls = (node for node in ast.walk(definition.node) if isinstance(node, ast.Call))
        found = {id(callee.node): callee for call in calls for callee in self.functions_called(call, definition)}
        return list(found.values())

    def returns_source(self, callee: Definition) -> bool:
        """Calls of `callee` are sources: its result comes from one (checked for functions that
        mention a source or are known to return one)."""
        return self.run.may_return_a_source(callee, self.source_functions) and self.of(callee).returns_source

    def shares_source(self, callee: Definition) -> frozenset[str]:
        """The names a call of `callee` may bind to a source's value through its `nonlocal` or `global`
        declarations (checked for functions that mention a source or are known to return one)."""
        if not self.run.may_return_a_source(callee, self.source_functions):
            return frozenset()
        return self.of(callee).shares_source

    def bind_arguments(self, call: ast.Call, callee: Definition) -> list[tuple[ast.expr, str]]:
        """(argument, parameter name) for the arguments that `call` passes to `callee`'s parameters."""
        node = callee.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        positional = [argument.arg for argument in [*node.args.posonlyargs, *node.args.args]]
        if binds_first_parameter(call, callee, self.run.facts.definitions.classes):
            positional = positional[1:]
        pairs: list[tuple[ast.expr, str]] = []
        for argument, parameter in zip(call.args, positional, strict=False):
            if isinstance(argument, ast.Starred):
                break
            pairs.append((argument, parameter))
        keywords = [
            *node.args.args,
            *node.args.kwonlyargs,
        ]  # a positional-only name given by keyword goes to `**kwargs`
        names = {argument.arg for argument in keywords} & {*positional, *(arg.arg for arg in node.args.kwonlyargs)}
        pairs += [(keyword.value, keyword.arg) for keyword in call.keywords if keyword.arg in names]
        return pairs

    def discover_source_functions(self) -> frozenset[str]:
        """Names of the functions that return a source's value, followed through calls to a fixed point."""
        found: set[str] = set()
        candidates = [scope.definition for scope in self.run.scopes_to_walk() if scope.definition]
        for _ in range(DISCOVERY_ROUNDS):
            new = {
                definition.name
                for definition in candidates
                if definition.is_function
                and not self.run.function_scope(definition).is_source_definition
                and definition.name not in found
                and (self.of(definition).returns_source or bool(self.of(definition).shares_source))
            }
            if not new:
                break
            aliases = self.run.facts.definitions.function_aliases
            new |= {alias for alias, functions in aliases.items() if functions & new and alias not in found}
            found |= new
            self.source_functions = frozenset(found)
            candidates = list(self.functions_mentioning(new))
        return frozenset(found)

    def functions_mentioning(self, names: set[str]) -> Iterator[Definition]:
        seen: set[int] = set()
        for line in lines_mentioning(self.run.facts.source.text, sorted(names), whole_words=True):
            definition = self.run.facts.definitions.innermost_function_at(line)
            if definition is not None and id(definition) not in seen:
                seen.add(id(definition))
                self._done.pop((id(definition.node), False), None)  # walk it again, knowing the new sources
                yield definition


def summarize(scope: Scope, run: ModuleRun, seeded: bool) -> Summary:
    walker = FunctionWalker(scope, run)
    walker.seeded = seeded
    walker.walk()
    parameter_uses: dict[str, Use] = {}
    for use in sorted(walker.uses.found.values(), key=lambda use: getattr(use.node, "lineno", 0)):
        if isinstance(use.origin, ParameterOrigin):
            parameter_uses.setdefault(use.origin.name, use)
    returned = walker.returned
    return Summary(
        uses=tuple(walker.uses.found.values()),
        parameter_uses=parameter_uses,
        parameters_returned=frozenset(origin.name for origin in returned if isinstance(origin, ParameterOrigin)),
        returns_source=any(isinstance(origin, Origin) for origin in returned) and not scope.is_source_definition,
        shares_source=frozenset(walker.shared_sources),
    )


def binds_first_parameter(call: ast.Call, callee: Definition, classes: Mapping[str, ast.ClassDef]) -> bool:
    """A method called through an instance (`self.m(...)`, `obj.m(...)`, `C(...)` for `__init__`) or a
    class method called through its class gets its first parameter bound; a static method, a plain
    function and an instance method called through its class (`C.m(obj, ...)`) do not."""
    if callee.enclosing_class is None:
        return False
    decorators = {ex.dotted_name(decorator) for decorator in callee.node.decorator_list}
    if "staticmethod" in decorators:
        return False
    if "classmethod" in decorators:
        return isinstance(call.func, ast.Attribute)
    if not isinstance(call.func, ast.Attribute):
        return callee.name == "__init__"
    receiver = call.func.value
    return not (isinstance(receiver, ast.Name) and receiver.id in classes)
