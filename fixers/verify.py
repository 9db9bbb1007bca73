"""The safety net run on every rewrite before it is written (as black checks its own output):

- the result parses;
- its `ast` equals the original's once the inserted guards, hoisted assignments and the added
  `import torch` are taken out (and each hoisted name put back as its call);
- every original line is still there, byte for byte and in order, except the lines of a statement
  whose call was hoisted and those of a `torch.arange` call rewritten on the device;
- a rewritten call is exactly the sum the plan describes: the original's `ast` with each planned
  call replaced by `lint_rules.engine.fixes.deviceplan.rewritten_call` equals the result's.
"""

from __future__ import annotations

import ast
import difflib
import functools
from collections.abc import Sequence
from typing import Literal

from fixers.guard_text import guarded_name
from lint_rules.engine import SourceText, first_line_of, rewritten_call
from lint_rules.findings import FixKind, FixPlan
from lint_rules.lines import split_lines

Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]
"""difflib's (operation, old start, old end, new start, new end), 0-based line indexes."""


def rewrite_problem(
    old_text: str, new_text: str, old_tree: ast.Module, new_tree: ast.Module, plans: Sequence[FixPlan]
) -> str:
    """Why the rewrite must not be written ("" when it is sound). Takes the trees apart while comparing them."""
    hoisted_lines = {
        line
        for plan in plans
        if plan.kind is FixKind.HOIST
        for line in range(plan.statement.line, plan.statement.end_line + 1)
    }
    rewritten_lines = {
        line
        for plan in plans
        if plan.kind is FixKind.DEVICE_REWRITE
        for line in range(plan.call.line, plan.call.end_line + 1)
    }
    opcodes = line_opcodes(old_text, new_text)
    problem = changed_original_lines(opcodes, hoisted_lines | rewritten_lines)
    if problem:
        return problem
    hoisted = {plan.hoisted_name for plan in plans if plan.kind is FixKind.HOIST}
    guarded = {target for plan in plans for target in plan.targets} | hoisted
    touched = {
        line + 1 for operation, _, _, start, end in opcodes if operation != "equal" for line in range(start, end)
    }
    rewrites = [plan for plan in plans if plan.kind is FixKind.DEVICE_REWRITE]
    if rewrites:
        expected = ExpectRewrites(SourceText(old_text), rewrites)
        old_tree = expected.visit(old_tree)
        if expected.missing():
            return f"the rewritten call on line {expected.missing()[0].call.line} is not where the plan put it"
    if not same_code(old_tree, new_tree, touched, guarded, hoisted):
        beyond = "the inserted guards and the planned device rewrites" if rewrites else "the inserted guards"
        return f"the rewrite changes the code beyond {beyond}"
    return ""


def line_opcodes(old_text: str, new_text: str) -> list[Opcode]:
    return lines_opcodes(split_lines(old_text, keepends=True), split_lines(new_text, keepends=True))


