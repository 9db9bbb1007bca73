"""What the module's tree tells, computed once per file from its one `ast` tree and never changed
after: torch aliases, the definitions, the call graph and compiled reach, class facts, module
constants and the lines that mention a source. What one run learns from them (origins, summaries,
scopes) is the run's: see `module_run`."""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Sequence

from lint_rules.engine.facts.attribute_stores import function_bindings, scope_names
from lint_rules.engine.facts.callgraph import CallGraph
from lint_rules.engine.facts.classes import ClassFacts
from lint_rules.engine.facts.declarations import NO_DECLARATIONS, Declarations
from lint_rules.engine.facts.definitions import Definition, DefinitionIndex
from lint_rules.engine.facts.imports import bound_modules
from lint_rules.engine.facts.module_text import (
    ScopeNode,
    bool_bindings,
    function_constants,
    is_identifier_char,
    lines_mentioning,
    may_declare_globals,
    module_constants,
    torch_aliases,
)
from lint_rules.engine.facts.name_bindings import declared_global
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases, path_ending_names
from lint_rules.engine.facts.source_text import SourceText


class ModuleFacts:
    def __init__(
        self,
        tree: ast.Module,
        source: SourceText,
        source_methods: Sequence[str],
        path: str = "",
        releases: Releases = ALL_RELEASES,
        declarations: Declarations = NO_DECLARATIONS,
    ) -> None:
        self.path = path
        self.releases = releases
        """The transformers releases the module runs on (`releases.py`): what its caches' lengths are."""
        self.declarations = declarations
        self.int_length_receivers = declarations.covers(path)
        """`int-length-caches` covers the module: a receiver not shown to be tensor-length is int-length."""
        self.tree = tree
        self.source = source
        self.source_methods = frozenset(source_methods)
        self.source_lines = lines_mentioning(source.text, source_methods)
        """The lines that mention a source method, sorted."""
        self.torch_aliases = torch_aliases(tree)
        self.definitions = DefinitionIndex(tree, source.text)
        self.classes = ClassFacts(
            tree,
            self.source_methods,
            path,
            classes=self.definitions.classes,
            text=source.text,
            releases=releases,
            declarations=declarations,
        )
        self._function_constants: dict[int, dict[str, object]] = {}
        self._names_around: dict[int, frozenset[str]] = {}
        self.calls = CallGraph(tree, source.text, self.definitions, self.torch_aliases, path)

    @functools.cached_property
    def constants(self) -> dict[str, object]:
        """Module names whose value is known everywhere (`DEBUG = False`): see `module_constants`."""
        constants = module_constants(self.tree, self.source.text)
        if constants and may_declare_globals(self.source.text):
            declared = declared_global(self.tree)
            return {name: value for name, value in constants.items() if name not in declared}
        return constants

    def function_constants(self, function: ScopeNode, enclosing: Definition | None = None) -> dict[str, object]:
        """The names whose value is known everywhere in `function` or a class body (see
        `module_text.function_constants`), found once per scope. Nested in a function, it starts from
        that function's known names (a module constant the function rebinds is no longer one, a
        constant it binds is); a class body in between is skipped, its names are not visible there.
        (Only the scope's own lines and the module's constants are looked for in its tests: see
        `FunctionWalker.known_truth`.)"""
        if id(function) not in self._function_constants:
            while enclosing is not None and not enclosing.is_function:
                enclosing = enclosing.parent
            outside = self.constants if enclosing is None else self.function_constants(enclosing.node, enclosing.parent)
            self._function_constants[id(function)] = function_constants(function, outside)
        return self._function_constants[id(function)]

    def names_around(self, definition: Definition) -> frozenset[str]:
        """The names the scopes a function's header is written in bind (the class body of a method,
        the functions around a nested one), found once per scope: a parameter's annotation naming one
        of them names that, not the module's class."""
        outer = definition.parent
        if outer is None:
            return frozenset()
        if id(outer.node) not in self._names_around:
            if isinstance(outer.node, ast.ClassDef):
                own = scope_names(outer.node.body)
            else:
                own = set(function_bindings(outer.node))
            self._names_around[id(outer.node)] = frozenset(own) | self.names_around(outer)
        return self._names_around[id(outer.node)]

    @functools.cached_property
    def bool_binding_lines(self) -> dict[str, list[int]]:
        """Per name, the lines that bind it to True or False (`flag = False`): where a function's local
        constants (`function_constants`) can only be."""
        lines: dict[str, list[int]] = {}
        for line, name in bool_bindings(self.source.text):
            lines.setdefault(name, []).append(line)
        return lines

    def names_bound_to_bools(self, first: int, last: int) -> set[str]:
        """The names lines `first`..`last` bind to True or False exactly once (a second such line
        already makes the name no constant)."""
        return {
            name
            for name, lines in self.bool_binding_lines.items()
            if bisect.bisect_right(lines, last) - bisect.bisect_left(lines, first) == 1
        }

    @functools.cached_property
    def path_ending_names(self) -> frozenset[str]:
        """The attributes and methods whose use on a cache ends the path on every release the module runs
        on (`releases.path_ending_names`: `seen_tokens`, and a method no cache of those releases has),
        less those the module binds itself (`self.seen_tokens = ...`, `def get_max_length`): its own
        classes may have what no transformers cache has."""
        text = self.source.text
        return frozenset(name for name in path_ending_names(self.releases) if not binds_itself(name, text))

    @functools.cached_property
    def has_walrus(self) -> bool:
        """The text has `:=`: only then can an operand or an arm walked in a narrowed copy bind a name."""
        return ":=" in self.source.text

    @functools.cached_property
    def may_share_names(self) -> bool:
        """The text has the word `global` or `nonlocal`: only then can a call rebind a function's name."""
        return "global" in self.source.text or "nonlocal" in self.source.text

    @functools.cached_property
    def int_length_owned(self) -> dict[str, bool]:
        """Per attribute name, whether only the package's int-length classes have it (`hasattr`
        narrowing, `attribute_owners`): kept for the module's run."""
        return {}

    @functools.cached_property
    def bound_modules(self) -> dict[str, str]:
        """Dotted local names that may name a module, for calls `m.f(...)`: see `imports.bound_modules`."""
        name, _ = self.classes.module
        return bound_modules(self.tree, name, self.path.endswith("__init__.py"))


def binds_itself(name: str, text: str) -> bool:
    """The module may give an object an attribute `name`: it binds one (`self.name = `, `obj.name: int
    = `, `self.name += `, `name = ` or `name: int` starting a line, a class's own), names it in a
    string (`setattr(self, "name", ...)`), or defines `name` (`def name(`, however spaced). One scan
    for the name (`seen_tokens` is in every `past_seen_tokens`), each occurrence then read in place."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        previous, following = text[start - 1 : start], text[end : end + 1]
        if previous in ("'", '"') and following == previous:
            return True
        if not (is_identifier_char(previous) or is_identifier_char(following)):  # not `past_seen_tokens`
            before = text[text.rfind("\n", 0, start) + 1 : start].rstrip(" \t")
            if before.rsplit(None, 1)[-1:] == ["def"] or (
                BOUND_AFTER.match(text, end) and (before == "" or before.endswith((".", ",")))
            ):
                return True
        start = text.find(name, end)
    return False


BOUND_AFTER = re.compile(r"[ \t]*(?::|(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=))")
"""After a name: an annotation, an assignment or an augmented one (not `==`)."""
