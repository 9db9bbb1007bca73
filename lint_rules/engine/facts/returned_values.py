"""What a method returns, read from its `return` statements: a class name an annotation admits, a new
tensor, or only ints (the facts a class's length kind is built from)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attributes import COUNT_ADDED, is_new_tensor
from lint_rules.engine.facts.counters import bindings_of
from lint_rules.engine.facts.module_text import BINDING_NODES, bound_names, own_scope_nodes


def annotated_classes(annotation: ast.expr | None) -> list[str]:
    """The class names an annotation admits, None left out: `A | None`, `Optional[A]`, `Union[A, B]`, `"A"`."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return annotated_classes(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return [*annotated_classes(annotation.left), *annotated_classes(annotation.right)]
    if isinstance(annotation, ast.Subscript):
        wrapper = ex.dotted_name(annotation.value).rpartition(".")[2]
        if wrapper not in {"Optional", "Union"}:
            return ["<generic>"]
        elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        return [name for element in elements for name in annotated_classes(element)]
    if ex.is_none(annotation):
        return []
    return [ex.dotted_name(annotation) or "<unknown>"]


def returns_a_tensor(function: ast.FunctionDef | ast.AsyncFunctionDef, tensor_attributes: frozenset[str]) -> bool:
    """Some `return` of the function gives a new tensor (`torch.tensor(n)`) or `self.attr` bound only to
    new tensors: a class of the package whose length is a tensor, like transformers' `StaticLayer`."""
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            key = ex.dotted_name(node.value)
            if is_new_tensor(node.value) or (
                key.startswith("self.") and key.count(".") == 1 and key[5:] in tensor_attributes
            ):
                return True
    return False


INT_PRESERVING_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def returns_only_ints(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    int_attributes: frozenset[str],
    delegated: Callable[[ast.expr], bool] = lambda value: False,
) -> bool:
    """Every `return` of the function gives an int: structurally, through `self.attr` assigned only
    ints, as the length of an int-length object it holds (`delegated`), through a local every
    binding of which is one of those, or by adding, subtracting or multiplying such ints."""
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)]
    local_values = bindings_of(function)  # a loop, `with`, walrus or unpacking target binds None
    parameters = {argument.arg for argument in ex.arguments_of(function)}

    def is_int(value: ast.expr, through_locals: bool = True) -> bool:
        if isinstance(value, ast.IfExp):
            return is_int(value.body, through_locals) and is_int(value.orelse, through_locals)
        if isinstance(value, ast.BinOp) and isinstance(value.op, INT_PRESERVING_OPERATORS):
            return is_int(value.left, through_locals) and is_int(value.right, through_locals)
        key = ex.dotted_name(value)
        if key.startswith("self.") and key.count(".") == 1:
            return key.removeprefix("self.") in int_attributes
        if isinstance(value, ast.Name) and through_locals and value.id in local_values:
            return value.id not in parameters and all(
                bound is not None and is_int(bound, through_locals=False) for bound in local_values[value.id]
            )
        return ex.is_structurally_int(value) or delegated(value)

    return bool(returns) and all(node.value is not None and is_int(node.value) for node in returns)


def is_int_counter(values: list[ast.expr]) -> bool:
    """Every value bound in the family is an int, or a count added to it where some class of the
    family starts it at an int (`attributes.COUNT_ADDED`)."""
    added = [value for value in values if value is COUNT_ADDED]
    others = [value for value in values if value is not COUNT_ADDED]
    return all(map(ex.is_structurally_int, others)) and (not added or bool(others))


def returns_ints_by_form(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every `return` of the function's own scope gives a value that is an int by its form, whatever
    any attribute or parameter holds: an int literal, `int(...)` or `len(...)` (neither name bound
    in the function), and `+`, `-`, `*`, `//`, `%` or an if-expression of those. (`x.shape[i]` and
    `x.size(i)` are not: `x` may be any object.)"""
    own = list(own_scope_nodes(function))
    returns = [node for node in own if isinstance(node, ast.Return)]
    bound = {argument.arg for argument in ex.arguments_of(function)}
    bound.update(name for node in own if isinstance(node, BINDING_NODES) for name in bound_names(node))

    def by_form(value: ast.expr) -> bool:
        if isinstance(value, ast.Constant):
            return type(value.value) is int
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return value.func.id in ("int", "len") and value.func.id not in bound
        if isinstance(value, ast.BinOp):
            return isinstance(value.op, INT_PRESERVING_OPERATORS) and by_form(value.left) and by_form(value.right)
        if isinstance(value, ast.IfExp):
            return by_form(value.body) and by_form(value.orelse)
        return False

    return bool(returns) and all(node.value is not None and by_form(node.value) for node in returns)
