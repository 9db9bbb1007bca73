"""Mutations of real code for the fuzz test: the same module with its lengths obtained or used in
other ways (`tests/test_fuzz.py`). Each mutation is an `ast` transformation, so that its result is
valid Python whatever the input; comments and layout are lost, which the fuzz test does not need.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable

SOURCE = "get_seq_length"
HELPER = "_fuzz_past_length"


def is_source_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == SOURCE


class ThroughGetattr(ast.NodeTransformer):
    """`c.get_seq_length(i)` -> `getattr(c, "get_seq_length")(i)`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not is_source_call(node):
            return node
        assert isinstance(node.func, ast.Attribute)
        fetch = ast.Call(ast.Name("getattr", ast.Load()), [node.func.value, ast.Constant(SOURCE)], [])
        return ast.Call(fetch, node.args, node.keywords)


class ThroughHelper(ast.NodeTransformer):
    """`c.get_seq_length(...)` -> `_fuzz_past_length(c)`, a module function returning the length."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not is_source_call(node) or node.args or node.keywords:
            return node
        assert isinstance(node.func, ast.Attribute)
        return ast.Call(ast.Name(HELPER, ast.Load()), [node.func.value], [])


def with_helper(tree: ast.Module) -> ast.Module:
    helper = ast.parse(f"def {HELPER}(cache):\n    return cache.{SOURCE}()\n").body
    tree.body = [*helper, *ThroughHelper().visit(tree).body]
    return tree


class InlineBindings(ast.NodeTransformer):
    """`n = c.get_seq_length()` followed by uses of `n` in the same block: the call written at each
    use of `n` in the next statement (the binding stays, so the code keeps every name)."""

    def visit_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        for index, statement in enumerate(body[:-1]):
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and is_source_call(statement.value)
            ):
                name, call = statement.targets[0].id, statement.value
                body[index + 1] = ReplaceName(name, call).visit(body[index + 1])
        return body

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self.visit_body(block))
        return node


class ReplaceName(ast.NodeTransformer):
    def __init__(self, name: str, replacement: ast.expr) -> None:
        self.name = name
        self.replacement = replacement

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.replacement)
        return node


class IntoContexts(ast.NodeTransformer):
    """Each statement of a function that calls the source moved into another context: alternately a
    `with` block, a `try`/`finally`, a one-iteration `for` loop and an `if` on a parameter."""

    def __init__(self) -> None:
        self.count = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.body = [self.wrapped(statement) for statement in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def wrapped(self, statement: ast.stmt) -> ast.stmt:
        if not any(is_source_call(node) for node in ast.walk(statement)) or isinstance(
            statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)
        ):
            return statement
        self.count += 1
        shape = self.count % 4
        if shape == 0:
            return ast.With([ast.withitem(ast.parse("contextlib.nullcontext()", mode="eval").body)], [statement])
        if shape == 1:
            return ast.Try([statement], [], [], [ast.Pass()])
        if shape == 2:
            return ast.For(
                ast.Name("_fuzz_once", ast.Store()), ast.parse("range(1)", mode="eval").body, [statement], []
            )
        return ast.If(ast.Constant(True), [statement], [])


def through_alias(tree: ast.Module) -> ast.Module:
    """`n = c.get_seq_length()` -> `length_of = c.get_seq_length` + `n = length_of()`."""

    class Alias(ast.NodeTransformer):
        def generic_visit(self, node: ast.AST) -> ast.AST:
            super().generic_visit(node)
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(node, field, [new for statement in block for new in aliased(statement)])
            return node

    def aliased(statement: ast.stmt) -> list[ast.stmt]:
        if not (isinstance(statement, ast.Assign) and is_source_call(statement.value)):
            return [statement]
        call = statement.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        alias = ast.Assign([ast.Name("_fuzz_length_of", ast.Store())], call.func)
        statement.value = ast.Call(ast.Name("_fuzz_length_of", ast.Load()), call.args, call.keywords)
        return [alias, statement]

    result = Alias().visit(tree)
    assert isinstance(result, ast.Module)
    return result


def visitor(transformer: Callable[[], ast.NodeTransformer]) -> Callable[[ast.Module], ast.Module]:
    def run(tree: ast.Module) -> ast.Module:
        result = transformer().visit(tree)
        assert isinstance(result, ast.Module)
        return result

    return run


MUTATIONS: dict[str, Callable[[ast.Module], ast.Module]] = {
    "getattr": visitor(ThroughGetattr),
    "helper": with_helper,
    "inline": visitor(InlineBindings),
    "contexts": visitor(IntoContexts),
    "alias": through_alias,
}


def mutate(text: str, name: str) -> str:
    """The module mutated (unparsed); the text itself when the mutation changes nothing."""
    tree = ast.parse(text)
    before = ast.dump(tree)
    mutated = ast.fix_missing_locations(MUTATIONS[name](tree))
    if ast.dump(mutated) == before:
        return text
    return ast.unparse(mutated) + "\n"
