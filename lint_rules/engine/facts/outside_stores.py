"""Attributes a module binds on objects other than a method's own `self`: `layer.n = t` in a
function, `other.n = t` in another class's method, `setattr(cache, "n", t)`. A class's int
attribute (`ClassBodies.int_attributes`) is read from its own methods; a store like these may put a
tensor into an object of the class, so such an attribute is an int only while each of these stores
binds a count (`ClassBodies.stored_elsewhere` decides, with `OutsideCounts`).

Read from the text first: the module's tree is walked only where an attribute name occurs after
something other than `self` (`cache.n`, `(self).n`), or where `setattr`, `__dict__` or `vars` may
bind any attribute. Stores from other modules of the package are not seen (docs/limits.md)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import (
    FunctionNode,
    function_bindings,
    is_direct_setattr,
    is_own_receiver,
    setattr_parts,
)
from lint_rules.engine.facts.counters import INT_KEEPING_OPERATORS, CountReader
from lint_rules.engine.facts.module_text import follows_identifier, lines_of_offsets

ANY_ATTRIBUTE = "*"
"""A store whose attribute name is not a literal (any attribute may be bound)."""


class Store(NamedTuple):
    attribute: str
    value: ast.expr | None
    """What is bound (None: a form that hides it: a tuple or loop target)."""
    function: FunctionNode | None
    """The `def` the store is in."""
    method: FunctionNode | None
    """That `def` when it is a method (directly in a class body)."""
    increment: bool
    """`+=`/`-=`: the value is added to the attribute."""
    receiver: ast.expr | None = None
    """The object the attribute is stored on (None: not known, `vars(obj)[k] = v`)."""


class OutsideCounts(CountReader):
    """Counts as a class's own methods read them (`counters.CountReader`), where a read of the
    counter itself may be on any object that `counter_read` accepts (`copied.n = self.n`)."""

    def __init__(self, counter_read: Callable[[ast.Attribute], bool]) -> None:
        super().__init__({})
        self.counter_read = counter_read

    def reads_the_counter(self, value: ast.expr, attribute: str) -> bool:
        return isinstance(value, ast.Attribute) and value.attr == attribute and self.counter_read(value)


def may_bind_any_attribute(text: str) -> bool:
    """Cheaply, in `text` read in NFKC form (`ClassBodies.own_str`): `setattr`, `__dict__` or `vars`
    may bind an attribute whose name is not written out."""
    return any(word in text for word in ("setattr", "__dict__", "vars")) and bool(ANY_NAME_STORE.search(text))


ANY_NAME_STORE = re.compile(r"\b(?:setattr|vars)\b|__dict__|__setattr__")


def named_after_other_than_self(text: str, name: str) -> bool:
    """`.name` occurs in `text` after something other than `self` (`cache.n`, `(self).n`). Where
    `self` is not a method's own receiver (`self = other`) is asked of the tree, at the lines
    `attribute_lines` gives (`ClassBodies.suspects`); a `def` that is no method but names its first
    parameter `self` is counted there too."""
    return any(not after_self(text, match.start()) for match in attribute_mentions(text, name))


def after_self(text: str, offset: int) -> bool:
    """The text just before `offset` ends in the name `self` (`self.n`, `self .n`)."""
    return re.search(r"(?<![\w.])self\s*$", text[max(0, offset - 64) : offset]) is not None


def named_other_than_called(text: str, name: str) -> bool:
    """`name` occurs in `text` where a store may bind it: quoted (`setattr(x, "name", f)`), or as a
    whole word followed by what follows a target (`x.name = f`, `x.name += f`, `x.name: T = f`,
    `x.name, y = ...`, `for x.name in ...`, a comment or a line continuation)."""
    return is_quoted(text, name) or any(
        not follows_identifier(text, match.start()) for match in re.finditer(re.escape(name) + TARGET_FOLLOWS, text)
    )


def may_store_on_a_class(text: str, name: str, methods: set[str]) -> bool:
    """The text may bind an attribute on the class `name` or on an object's class (`name.x = v`,
    `(name).x = v`, `type(obj).x = v`, `obj.__class__.x = v`, `setattr`), or one of `methods` or a
    special name on any object (the tree tells on which)."""
    if "setattr" in text or "__class__" in text:
        return True
    on_class = re.finditer(re.escape(name) + r"[\s\\)]*\.\s*\w+" + TARGET_FOLLOWS, text)
    if any(not follows_identifier(text, match.start()) for match in on_class):
        return True
    if re.search(r"type\s*\([^\n]*\)[\s\\)]*+\.\s*\w+" + TARGET_FOLLOWS, text):
        return True
    named = [re.escape(method) for method in sorted(methods)] + [r"__\w+__"]
    return bool(re.search(r"\.\s*(?:" + "|".join(named) + r")\b" + TARGET_FOLLOWS, text))


TARGET_FOLLOWS = r"(?=\s*(?:[-+*/%@&|^<>]*=(?!=)|[:,)\]#\\]|in\b))"
"""What may follow an attribute that a statement binds."""


def attribute_mentions(text: str, name: str) -> Iterator[re.Match[str]]:
    """Each `.name` in the text, a line continuation or a comment after the dot included."""
    return re.finditer(rf"\.(?:\s|\\(?:\r\n|\r|\n)|#[^\r\n]*+)*+{re.escape(name)}\b", text)


def may_alias_unnamed(text: str, name: str) -> bool:
    """The attribute `name` may be held without `.name` in the text: captured by a class pattern of a
    `match` (`case Cache(layers=found)`) or fetched by `getattr(cache, "layers")`."""
    if "case" in text and CASE_LINE.search(text) and name in text:
        return True
    return "getattr" in text and is_quoted(text, name)


def is_quoted(text: str, name: str) -> bool:
    """`"name"` or `'name'` occurs in the text."""
    return f'"{name}"' in text or f"'{name}'" in text


CASE_LINE = re.compile(r"^[ \t]*case\b", re.MULTILINE)


def attribute_lines(text: str, name: str) -> list[int]:
    """The lines (from 1, as `ast` counts them) where `.name` occurs."""
    return lines_of_offsets(text, [match.start() for match in attribute_mentions(text, name)])


def defs_with_self(text: str) -> int:
    """The `def`s of the text whose first parameter is `self`, methods or not."""
    return sum(1 for match in DEF_WITH_SELF.finditer(text) if not follows_identifier(text, match.start()))


DEF_WITH_SELF = re.compile(r"def\s+\w+\s*\(\s*self\b")
"""Without a leading `\\b`, which would keep `re` from searching for the literal `def` first."""


def stores_elsewhere(tree: ast.Module, run_on_others: frozenset[int] = frozenset()) -> list[Store]:
    """Every store to an attribute of an object other than the own receiver of the method the store
    is in (ANY_ATTRIBUTE for a name not written out)."""
    return [
        store
        for node, function, method in nodes_with_context(tree.body, None, None, run_on_others)
        for store in outside_stores(node, function, method)
    ]


Context = tuple[ast.AST, FunctionNode | None, FunctionNode | None]


def nodes_with_context(
    body: list[ast.stmt], function: FunctionNode | None, method: FunctionNode | None, others: frozenset[int]
) -> Iterator[Context]:
    """Every node of the statements, with the `def` it is in and that `def` when it is a method that
    keeps its receiver (`others`: the methods, by `id`, that some call runs on another object)."""
    for statement in body:
        yield from nodes_under(statement, function, method, others)


def nodes_under(
    node: ast.AST, function: FunctionNode | None, method: FunctionNode | None, others: frozenset[int]
) -> Iterator[Context]:
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from definition_nodes(current, function, method, others)
            continue
        yield current, function, method
        for child in ast.iter_child_nodes(current):
            if isinstance(current, ast.Call) and child is current.func and is_direct_setattr(current):
                continue  # the call itself is the store
            if is_dictionary(child) and only_reads(current, child):
                pending.extend(ast.iter_child_nodes(child))  # `vars(x).items()`, `dict(x.__dict__)`
                continue
            pending.append(child)


def definition_nodes(
    definition: ast.ClassDef | FunctionNode,
    function: FunctionNode | None,
    method: FunctionNode | None,
    others: frozenset[int],
) -> Iterator[Context]:
    """What a definition evaluates where it stands, then its body: a class body's `def`s are methods,
    the body of any other `def` (a nested one too) is no method's own."""
    for part in evaluated_where_defined(definition):
        yield from nodes_under(part, function, method, others)
    for inner in definition.body:
        if isinstance(definition, ast.ClassDef) and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for part in evaluated_where_defined(inner):
                yield from nodes_under(part, None, None, others)
            keeps = has_own_receiver(inner) and id(inner) not in others
            yield from nodes_with_context(inner.body, inner, inner if keeps else None, others)
        elif isinstance(definition, ast.ClassDef):
            yield from nodes_under(inner, None, None, others)
        else:
            yield from nodes_under(inner, definition, None, others)


