"""The device-preserving fix: a use rewritten so that the length stays a tensor, on the device.

`torch.arange(a, a + n, ...)` becomes `torch.arange(n, ...) + a`, the compile-friendly pattern
upstream transformers uses: identical values for an int, a 0-dim and a shape-(1,) `a`, and no graph
break (the original breaks the graph with a tensor and raises `TypeError` with a shape-(1,) one).
Measured under Inductor with tests/runtime/device_forms.py, which also records the candidates
declined for other uses (slices, `narrow`, `index_select`, sizes): they have no form that is
identical for every value.

The guard stays the fix on the host; this one is chosen where the guard would be unsafe (a compiled
region) or impossible, use by use. A use that cannot be rewritten says why in its plan's reason.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import NamedTuple

from lint_rules.engine.facts.definitions import spans_line
from lint_rules.engine.facts.expressions import called_name, dotted_name, method_name
from lint_rules.engine.facts.source_text import SourceText
from lint_rules.engine.fixes.torch_name import torch_name_refusal
from lint_rules.findings import DeviceRewrite, FixKind, FixPlan, FixSafety
from lint_rules.rules import SLG002, SLG003, SLG004

INT64_DTYPES = frozenset({"long", "int64"})
SHAPE_METHODS = frozenset(
    {"view", "reshape", "expand", "unsqueeze", "squeeze", "flatten", "permute", "transpose", "repeat", "contiguous"}
)
"""Methods that change a tensor's shape, not its values or device: the value may pass through them
on its way to `.to(device)`."""
PURE_CALLS = frozenset({"len"})
PURE_METHODS = frozenset({"size", "dim", "numel"})
SUM_CONTEXTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.keyword, ast.Tuple, ast.List, ast.Expr)
"""Parents in which `arange(...) + a` needs no parentheses (also an argument of a call)."""

NO_DEVICE_FORM = {
    SLG002.code: (
        "a slice bound or index has no device form identical for every value (`x[:, p:]` needs unbacked "
        "symbols or a static maximum plus a mask; `narrow` rejects a shape-(1,) start; `index_select` "
        "differs where a slice would stop at the end)"
    ),
    SLG003.code: "a size or count has no device form identical for every value",
    SLG004.code: "a Python branch needs the value on the host",
}
ONLY_ARANGE = "only the bounds of `torch.arange(start, end, ...)` have a device-preserving rewrite"


class UseSite(NamedTuple):
    """Where a finding's use sits: its node, the statements around it, their parents."""

    node: ast.AST
    code: str
    owner: ast.AST
    source: SourceText
    tree: ast.Module
    compiled: bool = False
    """The use is in a compiled region."""


def plan_for_use(site: UseSite, origin_plan: FixPlan) -> FixPlan:
    """The plan for one finding: the origin's guard where it is safe, else the device rewrite of the
    use where there is one, else the origin's plan with the reason the use is not rewritten."""
    if origin_plan.safety is FixSafety.SAFE:
        return origin_plan
    if site.code != SLG003.code:  # the bounds of torch.arange are size arguments
        return declined(site, origin_plan, NO_DEVICE_FORM.get(site.code, ONLY_ARANGE))
    parents = parents_around(site.owner, getattr(site.node, "lineno", 0))
    call = arange_of(site.node, parents)
    if call is None:
        return declined(site, origin_plan, NO_DEVICE_FORM.get(site.code, ONLY_ARANGE))
    statement = statement_of(call, parents)
    rewrite = device_rewrite(call, statement, parents, site.source)
    if not isinstance(rewrite, str) and span_is_the_length(call, rewrite, origin_plan):
        rewrite = "the span is this length itself: it would stay a size"
    if not isinstance(rewrite, str):
        rewrite = (
            torch_name_refusal(
                site.tree, site.source.text, site.owner, dotted_name(call.func).partition(".")[0], statement.lineno
            )
            or rewrite
        )
    if isinstance(rewrite, str):
        return declined(site, origin_plan, rewrite)
    span = site.source.span
    return FixPlan(
        FixKind.DEVICE_REWRITE,
        FixSafety.SAFE,
        span(statement),
        span(call),
        scope_lines=origin_plan.scope_lines,
        rewrite=rewrite,
    )


