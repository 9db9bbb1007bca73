"""A fix carried out and checked: the plans applied (`fixers.guards`), the result re-parsed,
compared with what it was made from (`fixers.verify`) and re-analyzed: what it still has to fix is
carried out in a further round, so that a second run has nothing to do. Nothing may be written
unless `carry_out` returns."""

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


MAX_ROUNDS = 3
"""A guard may leave a tensor length beside a value that is now an int (`data += b` once `b` is
guarded, where `data` was bound to a length too): a finding of its own, fixed by the next round."""


def carry_out(
    text: str, plans: Sequence[FixPlan], path: str, settings: Settings, tree: ast.Module | None = None
) -> str:
    """`text` with the plans carried out, checked by the safety net and re-analyzed; what the result
    still has to fix is carried out in a further round, up to `MAX_ROUNDS` in all.

    Raises FixError, and nothing must be written, when a round's result does not parse, changes more
    than its inserted lines, or the last round's would still have something to fix (a second run
    would change more).
    """
    old_tree = tree or ast.parse(text)
    for _ in range(MAX_ROUNDS):
        new_text, plans = carry_out_once(text, plans, path, settings, old_tree)
        if not plans:
            return new_text
        text, old_tree = new_text, ast.parse(new_text)
    raise FixError("the fix did not converge (a second run would change more)")


def carry_out_once(
    text: str, plans: Sequence[FixPlan], path: str, settings: Settings, old_tree: ast.Module
) -> tuple[str, list[FixPlan]]:
    """One round: the result, checked by the safety net, and the plans it still has to carry out."""
    new_text = apply_plans(text, plans, old_tree)
    try:
        new_tree = ast.parse(new_text)
    except SyntaxError as error:
        raise FixError(f"the rewrite does not parse (line {error.lineno}: {error.msg})") from error
    again = check_tree(path, new_text, new_tree, settings)
    if again.error:
        raise FixError(f"the rewrite cannot be checked again ({again.error})")
    problem = rewrite_problem(text, new_text, old_tree, new_tree, plans)  # consumes both trees
    if problem:
        raise FixError(problem)
    return new_text, applicable_plans(again.findings, settings.unsafe_fixes)
