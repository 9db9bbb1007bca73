"""What a class does with its `self.attr` attributes, from one walk of the class: the values bound
to each, the attributes a method is called on, and the annotations given to them."""

from __future__ import annotations

import ast
import dataclasses

from lint_rules.engine import expressions as ex
from lint_rules.engine.counters import Function, is_count
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
    contents: dict[str, list[ast.expr | None]] = dataclasses.field(default_factory=dict)
    """What goes into a container attribute: `self.layers.append(v)`, `.insert(i, v)`, `self.layers[i]
    = v` give `v`; a method that may put in anything else (`extend`, an unknown one) gives None."""
    super_init_keywords: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    """The keywords the class passes to its base's `__init__` (`super().__init__(layer_class_to_replicate=X)`)."""


def attribute_bindings(cls: ast.ClassDef) -> AttributeBindings:
    """From the statements of the class's methods (a method call that is a statement of its own,
    `self.cumulative_length.zero_()`, marks the attribute as an object)."""
    found = AttributeBindings()
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found.annotations[statement.target.id] = statement.annotation
    methods = {
        statement.name: statement
        for statement in cls.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for method in methods.values():
        for node in simple_statements(method.body):
            record_statement(found, node, method, methods)
    return found


def record_statement(found: AttributeBindings, node: ast.stmt, method: Function, methods: dict[str, Function]) -> None:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            record_value(found, target, counted(node.value, target, method, methods, increment=False))
            if isinstance(target, ast.Subscript) and self_attribute(target.value):
                found.called.add(self_attribute(target.value))  # `self.layers[0] = ...` changes its entries
                found.contents.setdefault(self_attribute(target.value), []).append(node.value)
    elif isinstance(node, ast.AugAssign):
        increment = isinstance(node.op, (ast.Add, ast.Sub))
        value = counted(node.value, node.target, method, methods, increment) if increment else node.value
        record_value(found, node.target, value)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        record_value(found, node.target, node.value)
    if isinstance(node, ast.AnnAssign) and self_attribute(node.target):
        found.annotations[self_attribute(node.target)] = node.annotation
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        called = node.value.func
        if isinstance(called, ast.Attribute) and self_attribute(called.value):
            found.called.add(self_attribute(called.value))
            record_content(found, self_attribute(called.value), node.value)
        elif is_super_init(node.value):
            found.super_init_keywords.update(
                {keyword.arg: keyword.value for keyword in node.value.keywords if keyword.arg}
            )


ADDING_METHODS = {"append": 0, "insert": 1}
"""Container methods that put one object in, and the position of that object among their arguments."""
KEEPING_METHODS = frozenset({"clear", "pop", "remove", "reverse", "sort", "copy", "index", "count"})
"""Container methods that put nothing new in."""


def record_content(found: AttributeBindings, attribute: str, call: ast.Call) -> None:
    assert isinstance(call.func, ast.Attribute)
    method = call.func.attr
    if method in KEEPING_METHODS:
        return
    position = ADDING_METHODS.get(method)
    added = call.args[position] if position is not None and len(call.args) == position + 1 else None
    found.contents.setdefault(attribute, []).append(added)


def is_super_init(call: ast.Call) -> bool:
    """`super().__init__(...)`."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and ex.called_name(func.value) == "super"
    )


COUNTED = ast.Constant(1)
"""Stands for a count bound to an attribute (`counters.is_count`): an int."""


def counted(
    value: ast.expr, target: ast.expr, method: Function, methods: dict[str, Function], increment: bool
) -> ast.expr:
    """COUNTED for a count bound to `self.attr` (not a plain int by its form alone), else the value."""
    attribute = self_attribute(target)
    if not attribute or ex.is_structurally_int(value) or not is_count(value, attribute, method, methods, increment):
        return value
    return COUNTED


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
