"""The LibCST codemod that carries out the engine's fix plans.

It inserts, right after the statement that binds a `get_seq_length()` result,

    if isinstance(past_length, torch.Tensor):
        past_length = int(past_length.item())

or hoists an inline call into a fresh guarded local just before its statement. It never decides
what to fix: the plans come from `lint_rules` (one engine). Also usable as a LibCST command:

    python -m libcst.tool codemod -x --no-format fixers.codemod.InsertIntGuards path/
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Sequence

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile
from libcst.metadata import CodeRange, PositionProvider

from fixers.verify import rewrite_problem
from lint_rules.checking import check_text
from lint_rules.findings import Finding, FixKind, FixPlan, FixSafety
from lint_rules.settings import Settings

Position = tuple[int, int]


class FixError(Exception):
    """A plan could not be carried out on the tree; the file must be left alone."""


def applicable_plans(findings: Sequence[Finding], unsafe_fixes: bool) -> list[FixPlan]:
    """The distinct fix plans behind the findings that this run may apply."""
    plans = {finding.fix: None for finding in findings if is_applicable(finding.fix, unsafe_fixes)}
    return sorted(plans, key=lambda plan: (plan.statement.line, plan.call.line, plan.call.col))


def is_applicable(plan: FixPlan, unsafe_fixes: bool) -> bool:
    return plan.safety is FixSafety.SAFE or (plan.safety is FixSafety.UNSAFE and unsafe_fixes)


def carry_out(module: cst.Module, plans: Sequence[FixPlan], path: str, settings: Settings) -> cst.Module:
    """The module with the plans carried out, checked by the safety net and re-analyzed.

    Raises FixError, and nothing must be written, when the result does not parse, changes more than
    the inserted lines, or would still have something to fix (a second run would change more).
    """
    text = module.code
    updated = apply_plans(module, plans, text)
    new_text = updated.code
    problem = rewrite_problem(text, new_text, plans)
    if problem:
        raise FixError(problem)
    again = check_text(path, new_text, settings)
    if again.error or applicable_plans(again.findings, settings.unsafe_fixes):
        raise FixError("the fix did not converge (a second run would change more)")
    return updated


def apply_plans(module: cst.Module, plans: Sequence[FixPlan], source_text: str) -> cst.Module:
    """The module with every plan carried out; raises FixError if one cannot be placed."""
    torch_name = bound_torch_name(source_text)
    inserter = GuardInserter(plans, torch_name or "torch", module)
    updated = cst.MetadataWrapper(module, unsafe_skip_copy=True).visit(inserter)
    missing = inserter.unplaced()
    if missing:
        raise FixError(f"could not place the fix for the call on line {missing[0].call.line}")
    return updated if torch_name else add_torch_import(updated)


class GuardInserter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, plans: Sequence[FixPlan], torch_name: str, module: cst.Module) -> None:
        super().__init__()
        self.torch_name = torch_name
        self.module = module
        self.guards_after: dict[Position, list[str]] = {}
        self.hoists_before: dict[Position, list[FixPlan]] = {}
        self.hoists_by_call: dict[tuple[int, int, int, int], FixPlan] = {}
        self.hoisted_calls: dict[FixPlan, cst.BaseExpression] = {}
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

    def unplaced(self) -> list[FixPlan]:
        return [plan for plan in self.plans if plan not in self.placed]

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        where = self.position(original_node)
        plan = self.hoists_by_call.get((where.start.line, where.start.column, where.end.line, where.end.column))
        if plan is None:
            return updated_node
        self.hoisted_calls[plan] = updated_node.with_changes(lpar=[], rpar=[])
        return cst.Name(plan.hoisted_name, lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self.expand(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self.expand(original_node.body, updated_node.body))

    def expand(
        self, originals: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement]:
        body: list[cst.BaseStatement] = []
        for original, statement in zip(originals, updated):
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
            assignment = cst.Assign(targets=[cst.AssignTarget(cst.Name(plan.hoisted_name))], value=call)
            statements.append(cst.SimpleStatementLine(body=[assignment]))
            statements.append(self.guard(plan.hoisted_name))
            self.placed.add(plan)
        return statements

    def guards_for(self, anchor: Position) -> list[cst.BaseStatement]:
        targets = self.guards_after.get(anchor, [])
        if targets:
            self.placed.update(plan for plan in self.plans if plan.kind is FixKind.GUARD_AFTER and (plan.statement.line, plan.statement.col) == anchor)
        return [self.guard(target) for target in targets]

    def guard(self, target: str) -> cst.BaseStatement:
        return guard_statement(target, self.torch_name, self.module)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)


def guard_statement(target: str, torch_name: str, module: cst.Module) -> cst.BaseStatement:
    """`if isinstance(t, torch.Tensor): t = int(t.item())`, in the module's indentation and newlines."""
    newline, indent = module.default_newline, module.default_indent
    code = f"if isinstance({target}, {torch_name}.Tensor):{newline}{indent}{target} = int({target}.item()){newline}"
    return cst.parse_statement(code, config=module.config_for_parsing)


