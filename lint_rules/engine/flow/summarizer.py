"""What each same-module function does with what it is given and what it gives back.

A function's summary comes from one walk of it with every parameter seeded as its own origin:
- `parameter_uses`: the parameters that reach an int use (directly or through further calls), with
  that use: a tainted argument for one of them is a finding at the caller's argument;
- `parameters_returned`: the parameters whose value reaches a `return`;
- `returns_source`: a source's value reaches a `return`, so each call of the function is a source.

Summaries are computed on demand, once per function, cycle-safe (a function still being walked has
an empty summary) and bounded in depth.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_text import lines_mentioning
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.summary import EMPTY, Summary
from lint_rules.engine.flow.taint import Origin, ParameterOrigin
from lint_rules.engine.flow.uses import Use
from lint_rules.engine.flow.walker import FunctionWalker

MAX_DEPTH = 8
DISCOVERY_ROUNDS = 4
SELF_RECURSION_PASSES = 3


class Summaries:
    def __init__(self, run: ModuleRun, source_functions: frozenset[str] = frozenset()) -> None:
        self.run = run
        self.source_functions = source_functions
        """Names of the module's functions known to return a source's value."""
        self._done: dict[tuple[int, bool], Summary] = {}
        self._provisional: dict[tuple[int, bool], Summary] = {}
        """The last summary of a self-recursive function still being settled."""
        self._active: list[tuple[tuple[int, bool], set[tuple[int, bool] | None]]] = []
        """The summaries being computed, outermost first, each with the unfinished ones it read
        (None: the depth limit cut it short)."""

    def of(self, definition: Definition, seeded: bool = False) -> Summary:
        """The function's summary; `seeded`: with its parameters as origins (for `parameter_uses` and
        `parameters_returned`), else with its own sources only (for its findings and `returns_source`).

        A summary that read an unfinished one (a call cycle) or was cut by the depth limit is not
        kept, so no answer depends on the order in which functions are asked about; a function
        that only calls itself is walked again with its first summary until the summary settles.
        """
        key = (id(definition.node), seeded)
        if key in self._done:
            return self._done[key]
        if any(active == key for active, _ in self._active) or len(self._active) >= MAX_DEPTH:
            for _, reads in self._active:
                reads.add(key if len(self._active) < MAX_DEPTH else None)
            return self.provisional(key)
        return self.compute(definition, key, seeded)

    def compute(self, definition: Definition, key: tuple[int, bool], seeded: bool) -> Summary:
        scope = self.run.function_scope(definition)
        for _ in range(SELF_RECURSION_PASSES):
            reads: set[tuple[int, bool] | None] = set()
            self._active.append((key, reads))
            try:
                summary = summarize(scope, self.run, seeded)
            finally:
                self._active.pop()
            if reads != {key}:
                break
            previous = self._provisional.get(key)
            settled = previous is not None and previous.signature == summary.signature
            self._provisional[key] = summary
            if settled:
                break
        self._provisional.pop(key, None)
        if reads <= {key}:
            self._done[key] = summary
        return summary

    def provisional(self, key: tuple[int, bool]) -> Summary:
        return self._provisional.get(key, EMPTY)

    def callees(self, call: ast.Call, caller: Scope) -> list[Definition]:
        found = self.run.facts.calls.callees(call, caller.definition, with_overrides=False)
        return [callee for callee in found if callee.is_function]

    def returns_source(self, callee: Definition) -> bool:
        """Calls of `callee` are sources: its result comes from one (checked for functions that
        mention a source or are known to return one)."""
        return self.run.may_return_a_source(callee, self.source_functions) and self.of(callee).returns_source

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
        names = set(positional) | {argument.arg for argument in node.args.kwonlyargs}
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
                and self.of(definition).returns_source
            }
            if not new:
                break
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
