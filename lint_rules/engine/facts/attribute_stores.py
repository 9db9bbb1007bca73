"""Where a module binds attributes and names, from the syntax alone (every attribute store, a
function's bindings, the module level's, a class's attribute annotations and own methods): the raw
material of `attribute_receivers`, which types receivers such as `self.cache`, `self.layers[i]` or a
local bound from them.

Attribute stores are collected by the attribute's name, whatever object it is stored on (`self.cache
= ...`, `runner.cache = ...`): a store to another object's attribute of the same name counts too,
which can only make a fact unknown. A form whose value cannot be read (a tuple target, a `for`
target, `+=` on an object, `setattr(obj, "cache", v)`) is an unknown binding.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import simple_statements, statements_within
from lint_rules.engine.facts.module_text import (
    DECLARING_NODES,
    declared_names,
    header_of,
    spans_one_of,
    statement_bindings,
)

ADDING_METHODS = {"append": 0, "insert": 1}
"""Container methods that put one object in, and the position of that object among their arguments."""
EXTENDING_METHODS = frozenset({"extend"})
KEEPING_METHODS = frozenset({"clear", "pop", "remove", "reverse", "sort", "copy", "index", "count", "__len__"})
"""Container methods that put nothing new in (anything else may)."""
READING_CALLS = frozenset(
    {"len", "zip", "enumerate", "iter", "reversed", "sorted", "list", "tuple", "isinstance", "any", "all", "print"}
)
"""Builtins that read a container passed to them and keep no reference to it."""

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class Store(NamedTuple):
    """One binding of an attribute, or one object put into it."""

    value: ast.expr | None
    """The value bound (or put in); None where the form hides it."""
    cls: ast.ClassDef | None
    """The class whose method holds the store (None outside a class's methods)."""
    function: FunctionNode | None
    receiver: ast.expr | None = None
    """The object whose attribute it is (`cache` in `cache.layers.append(v)`); None for a class
    body's own binding (`layers = []`)."""


class AttributeStores:
    """Every store to an attribute of a given name in one module."""

    def __init__(self) -> None:
        self.values: dict[str, list[Store]] = {}
        """`obj.attr = value` (also annotated); None for the forms whose value is hidden."""
        self.extended: dict[str, list[Store]] = {}
        """`obj.attr += value` and `obj.attr.extend(value)`: the elements of `value` go in."""
        self.any_attribute: list[Store] = []
        """`setattr(obj, name, v)` with a name that is not a literal, on any object but a method's own
        receiver: a store to any attribute of any class."""
        self.any_own_attribute: list[Store] = []
        """`setattr(self, name, v)` with a name that is not a literal: a store to any attribute of the
        method's class (`Store.cls`)."""
        self.contents: dict[str, list[Store]] = {}
        """`obj.attr.append(v)`, `.insert(i, v)`, `obj.attr[i] = v`: `v` goes in; None where anything may
        (another method, a slice store, an alias that escapes: see `escaping_attributes`)."""

    def add(self, table: dict[str, list[Store]], attribute: str, store: Store) -> None:
        table.setdefault(attribute, []).append(store)


MakeStore = Callable[[ast.expr | None, ast.expr], Store]
"""A store of a value (None: hidden) to an attribute of a receiver, where the walk stands."""


def module_stores(tree: ast.Module) -> AttributeStores:
    found = AttributeStores()
    for node, cls, function in nodes_with_context(tree.body, None, None):
        record(found, node, cls, function)
    return found


def nodes_with_context(
    body: list[ast.stmt], cls: ast.ClassDef | None, function: FunctionNode | None
) -> Iterator[tuple[ast.AST, ast.ClassDef | None, FunctionNode | None]]:
    """Every node of the statements, with the class whose method (and the function) holds it."""
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            yield from nested_nodes(statement, cls, function)
            yield statement, cls, function  # its own statements bind attributes too (`cache = None`)
            yield from nodes_with_context(statement.body, statement, None)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from nested_nodes(statement, cls, function)
            inner_class = cls if function is None else None
            yield from nodes_with_context(statement.body, inner_class, statement)
        else:
            for node in ex.walk_without(statement, ex.LEAVES):
                yield node, cls, function


def nested_nodes(
    definition: ast.ClassDef | FunctionNode, cls: ast.ClassDef | None, function: FunctionNode | None
) -> Iterator[tuple[ast.AST, ast.ClassDef | None, FunctionNode | None]]:
    """A definition's decorators, bases, defaults and annotations: evaluated where it stands."""
    parts: list[ast.AST] = [*definition.decorator_list]
    if isinstance(definition, ast.ClassDef):
        parts += [*definition.bases, *definition.keywords]
    else:
        parts += [definition.args, *([definition.returns] if definition.returns else [])]
    for part in parts:
        for node in ex.walk_without(part, ex.LEAVES):
            yield node, cls, function


def record(found: AttributeStores, node: ast.AST, cls: ast.ClassDef | None, function: FunctionNode | None) -> None:
    def store(value: ast.expr | None, receiver: ast.expr) -> Store:
        return Store(value, cls, function, receiver)

    if isinstance(node, ast.ClassDef):
        record_class_body(found, node)
        return

    if isinstance(node, ast.Assign):
        for target in node.targets:
            record_target(found, target, node.value, store)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        record_target(found, node.target, node.value, store)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
        found.add(found.extended, node.target.attr, store(node.value, node.target.value))
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
        record_target(found, node.target, None, store)  # `cache.layers[0:0] += [x]` stores the sum back
    elif isinstance(node, ast.MatchClass):
        for attribute in node.kwd_attrs:  # `case Cache(layers=found)`: an alias of the attribute
            found.add(found.contents, attribute, store(None, node.cls))
        if node.patterns:  # `case Cache(found)`: the attribute `__match_args__` names, any of them
            found.any_attribute.append(store(None, node.cls))
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        record_target(found, node.target, None, store)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        record_target(found, node.optional_vars, None, store)
    elif isinstance(node, ast.Call):
        record_call(found, node, store)
    for child in escaping_attributes(node):
        found.add(found.contents, child.attr, store(None, child.value))


def record_class_body(found: AttributeStores, cls: ast.ClassDef) -> None:
    """`cache = None` in a class's body binds the attribute every instance reads until it binds its own."""
    for statement in cls.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    direct = name is target
                    found.add(found.values, name.id, Store(value if direct else None, cls, None))


def record_target(found: AttributeStores, target: ast.expr, value: ast.expr | None, store: MakeStore) -> None:
    """The attributes a target binds: `value` to a plain one (None: the form hides what each gets)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            record_target(found, element, None, store)
    elif isinstance(target, ast.Starred):
        record_target(found, target.value, None, store)
    elif isinstance(target, ast.Attribute):
        found.add(found.values, target.attr, store(value, target.value))
    elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute):
        single = value if not isinstance(target.slice, ast.Slice) else None
        found.add(found.contents, target.value.attr, store(single, target.value.value))


def escaping_attributes(parent: ast.AST) -> Iterator[ast.Attribute]:
    """The attributes read under `parent` as a whole object that may then be changed elsewhere:
    `layers = self.layers`, `return self.layers`, `[self.layers]`, `f(self.layers)`. Not: a method
    called on it or an attribute of it (`self.layers.append(v)`, recorded as such), an index of it,
    a loop over it, a test of it, or a builtin that only reads it (`len(self.layers)`). The value of
    `a or b` (`a and b`) is one of its operands: `(self.layers or []).append(v)` changes the attribute,
    `x = self.layers or []` keeps it, where a test of it (`if self.layers and n:`) does neither."""
    if (
        isinstance(parent, (ast.Attribute, ast.Subscript))
        and isinstance(parent.value, ast.BoolOp)
        and (isinstance(parent, ast.Attribute) or not isinstance(parent.ctx, ast.Load))
    ):
        yield from attribute_operands(parent.value)
    if isinstance(parent, (ast.Attribute, ast.Subscript, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.FormattedValue)):
        return
    if isinstance(parent, ast.Call) and ex.called_name(parent) in READING_CALLS:
        return
    for field in kept_fields(type(parent)):
        value = getattr(parent, field, None)
        for child in value if isinstance(value, list) else [value]:
            kept = child.value if isinstance(child, ast.keyword) else child
            if isinstance(kept, ast.BoolOp):
                yield from attribute_operands(kept)
            if isinstance(kept, ast.Attribute) and isinstance(kept.ctx, ast.Load):
                yield kept
                if isinstance(kept.value, ast.Attribute) and kept.attr not in KEEPING_METHODS:
                    yield kept.value  # `add = cache.layers.append`: the bound method holds the container


def attribute_operands(test: ast.BoolOp) -> Iterator[ast.Attribute]:
    """The attributes `a or b` (`a and b`, nested) may evaluate to."""
    for operand in test.values:
        if isinstance(operand, ast.BoolOp):
            yield from attribute_operands(operand)
        elif isinstance(operand, ast.Attribute):
            yield operand


READ_ONLY_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    ast.For: ("iter",),
    ast.AsyncFor: ("iter",),
    ast.comprehension: ("iter",),
    ast.If: ("test",),
    ast.While: ("test",),
    ast.IfExp: ("test",),
    ast.Assert: ("test",),  # its `msg` goes into the exception, which a handler may read
    ast.Expr: ("value",),
    ast.Call: ("func",),
}
"""Fields of a node where an attribute read is not kept: iterated, tested, evaluated alone, called."""


def kept_fields(node_type: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type where an attribute read may be kept (not `READ_ONLY_FIELDS`)."""
    fields = _KEPT_FIELDS.get(node_type)
    if fields is None:
        read_only = READ_ONLY_FIELDS.get(node_type, ())
        fields = _KEPT_FIELDS[node_type] = tuple(field for field in node_type._fields if field not in read_only)
    return fields


_KEPT_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def record_call(found: AttributeStores, call: ast.Call, store: MakeStore) -> None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
        attribute, method, receiver = func.value.attr, func.attr, func.value.value
        position = ADDING_METHODS.get(method)
        if position is not None:
            added = call.args[position] if len(call.args) == position + 1 and not call.keywords else None
            found.add(found.contents, attribute, store(added, receiver))
        elif method in EXTENDING_METHODS and len(call.args) == 1:
            found.add(found.extended, attribute, store(call.args[0], receiver))
        elif method not in KEEPING_METHODS:
            found.add(found.contents, attribute, store(None, receiver))
    called = ex.called_name(call)
    if is_direct_setattr(call):
        receiver, name, _ = setattr_parts(call)
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            found.add(found.values, name.value, store(None, receiver))
        else:
            made = store(None, receiver)
            own = made.cls is not None and is_own_receiver(receiver, made.function)
            (found.any_own_attribute if own else found.any_attribute).append(made)
    elif called == "setattr" or called.endswith(".__setattr__"):
        found.any_attribute.append(store(None, call.func))  # its arguments not written out
    elif (fetched := ex.getattr_of(call)) is not None:  # `getattr(cache, "layers").append(v)`: the attribute
        found.add(found.contents, fetched[1], store(None, fetched[0]))


def is_direct_setattr(call: ast.Call) -> bool:
    """`setattr(obj, name, v)` or `obj.__setattr__(name, v)` with its arguments written out."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) or call.keywords:
        return False
    if isinstance(call.func, ast.Name) and call.func.id == "setattr":
        return len(call.args) == 3
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "__setattr__"):
        return False
    return len(call.args) == (3 if ex.dotted_name(call.func.value) == "object" else 2)


def setattr_parts(call: ast.Call) -> tuple[ast.expr, ast.expr, ast.expr]:
    """The object, the name and the value of a direct `setattr` (`is_direct_setattr`):
    `setattr(obj, name, v)`, `object.__setattr__(obj, name, v)`, `obj.__setattr__(name, v)` (`obj`
    may be `super(C, other)`)."""
    if len(call.args) == 3:
        receiver, attribute, value = call.args
        return receiver, attribute, value
    assert isinstance(call.func, ast.Attribute)
    attribute, value = call.args
    return call.func.value, attribute, value


def is_own_receiver(target: ast.expr, function: FunctionNode | None) -> bool:
    """`target` is the first parameter of the method `function` (its `self`)."""
    arguments = [*function.args.posonlyargs, *function.args.args] if function is not None else []
    return bool(arguments) and isinstance(target, ast.Name) and target.id == arguments[0].arg


class NameBinding(NamedTuple):
    """How a function binds one of its names: "value" (`x = v`), "annotation" (`x: T`, a parameter
    annotated `T`), "iterate" (`for x in v`), or "unknown" (a parameter without annotation, a tuple
    target, `with ... as x`, an import, ...)."""

    form: str
    node: ast.expr | None


def function_bindings(function: FunctionNode) -> dict[str, list[NameBinding]]:
    """Every binding of every name in the function, nested scopes included (a nested function's own
    name of the same spelling counts too: it can only make a fact unknown)."""
    found: dict[str, list[NameBinding]] = {}

    def add(name: str, binding: NameBinding) -> None:
        found.setdefault(name, []).append(binding)

    for argument in ex.arguments_of(function):
        annotation = argument.annotation
        add(argument.arg, NameBinding("annotation", annotation) if annotation else NameBinding("unknown", None))
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            add(extra.arg, NameBinding("unknown", None))
    direct: set[int] = set()
    for node in ex.walk_without(ast.Module(body=function.body, type_ignores=[]), ex.OPERATOR_NODES):
        for name, binding in direct_bindings(node):
            direct.add(id(name))
            add(name.id, binding)
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in direct:
                add(node.id, NameBinding("unknown", None))
        elif isinstance(node, ast.arg):
            add(node.arg, NameBinding("unknown", None))
        elif isinstance(node, DECLARING_NODES):
            for name_text in declared_names(node):
                add(name_text, NameBinding("unknown", None))
    return found


def direct_bindings(node: ast.AST) -> Iterator[tuple[ast.Name, NameBinding]]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                yield target, NameBinding("value", node.value)
    elif not isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
        return
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target, NameBinding("annotation", node.annotation)
    elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
        yield node.target, NameBinding("iterate", node.iter)


SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def names_bound_in_scopes(tree: ast.Module) -> frozenset[str]:
    """Every name bound in a scope other than the module's own: a parameter, a local, a class body's
    name, a comprehension's variable (a definition's header counted in with its body)."""
    return frozenset(name for name, _, _ in scope_bindings(tree))


def scope_bindings(tree: ast.Module, lines: Sequence[int] | None = None) -> Iterator[tuple[str, ast.AST, ast.AST]]:
    """(name, the node binding it, the scope it binds it in: a definition, lambda or comprehension,
    its header counted in with it and with the scope around it, where Python evaluates it; a walrus
    in a comprehension binds in the scope around it) for
    `names_bound_in_scopes`; with `lines` (sorted), only the bindings on one of them."""
    pending: list[tuple[ast.AST, ast.AST | None, ast.AST | None]] = [(statement, None, None) for statement in tree.body]
    while pending:
        node, scope, outer = pending.pop()
        if lines is not None and not spans_one_of(node, lines):
            continue
        if scope is not None:
            if isinstance(node, ast.arg):
                yield node.arg, node, scope
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                yield node.id, node, scope
            elif isinstance(node, DECLARING_NODES):
                yield from ((name, node, scope) for name in declared_names(node))
        if (
            isinstance(node, ast.NamedExpr)
            and isinstance(scope, ex.COMPREHENSIONS)
            and isinstance(node.target, ast.Name)
        ):
            yield node.target.id, node, outer if outer is not None else tree
        inner = node if isinstance(node, SCOPES) else scope
        around = outer if isinstance(node, ex.COMPREHENSIONS) else inner
        pending.extend((child, inner, around) for child in ast.iter_child_nodes(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend((part, scope, outer) for part in header_of(node))  # evaluated around it


def functions_and_classes(
    body: list[ast.stmt], cls: ast.ClassDef | None
) -> Iterable[tuple[FunctionNode, ast.ClassDef | None]]:
    """Every function of the statements (nested ones too), with the class it is a method of."""
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            yield from functions_and_classes(statement.body, statement)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement, cls
            yield from functions_and_classes(statement.body, None)
        elif isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for block in (
                getattr(statement, "body", []),
                getattr(statement, "orelse", []),
                getattr(statement, "finalbody", []),
            ):
                yield from functions_and_classes(block, cls)
            for handler in getattr(statement, "handlers", []):
                yield from functions_and_classes(handler.body, cls)


def own_method(cls: ast.ClassDef, name: str) -> FunctionNode | None:
    """The class's own `def name`; a non-function binding of the name in its body is unknown."""
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
            return statement
    return None