def bound_torch_name(source_text: str) -> str:
    """The module-level name bound to torch (`import torch`, `import torch as th`), "" if none."""
    tree = ast.parse(source_text)
    for statement in runtime_top_level(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "torch":
                    return alias.asname or "torch"
                if alias.name.startswith("torch.") and alias.asname is None:
                    return "torch"
    return ""


def runtime_top_level(body: Sequence[ast.stmt]) -> list[ast.stmt]:
    """Module statements, inside top-level `if`/`try` too, but not under `if TYPE_CHECKING:`."""
    found: list[ast.stmt] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, ast.If) and "TYPE_CHECKING" not in ast.unparse(statement.test):
            found.extend(runtime_top_level([*statement.body, *statement.orelse]))
        elif isinstance(statement, ast.Try):
            found.extend(runtime_top_level([*statement.body, *statement.orelse, *statement.finalbody]))
            for handler in statement.handlers:
                found.extend(runtime_top_level(handler.body))
    return found


def add_torch_import(module: cst.Module) -> cst.Module:
    """`import torch` after the docstring and `from __future__` imports."""
    index = 0
    body = list(module.body)
    while index < len(body) and (is_docstring(body[index], index) or is_future_import(body[index])):
        index += 1
    statement = cst.parse_statement(f"import torch{module.default_newline}", config=module.config_for_parsing)
    if index < len(body) and index == 0:
        statement = statement.with_changes(leading_lines=body[0].leading_lines)
        body[0] = body[0].with_changes(leading_lines=[])
    return module.with_changes(body=[*body[:index], statement, *body[index:]])


def is_docstring(statement: cst.BaseStatement, index: int) -> bool:
    return (
        index == 0
        and isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def is_future_import(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and any(isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__" for small in statement.body)
    )


class InsertIntGuards(CodemodCommand):
    """The fixer as a LibCST codemod command."""

    DESCRIPTION = "Insert int guards after tensor-valued get_seq_length() bindings (seqlen-guard)."

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, source_methods: str = "") -> None:
        super().__init__(context)
        extra = tuple(name for name in source_methods.split(",") if name)
        defaults = Settings()
        self.settings = Settings(source_methods=(*defaults.source_methods, *extra), unsafe_fixes=unsafe_fixes)

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also fix inside compiled regions")
        arg_parser.add_argument("--source-methods", default="", help="extra comma-separated source method names")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        text = tree.code
        checked = check_text(self.context.filename or "<module>", text, self.settings)
        if checked.error:
            raise SkipFile(checked.error)
        plans = applicable_plans(checked.findings, self.settings.unsafe_fixes)
        if not plans:
            raise SkipFile("nothing to fix")
        try:
            return carry_out(tree, plans, self.context.filename or "<module>", self.settings)
        except FixError as error:
            raise SkipFile(str(error)) from error
