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
    for node in (statement for method in methods for statement in simple_statements(method.body)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                record_value(found, target, node.value)
                if isinstance(target, ast.Subscript) and self_attribute(target.value):
                    found.called.add(self_attribute(target.value))  # `self.layers[0] = ...` changes its entries
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            record_value(found, node.target, node.value)
        if isinstance(node, ast.AnnAssign) and self_attribute(node.target):
            found.annotations[self_attribute(node.target)] = node.annotation
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            called = node.value.func
            if isinstance(called, ast.Attribute) and self_attribute(called.value):
                found.called.add(self_attribute(called.value))
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