def declined(site: UseSite, plan: FixPlan, why: str) -> FixPlan:
    """The origin's plan, saying why the use is not rewritten on the device where a device form is what
    the use needs: the guard is unsafe (compiled code, a returned value) or the use is compiled. A host
    use whose guard cannot be placed keeps only the reason for that (a device form found is still taken)."""
    return with_note(plan, why) if plan.safety is FixSafety.UNSAFE or site.compiled else plan


def with_note(plan: FixPlan, why: str) -> FixPlan:
    note = f"not rewritten on the device: {why}"
    return plan._replace(reason=f"{plan.reason}; {note}" if plan.reason else note)


def parents_around(owner: ast.AST, line: int) -> dict[int, ast.AST]:
    """The parent of each node of the statements of `owner` that span `line` (the statements of their
    blocks included, not what those hold): all that the questions about a use on that line need, at
    a fraction of the cost of the whole function's map."""
    parents: dict[int, ast.AST] = {}
    pending = [owner]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            if not isinstance(child, ast.stmt) or spans_line(child, line):
                pending.append(child)
    return parents


def arange_of(node: ast.AST, parents: dict[int, ast.AST]) -> ast.Call | None:
    """The `torch.arange(...)` call whose first or second positional argument (or `start=`/`end=`) is `node`."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg in ("start", "end"):
        parent = parents.get(id(parent))
    if not isinstance(parent, ast.Call) or not called_name(parent).endswith(".arange"):
        return None
    bounds = [*parent.args[:2], *(keyword.value for keyword in parent.keywords)]
    return parent if any(argument is node for argument in bounds) else None


def statement_of(node: ast.AST, parents: dict[int, ast.AST]) -> ast.stmt:
    current = parents[id(node)]
    while not isinstance(current, ast.stmt):
        current = parents[id(current)]
    return current


def device_rewrite(
    call: ast.Call, statement: ast.stmt, parents: dict[int, ast.AST], source: SourceText
) -> DeviceRewrite | str:
    """How to rewrite `call`, or why it cannot be rewritten identically."""
    reason = call_refusal(call)
    if reason:
        return reason
    start, end = call.args
    span_at = span_position(start, end)
    if not span_at:
        return f"the span `{ast.unparse(end)} - {ast.unparse(start)}` is not `n` in `a + n` or `b - n`"
    impure = next((part for part in (start, end) if not is_pure(part)), None)
    if impure is not None:
        return f"`{ast.unparse(impure)}` would be evaluated in another order"
    device = ""
    if not any(keyword.arg == "device" for keyword in call.keywords):
        moved_to = device_moved_to(call, statement, parents)
        if moved_to is None:
            return (
                "the call has no `device=` and its value is not moved to a device right after "
                "(a length on another device than the arange's would be an error)"
            )
        device = ast.unparse(moved_to)
    return DeviceRewrite(span_at, device=device, parenthesize=needs_parentheses(call, parents))


def span_is_the_length(call: ast.Call, rewrite: DeviceRewrite, origin_plan: FixPlan) -> bool:
    """The span mentions a name the length is bound to (`arange(past, past + other)`, for `other`)."""
    span = span_node(call, rewrite)
    names = {dotted_name(node) for node in ast.walk(span) if isinstance(node, (ast.Name, ast.Attribute))}
    return bool(names & set(origin_plan.targets))


def call_refusal(call: ast.Call) -> str:
    if len(call.args) == 1:
        return "`torch.arange(n)` with a tensor `n` is a size: no device form identical for every value"
    if len(call.args) != 2 or any(isinstance(argument, ast.Starred) for argument in call.args):
        return "only two positional bounds are rewritten (no step, no unpacking)"
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg in ("start", "end", "step", "out"):
            return f"the call passes `{keyword.arg or '**'}` by keyword"
        if keyword.arg == "dtype" and dotted_name(keyword.value).rpartition(".")[2] not in INT64_DTYPES:
            return (
                f"dtype `{ast.unparse(keyword.value)}`: adding a shape-(1,) int64 length would change "
                "the result's dtype"
            )
    return ""


def span_position(start: ast.expr, end: ast.expr) -> str:
    """Where `end - start` is written as a term of its own ("" if it is not)."""
    same = ast.dump(start)
    if isinstance(end, ast.BinOp) and isinstance(end.op, ast.Add):
        if ast.dump(end.left) == same and not mentions(end.right, start):
            return "end-right"
        if ast.dump(end.right) == same and not mentions(end.left, start):
            return "end-left"
    if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Sub) and ast.dump(start.left) == ast.dump(end):
        return "start-right" if not mentions(start.right, end) else ""
    return ""


def mentions(expression: ast.expr, term: ast.expr) -> bool:
    wanted = ast.dump(term)
    return any(ast.dump(node) == wanted for node in ast.walk(expression) if isinstance(node, ast.expr))


def is_pure(expression: ast.expr) -> bool:
    """Nothing in it runs code with effects: names, attributes, constants, arithmetic, indexes,
    `len()`, `.size()`, `.shape`."""
    for node in ast.walk(expression):
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda)):
            return False
        if isinstance(node, ast.Call) and called_name(node) not in PURE_CALLS and method_name(node) not in PURE_METHODS:
            return False
    return True


def device_moved_to(call: ast.Call, statement: ast.stmt, parents: dict[int, ast.AST]) -> ast.expr | None:
    """The device that the value is moved to by the next statement (None when it is not).

    `v = torch.arange(a, a + n)` followed by `v = v.view(...).expand(...).to(x.device)`: the value is
    used nowhere else before it is on `x.device`, so creating it there gives the same tensor.
    """
    target = single_name_target(statement)
    if target is None or not (isinstance(statement, ast.Assign) and statement.value is call):
        return None
    following = next_statement(statement, parents)
    if following is None or single_name_target(following) != target:
        return None
    assert isinstance(following, (ast.Assign, ast.AnnAssign))
    value = following.value
    uses = [node for node in ast.walk(following) if isinstance(node, ast.Name) and node.id == target]
    device = moved_device(value, target) if value is not None and len(uses) == 2 else None
    return device if device is not None and is_pure(device) else None


def single_name_target(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign):
        target = statement.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def next_statement(statement: ast.stmt, parents: dict[int, ast.AST]) -> ast.stmt | None:
    parent = parents.get(id(statement))
    for field in ("body", "orelse", "finalbody", "handlers"):
        block: Sequence[ast.AST] = getattr(parent, field, None) or ()
        for index, item in enumerate(block):
            if item is statement:
                later = block[index + 1] if index + 1 < len(block) else None
                return later if isinstance(later, ast.stmt) else None
    return None


def moved_device(value: ast.expr, target: str) -> ast.expr | None:
    """`x.device` in `target.<shape methods>.to(x.device)`, None for any other expression."""
    if not (isinstance(value, ast.Call) and method_name(value) == "to"):
        return None
    device = to_device_argument(value)
    assert isinstance(value.func, ast.Attribute)
    receiver = value.func.value
    while isinstance(receiver, ast.Call) and method_name(receiver) in SHAPE_METHODS:
        assert isinstance(receiver.func, ast.Attribute)
        receiver = receiver.func.value
    if not (isinstance(receiver, ast.Name) and receiver.id == target) or device is None:
        return None
    return None if mentions(device, receiver) else device


def to_device_argument(call: ast.Call) -> ast.expr | None:
    """The device of `.to(x.device)`, `.to(device)`, `.to(device=...)`; None when it may be a dtype."""
    for keyword in call.keywords:
        if keyword.arg == "device":
            return keyword.value
    if not call.args:
        return None
    first = call.args[0]
    name = dotted_name(first)
    return first if name.endswith(".device") or name.rpartition(".")[2] == "device" else None


def needs_parentheses(call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(call))
    if isinstance(parent, ast.Call):
        return parent.func is call
    return not isinstance(parent, SUM_CONTEXTS)


def rewritten_call(call: ast.Call, rewrite: DeviceRewrite) -> ast.expr:
    """The expression the rewrite gives, as an `ast` node: what the safety net expects in its place."""
    span = span_node(call, rewrite)
    keywords = list(call.keywords)
    if rewrite.device:
        keywords.append(ast.keyword(arg="device", value=ast.parse(rewrite.device, mode="eval").body))
    new_call = ast.Call(func=call.func, args=[span], keywords=keywords)
    return ast.BinOp(left=new_call, op=ast.Add(), right=call.args[0])


def span_node(call: ast.Call, rewrite: DeviceRewrite) -> ast.expr:
    start, end = call.args
    bound = start if rewrite.span_at == "start-right" else end
    assert isinstance(bound, ast.BinOp)
    return bound.left if rewrite.span_at == "end-left" else bound.right