def lines_opcodes(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes for two lists of lines; the lines both start and end with are matched up
    front, so that difflib only works on the stretch that holds the fixes."""
    start = common_prefix_length(old_lines, new_lines)
    end = common_prefix_length(old_lines[start:][::-1], new_lines[start:][::-1])
    old_end, new_end = len(old_lines) - end, len(new_lines) - end
    middle = difflib.SequenceMatcher(None, old_lines[start:old_end], new_lines[start:new_end], autojunk=False)
    opcodes: list[Opcode] = [("equal", 0, start, 0, start)]
    opcodes += [(tag, i + start, j + start, k + start, m + start) for tag, i, j, k, m in middle.get_opcodes()]
    opcodes.append(("equal", old_end, len(old_lines), new_end, len(new_lines)))
    return merged_equal_runs([opcode for opcode in opcodes if opcode[1] < opcode[2] or opcode[3] < opcode[4]])


def merged_equal_runs(opcodes: list[Opcode]) -> list[Opcode]:
    merged: list[Opcode] = []
    for opcode in opcodes:
        if merged and opcode[0] == merged[-1][0] == "equal":
            previous = merged.pop()
            opcode = ("equal", previous[1], opcode[2], previous[3], opcode[4])
        merged.append(opcode)
    return merged


def common_prefix_length(first: Sequence[str], second: Sequence[str]) -> int:
    return next(
        (index for index, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), min(len(first), len(second))
    )


def changed_original_lines(opcodes: Sequence[Opcode], allowed: set[int]) -> str:
    for operation, old_start, old_end, _, _ in opcodes:
        if operation in ("equal", "insert"):
            continue
        touched = set(range(old_start + 1, old_end + 1))
        if not touched <= allowed:
            return f"the rewrite changes original line {min(touched - allowed)}"
    return ""


def same_code(
    old_tree: ast.Module, new_tree: ast.Module, touched: set[int], guarded: set[str], hoisted: set[str]
) -> bool:
    """The trees are equal once the insertions are taken out.

    Original lines are known to be kept (`changed_original_lines`), so only the statements that hold
    a new line are compared in full, and the others by kind, at every level: in a class or function
    that holds a new line, the header is compared in full and the body statement by statement.
    """
    stripper = StripInsertions(guarded, hoisted)
    old_body = stripper.strip_block(strip_torch_import(old_tree.body))
    new_body = stripper.strip_block(strip_torch_import(new_tree.body))
    return same_statements(old_body, new_body, touched, stripper)


def same_statements(
    old_body: list[ast.stmt], new_body: list[ast.stmt], touched: set[int], stripper: StripInsertions
) -> bool:
    if len(old_body) != len(new_body):
        return False
    for old, new in zip(old_body, new_body, strict=True):
        if type(old) is not type(new):
            return False
        if not touched & statement_lines(new):
            continue
        if isinstance(old, DEFINITIONS) and isinstance(new, DEFINITIONS):
            if not same_definition(old, new, touched, stripper):
                return False
        elif ast.dump(stripper.visit(old)) != ast.dump(stripper.visit(new)):
            return False
    return True


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def same_definition(old: Definition, new: Definition, touched: set[int], stripper: StripInsertions) -> bool:
    """Headers (decorators, name, arguments, bases, annotations) equal, bodies equal as statements."""
    for field, old_value in ast.iter_fields(old):
        if field != "body" and dump_field(old_value) != dump_field(getattr(new, field)):
            return False
    old_body = stripper.strip_block(old.body)
    new_body = stripper.strip_block(new.body)
    return same_statements(old_body, new_body, touched, stripper)


def dump_field(value: object) -> str:
    if isinstance(value, list):
        return repr([dump_field(item) for item in value])
    return ast.dump(value) if isinstance(value, ast.AST) else repr(value)


def statement_lines(statement: ast.stmt) -> set[int]:
    """The statement's lines, its decorators included."""
    return set(range(first_line_of(statement), (statement.end_lineno or statement.lineno) + 1))


def strip_torch_import(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module body without its first plain `import torch` (the one the fixer may add)."""
    for index, statement in enumerate(body):
        if is_plain_torch_import(statement):
            return [*body[:index], *body[index + 1 :]]
    return body


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


class ExpectRewrites(ast.NodeTransformer):
    """The original tree with each planned `torch.arange` call replaced by what the plan says it becomes."""

    def __init__(self, source: SourceText, plans: Sequence[FixPlan]) -> None:
        self.source = source
        self.by_span = {plan.call: plan for plan in plans}
        self.done: set[FixPlan] = set()

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        plan = self.by_span.get(self.source.span(node)) if node.lineno in self.lines else None
        if plan is None or plan.rewrite is None:
            return node
        self.done.add(plan)
        return rewritten_call(node, plan.rewrite)

    @functools.cached_property
    def lines(self) -> set[int]:
        return {span.line for span in self.by_span}

    def missing(self) -> list[FixPlan]:
        return [plan for plan in self.by_span.values() if plan not in self.done]


class PutBack(ast.NodeTransformer):
    def __init__(self, calls: dict[str, ast.expr]) -> None:
        self.calls = calls

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.calls:
            return self.calls[node.id]
        return node


def is_guard(statement: ast.stmt, guarded: set[str]) -> bool:
    """The fixer's guard (`fixers.guard_text`) of a guarded name."""
    return guarded_name(statement) in guarded


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
