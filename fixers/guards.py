"""The LibCST side of a fix: the engine's plans carried out on the text, nothing decided here.

It inserts, right after the statement that binds a `get_seq_length()` result,

    if isinstance(past_length, torch.Tensor):
        past_length = int(past_length.item())

or hoists an inline call into a fresh guarded local just before its statement, and adds
`import torch` where the module has no name for torch for a guard; it rewrites a `torch.arange`
call to keep the length on the device (`fixers.device_rewrites`). The result still has to pass
the safety net (`fixers.fixing.carry_out`).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Sequence
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from fixers.device_rewrites import rewritten_arange
from fixers.guard_text import guard_source
from lint_rules.engine import first_line_of, torch_bindings
from lint_rules.findings import FixKind, FixPlan, Span
from lint_rules.lines import split_lines

Position = tuple[int, int]


class FixError(Exception):
    """A plan could not be carried out on the tree; the file must be left alone."""


def apply_plans(text: str, plans: Sequence[FixPlan], tree: ast.Module) -> str:
    """`text` with every plan carried out; raises FixError if one cannot be placed.

    LibCST parses only the statements being fixed: its cost follows the code being fixed, not the
    size of the file or of the function around it.
    """
    torch_name = bound_torch_name(tree)
    unit = indent_unit(text)
    lines = split_lines(text, keepends=True)
    for (first, last), group in reversed(segments(plans)):
        segment = "".join(lines[first - 1 : last])
        rewritten = rewrite_segment(segment, first, group, torch_name or "torch", unit, line_ending(text))
        lines[first - 1 : last] = split_lines(rewritten, keepends=True)
    new_text = "".join(lines)
    if torch_name or all(plan.kind is FixKind.DEVICE_REWRITE for plan in plans):
        return new_text
    return with_torch_import(new_text, torch_import_line(tree))


def segments(plans: Sequence[FixPlan]) -> list[tuple[tuple[int, int], list[FixPlan]]]:
    """The line ranges to rewrite, merged where one statement holds another, with their plans.

    A range is the statement a plan guards or hoists out of: the guard goes right after it and a
    hoisted call right before it, so LibCST needs nothing around it.
    """
    ranges = sorted(
        [((plan.statement.line, plan.statement.end_line), plan) for plan in plans], key=lambda item: item[0]
    )
    merged: list[tuple[tuple[int, int], list[FixPlan]]] = []
    for (first, last), plan in ranges:
        if merged and first <= merged[-1][0][1]:
            (merged_first, merged_last), group = merged[-1]
            merged[-1] = ((merged_first, max(merged_last, last)), [*group, plan])
        else:
            merged.append(((first, last), [plan]))
    return merged


def rewrite_segment(
    segment: str, first_line: int, plans: Sequence[FixPlan], torch_name: str, unit: str, newline: str
) -> str:
    """One definition's lines with its plans carried out.

    An indented definition is parsed under an `if True:` header line (removed again), so that every
    column stays where it is in the file.
    """
    indented = segment[:1] in (" ", "\t")
    header = f"if True:{line_ending(segment)}" if indented else ""
    shift = first_line - 1 - (1 if header else 0)
    try:
        module = cst.parse_module(header + segment)
    except cst.ParserSyntaxError as error:
        raise FixError(f"LibCST cannot parse the code around line {first_line} ({error.message})") from error
    shifted = [shift_plan(plan, -shift) for plan in plans]
    inserter = GuardInserter(shifted, torch_name, module, unit, newline)
    code = cst.MetadataWrapper(module, unsafe_skip_copy=True).visit(inserter).code
    if segment.endswith("\r") and not code.endswith(("\r", "\n")):
        code += "\r"  # LibCST drops a module's last line break when it is a lone `\r`
    missing = inserter.unplaced()
    if missing:
        raise FixError(f"could not place the fix for the call on line {missing[0].call.line + shift}")
    if not code.startswith(header):
        raise FixError(f"the code around line {first_line} could not be rewritten in place")
    return code[len(header) :]


def shift_plan(plan: FixPlan, lines: int) -> FixPlan:
    def moved(span: Span) -> Span:
        return Span(span.line + lines, span.col, span.end_line + lines, span.end_col)

    return plan._replace(statement=moved(plan.statement), call=moved(plan.call))


def line_ending(text: str) -> str:
    first_line = split_lines(text, keepends=True)[0] if text else "\n"
    stripped = first_line.rstrip("\r\n")
    return first_line[len(stripped) :] or "\n"


def indent_unit(text: str) -> str:
    """The file's indentation step, from its first indented block ("    " if it has none)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.INDENT:
                return token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return "    "


