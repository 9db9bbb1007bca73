"""What a class does with its `self.attr` attributes, from one walk of the class: the values bound
to each, the attributes a method is called on, and the annotations given to them.

Every binding of an attribute counts: a form whose value is followed (`self.n = v`, `self.n: T = v`,
`self.n += v`, an element of `self.a, self.b = x, y` or of `self.a, self.b = t.shape`, `for self.n in
range(k)`, `setattr(self, "n", v)`, in a method or a function nested in one) binds that value; any
other (`binding_forms.py`) binds UNKNOWN_VALUE, which is neither a count nor a tensor. The class body
binds its defaults (`class_level`): `n = v` binds `v`, a `def` (a property) or any other form UNKNOWN_VALUE."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import function_bindings, scope_names, unless_shadowed
from lint_rules.engine.facts.binding_forms import UnfollowedBindings, UnfollowedReader, lines_within, mentions
from lint_rules.engine.facts.counters import INT_KEEPING_OPERATORS, INT_VALUE, CountReader, Function
from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, simple_statements, statements_within
from lint_rules.engine.facts.module_text import BINDING_NODES, bound_names

TENSOR_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "arange", "zeros_like", "ones_like"})
UNKNOWN_VALUE = ast.Name(id="<unknown binding>", ctx=ast.Load())
COUNT_ADDED = ast.Name(id="<a count added>", ctx=ast.Load())
"""`self.n += k` with `k` a count, in a class that does not bind `self.n` to an int itself (a subclass
of the class that starts it at 0): an int only where the family starts it at an int (`int_attributes`)."""
"""Stands for a value bound in a form the engine does not follow: neither a count nor a tensor."""


class AttributeBindings:
    def __init__(self) -> None:
        self.values: dict[str, list[ast.expr]] = {}
        """`self.attr = value` (also `+=` and annotated) anywhere in the class."""
        self.called: set[str] = set()
        """`self.attr.method(...)` or `self.attr[i] = ...` seen: the attribute is an object (not an int)
        whose contents may change."""
        self.annotations: dict[str, ast.expr] = {}
        """`attr: X` in the class body, `self.attr: X = ...` in a method; not one that names something
        the scope it is written in binds itself (`attribute_stores.unless_shadowed`)."""
        self.contents: dict[str, list[ast.expr | None]] = {}
        """What goes into a container attribute: `self.layers.append(v)`, `.insert(i, v)`, `self.layers[i]
        = v` give `v`; a method that may put in anything else (`extend`, an unknown one) gives None."""
        self.init_keywords: dict[str, list[ast.expr]] = {}
        """The keywords the class passes to a base's `__init__` (`super().__init__(layer_class_to_replicate=X)`)."""
        self.class_level: dict[str, list[ast.expr]] = {}
        """What the class body binds a name to (`n = 0`, a default an instance falls back on);
        UNKNOWN_VALUE for a `def` (a property), a class, an import or any other binding form."""
        self.getters: dict[str, ast.FunctionDef] = {}
        """The class body's `@property def n(self)` (`property` its only decorator), by name."""
        self.opaque = False
        """The class may bind any attribute to anything: `setattr(self, name, v)` with a name that is
        not a literal, `self.__dict__`, `vars(self)`, its own `__setattr__` or `__getattr__`."""