def has_own_receiver(method: FunctionNode) -> bool:
    """The method's first parameter is the instance throughout: not a static or class method, and
    never rebound in it (`self = other`, `except E as self`, a nested `def self`)."""
    first = first_parameter(method)
    return bool(first) and not is_static_or_class_method(method) and len(function_bindings(method).get(first, [])) == 1


def first_parameter(function: FunctionNode) -> str:
    """The name of the first positional parameter ("" where there is none)."""
    arguments = [*function.args.posonlyargs, *function.args.args]
    return arguments[0].arg if arguments else ""


def is_static_or_class_method(function: FunctionNode) -> bool:
    """Its first parameter is no instance of the class."""
    return any(
        ex.dotted_name(decorator).rpartition(".")[2] in ("staticmethod", "classmethod")
        for decorator in function.decorator_list
    )


def evaluated_where_defined(definition: ast.ClassDef | FunctionNode) -> list[ast.AST]:
    """A definition's decorators, bases, keywords, defaults and annotations."""
    if isinstance(definition, ast.ClassDef):
        return [*definition.decorator_list, *definition.bases, *definition.keywords]
    return [*definition.decorator_list, definition.args, *([definition.returns] if definition.returns else [])]


def outside_stores(node: ast.AST, function: FunctionNode | None, method: FunctionNode | None) -> Iterator[Store]:
    def store(attribute: str, value: ast.expr | None, receiver: ast.expr | None, increment: bool = False) -> Store:
        return Store(attribute, value, function, method, increment, receiver)

    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from (store(*pair) for pair in targets_stored(target, node.value, method))
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        yield from (store(*pair) for pair in targets_stored(node.target, node.value, method))
    elif isinstance(node, ast.AugAssign):
        for attribute, _, receiver in targets_stored(node.target, node.value, method):
            kept = isinstance(node.op, INT_KEEPING_OPERATORS)
            yield store(attribute, node.value if kept else None, receiver, isinstance(node.op, (ast.Add, ast.Sub)))
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield from (store(*pair) for pair in targets_stored(node.target, None, method))
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield from (store(*pair) for pair in targets_stored(node.optional_vars, None, method))
    elif isinstance(node, ast.Call) and is_direct_setattr(node):
        yield from (store(*pair) for pair in call_stores(node, method))
    if binds_any_attribute(node, method):
        yield store(ANY_ATTRIBUTE, None, None)


