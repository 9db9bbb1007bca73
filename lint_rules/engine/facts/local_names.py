"""Which binding a name written in a call stands for, by Python's scoping rules: a parameter or a
local of the calling function (any binding in a function makes the name local to the whole of it),
of a function around it, of a lambda or comprehension around the call, of the class body for the
calls written directly in it; or else the module's binding (its `def`, import or class).

A scope's code is looked at only on the lines where a binding of the name may be written
(`module_text.lines_that_may_bind`, with the lines outside ASCII whose NFKC form holds it), so that the common case, a
name no function binds, costs one text search per name.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence
from typing import NamedTuple, TypeGuard

from lint_rules.engine.facts.definitions import Definition, DefinitionIndex, statements_spanning
from lint_rules.engine.facts.expressions import COMPREHENSIONS
from lint_rules.engine.facts.module_text import (
    BINDING_NODES,
    ScopeNode,
    bound_names,
    header_of,
    lines_that_may_bind,
    may_declare_globals,
    module_scope_bindings,
    non_ascii_lines,
    own_scope_nodes,
    spans_one_of,
    with_non_ascii,
)
from lint_rules.engine.facts.name_bindings import declared_global

Comprehension = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
NESTED_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class ScopeBinding(NamedTuple):
    """How one scope's own code holds a name: "local" (bound there, a parameter too), "import" (only
    by the `imports` there), "global" or "nonlocal" (declared so), or "" (not at all)."""

    kind: str
    imports: tuple[ast.Import | ast.ImportFrom, ...] = ()


class Holder(NamedTuple):
    """Where a name in a call is bound: in `scope` (with `imports`, the only statements binding it
    there), in a lambda or comprehension around the call (`inner`), or, neither, at module level."""

    scope: Definition | None = None
    inner: bool = False
    imports: tuple[ast.Import | ast.ImportFrom, ...] = ()

    @property
    def is_module_level(self) -> bool:
        return self.scope is None and not self.inner


class LocalNames:
    """The holders of names written in the calls of one module (found once per scope and name)."""

    def __init__(self, text: str, definitions: DefinitionIndex) -> None:
        self.text = text
        self.definitions = definitions
        self._bindings: dict[tuple[int, str], ScopeBinding] = {}
        self._lines: dict[str, list[int]] = {}
        self._non_ascii_lines: list[tuple[int, str]] | None = None
        self._classes_by_line: dict[int, dict[int, Definition]] = {}
        self._module_level: dict[str, bool] = {}

    def holder(self, name: str, caller: Definition | None, call: ast.expr) -> Holder:
        """What binds `name` for `call`, written in `caller`'s code (None: the module's), or in a class
        body nested in it (the callers of a function are found by the functions around a line)."""
        scope = caller
        while scope is not None:
            sees_own_names = scope.is_function
            if scope is caller and self.may_bind_in(scope, name):
                path = path_to(scope.node, call)
                nested_class = self.class_holding(scope, call) if len(path) == 1 else None
                if nested_class is not None:
                    return self.holder(name, nested_class, call)
                around = inner_scopes_on(path)
                if any(binds_in_inner_scope(inner, name) for inner in around):
                    return Holder(inner=True)
                sees_own_names = sees_own_names or not around  # a class body's names, only for its own code
            if sees_own_names:
                binding = self.binding_in(scope, name)
                if binding.kind == "global":
                    return Holder()
                if binding.kind in ("local", "import"):
                    return Holder(scope, imports=binding.imports)
            scope = scope.parent
        return Holder()

    def class_holding(self, function: Definition, call: ast.expr) -> Definition | None:
        """The class nested in `function` whose own code (its body, not its methods) holds `call`."""
        if not function.is_function:
            return None
        innermost = self.classes_by_line(function).get(call.lineno)
        return innermost if innermost is not None and len(path_to(innermost.node, call)) > 1 else None

    def classes_by_line(self, function: Definition) -> dict[int, Definition]:
        """Each line of a class nested in `function` -> the innermost such class spanning it."""
        key = id(function.node)
        if key not in self._classes_by_line:
            lines: dict[int, Definition] = {}
            for found in self.definitions.nested_in(function):  # an outer class before the ones in it
                if isinstance(found.node, ast.ClassDef):
                    lines.update(dict.fromkeys(range(found.node.lineno, found.last_line + 1), found))
            self._classes_by_line[key] = lines
        return self._classes_by_line[key]

    def may_bind_in(self, scope: Definition, name: str) -> bool:
        return spans_one_of(scope.node, self.lines_that_may_bind(name))

    def binding_in(self, scope: Definition, name: str) -> ScopeBinding:
        key = (id(scope.node), name)
        if key not in self._bindings:
            lines = self.lines_that_may_bind(name)
            self._bindings[key] = scope_binding(scope.node, name, lines) if self.may_bind_in(scope, name) else NONE
        return self._bindings[key]

    def binds_at_module_level(self, name: str, tree: ast.Module) -> bool:
        """The module's own code binds `name` (its statements and the headers of its functions and
        classes), or a function declares it `global`."""
        if name not in self._module_level:
            lines = self.lines_that_may_bind(name)
            self._module_level[name] = bool(lines) and (
                module_scope_bindings(tree, self.text, name, lines) > 0
                or (may_declare_globals(self.text) and name in declared_global(tree))
            )
        return self._module_level[name]

    def lines_that_may_bind(self, name: str) -> list[int]:
        """Found once per name; with the lines outside ASCII whose NFKC form holds it (a binding may
        spell the name in another Unicode form, which Python reads as the same name)."""
        if name not in self._lines:
            self._lines[name] = with_non_ascii(lines_that_may_bind(self.text, name), self.non_ascii_lines, name)
        return self._lines[name]

    @property
    def non_ascii_lines(self) -> list[tuple[int, str]]:
        if self._non_ascii_lines is None:
            self._non_ascii_lines = non_ascii_lines(self.text)
        return self._non_ascii_lines


NONE = ScopeBinding("")


def scope_binding(function: ScopeNode, name: str, lines: Sequence[int] | None = None) -> ScopeBinding:
    """How `function`'s (or a class body's) own code holds `name`, its nodes looked at only on
    `lines`. A comprehension's targets are its own (a walrus in it binds here)."""
    own = list(own_scope_nodes(function, lines))
    for node in own:
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return ScopeBinding("global" if isinstance(node, ast.Global) else "nonlocal")
    if not isinstance(function, ast.ClassDef) and name in parameter_names(function):
        return ScopeBinding("local")
    comprehension_targets = {
        id(target) for node in own if isinstance(node, ast.comprehension) for target in ast.walk(node.target)
    }
    binders = [
        node
        for node in own
        if isinstance(node, BINDING_NODES) and id(node) not in comprehension_targets and name in bound_names(node)
    ]
    if not binders:
        return NONE
    aliases = {id(node) for node in binders if isinstance(node, ast.alias)}
    if len(aliases) < len(binders):
        return ScopeBinding("local")
    imports = [
        node
        for node in own
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(id(alias) in aliases for alias in node.names)
    ]
    return ScopeBinding("import", tuple(sorted(imports, key=lambda node: node.lineno)))


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return {parameter.arg for parameter in every if parameter is not None}