def attribute_bindings(
    cls: ast.ClassDef, expression_lines: list[int] | None = None, self_call_lines: list[int] | None = None
) -> AttributeBindings:
    """From the statements of the class's methods (a method called on an attribute as a statement,
    `self.cumulative_length.zero_()`, marks the attribute as an object; one that may put something
    into it anywhere, `grow = lambda: self.layers.append(x)`, is one of its contents).
    `self_call_lines`: where a method may be called on an attribute of `self` (None: anywhere)."""
    found = AttributeBindings()
    annotated = {
        statement.target.id: statement.annotation
        for statement in cls.body
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
    }
    class_names = scope_names(cls.body) if annotated else set()
    for name, annotation in annotated.items():
        if unless_shadowed(annotation, class_names) is not None:
            found.annotations[name] = annotation
    methods = {
        statement.name: statement
        for statement in cls.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    lines = lines_within(expression_lines, cls)
    call_lines = lines_within(self_call_lines, cls)
    record_class_level(found, cls, lines)
    functions = [
        node for node in simple_statements(cls.body) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    bound_in: dict[int, tuple[Function, bool]] = {}
    followed: set[int] = set()
    reader = UnfollowedReader(receiver_names(cls, functions), followed, lines)
    for function in functions:  # each `def` of the class body (a property's setter too), and what they nest
        reader.read(function)
        for node in statements_within(function.body, into_definitions=True):
            record_binding(found, node, function, bound_in, followed)
            for call in calls_of(node):
                record_call(found, call)
            for attribute, call in nested_calls_of(node, call_lines):
                record_content(found, attribute, call)
            reader.read(node)
    record_unfollowed(found, reader.finish())
    count_counters(found, CountReader(methods), bound_in)
    return found


def record_class_level(found: AttributeBindings, cls: ast.ClassDef, lines: list[int] | None) -> None:
    """The class body's own bindings (not its methods' bodies): `n = v` and `n: T = v` bind `v`
    (an element of a display unpacked in parallel its own); any other form binds UNKNOWN_VALUE.
    `lines`: the class's lines where a walrus may be (None: anywhere)."""
    followed: set[int] = set()
    for statement in simple_statements(cls.body):
        if is_getter(statement):
            assert isinstance(statement, ast.FunctionDef)
            found.getters[statement.name] = statement
        if isinstance(statement, ast.AnnAssign) and statement.value is None:
            followed.add(id(statement.target))  # `n: int` declares, binds nothing
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            for target in statement.targets if isinstance(statement, ast.Assign) else [statement.target]:
                for element, value in paired_targets(target, statement.value):
                    if isinstance(element, ast.Name):
                        followed.add(id(element))
                        found.class_level.setdefault(element.id, []).append(value)
        for node in class_level_binders(statement, lines):
            if isinstance(node, BINDING_NODES) and id(node) not in followed:
                for bound in bound_names(node):
                    found.class_level.setdefault(bound, []).append(UNKNOWN_VALUE)


def is_getter(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.FunctionDef)
        and len(statement.decorator_list) == 1
        and ex.dotted_name(statement.decorator_list[0]) == "property"
    )


def class_level_binders(statement: ast.stmt, lines: list[int] | None) -> list[ast.AST]:
    """The nodes of a class-level statement that may bind a name: a `def` or class itself; an
    assignment's targets, or nothing for an expression statement, unless a walrus may be in it."""
    if isinstance(statement, DEFINITION_STATEMENTS):
        return [statement]
    if lines is not None and not (lines and mentions(lines, statement)):
        if isinstance(statement, ast.Expr):
            return []
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            return [node for target in targets for node in ast.walk(target)]
    return list(ex.statement_parts([statement]))


def paired_targets(target: ast.expr, value: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """Each target bound with a value the engine follows: the target itself with `value`, an element
    of a tuple or list target with its element of a display of the same shape (`a, b = x, y`,
    `a, *rest = x, y, z`), or with INT_VALUE when `value` is a shape (`a, b = t.shape`); a starred
    element (a list) and an element of any other unpacking are left out."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [] if isinstance(target, ast.Starred) else [(target, value)]
    if ex.is_shape(value):
        return [pair for element in target.elts for pair in paired_targets(element, INT_VALUE)]
    pairs = ex.unpacked_pairs(target, value) or []
    return [pair for element, bound in pairs if bound is not None for pair in paired_targets(element, bound)]


def record_unfollowed(found: AttributeBindings, unfollowed: UnfollowedBindings) -> None:
    for attribute in unfollowed.unknown:
        found.values.setdefault(attribute, []).append(UNKNOWN_VALUE)
    for attribute, value in unfollowed.set_to:
        found.values.setdefault(attribute, []).append(value)
    for attribute in unfollowed.stored_into:
        found.called.add(attribute)
        found.contents.setdefault(attribute, []).append(None)
    found.opaque = unfollowed.opaque


def receiver_names(cls: ast.ClassDef, methods: Iterable[Function]) -> frozenset[str]:
    """The names an instance or the class goes by in the class: `self`, each method's first
    parameter (`cls` too) and the class's own name."""
    firsts = [arguments[0].arg for method in methods if (arguments := ex.arguments_of(method))]
    return frozenset({"self", cls.name, *firsts})


def count_counters(found: AttributeBindings, counts: CountReader, bound_in: dict[int, tuple[Function, bool]]) -> None:
    """An attribute that starts as an int (`self.n = 0`) is a counter: each other value bound to it
    that is a count (`counters`) stands as INT_VALUE. In a class that does not start it, a count added
    to it (`+=`) stands as COUNT_ADDED, an int where another class of the family starts it."""
    for attribute, values in found.values.items():
        starts_int = any(map(ex.is_structurally_int, [*values, *found.class_level.get(attribute, [])]))
        found.values[attribute] = [counted(value, attribute, counts, bound_in, starts_int) for value in values]


def counted(
    value: ast.expr, attribute: str, counts: CountReader, bound_in: dict[int, tuple[Function, bool]], starts_int: bool
) -> ast.expr:
    if id(value) not in bound_in:
        return value
    method, increment = bound_in[id(value)]
    if not (starts_int or increment) or not counts.is_count(value, attribute, method, increment):
        return value
    return INT_VALUE if starts_int else COUNT_ADDED


def record_binding(
    found: AttributeBindings,
    node: ast.stmt,
    method: Function,
    bound_in: dict[int, tuple[Function, bool]],
    followed: set[int],
) -> None:
    """`bound_in`: the method a value is bound to an attribute in, and whether it is added (`+=`, `-=`);
    `followed`: the targets whose binding is recorded with its value."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for element, value in paired_targets(target, node.value):
                bound_in[id(value)] = (method, False)
                record_value(found, element, value, followed)
            if isinstance(target, ast.Subscript) and self_attribute(target.value):
                followed.add(id(target))
                found.called.add(self_attribute(target.value))  # `self.layers[0] = ...` changes its entries
                found.contents.setdefault(self_attribute(target.value), []).append(node.value)
        if self_attribute(node.value):  # `layers = self.layers`: anything may go in through the alias
            found.contents.setdefault(self_attribute(node.value), []).append(None)
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, INT_KEEPING_OPERATORS):
        if isinstance(node.op, (ast.Add, ast.Sub)):
            bound_in[id(node.value)] = (method, True)
        record_value(found, node.target, node.value, followed)
    elif isinstance(node, ast.For) and iterates_a_range(node):
        record_value(found, node.target, INT_VALUE, followed)  # `for self.n in range(k)`: ints only
    if isinstance(node, ast.AnnAssign) and self_attribute(node.target):
        if unless_shadowed(node.annotation, set(function_bindings(method))) is not None:
            found.annotations[self_attribute(node.target)] = node.annotation
        followed.add(id(node.target))  # `self.n: int` alone binds nothing


def iterates_a_range(loop: ast.For) -> bool:
    return isinstance(loop.iter, ast.Call) and ex.called_name(loop.iter) == "range"


def calls_of(statement: ast.stmt) -> list[ast.Call]:
    """The calls of an expression statement, nested ones too (`[self.layers.append(x) for ...]`)."""
    if not isinstance(statement, ast.Expr):
        return []
    return [node for node in ast.walk(statement.value) if isinstance(node, ast.Call)]


def nested_calls_of(statement: ast.stmt, lines: list[int] | None) -> Iterator[tuple[str, ast.Call]]:
    """The methods called on an attribute of `self` inside any other statement (`grow = lambda:
    self.layers.append(x)`, `ok = self.layers.append(x)`), not in the blocks it holds (visited on
    their own); looked for only where its own lines may hold one (`lines`; None: anywhere)."""
    if isinstance(statement, ast.Expr) or (lines is not None and not mentions(lines, statement)):
        return
    for node in ex.statement_parts([statement]):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attribute = self_attribute(node.func.value)
            if attribute:
                yield attribute, node


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


def record_value(found: AttributeBindings, target: ast.expr, value: ast.expr, followed: set[int]) -> None:
    attribute = self_attribute(target)
    if attribute:
        followed.add(id(target))
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
