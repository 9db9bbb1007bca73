"""What the module's tree tells, computed once per file from its one `ast` tree and never changed
after: torch aliases, the definitions, the call graph and compiled reach, class facts, module
constants and the lines that mention a source. What one run learns from them (origins, summaries,
scopes) is the run's: see `module_run`."""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence

from lint_rules.engine.callgraph import CallGraph
from lint_rules.engine.classes import ClassFacts
from lint_rules.engine.definitions import DefinitionIndex
from lint_rules.engine.imports import bound_modules
from lint_rules.engine.module_text import lines_mentioning, module_constants, torch_aliases
from lint_rules.engine.source_text import SourceText


class ModuleFacts:
    def __init__(self, tree: ast.Module, source: SourceText, source_methods: Sequence[str], path: str = "") -> None:
        self.path = path
        self.tree = tree
        self.source = source
        self.source_methods = frozenset(source_methods)
        self.source_lines = lines_mentioning(source.text, source_methods)
        """The lines that mention a source method, sorted."""
        self.torch_aliases = torch_aliases(tree)
        self.definitions = DefinitionIndex(tree, source.text)
        self.classes = ClassFacts(tree, self.source_methods, path, classes=self.definitions.classes)
        self.calls = CallGraph(tree, source.text, self.definitions, self.torch_aliases, path)

    @functools.cached_property
    def constants(self) -> dict[str, object]:
        """Module names whose value is known everywhere (`DEBUG = False`): see `module_constants`."""
        return module_constants(self.tree, self.source.text)

    @functools.cached_property
    def bound_modules(self) -> dict[str, str]:
        """Dotted local names that may name a module, for calls `m.f(...)`: see `imports.bound_modules`."""
        name, _ = self.classes.module
        return bound_modules(self.tree, name, self.path.endswith("__init__.py"))