def inner_scopes_on(path: list[ast.AST]) -> list[ast.Lambda | Comprehension]:
    """The lambdas and comprehensions on a path from a scope to a call whose own scope holds the call:
    a lambda's body, a comprehension but its outermost iterable (which runs in the scope around it)."""
    return [node for node, child in itertools.pairwise(path) if enters_own_scope(node, child, path)]


def enters_own_scope(node: ast.AST, child: ast.AST, path: list[ast.AST]) -> TypeGuard[ast.Lambda | Comprehension]:
    """Going from `node` to `child` on `path` enters the own scope of a lambda or a comprehension."""
    if isinstance(node, ast.Lambda):
        return child is node.body
    if not isinstance(node, COMPREHENSIONS):
        return False
    first = node.generators[0]
    after_first = path.index(first) + 1 if child is first else len(path)
    return after_first >= len(path) or path[after_first] is not first.iter


def path_to(owner: ScopeNode, call: ast.expr) -> list[ast.AST]:
    """The nodes from `owner` down to `call` in its own code (only `owner` when it is not there)."""
    lines = [call.lineno]
    body: list[ast.AST] = (
        [*statements_spanning(owner.body, call.lineno)] if isinstance(owner.body, list) else [owner.body]
    )
    pending: list[list[ast.AST]] = [[owner, child] for child in reversed(body)]
    while pending:
        path = pending.pop()
        node = path[-1]
        if node is call:
            return path
        if not spans_one_of(node, lines):
            continue
        children = header_of(node) if isinstance(node, NESTED_DEFINITIONS) else children_at(node, call.lineno)
        pending.extend([*path, child] for child in reversed(children))
    return [owner]


def children_at(node: ast.AST, line: int) -> list[ast.AST]:
    """The node's children, of its blocks only the statements whose lines hold `line` (a block's
    statements come in line order: found by bisection in a long body)."""
    children: list[ast.AST] = []
    for _, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            children += statements_spanning(value, line)
        elif isinstance(value, list):
            children += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def binds_in_inner_scope(inner: ast.Lambda | Comprehension, name: str) -> bool:
    """A lambda's parameter or a comprehension's target of that name."""
    if isinstance(inner, ast.Lambda):
        return name in parameter_names(inner)
    targets = (node for generator in inner.generators for node in ast.walk(generator.target))
    return any(isinstance(node, ast.Name) and node.id == name for node in targets)
