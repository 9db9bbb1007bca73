"""One run's state for one module, above its read-only facts (`module_facts`): the origins found
(the registry fix planning reads), their fix plans, the summaries, the scopes and attribute kinds
computed, the lines to walk (the facts' mentions plus the functions found to return a source), the
names imported whose calls are sources, the caches the module's functions give back, and the loader
of the package's other modules."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, Definition, first_line_of
from lint_rules.engine.facts.factories import bound_only_by_its_def, returned_cache_kind
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_text import lines_mentioning
from lint_rules.engine.flow.caller_arguments import CallerArguments
from lint_rules.engine.flow.closures import closure_getters, getter_aliases, reads_any
from lint_rules.engine.flow.function_entry import class_attribute_kinds, function_scope
from lint_rules.engine.flow.never_none import text_of
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.summary import SummaryTable
from lint_rules.engine.flow.taint import Origin
from lint_rules.findings import FixPlan

ModuleLoader = Callable[[Path], "ModuleRun | None"]
"""The run of another module of the package, with its summaries (None: not readable, or too far)."""


class ModuleRun:
    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.origins: dict[int, Origin] = {}
        """Every origin of the module, by the id of its call: the other source calls of a statement."""
        self.fix_plans: dict[int, FixPlan] = {}
        """The fix plan of each origin, by the id of its call, made once (see `fixplan.origin_fix_plan`)."""
        self.summaries: SummaryTable | None = None
        self.imported_sources: frozenset[str] = frozenset()
        """Names imported from other modules of the package whose calls are sources."""
        self.load_module: ModuleLoader | None = None
        """Reads another module of the package (see `imported_calls`); None: calls into other modules
        are not followed (a module read for another one's sake, at the hop limit)."""
        self.source_lines = facts.source_lines
        """The lines to walk: those that mention a source method or a function found to return one."""
        self.receiver_classes: dict[int, tuple[dict[str, tuple[str, bool]], frozenset[str]]] = {}
        """What each function shows of its receivers' classes and the names it binds, by the id of its
        node (see `imported_methods.receiver_classes`)."""
        self.caller_arguments = CallerArguments(facts)
        """What the callers of the module's private and nested functions pass (see `caller_arguments`)."""
        self._callee_names: tuple[list[int], frozenset[str], frozenset[str]] | None = None
        self._scopes: dict[int, Scope] = {}
        self._scopes_to_walk: list[Scope] = []
        self._scopes_found_for: list[int] | None = None
        self._attribute_kinds: dict[int, dict[str, str]] = {}
        self._closure_getters: dict[int, frozenset[str]] = {}
        self._getter_aliases: dict[int, dict[str, int]] = {}
        self._returned_kinds: dict[int, str] = {}
        self._bound_by_def: dict[str, bool] = {}

    def returned_cache_kind(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The length kind of the caches a module-level function gives back (`factories`): "" where
        it may change some object's layers."""
        key = id(function)
        if key not in self._returned_kinds:
            kind = returned_cache_kind(function, self.facts.classes, text_of(function, self.facts.source))
            self._returned_kinds[key] = "" if kind and self.facts.classes.layer_changes.changed_in(function) else kind
        return self._returned_kinds[key]

    def factory_kind(self, node: ast.expr) -> str:
        """INT_LENGTH or TENSOR_LENGTH for a call of a module-level function of the module that gives
        back a new cache of that kind (`def new_cache(): return DynamicCache()`, `facts.factories`),
        its name bound only by that `def` and not rebound where it is called."""
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return ""
        name = node.func.id
        if name not in self.facts.definitions.defined_names:
            return ""
        defined = self.facts.definitions.functions_named(name)
        function = defined[0].node if len(defined) == 1 and defined[0].parent is None else None
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or defined[0].enclosing_class:
            return ""  # a method may be overridden in a subclass; a nested function is another scope's
        kind = self.returned_cache_kind(function)
        if not kind or not self.bound_only_by_its_def(name) or self.facts.classes.bound_in_a_scope(name, node):
            return ""
        return kind

    def bound_only_by_its_def(self, name: str) -> bool:
        if name not in self._bound_by_def:
            self._bound_by_def[name] = bound_only_by_its_def(self.facts.tree, self.facts.source.text, name)
        return self._bound_by_def[name]

    def mentions(self, node: ast.stmt) -> bool:
        """Whether a source method's name occurs in the lines of `node`."""
        return self.mentions_between(node.lineno, node.end_lineno or node.lineno)

    def mentions_between(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.source_lines, first)
        return index < len(self.source_lines) and self.source_lines[index] <= last

    def runs_a_mention(self, statement: ast.stmt) -> bool:
        """Whether the statement, run in its own scope, evaluates a line that mentions a source: for a
        `def` or `class` only its header counts (decorators, defaults, bases), not its body."""
        if isinstance(statement, DEFINITION_STATEMENTS):
            header_end = max(statement.lineno, statement.body[0].lineno - 1)
            return self.mentions_between(first_line_of(statement), header_end)
        return self.mentions(statement)

    def body_runs_a_mention(self, body: Sequence[ast.stmt]) -> bool:
        """Whether a statement of `body` runs a mention (`runs_a_mention`), asked only of the statements
        that hold a source line: a body has many statements and few such lines."""
        if not body:
            return False
        lines = self.source_lines
        first = bisect.bisect_left(lines, first_line_of(body[0]))
        last = bisect.bisect_right(lines, body[-1].end_lineno or body[-1].lineno)
        asked = -1
        for line in lines[first:last]:
            position = bisect.bisect_right(body, line, key=first_line_of) - 1
            if position != asked and position >= 0 and self.runs_a_mention(body[position]):
                return True
            asked = position
        return False

    def may_return_a_source(self, callee: Definition, source_functions: frozenset[str]) -> bool:
        """Whether a call of `callee` may be a source (`Summaries.returns_source` walks no other): it
        is one of `source_functions`, the functions found to return a source's value, or its lines
        mention a source."""
        return callee.name in source_functions or self.mentions(callee.node)

    def callee_names_that_may_return_a_source(self, source_functions: frozenset[str]) -> frozenset[str]:
        """The names of the callees of `may_return_a_source`, with those of the classes around them
        (and every module class, once an `__init__` returns a source: `C(...)` runs it); kept for
        the last lines to walk and functions found."""
        kept = self._callee_names
        if kept is not None and kept[0] is self.source_lines and kept[1] == source_functions:
            return kept[2]
        names = set(source_functions)
        for line in self.source_lines:
            definition = self.facts.definitions.innermost_function_at(line)
            while definition is not None:
                names.add(definition.name)
                definition = definition.parent
        if "__init__" in source_functions:
            names.update(self.facts.definitions.classes)
        self._callee_names = (self.source_lines, source_functions, frozenset(names))
        return self._callee_names[2]

    def add_mentions(self, names: Iterable[str]) -> None:
        """Also walk the scopes that mention these names (functions found to return a source)."""
        mentioned = lines_mentioning(self.facts.source.text, sorted(names), whole_words=True)
        self.source_lines = sorted({*self.source_lines, *mentioned})

    def scopes_to_walk(self) -> list[Scope]:
        """The module body and every class and function that mentions a source, outermost first
        (found once for each set of lines to walk).

        A scope whose text never names a source cannot hold a tainted value of its own: it is walked
        only if a caller passes it one (see `summarizer`).
        """
        if self._scopes_found_for is not self.source_lines:
            tree = self.facts.tree
            module = [Scope("<module>", tree, tree.body)] if self.body_runs_a_mention(tree.body) else []
            self._scopes_to_walk = module + list(self.definition_scopes(self.facts.definitions.outer))
            self._scopes_found_for = self.source_lines
        return self._scopes_to_walk

    def definition_scopes(self, definitions: list[Definition], closures: bool = False) -> Iterator[Scope]:
        """`closures`: the definitions are nested in a function, so the ones that read a bound source
        method of the functions around them (`closure_getters`) are walked too."""
        mentioning = self.definitions_holding_a_mention(definitions)
        if closures:
            mentioning |= {id(definition) for definition in definitions if self.reads_closure_getter(definition)}
        for definition in definitions:
            if id(definition) not in mentioning:
                continue
            if isinstance(definition.node, ast.ClassDef):
                if self.body_runs_a_mention(definition.node.body):
                    yield Scope(definition.qualname, definition.node, definition.node.body)
            else:
                yield self.function_scope(definition)
                yield from self.definition_scopes(self.facts.definitions.nested_in(definition), closures=True)

    def definitions_holding_a_mention(self, definitions: list[Definition]) -> set[int]:
        """The ids of the definitions whose lines hold a source line (`mentions`), found from each
        such line: the last definition starting at or before it, and the classes around that one."""
        starts, ordered = self.facts.definitions.in_line_order(definitions)
        found: set[int] = set()
        for line in self.source_lines:
            index = bisect.bisect_right(starts, line)
            around = ordered[index - 1] if index else None
            while around is not None:
                if line <= around.last_line:
                    found.add(id(around))
                around = around.parent
        return found

    def reads_closure_getter(self, definition: Definition) -> bool:
        getters = self.closure_getters(definition)
        return bool(getters) and reads_any(definition, getters)

    def closure_getters(self, definition: Definition | None) -> frozenset[str]:
        """The bound source methods the function reads from the functions around it (`closures`)."""
        if definition is None:
            return frozenset()
        key = id(definition.node)
        if key not in self._closure_getters:
            self._closure_getters[key] = closure_getters(definition, self.getter_aliases)
        return self._closure_getters[key]

    def visible_getters(self, definition: Definition | None, line: int) -> frozenset[str]:
        """What a lambda on `line` of the function reads as a bound source method besides what the walk
        knows there: the function's aliases bound on a later line (it reads their final value) and
        those it reads from the functions around it."""
        if definition is None:
            return frozenset()
        later = frozenset(name for name, last in self.getter_aliases(definition).items() if last > line)
        return later | self.closure_getters(definition)

    def getter_aliases(self, definition: Definition) -> dict[str, int]:
        key = id(definition.node)
        if key not in self._getter_aliases:
            self._getter_aliases[key] = getter_aliases(definition, self.facts)
        return self._getter_aliases[key]

    def calling_definition(self, scope: Scope) -> Definition | None:
        """The function or class whose own code a call in `scope` is written in (None: the module's)."""
        return scope.definition or self.facts.definitions.of(scope.body_owner)

    def function_scope(self, definition: Definition) -> Scope:
        key = id(definition.node)
        if key not in self._scopes:
            self._scopes[key] = function_scope(definition, self.facts, self.attribute_kinds, self.caller_arguments.kind)
        return self._scopes[key]

    def attribute_kinds(self, cls: ast.ClassDef) -> dict[str, str]:
        if id(cls) not in self._attribute_kinds:
            self._attribute_kinds[id(cls)] = class_attribute_kinds(cls, self.facts)
        return self._attribute_kinds[id(cls)]

    def release(self) -> None:
        """Lets go of what ties the run's objects into reference cycles (the summaries and the run,
        the scopes and origins and the run), so that the module's tree and all that was computed
        about it are freed as soon as the caller drops them, not at the collector's next full pass
        (which would scan every tree kept until then). For the run of the module checked, once its
        findings are made: nothing asks it again."""
        self.summaries = None
        self._scopes.clear()
        self._scopes_to_walk = []
        self._scopes_found_for = None
        self.origins.clear()
        self.fix_plans.clear()
        self._closure_getters.clear()
        self._getter_aliases.clear()
        self._returned_kinds.clear()

    def origin_for(
        self, call: ast.Call, method: str, statement: ast.stmt, scope: Scope, eager_only: bool = False
    ) -> Origin:
        origin = self.origins.get(id(call))
        if origin is None:
            origin = Origin(call, method, statement, scope, eager_only=eager_only)
            self.origins[id(call)] = origin
        return origin
