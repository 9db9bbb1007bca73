"""The harmful uses of a tainted value, one method per kind of use, each worded by its rule.

A use is kept once per (node, rule, origin). Uses whose origin is a parameter of the function being
walked are not findings: they become the function's parameter summary (see `summarizer`).
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from lint_rules.engine.facts.transformers_api import IntParameter
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.taint import Origin, ParameterOrigin, Taint
from lint_rules.rules import RULES, SLG001, SLG002, SLG003, SLG004, SLG005, Rule


class Passing(NamedTuple):
    """A length passed down a chain of calls to the function that uses it as an int."""

    callees: tuple[str, ...]
    """The functions it is passed through, outermost first; the last one has the use."""
    detail: str
    """The use in the last one (e.g. "slice bound `m`")."""
    line: str
    """Where that use is ("11", or "11 of utils.py")."""


class Use(NamedTuple):
    node: ast.AST
    rule: Rule
    detail: str
    origin: Origin | ParameterOrigin
    scope: Scope
    passing: Passing | None = None
    """For an argument: the chain of calls to the int use (one finding reads it as one chain)."""


class Uses:
    """Collects the uses found while walking one scope."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.found: dict[tuple[int, str, int], Use] = {}
        self.statement: ast.stmt | None = None

    def int_arithmetic(self, node: ast.BinOp, taint: Taint) -> None:
        self.report(node, SLG001, SLG001.detail("binary", expr=ast.unparse(node)), taint)

    def augmented_arithmetic(self, node: ast.AugAssign, taint: Taint) -> None:
        detail = SLG001.detail("augmented", target=ast.unparse(node.target), op=operator_text(node.op))
        self.report(node, SLG001, detail, taint)

    def slice_bound(self, bound: ast.expr, taint: Taint, in_slice: bool) -> None:
        self.report(bound, SLG002, SLG002.detail("slice" if in_slice else "index", expr=ast.unparse(bound)), taint)

    def size_argument(self, argument: ast.expr, taint: Taint, callee: str) -> None:
        self.report(argument, SLG003, SLG003.detail("size", callee=callee), taint)

    def repetition_count(self, node: ast.BinOp, taint: Taint) -> None:
        self.report(node, SLG003, SLG003.detail("repetition", expr=ast.unparse(node)), taint)

    def int_comparison(self, node: ast.Call, taint: Taint, callee: str) -> None:
        self.report(node, SLG003, SLG003.detail("comparison", callee=callee), taint)

    def truth_test(self, node: ast.expr, taint: Taint) -> None:
        self.report(node, SLG004, SLG004.detail("truth", expr=ast.unparse(node)), taint)

    def match_subject(self, node: ast.expr, taint: Taint) -> None:
        self.report(node, SLG004, SLG004.detail("match", expr=ast.unparse(node)), taint)

    def int_binding(self, value: ast.expr, taint: Taint, target: str, annotated: bool) -> None:
        """The binding itself breaks the contract: a guard right after it is the fix."""
        detail = SLG005.detail("annotated" if annotated else "bound", target=target)
        self.report(value, SLG005, detail, taint, in_own_statement=False)

    def int_return(self, value: ast.expr, taint: Taint) -> None:
        self.report(value, SLG005, SLG005.detail("returned"), taint)

    def int_isinstance(self, node: ast.Call, taint: Taint) -> None:
        self.report(node, SLG005, SLG005.detail("isinstance", expr=ast.unparse(node)), taint)

    def passed_to(
        self, argument: ast.expr, taint: Taint, callee: str, parameter: str, callee_use: Use, file_name: str = ""
    ) -> None:
        """A tainted argument for a parameter that the callee uses as an int: the callee's rule.
        `file_name`: the callee's module, when it is another one."""
        line = f"{getattr(callee_use.node, 'lineno', 0)}{f' of {file_name}' if file_name else ''}"
        inner = callee_use.passing or Passing((), callee_use.detail, str(line))
        passing = Passing((callee, *inner.callees), inner.detail, inner.line)
        detail = callee_use.rule.detail(
            "passed",
            parameter=parameter,
            callees=passing.callees,
            callee_detail=passing.detail,
            callee_line=passing.line,
        )
        self.report(argument, callee_use.rule, detail, taint, passing=passing)

    def passed_to_library(self, argument: ast.expr, taint: Taint, entry: IntParameter) -> None:
        """A length passed to a transformers function that uses that parameter as an int (the table)."""
        rule = RULES[entry.code]
        passing = Passing((entry.function,), entry.use, entry.where)
        detail = rule.detail(
            "passed",
            parameter=entry.parameter,
            callees=passing.callees,
            callee_detail=entry.use,
            callee_line=entry.where,
        )
        self.report(argument, rule, detail, taint, passing=passing)

    def report(
        self,
        node: ast.AST,
        rule: Rule,
        detail: str,
        taint: Taint,
        in_own_statement: bool = True,
        passing: Passing | None = None,
    ) -> None:
        """`in_own_statement`: an int use inside the statement that binds the value, which a guard
        after that statement cannot fix."""
        for origin in taint:
            if in_own_statement and isinstance(origin, Origin) and origin.statement is self.statement:
                origin.used_in_own_statement = True
            use = Use(node, rule, detail, origin, self.scope, passing)
            self.found.setdefault((id(node), rule.code, id(origin)), use)


def operator_text(operator: ast.operator) -> str:
    return ast.unparse(ast.BinOp(left=ast.Name("a"), op=operator, right=ast.Name("b")))[2:-2]
