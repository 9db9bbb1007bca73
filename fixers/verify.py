"""The safety net run on every rewrite before it is written (as black checks its own output):

- the result parses;
- its `ast` equals the original's once the inserted guards, hoisted assignments and the added
  `import torch` are taken out (and each hoisted name put back as its call);
- every original line is still there, byte for byte and in order, except the lines of a statement
  whose call was hoisted.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Sequence

from lint_rules.findings import FixKind, FixPlan


def rewrite_problem(old_text: str, new_text: str, plans: Sequence[FixPlan]) -> str:
    """Why the rewrite must not be written ("" when it is sound)."""
    try:
        new_tree = ast.parse(new_text)
    except SyntaxError as error:
        return f"the rewrite does not parse (line {error.lineno}: {error.msg})"
    old_tree = ast.parse(old_text)
    hoisted = {plan.hoisted_name for plan in plans if plan.kind is FixKind.HOIST}
    guarded = {target for plan in plans for target in plan.targets} | hoisted
    if ast.dump(strip_insertions(old_tree, guarded, hoisted)) != ast.dump(strip_insertions(new_tree, guarded, hoisted)):
        return "the rewrite changes the code beyond the inserted guards"
    hoisted_lines = {
        line for plan in plans if plan.kind is FixKind.HOIST for line in range(plan.statement.line, plan.statement.end_line + 1)
    }
    return changed_original_lines(old_text, new_text, hoisted_lines)


def changed_original_lines(old_text: str, new_text: str, allowed: set[int]) -> str:
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for operation, old_start, old_end, _, _ in matcher.get_opcodes():
        if operation in ("equal", "insert"):
            continue
        touched = set(range(old_start + 1, old_end + 1))
        if not touched <= allowed:
            return f"the rewrite changes original line {min(touched - allowed)}"
    return ""


def strip_insertions(tree: ast.Module, guarded: set[str], hoisted: set[str]) -> ast.Module:
    """The tree without guards on `guarded` names, hoisted assignments and a leading `import torch`."""
    tree = StripInsertions(guarded, hoisted).visit(tree)
    body = tree.body
    for index, statement in enumerate(body):
        if is_plain_torch_import(statement):
            del body[index]
            break
    return tree


class StripInsertions(ast.NodeTransformer):
    def __init__(self, guarded: set[str], hoisted: set[str]) -> None:
        self.guarded = guarded
        self.hoisted = hoisted

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, field, self.strip_block(statements))
        return super().generic_visit(node)

    def strip_block(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        kept: list[ast.stmt] = []
        pending: dict[str, ast.expr] = {}
        for statement in statements:
            if is_guard(statement, self.guarded):
                continue
            hoist = hoisted_assignment(statement, self.hoisted)
            if hoist is not None:
                pending[hoist[0]] = hoist[1]
                continue
            if pending:
                statement = PutBack(pending).visit(statement)
                pending = {}
            kept.append(statement)
        return kept or statements


class PutBack(ast.NodeTransformer):
    def __init__(self, calls: dict[str, ast.expr]) -> None:
        self.calls = calls

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.calls:
            return self.calls[node.id]
        return node


def is_guard(statement: ast.stmt, guarded: set[str]) -> bool:
    """`if isinstance(t, <torch>.Tensor): t = int(t.item())` for a guarded `t`."""
    if not isinstance(statement, ast.If) or statement.orelse or len(statement.body) != 1:
        return False
    test, body = statement.test, statement.body[0]
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return False
    if len(test.args) != 2 or not isinstance(test.args[1], ast.Attribute) or test.args[1].attr != "Tensor":
        return False
    target = ast.unparse(test.args[0])
    return (
        target in guarded
        and isinstance(body, ast.Assign)
        and len(body.targets) == 1
        and ast.unparse(body.targets[0]) == target
        and ast.unparse(body.value) == f"int({target}.item())"
    )


def hoisted_assignment(statement: ast.stmt, hoisted: set[str]) -> tuple[str, ast.expr] | None:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id in hoisted
        and isinstance(statement.value, ast.Call)
    ):
        return statement.targets[0].id, statement.value
    return None


def is_plain_torch_import(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Import)
        and len(statement.names) == 1
        and statement.names[0].name == "torch"
        and statement.names[0].asname is None
    )
