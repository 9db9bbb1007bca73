"""What a class does with its `self.attr` attributes, from one walk of the class: the values bound
to each, the attributes a method is called on, and the annotations given to them."""

from __future__ import annotations

import ast

from lint_rules.engine import expressions as ex
from lint_rules.engine.counters import INT_VALUE, CountReader, Function
from lint_rules.engine.definitions import simple_statements

TENSOR_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "arange", "zeros_like", "ones_like"})


class AttributeBindings:
    def __init__(self) -> None:
        self.values: dict[str, list[ast.expr]] = {}
        """`self.attr = value` (also `+=` and annotated) anywhere in the class."""
        self.called: set[str] = set()
        """`self.attr.method(...)` or `self.attr[i] = ...` seen: the attribute is an object (not an int)
        whose contents may change."""
        self.annotations: dict[str, ast.expr] = {}
        """`attr: X` in the class body, `self.attr: X = ...` in a method."""
        self.contents: dict[str, list[ast.expr | None]] = {}
        """What goes into a container attribute: `self.layers.append(v)`, `.insert(i, v)`, `self.layers[i]
        = v` give `v`; a method that may put in anything else (`extend`, an unknown one) gives None."""
        self.init_keywords: dict[str, list[ast.expr]] = {}
        """The keywords the class passes to a base's `__init__` (`super().__init__(layer_class_to_replicate=X)`)."""


def attribute_bindings(cls: ast.ClassDef) -> AttributeBindings:
    """From the statements of the class's methods (a method called on an attribute,
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
    bound_in: dict[int, tuple[Function, bool]] = {}
    for method in methods.values():
        for node in simple_statements(method.body):
            record_binding(found, node, method, bound_in)
            for call in calls_of(node):
                record_call(found, call)
    count_counters(found, CountReader(methods), bound_in)
    return found


def count_counters(found: AttributeBindings, counts: CountReader, bound_in: dict[int, tuple[Function, bool]]) -> None:
    """An attribute that starts as an int (`self.n = 0`) is a counter: each other value bound to it
    that is a count (`counters`) stands as INT_VALUE."""
    for attribute, values in found.values.items():
        if any(map(ex.is_structurally_int, values)):
            found.values[attribute] = [
                INT_VALUE
                if id(value) in bound_in and counts.is_count(value, attribute, *bound_in[id(value)])
                else value
                for value in values
            ]


def record_binding(
    found: AttributeBindings, node: ast.stmt, method: Function, bound_in: dict[int, tuple[Function, bool]]
) -> None:
    """`bound_in`: the method a value is bound to an attribute in, and whether it is added (`+=`, `-=`)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        bound_in[id(node.value)] = (method, False)
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            record_value(found, target, node.value)
            if isinstance(target, ast.Subscript) and self_attribute(target.value):
                found.called.add(self_attribute(target.value))  # `self.layers[0] = ...` changes its entries
                found.contents.setdefault(self_attribute(target.value), []).append(node.value)
        if self_attribute(node.value):  # `layers = self.layers`: anything may go in through the alias
            found.contents.setdefault(self_attribute(node.value), []).append(None)
    elif isinstance(node, ast.AugAssign):
        increment = isinstance(node.op, (ast.Add, ast.Sub))
        if increment:
            bound_in[id(node.value)] = (method, True)
        record_value(found, node.target, node.value)
    if isinstance(node, ast.AnnAssign) and self_attribute(node.target):
        found.annotations[self_attribute(node.target)] = node.annotation


def calls_of(statement: ast.stmt) -> list[ast.Call]:
    """The calls of an expression statement, nested ones too (`[self.layers.append(x) for ...]`)."""
    if not isinstance(statement, ast.Expr):
        return []
    return [node for node in ast.walk(statement.value) if isinstance(node, ast.Call)]


def record_call(found: AttributeBindings, call: ast.Call) -> None:
    called = call.func
    if isinstance(called, ast.Attribute) and self_attribute(called.value):
        found.called.add(self_attribute(called.value))
        record_content(found, self_attribute(called.value), call)
    elif (
        isinstance(called, ast.Attribute) and called.attr == "__init__"
    ):  # `super().__init__(...)`, `Base.__init__(self, ...)`
        for keyword in call.keywords:
            if keyword.arg:
                found.init_keywords.setdefault(keyword.arg, []).append(keyword.value)


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
