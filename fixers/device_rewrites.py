"""The LibCST side of the device-preserving fix: `torch.arange(a, a + n, ...)` rewritten as
`torch.arange(n, ...) + a`, the engine's plan (`lint_rules.engine.fixes.deviceplan`) carried out.

Only the call changes: its first bound goes, the span takes the second bound's place (with that
argument's comma and whitespace), every keyword stays as written, `device=` is added only when the
plan names the device the value is moved to, and the start is added after the call.
"""

from __future__ import annotations

import libcst as cst

from lint_rules.findings import DeviceRewrite

ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer)


def rewritten_arange(call: cst.Call, rewrite: DeviceRewrite) -> cst.BaseExpression:
    """`call` (the node as updated by the other fixes) as the sum the plan describes."""
    start_arg, end_arg = call.args[0], call.args[1]
    start, end = start_arg.value, end_arg.value
    if rewrite.span_at == "start-right":
        assert isinstance(start, cst.BinaryOperation)
        span = start.right
    else:
        assert isinstance(end, cst.BinaryOperation)
        span = end.right if rewrite.span_at == "end-right" else end.left
    args = [end_arg.with_changes(value=span), *call.args[2:]]
    if rewrite.device:
        args = with_device(args, cst.parse_expression(rewrite.device))
    new_call = call.with_changes(args=args, lpar=[], rpar=[])
    total = cst.BinaryOperation(left=new_call, operator=cst.Add(), right=parenthesized(start))
    if call.lpar:
        return total.with_changes(lpar=call.lpar, rpar=call.rpar)
    if rewrite.parenthesize:
        return total.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return total


def parenthesized(expression: cst.BaseExpression) -> cst.BaseExpression:
    """The start as the right operand of `+`: as written when it is an atom or in parentheses."""
    if isinstance(expression, ATOMS) or expression.lpar:
        return expression
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def with_device(args: list[cst.Arg], device: cst.BaseExpression) -> list[cst.Arg]:
    """`device=...` appended; a trailing comma stays the last thing in the call."""
    last = args[-1]
    keyword = cst.Arg(
        value=device,
        keyword=cst.Name("device"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        comma=last.comma,
    )
    separated = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*args[:-1], separated, keyword]
