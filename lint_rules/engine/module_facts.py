"""What the whole module tells, computed once per file from its one `ast` tree: torch aliases, the
definitions, the call graph and compiled reach, class facts, the summaries, and the origins found."""

from __future__ import annotations

import ast
import bisect
import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lint_rules.engine.callgraph import CallGraph
from lint_rules.engine.classes import ClassFacts
from lint_rules.engine.definitions import Definition, DefinitionIndex, first_line_of
from lint_rules.engine.module_text import lines_mentioning, module_constants, torch_aliases
from lint_rules.engine.scope import Scope
from lint_rules.engine.scopes import class_attribute_kinds, function_scope
from lint_rules.engine.source_text import SourceText
from lint_rules.engine.taint import Origin
from lint_rules.findings import FixPlan

if TYPE_CHECKING:
    from lint_rules.engine.summaries import Summaries


ModuleLoader = Callable[[Path], "ModuleFacts | None"]
"""The facts of another module of the package, with its summaries (None: not readable, or too far)."""


class ModuleFacts:
    def __init__(self, tree: ast.Module, source: SourceText, source_methods: Sequence[str], path: str = "") -> None:
        self.path = path
        self.tree = tree
        self.source = source
        self.source_methods = frozenset(source_methods)
        self.source_lines = lines_mentioning(source.text, source_methods)
        self.torch_aliases = torch_aliases(tree)
        self.definitions = DefinitionIndex(tree, source.text)
        self.classes = ClassFacts(tree, self.source_methods, path, classes=self.definitions.classes)
        self.calls = CallGraph(tree, source.text, self.definitions, self.torch_aliases, path)
        self.origins: dict[int, Origin] = {}
        """Every origin of the module, by the id of its call: the other source calls of a statement."""
        self.fix_plans: dict[int, FixPlan] = {}
        """The fix plan of each origin, by the id of its call, made once (see `fixplan.origin_fix_plan`)."""
        self.summaries: Summaries | None = None
        self.imported_sources: frozenset[str] = frozenset()
        """Names imported from other modules of the package whose calls are sources."""
        self.load_module: ModuleLoader | None = None
        """Reads another module of the package (see `imported_calls`); None: calls into other modules
        are not followed (a module read for another one's sake, at the hop limit)."""
        self._scopes: dict[int, Scope] = {}
        self._attribute_kinds: dict[int, dict[str, str]] = {}

    def mentions(self, node: ast.stmt) -> bool:
        """Whether a source method's name occurs in the lines of `node`."""
        return self.mentions_between(node.lineno, node.end_lineno or node.lineno)

    def mentions_between(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.source_lines, first)
        return index < len(self.source_lines) and self.source_lines[index] <= last

    def runs_a_mention(self, statement: ast.stmt) -> bool:
        """Whether the statement, run in its own scope, evaluates a line that mentions a source: for a
        `def` or `class` only its header counts (decorators, defaults, bases), not its body."""
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            header_end = max(statement.lineno, statement.body[0].lineno - 1)
            return self.mentions_between(first_line_of(statement), header_end)
        return self.mentions(statement)

    def add_mentions(self, names: Iterable[str]) -> None:
        """Also walk the scopes that mention these names (functions found to return a source)."""
        mentioned = lines_mentioning(self.source.text, sorted(names), whole_words=True)
        self.source_lines = sorted({*self.source_lines, *mentioned})

    @functools.cached_property
    def constants(self) -> dict[str, object]:
        """Module names whose value is known everywhere (`DEBUG = False`): see `module_constants`."""
        return module_constants(self.tree, self.source.text)

    def function_scope(self, definition: Definition) -> Scope:
        key = id(definition.node)
        if key not in self._scopes:
            self._scopes[key] = function_scope(definition, self)
        return self._scopes[key]

    def attribute_kinds(self, cls: ast.ClassDef) -> dict[str, str]:
        if id(cls) not in self._attribute_kinds:
            self._attribute_kinds[id(cls)] = class_attribute_kinds(cls, self)
        return self._attribute_kinds[id(cls)]

    def origin_for(
        self, call: ast.Call, method: str, statement: ast.stmt, scope: Scope, eager_only: bool = False
    ) -> Origin:
        origin = self.origins.get(id(call))
        if origin is None:
            origin = Origin(call, method, statement, scope, eager_only=eager_only)
            self.origins[id(call)] = origin
        return origin
