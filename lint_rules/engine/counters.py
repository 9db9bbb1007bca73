"""Counters a cache class keeps as Python ints: `self._seen_tokens = 0`, then `self._seen_tokens +=
n` in `update` and `self._seen_tokens = max_length` in `crop`. A value bound to `self.attr` is a
*count* when its form says it is an int, or when it is built from counts only: a parameter annotated
`int`, a parameter added to the counter (`+= q_len`: trusted to be a count, see README Limits), a
local bound only to counts, the counter itself, a method of the class annotated `-> int`, and
arithmetic, conditionals, `int()`, `len()`, `max()`, `min()` of those. A tensor method (`mask.sum()`),
a subscript or any other call is not a count.
"""

from __future__ import annotations

import ast

from lint_rules.engine import expressions as ex

Function = ast.FunctionDef | ast.AsyncFunctionDef

MAX_DEPTH = 3
"""How many locals deep a count is followed (`n = m + 1`, `m = x.shape[1]`)."""
COUNTING_BUILTINS = frozenset({"int", "len", "max", "min", "abs"})


def is_count(value: ast.expr, attribute: str, method: Function, methods: dict[str, Function], increment: bool) -> bool:
    """Whether `value`, bound to `self.<attribute>` in `method` (added to it when `increment`), is a count."""
    return CountReader(attribute, method, methods, increment).is_count(value, 0)


class CountReader:
    def __init__(self, attribute: str, method: Function, methods: dict[str, Function], increment: bool) -> None:
        self.attribute = attribute
        self.method = method
        self.methods = methods
        self.increment = increment

    def is_count(self, value: ast.expr, depth: int) -> bool:
        if ex.is_structurally_int(value):
            return True
        if isinstance(value, ast.IfExp):
            return self.is_count(value.body, depth) and self.is_count(value.orelse, depth)
        if isinstance(value, ast.BinOp):
            return (
                not isinstance(value.op, ast.Div)
                and self.is_count(value.left, depth)
                and self.is_count(value.right, depth)
            )
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            return self.is_count(value.operand, depth)
        if isinstance(value, ast.Name):
            return self.is_count_name(value.id, depth)
        if ex.dotted_name(value) == f"self.{self.attribute}":
            return True
        return isinstance(value, ast.Call) and self.is_count_call(value, depth)

    def is_count_call(self, call: ast.Call, depth: int) -> bool:
        name = ex.called_name(call)
        if name in ("int", "len"):
            return True
        if name in COUNTING_BUILTINS:
            return bool(call.args) and all(self.is_count(argument, depth) for argument in call.args)
        owner, _, method_name = name.rpartition(".")
        called = self.methods.get(method_name) if owner == "self" else None
        return called is not None and ex.is_int_annotation(called.returns)

    def is_count_name(self, name: str, depth: int) -> bool:
        parameter = next((argument for argument in ex.arguments_of(self.method) if argument.arg == name), None)
        bindings = local_bindings(self.method, name)
        if parameter is not None and not (self.increment or ex.is_int_annotation(parameter.annotation)):
            return False
        if parameter is None and not bindings:
            return False  # a global or a free variable
        return depth < MAX_DEPTH and all(bound is not None and self.is_count(bound, depth + 1) for bound in bindings)


SHAPE_ELEMENT = ast.Constant(1)
"""Stands for an element unpacked from `x.shape`: an int."""


def local_bindings(method: Function, name: str) -> list[ast.expr | None]:
    """What the method binds `name` to: the value of an assignment (`+=` too), an int for an element of
    `a, name = x.shape`, and None for any other binding (a loop target, `with`, another unpacking)."""
    known: list[ast.expr | None] = []
    stores = 0
    for node in ast.walk(method):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores += 1
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == name:
                    known.append(node.value)
                elif isinstance(target, ast.Tuple) and any(
                    isinstance(element, ast.Name) and element.id == name for element in target.elts
                ):
                    known.append(SHAPE_ELEMENT if ex.is_shape(node.value) else None)
    return known if stores == len(known) else [*known, None]
