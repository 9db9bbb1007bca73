"""What a class does with its `self.attr` attributes, from one walk of the class: the values bound
to each, the attributes a method is called on, and the annotations given to them."""

from __future__ import annotations

import ast
import dataclasses

from lint_rules.engine import expressions as ex
from lint_rules.engine.definitions import simple_statements

TENSOR_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "arange", "zeros_like", "ones_like"})


@dataclasses.dataclass
class AttributeBindings:
    values: dict[str, list[ast.expr]] = dataclasses.field(default_factory=dict)
    """`self.attr = value` (also `+=` and annotated) anywhere in the class."""
    called: set[str] = dataclasses.field(default_factory=set)
    """`self.attr.method(...)` or `self.attr[i] = ...` seen: the attribute is an object (not an int)
    whose contents may change."""
    annotations: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    """`attr: X` in the class body, `self.attr: X = ...` in a method."""


def attribute_bindings(cls: ast.ClassDef) -> AttributeBindings:
    """From the statements of the class's methods (a method call that is a statement of its own,
    `self.cumulative_length.zero_()`, marks the attribute as an object)."""
    found = AttributeBindings()
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found.annotations[statement.target.id] = statement.annotation
    methods = [statement for statement in cls.body if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for method in methods:
        for node in simple_statements(method.body):
            record_statement(found, node, method)
    return found


def record_statement(found: AttributeBindings, node: ast.stmt, method: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            record_value(found, target, node.value)
            if isinstance(target, ast.Subscript) and self_attribute(target.value):
                found.called.add(self_attribute(target.value))  # `self.layers[0] = ...` changes its entries
    elif isinstance(node, ast.AugAssign):
        record_value(found, node.target, COUNTED if is_count_increment(node, method) else node.value)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        record_value(found, node.target, node.value)
    if isinstance(node, ast.AnnAssign) and self_attribute(node.target):
        found.annotations[self_attribute(node.target)] = node.annotation
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        called = node.value.func
        if isinstance(called, ast.Attribute) and self_attribute(called.value):
            found.called.add(self_attribute(called.value))


COUNTED = ast.Constant(1)
"""Stands for what a count increment adds: an int."""


def is_count_increment(node: ast.AugAssign, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`self.n += k` where `k` is structurally an int, or a plain name that the method binds only to
    ints (`_, _, k, _ = x.shape`) or takes as a parameter: a counter, which the class keeps as a Python
    int (README Limits: a parameter is trusted to be a count)."""
    if not isinstance(node.op, (ast.Add, ast.Sub)) or not self_attribute(node.target):
        return False
    if ex.is_structurally_int(node.value):
        return True
    if not isinstance(node.value, ast.Name):
        return False
    name = node.value.id
    stores = [
        bound
        for bound in ast.walk(method)
        if isinstance(bound, ast.Name) and bound.id == name and isinstance(bound.ctx, ast.Store)
    ]
    if not stores:
        return name in {argument.arg for argument in ex.arguments_of(method)}
    return len(stores) == len(int_bindings(method, name))


def int_bindings(method: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.stmt]:
    """The statements that bind `name` to an int: `name = <int>` or `a, name, b = x.shape`."""
    found: list[ast.stmt] = []
    for node in ast.walk(method):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == name and ex.is_structurally_int(node.value):
            found.append(node)
        elif isinstance(target, ast.Tuple) and ex.is_shape(node.value):
            found.extend(node for element in target.elts if isinstance(element, ast.Name) and element.id == name)
    return found


def record_value(found: AttributeBindings, target: ast.expr, value: ast.expr) -> None:
    attribute = self_attribute(target)
    if attribute:
        found.values.setdefault(attribute, []).append(value)


def self_attribute(node: ast.expr) -> str:
    """`attr` for `self.attr`, "" for anything else."""
    key = ex.dotted_name(node)
    return key.removeprefix("self.") if key.startswith("self.") and key.count(".") == 1 else ""


def is_new_tensor(value: ast.expr) -> bool:
    """`torch.zeros(...)`, `torch.tensor(...)` and the like (any alias of torch)."""
    if not isinstance(value, ast.Call):
        return False
    module, _, function = ex.called_name(value).rpartition(".")
    return bool(module) and function in TENSOR_FACTORIES