def defines_in_body(cls: ast.ClassDef, name: str) -> bool:
    """The class body has a `def name` (a method, a property), in any of its blocks (`if`, `try`)."""
    return any(
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name
        for statement in simple_statements(cls.body)
    )


def defines_name(cls: ast.ClassDef, name: str) -> bool:
    for statement in cls.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
    return False


def attribute_annotations(cls: ast.ClassDef, attribute: str) -> list[ast.expr | None]:
    """`attribute: T` in the class body and `self.attribute: T` in its methods; None for one that
    names something the scope it is written in binds itself (`Layer = SimpleNamespace` in the class
    body, a parameter `Layer` of the method): it may name anything."""
    found: list[ast.expr | None] = []
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.target.id == attribute:
                found.append(unless_shadowed(statement.annotation, scope_names(cls.body)))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in statements_within(statement.body, into_definitions=True):
                if (
                    isinstance(node, ast.AnnAssign)
                    and isinstance(node.target, ast.Attribute)
                    and node.target.attr == attribute
                    and ex.dotted_name(node.target.value) == "self"
                ):
                    found.append(unless_shadowed(node.annotation, set(function_bindings(statement))))
    return found


def unless_shadowed(annotation: ast.expr, bound: Set[str]) -> ast.expr | None:
    """The annotation, or None when it names one of `bound` (a string annotation read as code)."""
    if not bound:
        return annotation
    if isinstance(annotation, ast.Name):
        return None if annotation.id in bound else annotation
    written = annotation
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            written = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return annotation
    named = {node.id for node in ast.walk(written) if isinstance(node, ast.Name)}
    return None if named & bound else annotation


def scope_names(body: list[ast.stmt]) -> set[str]:
    """The names a class body binds itself (`statement_bindings` of each statement it runs)."""
    return {name for statement in simple_statements(body) for name in statement_bindings(statement)}
