"""A fix carried out and checked: the plans applied (`fixers.guards`), the result re-parsed,
re-analyzed (a second run must have nothing to do) and compared with the original
(`fixers.verify`). Nothing may be written unless `carry_out` returns."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from fixers.guards import FixError, apply_plans
from fixers.verify import rewrite_problem
from lint_rules.checking import check_tree
from lint_rules.findings import Finding, FixPlan, FixSafety
from lint_rules.settings import Settings


def applicable_plans(findings: Sequence[Finding], unsafe_fixes: bool) -> list[FixPlan]:
    """The distinct fix plans behind the findings that this run may apply."""
    plans = {plan: None for finding in findings for plan in finding.plans if is_applicable(plan, unsafe_fixes)}
    return sorted(plans, key=lambda plan: (plan.statement.line, plan.call.line, plan.call.col))


def is_applicable(plan: FixPlan, unsafe_fixes: bool) -> bool:
    return plan.safety is FixSafety.SAFE or (plan.safety is FixSafety.UNSAFE and unsafe_fixes)


def carry_out(
    text: str, plans: Sequence[FixPlan], path: str, settings: Settings, tree: ast.Module | None = None
) -> str:
    """`text` with the plans carried out, checked by the safety net and re-analyzed.

    Raises FixError, and nothing must be written, when the result does not parse, changes more than
    the inserted lines, or would still have something to fix (a second run would change more).
    """
    old_tree = tree or ast.parse(text)
    new_text = apply_plans(text, plans, old_tree)
    try:
        new_tree = ast.parse(new_text)
    except SyntaxError as error:
        raise FixError(f"the rewrite does not parse (line {error.lineno}: {error.msg})") from error
    again = check_tree(path, new_text, new_tree, settings)
    if again.error or applicable_plans(again.findings, settings.unsafe_fixes):
        raise FixError("the fix did not converge (a second run would change more)")
    problem = rewrite_problem(text, new_text, old_tree, new_tree, plans)  # consumes both trees
    if problem:
        raise FixError(problem)
    return new_text
