"""Where the names of one module come from: what each top-level name is bound to (an import, a class
of the module, several bindings that may hold), the imports made inside functions, the names bound
to modules, and which of them stand for transformers' classes and modules."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from pathlib import Path

from lint_rules.engine.facts.caches import TRANSFORMERS_MODULES, WRAPPER_CLASSES, is_transformers_module
from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, statements_within
from lint_rules.engine.facts.imports import bound_modules, imported_names
from lint_rules.engine.facts.module_files import module_name_of, read_bytes
from lint_rules.engine.facts.module_text import (
    lines_mentioning,
    may_declare_globals,
    top_level_statements,
    walrus_lines,
)
from lint_rules.engine.facts.name_bindings import Binding, defined_functions, final_bindings, module_named


class ModuleNames:
    """The bindings of one module's names (read lazily, each once)."""

    def __init__(
        self,
        tree: ast.Module,
        path: str = "",
        module_name: str | None = None,
        root: Path | None = None,
        classes: dict[str, ast.ClassDef] | None = None,
        text: str | None = None,
    ) -> None:
        self.tree = tree
        self.path = path
        self.text = text
        """The module's text, when the caller has it: a cheap first look before walking statements."""
        self._module: tuple[str, Path | None] | None = (module_name, root) if module_name is not None else None
        self.classes = classes if classes is not None else module_classes(tree)
        self._imports: dict[str, tuple[str, str]] | None = None
        self._alternatives: dict[str, list[Binding]] | None = None
        self._function_imports: dict[str, tuple[str, str]] | None = None
        self._bound_modules: dict[str, str] | None = None

    @property
    def module(self) -> tuple[str, Path | None]:
        if self._module is None:
            self._module = module_name_of(self.path)
        return self._module

    def imports(self) -> dict[str, tuple[str, str]]:
        """Where each imported name comes from (the last import of a name bound more than once: a
        class's kind is asked of each of its `alternatives`)."""
        if self._imports is None:
            name, _ = self.module
            self._imports = imported_names(self.tree, name, self.path.endswith("__init__.py"))
        return self._imports

    def alternatives(self) -> dict[str, list[Binding]]:
        """The names whose bindings that may hold (`final_bindings`) are not the one class or import
        `classes` and `imports` name: bound in more than one way, or last by something else."""
        if self._alternatives is None:
            name, _ = self.module
            text = self.own_text()
            is_package = self.path.endswith("__init__.py")
            may_declare = True if text is None else may_declare_globals(text)
            walrus = None if text is None else walrus_lines(text)
            final = final_bindings(self.tree, name, is_package, may_declare, walrus)
            functions = defined_functions(self.tree) if final else frozenset()
            self._alternatives = {
                local: list(held) for local, held in final.items() if not self.is_plain(local, held, functions)
            }
        return self._alternatives

    def own_text(self) -> str | bytes | None:
        """The caller's text, else the file's; None where neither can be read (anything may be in it)."""
        if self.text is not None:
            return self.text
        try:
            return read_bytes(self.path) if self.path else None
        except OSError:
            return None

    def is_plain(self, name: str, held: tuple[Binding, ...], functions: frozenset[str]) -> bool:
        """The one binding that holds is what `classes`, `imports` and the module's `def`s say."""
        if len(held) != 1:
            return False
        binding = held[0]
        if isinstance(binding, ast.ClassDef):
            return self.classes.get(name) is binding
        if name in self.classes:
            return False
        if binding is None:
            return name not in self.imports()
        if name in functions:
            return False
        return binding == self.imports().get(name) or module_named(binding) == self.bound_modules().get(name)

    def function_imports(self) -> dict[str, tuple[str, str]]:
        """`from m import x` inside a function or method body, read like a module-level one (asked only
        for a name the module level does not import)."""
        if self._function_imports is None:
            name, _ = self.module
            found: dict[str, set[tuple[str, str]]] = {}
            for body in self.bodies_that_may_import():
                statements = ast.Module(body=list(nested_imports(body)), type_ignores=[])
                for local, origin in imported_names(statements, name, self.path.endswith("__init__.py")).items():
                    found.setdefault(local, set()).add(origin)
            # a name two functions import from different places means nothing module-wide (transformers'
            # own paths to one class, `transformers` and `transformers.cache_utils`, are one place)
            self._function_imports = {
                local: min(origins)
                for local, origins in found.items()
                if len(origins) == 1 or one_transformers_class(origins)
            }
        return self._function_imports

    def bodies_that_may_import(self) -> list[list[ast.stmt]]:
        """The bodies of the top-level `def`s and classes; with the text, only those whose lines hold the
        word `import` (every `from ... import` statement has it)."""
        definitions = [node for node in top_level_statements(self.tree.body) if isinstance(node, DEFINITION_STATEMENTS)]
        if self.text is not None:
            lines = lines_mentioning(self.text, ["import"])
            definitions = [
                node
                for node in definitions
                if bisect.bisect_right(lines, node.end_lineno or node.lineno) > bisect.bisect_left(lines, node.lineno)
            ]
        return [node.body for node in definitions]

    def in_transformers_table_module(self) -> bool:
        name, _ = self.module
        return name in TRANSFORMERS_MODULES

    def names_transformers_module(self, prefix: str) -> bool:
        """`prefix` of a dotted name is one of transformers' modules: `transformers.cache_utils`, or a
        name a module-level import binds to one (`from transformers import cache_utils as cu`)."""
        return prefix in TRANSFORMERS_MODULES or is_transformers_module(self.bound_modules().get(prefix, ""))

    def bound_modules(self) -> dict[str, str]:
        """Dotted local names a module-level import binds to a module (see `imports.bound_modules`)."""
        if self._bound_modules is None:
            module_name, _ = self.module
            self._bound_modules = bound_modules(self.tree, module_name, self.path.endswith("__init__.py"))
        return self._bound_modules

    def transformers_class_named(self, name: str) -> str:
        """The transformers class that `name`, written in this module, stands for; "" for any other."""
        prefix, _, last = name.rpartition(".")
        alternatives = self.alternatives().get(name.partition(".")[0])
        if alternatives is not None:
            named = set(self.transformers_classes_held(alternatives))
            return named.pop() if not prefix and len(named) == 1 else ""
        if prefix:
            return last if self.names_transformers_module(prefix) else ""
        if name in self.classes:
            return ""  # `class DynamicCache(StaticCache)` after the import: which one holds is not read here
        imported = self.imports().get(name) or self.function_imports().get(name)
        return imported[1] if imported is not None and is_transformers_module(imported[0]) else ""

    @staticmethod
    def transformers_classes_held(alternatives: list[Binding]) -> Iterator[str]:
        """For each binding, the transformers class it imports ("" for any other binding)."""
        for binding in alternatives:
            yield binding[1] if isinstance(binding, tuple) and is_transformers_module(binding[0]) else ""

    def is_transformers_wrapper(self, name: str) -> bool:
        """`EncoderDecoderCache` (or `transformers.EncoderDecoderCache`) naming transformers' class."""
        prefix, _, last = name.rpartition(".")
        if prefix:
            return last in WRAPPER_CLASSES and prefix in TRANSFORMERS_MODULES
        if name in self.classes:
            return name in WRAPPER_CLASSES and self.in_transformers_table_module()
        imported = self.imports().get(name)
        if imported is None and name in WRAPPER_CLASSES:  # an alias made inside a function is not looked for
            imported = self.function_imports().get(name)
        return imported is not None and is_transformers_module(imported[0]) and imported[1] in WRAPPER_CLASSES


def nested_imports(body: list[ast.stmt]) -> Iterator[ast.ImportFrom]:
    """The `from ... import` statements of a body, its nested blocks and definitions (statements only)."""
    for statement in statements_within(body, into_definitions=True):
        if isinstance(statement, ast.ImportFrom):
            yield statement


def module_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {node.name: node for node in top_level_statements(tree.body) if isinstance(node, ast.ClassDef)}


def one_transformers_class(origins: set[tuple[str, str]]) -> bool:
    """Every origin is transformers' class of one name, imported from any of its modules."""
    return all(is_transformers_module(module) for module, _ in origins) and len({name for _, name in origins}) == 1