class GuardInserter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, plans: Sequence[FixPlan], torch_name: str, module: cst.Module, unit: str, newline: str) -> None:
        super().__init__()
        self.torch_name = torch_name
        self.module = module
        self.unit = unit
        self.newline = newline
        """The file's line ending (that of its first line, as LibCST takes it), for every inserted line."""
        self.guards_after: dict[Position, list[str]] = {}
        self.hoists_before: dict[Position, list[FixPlan]] = {}
        self.hoists_by_call: dict[tuple[int, int, int, int], FixPlan] = {}
        self.hoisted_calls: dict[FixPlan, cst.BaseExpression] = {}
        self.rewrites_by_call: dict[tuple[int, int, int, int], FixPlan] = {}
        self.placed: set[FixPlan] = set()
        self.plans = list(plans)
        for plan in plans:
            anchor = (plan.statement.line, plan.statement.col)
            if plan.kind is FixKind.GUARD_AFTER:
                targets = self.guards_after.setdefault(anchor, [])
                targets.extend(target for target in plan.targets if target not in targets)
            elif plan.kind is FixKind.HOIST:
                self.hoists_before.setdefault(anchor, []).append(plan)
                call = plan.call
                self.hoists_by_call[(call.line, call.col, call.end_line, call.end_col)] = plan
            elif plan.kind is FixKind.DEVICE_REWRITE:
                call = plan.call
                self.rewrites_by_call[(call.line, call.col, call.end_line, call.end_col)] = plan

    def unplaced(self) -> list[FixPlan]:
        return [plan for plan in self.plans if plan not in self.placed]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        where = self.position(original_node)
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        rewrite = self.rewrites_by_call.get(key)
        if rewrite is not None and rewrite.rewrite is not None:
            self.placed.add(rewrite)
            return rewritten_arange(updated_node, rewrite.rewrite)
        plan = self.hoists_by_call.get(key)
        if plan is None:
            return updated_node
        self.hoisted_calls[plan] = updated_node.with_changes(lpar=[], rpar=[])
        return cst.Name(plan.hoisted_name, lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self.expand(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self.expand(original_node.body, updated_node.body))

    def expand(
        self, originals: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement]:
        body: list[cst.BaseStatement] = []
        for original, statement in zip(originals, updated, strict=False):
            anchor = self.anchor(original)
            hoisted = self.hoisted_statements(anchor)
            if hoisted:
                hoisted[0] = hoisted[0].with_changes(leading_lines=getattr(statement, "leading_lines", ()))
                statement = statement.with_changes(leading_lines=[])
            body.extend([*hoisted, statement, *self.guards_for(anchor)])
        return body

    def anchor(self, statement: cst.BaseStatement) -> Position:
        node: cst.CSTNode = statement
        if isinstance(statement, cst.SimpleStatementLine) and statement.body:
            node = statement.body[0]
        where = self.position(node)
        return where.start.line, where.start.column

    def hoisted_statements(self, anchor: Position) -> list[cst.BaseStatement]:
        statements: list[cst.BaseStatement] = []
        for plan in self.hoists_before.get(anchor, []):
            call = self.hoisted_calls.get(plan)
            if call is None:
                continue
            newline = self.newline
            assignment = cst.Assign(targets=[cst.AssignTarget(cst.Name(plan.hoisted_name))], value=call)
            ending = cst.TrailingWhitespace(
                newline=cst.Newline(None if newline == self.module.default_newline else newline)
            )
            statements.append(cst.SimpleStatementLine(body=[assignment], trailing_whitespace=ending))
            statements.append(self.guard(plan.hoisted_name, newline))
            self.placed.add(plan)
        return statements

    def guards_for(self, anchor: Position) -> list[cst.BaseStatement]:
        targets = self.guards_after.get(anchor, [])
        placed = [
            plan
            for plan in self.plans
            if plan.kind is FixKind.GUARD_AFTER and (plan.statement.line, plan.statement.col) == anchor
        ]
        if not targets or not placed:
            return []
        self.placed.update(placed)
        return [self.guard(target, self.newline) for target in targets]

    def guard(self, target: str, newline: str) -> cst.BaseStatement:
        return guard_statement(target, self.torch_name, self.module, self.unit, newline)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)


def guard_statement(target: str, torch_name: str, module: cst.Module, indent: str, newline: str) -> cst.BaseStatement:
    """The guard of `target` (`fixers.guard_text`), in the file's indentation and line endings."""
    statement = cst.parse_statement(guard_source(target, torch_name, indent), config=module.config_for_parsing)
    if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
        # explicit: the module's default step is inferred from the statements being fixed, not the file
        statement = statement.with_changes(body=statement.body.with_changes(indent=indent))
    if newline == module.default_newline:
        return statement
    return cast(cst.BaseStatement, statement.visit(LineEndings(newline)))


class LineEndings(cst.CSTTransformer):
    """Gives every line end of an inserted statement the file's line ending."""

    def __init__(self, newline: str) -> None:
        super().__init__()
        self.newline = newline

    def leave_Newline(self, original_node: cst.Newline, updated_node: cst.Newline) -> cst.Newline:
        return updated_node.with_changes(value=self.newline)


def bound_torch_name(tree: ast.Module) -> str:
    """The module-level name bound to torch (`import torch`, `import torch as th`), "" if none."""
    return next(iter(torch_bindings(tree)), "")


def is_future_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def torch_import_line(tree: ast.Module) -> int:
    """The line `import torch` goes before: after the docstring and `from __future__` imports.

    Computed on the original tree; the fixes only touch lines after it.
    """
    body = tree.body
    index = 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        index = 1
    while index < len(body) and is_future_import(body[index]):
        index += 1
    if index:
        return (body[index - 1].end_lineno or 1) + 1
    return first_line_of(body[0])


def with_torch_import(text: str, before_line: int) -> str:
    lines = split_lines(text, keepends=True)
    lines.insert(before_line - 1, f"import torch{line_ending(text)}")
    return "".join(lines)