def binds_any_attribute(node: ast.AST, method: FunctionNode | None) -> bool:
    """Any use of another object's `__dict__` or `vars()` but a read (`d = vars(c)`, `c.__dict__ |=
    ...`), and `setattr` or `__setattr__` other than called directly (`s = setattr`, `partial(setattr, c)`)."""
    if isinstance(node, ast.Attribute) and node.attr == "__setattr__":
        return True  # a direct call's `func` is not visited
    if is_dictionary(node):  # one that is only read (`vars(x).items()`) is not visited
        arguments = [node.value] if isinstance(node, ast.Attribute) else getattr(node, "args", [])
        return not (len(arguments) == 1 and is_own_receiver(arguments[0], method))
    return isinstance(node, ast.Name) and node.id == "setattr"


DICTIONARY_READS = frozenset({"values", "items", "keys", "get", "copy"})
READING_CALLS = frozenset({"dict", "print", "repr", "str", "len", "list", "sorted", "tuple", "set", "iter"})


def only_reads(parent: ast.AST, dictionary: ast.AST) -> bool:
    """`parent` reads the `__dict__` or `vars()` under it and keeps no hold of it: a reading method
    (`.items()`), a reading builtin (`dict(...)`, `print(...)`), a comparison (`"n" not in
    x.__dict__`), or `{**vars(x)}`."""
    if isinstance(parent, ast.Attribute):
        return parent.attr in DICTIONARY_READS
    if isinstance(parent, ast.Compare):
        return True  # `"n" in vars(x)`, `x.__dict__ == y`
    if isinstance(parent, ast.Call):
        return ex.called_name(parent) in READING_CALLS and dictionary in parent.args
    return isinstance(parent, ast.Dict) and any(
        key is None and value is dictionary for key, value in zip(parent.keys, parent.values, strict=False)
    )


def is_dictionary(node: ast.AST) -> bool:
    """`x.__dict__`, `vars(...)` or `getattr(x, "__dict__")`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    if not isinstance(node, ast.Call):
        return False
    called = ex.called_name(node)
    fetched = ex.getattr_of(node) if called == "getattr" else None
    return fetched[1] == "__dict__" if fetched is not None else called == "vars"


def targets_stored(
    target: ast.expr, value: ast.expr | None, method: FunctionNode | None
) -> Iterator[tuple[str, ast.expr | None, ast.expr]]:
    """(attribute, value, object) for each attribute of a non-own receiver `target` binds (`value`:
    what a plain target gets; an element of a tuple or starred target gets None)."""
    if isinstance(target, ast.Attribute):
        if not is_own_receiver(target.value, method):
            yield target.attr, value, target.value
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from targets_stored(element, None, method)
    elif isinstance(target, ast.Starred):
        yield from targets_stored(target.value, None, method)


def call_stores(call: ast.Call, method: FunctionNode | None) -> Iterator[tuple[str, ast.expr | None, ast.expr]]:
    """`setattr(obj, "n", v)` and `obj.__setattr__("n", v)`, `obj` not the method's own receiver."""
    receiver, attribute, value = setattr_parts(call)
    if is_own_receiver(receiver, method):
        return
    if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
        yield attribute.value, value, receiver
    else:
        yield ANY_ATTRIBUTE, value, receiver
