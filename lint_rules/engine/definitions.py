"""Every `def` and `class` of a module, with its qualified name, its class and where it starts and ends.

Built once per module from the statements alone (no expression is visited), so that the call graph,
the compiled reach and the summaries can find a definition by name or by line cheaply.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
from collections.abc import Iterator, Sequence

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DefinitionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclasses.dataclass(eq=False)
class Definition:
    node: DefinitionNode
    qualname: str
    enclosing_class: ast.ClassDef | None
    """The class this is a method of (only for a `def` directly in a class body)."""
    parent: Definition | None
    """The enclosing `def` or `class`, None at module level."""

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, (ast.FunctionDef, ast.AsyncFunctionDef))

    @property
    def first_line(self) -> int:
        return min([self.node.lineno, *(decorator.lineno for decorator in self.node.decorator_list)])

    @property
    def last_line(self) -> int:
        return self.node.end_lineno or self.node.lineno


class DefinitionIndex:
    """The module's definitions, by node, by name and by line."""

    def __init__(self, tree: ast.Module) -> None:
        self.all: list[Definition] = list(collect_definitions(tree.body, "", None, None))
        self.by_node: dict[int, Definition] = {id(definition.node): definition for definition in self.all}
        self.by_name: dict[str, list[Definition]] = {}
        for definition in self.all:
            self.by_name.setdefault(definition.name, []).append(definition)
        self.classes: dict[str, ast.ClassDef] = {
            definition.name: definition.node
            for definition in self.all
            if isinstance(definition.node, ast.ClassDef) and definition.parent is None
        }
        self._starts = [definition.node.lineno for definition in self.all]

    def of(self, node: ast.AST) -> Definition | None:
        return self.by_node.get(id(node))

    def functions_named(self, name: str) -> list[Definition]:
        return [definition for definition in self.by_name.get(name, []) if definition.is_function]

    def innermost_function_at(self, line: int) -> Definition | None:
        """The innermost `def` whose body holds `line` (None at module or class level)."""
        index = bisect.bisect_right(self._starts, line)
        for definition in reversed(self.all[:index]):
            if definition.is_function and definition.node.lineno <= line <= definition.last_line:
                return definition
        return None

    def method(self, cls: ast.ClassDef, name: str) -> Definition | None:
        for statement in cls.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
                return self.of(statement)
        return None


def collect_definitions(
    body: Sequence[ast.stmt], qualname: str, enclosing_class: ast.ClassDef | None, parent: Definition | None
) -> Iterator[Definition]:
    for node in nested_definitions(body):
        definition = Definition(node, f"{qualname}{node.name}", enclosing_class, parent)
        yield definition
        inner_class = node if isinstance(node, ast.ClassDef) else None
        yield from collect_definitions(node.body, f"{definition.qualname}.", inner_class, definition)


def nested_definitions(body: Sequence[ast.stmt]) -> Iterator[DefinitionNode]:
    """Definitions directly in `body`, also inside its compound statements, not inside other defs."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(statement, field, None) or []
            for child in children:
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    yield from nested_definitions(child.body)
                elif isinstance(child, ast.stmt):
                    yield from nested_definitions([child])


def statements_at(body: Sequence[ast.stmt], line: int) -> Iterator[ast.stmt]:
    """The innermost statements of `body` (looking into compound statements) that span `line`."""
    for statement in body:
        if not statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            continue
        inner = [
            child
            for field in ("body", "orelse", "finalbody", "handlers", "cases")
            for child in getattr(statement, field, None) or []
        ]
        bodies = [child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child] for child in inner]
        found = [found for block in bodies for found in statements_at(block, line)]
        yield from found or [statement]
