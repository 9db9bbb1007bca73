"""Which classes a receiver may hold, from what the package's code shows, when the walk itself does not
know: `self.cache`, `self.layers[i]`, a loop over `self.layers`, `cache.layers[i]` of a typed `cache`,
and a local every binding of which is typed (an annotated parameter, a constructor, a call of a
function or method whose return annotation names a class: `past = self._get_cache(...)` with
`def _get_cache(...) -> MobilintCache`). The answer is flow-insensitive: a receiver is an int-length
cache when every class it may hold, at any point, is one.

What counts as a promise, the same as a parameter's annotation (which the engine trusts):

- an attribute's annotation (`cache: X | None` in the class body, `self.layers: list[Layer] = []`)
  and a function's or method's return annotation (`-> X`, `-> X | None`) name what it holds or
  gives. A binding the code shows to be another class (`self.cache = StaticCache(...)`) adds that
  class; a binding whose class the code does not show leaves the annotation in charge, as a caller's
  argument does for a parameter. A return annotation names an object whose length is then read from
  its class's body; it does not vouch for a length (`-> int` on `get_seq_length` is the lie this tool
  exists for, and it is not trusted).
- without an annotation, an attribute is typed only when every binding of it in its module (on any
  object: `obj.attr = ...` counts) is None or typed, its class hierarchy has no base in another
  module of the package, and, for its elements, every binding is a list display or comprehension of
  typed values and everything put in (`append`, `insert`, an item store, `extend`, `+=`) is typed; a
  tuple target, `setattr(obj, "attr", ...)`, a slice store or an alias that escapes (`layers =
  self.layers`, `f(self.layers)`) makes it unknown.

A `def` of the attribute's name in a class of its kin (a subclass's `@property def cache`) makes it
unknown, and so does a binding in another module of the package that may reach an object of the
class (`kept_elsewhere.binds_elsewhere`: a subclass there whose `__init__` binds `self.cache =
StaticCache(...)`). Not seen: code outside the package. A method
is looked up along the method resolution order of the package's classes: a base outside the package
(transformers' `PreTrainedModel`) is taken not to define it, as `ClassFacts.bases_length_kind`
takes it; the overrides of the same module's subclasses count (a receiver `self` may be one).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import weakref
from collections.abc import Iterable, Iterator, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import (
    AttributeStores,
    FunctionNode,
    NameBinding,
    Store,
    attribute_annotations,
    defines_in_body,
    defines_name,
    function_bindings,
    functions_and_classes,
    own_method,
    scope_names,
    unless_shadowed,
)
from lint_rules.engine.facts.caches import INT_LENGTH, is_transformers_module
from lint_rules.engine.facts.changers import is_static
from lint_rules.engine.facts.class_containers import holds_only_int_length_objects
from lint_rules.engine.facts.classes import ClassFacts
from lint_rules.engine.facts.constructions import LEGACY_BUILDER, builds_without_config
from lint_rules.engine.facts.definitions import simple_statements
from lint_rules.engine.facts.kept_elsewhere import binds_elsewhere
from lint_rules.engine.facts.module_text import statement_bindings
from lint_rules.engine.facts.name_bindings import block_statements
from lint_rules.engine.facts.returned_values import annotated_classes

MAX_DEPTH = 6
"""How many steps one question may take (`a = b`, `b = self.x`, `self.x = f()`, ...)."""
MAX_ROUNDS = 4
"""Rounds of an attribute's fixpoint before it is taken as unknown."""
"""How many steps one question may take (`a = b`, `b = self.x`, `self.x = f()`, ...)."""
CONTAINERS = frozenset(
    {"List", "list", "Sequence", "MutableSequence", "Iterable", "Iterator", "Tuple", "tuple", "Deque", "deque"}
)
"""Annotations whose element is what an index or a loop gives (`list[Layer]`, `Sequence[Layer]`)."""
BOUND_BY_TRANSFORMERS = frozenset({"layers", "self_attention_cache", "cross_attention_cache"})
"""Attributes transformers' cache classes bind to layers or caches in their own `__init__`: a class
deriving from one does not show every binding of them."""
SAFE_DECORATORS = frozenset({"staticmethod", "classmethod", "abstractmethod", "override", "abc.abstractmethod"})


ClassView = ClassFacts

Typed = tuple[ClassView, str]
"""A class, as a name written in a module (`DynamicCache`, `MobilintCache`, `cu.Layer`); an object built
without a config carries `BUILT_WITHOUT_CONFIG` after its class's name (`DynamicCache()`), one built
with arguments `BUILT` (`Helper(config)`): no subclass can be such an object."""
BUILT_WITHOUT_CONFIG = "()"
"""5.25's `DynamicCache` counts in a tensor only when built from some configs (`ClassFacts.built_kind`)."""
BUILT = "(...)"


def class_name(typed_name: str) -> str:
    """The class's name, without the mark of an object it built."""
    return typed_name.removesuffix(BUILT_WITHOUT_CONFIG).removesuffix(BUILT)


Types = frozenset[Typed] | None
"""The classes a value may hold (None aside: a None receiver has no length); None when unknown."""


def receiver_length_kind(
    facts: ClassView, cls: ast.ClassDef | None, function: FunctionNode | None, receiver: ast.expr
) -> str:
    """INT_LENGTH when every class the receiver may hold has an int length (or, for `self.layers[i]`,
    when the class facts show that container holds only int-length objects)."""
    with question(facts) as typing:
        if function is None:  # asked while a class's length kind is computed: kept by `ClassFacts` alone
            return typing.length_kind(receiver, cls, function)
        key = (id(receiver), id(function))
        if key not in typing.receivers:
            typing.receivers[key] = ""  # a question that reaches itself proves nothing
            typing.receivers[key] = typing.length_kind(receiver, cls, function)
        return typing.receivers[key]


def classes_held(
    facts: ClassView, cls: ast.ClassDef | None, function: FunctionNode, receiver: ast.expr
) -> list[tuple[ClassView, ast.ClassDef]]:
    """Every class of the package the receiver may hold, with its module's facts; [] when one is
    unknown or not a class of the package."""
    with question(facts) as typing:
        found: list[tuple[ClassView, ast.ClassDef]] = []
        for view, name in typing.of(receiver, cls, function, 0) or ():
            pair = view.class_named(class_name(name))
            if pair is None:
                return []
            found.append(pair)
        return found


@contextlib.contextmanager
def question(facts: ClassView) -> Iterator[ReceiverTyping]:
    """One question to the module's typing: when the outermost one ends, the answers that name
    classes (and keep other modules' facts alive) are let go."""
    typing = typing_of(facts)
    _OPEN_QUESTIONS.append(typing)
    try:
        yield typing
    finally:
        _OPEN_QUESTIONS.pop()
        if not _OPEN_QUESTIONS:
            for touched in _TOUCHED:
                touched.forget_classes()
            _TOUCHED.clear()


_TYPINGS: weakref.WeakKeyDictionary[ClassView, ReceiverTyping] = weakref.WeakKeyDictionary()
"""Each module's typing while its facts live: what it keeps refers to its own tree only (the classes
an answer names, which refer to other modules' facts, are let go after each question)."""
_CLASS_TYPINGS: weakref.WeakKeyDictionary[ClassView, ReceiverTyping] = weakref.WeakKeyDictionary()
"""The same, for the classes of objects alone (`layers_matter` off)."""
_OPEN_QUESTIONS: list[ReceiverTyping] = []
_TOUCHED: list[ReceiverTyping] = []


def typing_of(facts: ClassView, layers_matter: bool = True) -> ReceiverTyping:
    """The module's typing; without `layers_matter`, for what class an object is, whatever its
    layers hold (`ReceiverTyping.layers_matter`)."""
    table = _TYPINGS if layers_matter else _CLASS_TYPINGS
    typing = table.get(facts)
    if typing is None:
        typing = table[facts] = ReceiverTyping(facts, layers_matter)
    if _OPEN_QUESTIONS and typing not in _TOUCHED:
        _TOUCHED.append(typing)
    return typing


def length_kind_of_typed(typed: Typed) -> str:
    view, name = typed
    if name.endswith((BUILT_WITHOUT_CONFIG, BUILT)):
        return view.built_kind(class_name(name), without_config=name.endswith(BUILT_WITHOUT_CONFIG))
    return view.length_kind_of_name(name)


def union(parts: Iterable[Types]) -> Types:
    found: set[Typed] = set()
    for part in parts:
        if part is None:
            return None
        found |= part
    return frozenset(found)


class ReceiverTyping:
    """The typing of one module's receivers (the module's stores and answers kept)."""

    def __init__(self, facts: ClassView, layers_matter: bool = True) -> None:
        """`layers_matter`: an object whose layers the function may change (`cache.layers.append(...)`,
        a `setattr` with a name not written out) counts its length from them, whatever its class,
        so its typing is unknown; without it, the typing tells the object's class alone."""
        self.layers_matter = layers_matter
        self._facts = weakref.ref(facts)  # a strong one would keep every module's facts alive (the table's key)
        self._bindings: dict[int, dict[str, list[NameBinding]]] = {}
        self._attributes: dict[tuple[int, str, bool], Types] = {}
        self._provisional: dict[tuple[int, str, bool], Types] = {}
        self._provisional_reads: set[tuple[int, str, bool]] = set()
        self._enclosing: dict[int, tuple[FunctionNode, ast.ClassDef | None]] | None = None
        self._module_bindings: dict[str, list[ast.AST]] | None = None
        self._orders: dict[int, list[tuple[ClassView, ast.ClassDef]] | None] = {}
        self.receivers: dict[tuple[int, int], str] = {}
        self._names_around: dict[int, set[str]] = {}
        self._layers_changed: dict[int, frozenset[str]] = {}

    def forget_classes(self) -> None:
        """Drop the answers that name classes (with their modules' facts): a strong reference to a
        module's facts from here would keep it, and its tree, alive (this table's key)."""
        self._attributes.clear()
        self._orders.clear()

    @property
    def facts(self) -> ClassView:
        facts = self._facts()
        assert facts is not None  # asked only through `typing_of(facts)`
        return facts

    def length_kind(self, receiver: ast.expr, cls: ast.ClassDef | None, function: FunctionNode | None) -> str:
        if (
            cls is not None
            and isinstance(receiver, ast.Subscript)
            and ex.dotted_name(receiver.value).startswith("self.")
            and holds_only_int_length_objects(self.facts, cls, receiver.value)
        ):
            return INT_LENGTH
        if isinstance(receiver, ast.Name) and function is not None and self.parameter_is_not_int(receiver.id, function):
            return ""  # the common case, `past_key_values: Cache | None`: no need to read the body
        types = self.of(receiver, cls, function, 0)
        kinds = {length_kind_of_typed(typed) for typed in types or ()}
        return INT_LENGTH if kinds == {INT_LENGTH} else ""

    def parameter_is_not_int(self, name: str, function: FunctionNode) -> bool:
        for argument in ex.arguments_of(function):
            if argument.arg == name and name != "self":
                types = annotated(self.facts, argument.annotation) if argument.annotation is not None else None
                return not types or any(view.length_kind_of_name(typed) != INT_LENGTH for view, typed in types)
        return False

    def order(self, cls: ast.ClassDef, depth: int) -> list[tuple[ClassView, ast.ClassDef]] | None:
        if id(cls) not in self._orders:
            self._orders[id(cls)] = resolution_order(self.facts, cls, depth)
        return self._orders[id(cls)]

    @property
    def stores(self) -> AttributeStores:
        return self.facts.attribute_stores

    # ----- expressions ------------------------------------------------------------------------

    def of(self, node: ast.expr, cls: ast.ClassDef | None, function: FunctionNode | None, depth: int) -> Types:
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.Name):
            return self.name(node.id, cls, function, depth)
        if isinstance(node, ast.Attribute):
            return self.attribute_of(self.of(node.value, cls, function, depth + 1), node.attr, False, depth)
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            return self.elements_of(node.value, cls, function, depth)
        if isinstance(node, ast.Call):
            return self.call(node, cls, function, depth)
        return None

    def elements_of(self, node: ast.expr, cls: ast.ClassDef | None, function: FunctionNode | None, depth: int) -> Types:
        """What indexing or iterating over `node` gives: elements of a container attribute."""
        if isinstance(node, ast.Attribute):
            return self.attribute_of(self.of(node.value, cls, function, depth + 1), node.attr, True, depth)
        return None

    def name(self, name: str, cls: ast.ClassDef | None, function: FunctionNode | None, depth: int) -> Types:
        if function is None:
            return frozenset({(self.facts, cls.name)}) if cls is not None and name == "self" else None
        bindings = self.function_bindings(function).get(name)
        if self.layers_matter and (name in self.layers_changed(function) or "*" in self.layers_changed(function)):
            return None  # `cache.layers.append(StaticLayer(8))`: whatever its class, it counts its layers
        if not bindings:
            enclosing = self.enclosing.get(id(function))  # a free name of a nested function: its binder's
            return self.name(name, enclosing[1], enclosing[0], depth + 1) if enclosing is not None else None
        if name == "self" and cls is not None and self.is_method_self(function, cls, bindings):
            return frozenset({(self.facts, cls.name)})
        return union(self.binding(binding, cls, function, depth) for binding in bindings)

    def layers_changed(self, function: FunctionNode) -> frozenset[str]:
        """The receivers whose layers the function (nested scopes too) may change (`ex.layers_changed_at`)."""
        key = id(function)
        if key not in self._layers_changed:
            self._layers_changed[key] = self.facts.layer_changes.changed_in(function)
        return self._layers_changed[key]

    def is_method_self(self, function: FunctionNode, cls: ast.ClassDef, bindings: list[NameBinding]) -> bool:
        """`self` is the method's first parameter, never rebound, in a method of `cls` (not a static one)."""
        arguments = [*function.args.posonlyargs, *function.args.args]
        static = not isinstance(function, ast.Lambda) and is_static(function)
        return (
            function in cls.body
            and bool(arguments)
            and arguments[0].arg == "self"
            and len(bindings) == 1
            and not static
        )

    def binding(self, binding: NameBinding, cls: ast.ClassDef | None, function: FunctionNode, depth: int) -> Types:
        if binding.node is None:
            return None
        if binding.form == "value":
            return self.of(binding.node, cls, function, depth + 1)
        if binding.form == "annotation":
            types = annotated(self.facts, binding.node)
            if types and unless_shadowed(binding.node, self.names_around(function, cls)) is None:
                return None  # `OwnCache = StaticCache` around it: the annotation names that
            return types
        if binding.form == "iterate":
            return self.elements_of(binding.node, cls, function, depth)
        return None

    def names_around(self, function: FunctionNode, cls: ast.ClassDef | None) -> set[str]:
        """The names the function, the functions around it and the class bodies they are methods of
        bind: an annotation naming one of them does not name the module's class of that name."""
        key = id(function)
        if key not in self._names_around:
            names: set[str] = set()
            scope: tuple[FunctionNode, ast.ClassDef | None] | None = (function, cls)
            while scope is not None:
                inner, owner = scope
                names |= set(self.function_bindings(inner))
                if owner is not None and inner in owner.body:
                    names |= scope_names(owner.body)
                if inner in self.facts.tree.body or (owner is not None and inner in owner.body):
                    break  # a module-level function or a method: no function around it
                scope = self.enclosing.get(id(inner))
            self._names_around[key] = names
        return self._names_around[key]

    @property
    def enclosing(self) -> dict[int, tuple[FunctionNode, ast.ClassDef | None]]:
        """A nested function's enclosing function, and the class that one is a method of."""
        if self._enclosing is None:
            self._enclosing = {}
            for outer, cls in functions_and_classes(self.facts.tree.body, None):
                for node in ex.walk_without(ast.Module(body=outer.body, type_ignores=[]), ex.LEAVES):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        self._enclosing[id(node)] = (outer, cls)  # the innermost binder last
        return self._enclosing

    @property
    def module_bindings(self) -> dict[str, list[ast.AST]]:
        """The statements that bind each name at module level (in its blocks too, not in definitions)."""
        if self._module_bindings is None:
            self._module_bindings = {}
            for statement in simple_statements(self.facts.tree.body):
                for name in statement_bindings(statement):
                    self._module_bindings.setdefault(name, []).append(statement)
        return self._module_bindings

    def function_bindings(self, function: FunctionNode) -> dict[str, list[NameBinding]]:
        if id(function) not in self._bindings:
            self._bindings[id(function)] = function_bindings(function)
        return self._bindings[id(function)]

    # ----- calls ------------------------------------------------------------------------------

    def call(self, call: ast.Call, cls: ast.ClassDef | None, function: FunctionNode | None, depth: int) -> Types:
        name = ex.called_name(call)
        owner, _, last = name.rpartition(".")
        builds = last[:1].isupper() or (owner.rpartition(".")[2][:1].isupper() and last.startswith("from_"))
        if builds and (self.bound_locally(name.partition(".")[0], function) or self.facts.may_build_another(call)):
            return None  # a class the function binds itself (`def add(cache, Layer=Other): Layer()`), or patched
        if last[:1].isupper():  # a constructor (classes are named in CapWords)
            return self.built(name, builds_without_config(call))
        if builds:  # `DynamicCache.from_legacy_cache(...)`
            return self.built(owner, last == LEGACY_BUILDER) if self.facts.builds_its_own_class(owner, last) else None
        if isinstance(call.func, ast.Attribute):
            receiver = self.of(call.func.value, cls, function, depth + 1)
            if receiver is None:
                return None
            return union(self.method_returns(typed, call.func.attr) for typed in receiver)
        if isinstance(call.func, ast.Name) and not self.bound_locally(call.func.id, function):
            return self.function_returns(call.func.id)
        return None

    def built(self, name: str, without_config: bool) -> Types:
        """A new object of the class `name`, marked when built from no config (its length may then be an
        int where the class's is not: `BUILT_WITHOUT_CONFIG`)."""
        return frozenset({(self.facts, name + (BUILT_WITHOUT_CONFIG if without_config else BUILT))})

    def bound_locally(self, name: str, function: FunctionNode | None) -> bool:
        """The calling function (or one it is nested in) binds the name: not the module's function.
        Outside functions (a class body, a lambda at module level), any scope but the module's may."""
        if function is None:
            return name in self.facts.rebound_names
        while function is not None:
            if name in self.function_bindings(function):
                return True
            if id(function) in self.outermost_functions:
                return False
            enclosing = self.enclosing.get(id(function))
            function = enclosing[0] if enclosing is not None else None
        return False

    @functools.cached_property
    def outermost_functions(self) -> set[int]:
        """The functions no function encloses (read without walking into any), by `id`."""
        return {id(function) for function in outermost_functions(self.facts.tree.body)}

    def function_returns(self, name: str) -> Types:
        """What a module-level function of this module, or one imported from the package, returns;
        only where the module binds the name once (one `def`, or one import)."""
        bindings = self.module_bindings.get(name, [])
        if len(bindings) != 1:
            return None
        if isinstance(bindings[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return returned(self.facts, bindings[0])
        imported = self.facts.imports().get(name)
        if imported is None or is_transformers_module(imported[0]):
            return None  # transformers' modules are never read
        other = self.facts.other_module(imported[0])
        return typing_of(other).function_returns(imported[1]) if other is not None else None

    def method_returns(self, typed: Typed, method: str) -> Types:
        """What `obj.method(...)` returns on an object of the class: the definition its method
        resolution order finds, and the overrides of the same module's subclasses."""
        view, name = typed
        found = view.class_named(class_name(name))
        if found is None:
            return None
        owner_view, cls = found
        order = typing_of(owner_view).order(cls, 0)
        if order is None:
            return None
        modules = {id(member_view): member_view for member_view, _ in order} | {id(self.facts): self.facts}
        if any(method in typing_of(module).stores.values for module in modules.values()):
            return None  # `obj.m = ...` in the caller's or the class's modules: an instance's own `m` comes first
        defining = [(member_view, member) for member_view, member in order if defines_method(member, method)]
        if not defining or own_method(defining[0][1], method) is None:
            return None  # not found, or bound in the class body other than by `def`
        candidates = [
            (defining[0][0], own_method(defining[0][1], method)),
            *subclass_overrides(owner_view, cls, method),
        ]
        return union(returned(member_view, node) if node is not None else None for member_view, node in candidates)

    # ----- attributes -------------------------------------------------------------------------

    def attribute_of(self, owners: Types, attribute: str, element: bool, depth: int) -> Types:
        if owners is None:
            return None
        parts: list[Types] = []
        for view, name in owners:
            found = view.class_named(class_name(name))
            if found is None:
                return None
            parts.append(typing_of(found[0]).attribute(found[1], attribute, element, depth))
        return union(parts)

    def attribute(self, cls: ast.ClassDef, attribute: str, element: bool, depth: int) -> Types:
        """What `self.attribute` (or, with `element`, an element of it) holds in `cls` and its kin: the
        least fixpoint of its bindings (`self.layer = self.layer.copy()` reads what it binds)."""
        key = (id(cls), attribute, element)
        if key in self._attributes:
            return self._attributes[key]
        if key in self._provisional:
            self._provisional_reads.add(key)
            return self._provisional[key]
        if depth > MAX_DEPTH:
            return None
        outer_reads, self._provisional_reads = self._provisional_reads, set()
        types: Types = frozenset()
        try:
            for _ in range(MAX_ROUNDS):
                self._provisional[key] = types
                found = self.compute_attribute(cls, attribute, element, depth)
                if found is None or found == types:
                    types = found
                    break
                types = found
            else:
                types = None
        finally:
            del self._provisional[key]
        others = self._provisional_reads - {key}
        if not others:  # no answer depends on a question still open above
            self._attributes[key] = types
        self._provisional_reads = outer_reads | others
        return types

    def compute_attribute(self, cls: ast.ClassDef, attribute: str, element: bool, depth: int) -> Types:
        kin = class_kin(self.facts, cls)
        changed = self.facts.layer_changes.changed_attributes
        if kin is None or attribute in changed or "*" in changed:
            return None  # `self.cache.layers.append(StaticLayer(8))` somewhere: what it counts is its layers'
        annotations = [annotation for member in kin for annotation in attribute_annotations(member, attribute)]
        if None in annotations:
            return None
        declared = union(
            (element_annotated if element else annotated)(self.facts, annotation) for annotation in annotations
        )
        stores = [*self.attribute_stores(attribute, element), *self.own_dynamic_stores(kin)]
        shown = [self.stored(store, element, depth) for store in stores]
        if annotations and declared:
            return union([declared, *(types for types in shown if types is not None)])
        if annotations or has_base_in_package(self.facts, kin):
            return None  # an annotation that names no class; or a base whose module binds what it likes
        if any(self.facts.binds_unnamed_attributes(member) for member in kin):
            return None  # `self.__dict__["cache"] = ...`, `setattr(obj, name, ...)`: a store the tables miss
        if any(defines_in_body(member, attribute) for member in kin):
            return None  # a subclass's `@property def cache`: what `self.cache` gives there is its return
        if attribute in BOUND_BY_TRANSFORMERS and has_base_outside(self.facts, kin):
            return None  # `DynamicCache.__init__` fills `self.layers` with layers of its own choice
        if not shown:
            return None
        return None if binds_elsewhere(self.facts, cls, attribute) else union(shown)

    def attribute_stores(self, attribute: str, element: bool) -> list[tuple[str, Store]]:
        """The stores that may bind `attribute` (or, for `element`, put something into it): `obj.attr +=
        v` rebinds it to whatever `__iadd__` returns, and a `setattr` of a computed name may bind it."""
        stores = self.stores
        tables = [("value", stores.values), ("extended", stores.extended)]
        if element:
            tables.append(("content", stores.contents))
        found = [(form, store) for form, table in tables for store in table.get(attribute, [])]
        return found + [("value", store) for store in stores.any_attribute]

    def own_dynamic_stores(self, kin: Sequence[ast.ClassDef]) -> list[tuple[str, Store]]:
        """`setattr(self, name, v)` in a method of the class or its kin: it may bind any attribute."""
        members = {id(member) for member in kin}
        return [("value", store) for store in self.stores.any_own_attribute if id(store.cls) in members]

    def stored(self, form_and_store: tuple[str, Store], element: bool, depth: int) -> Types:
        form, store = form_and_store
        if store.value is None:
            return None
        if form == "content":
            return self.of(store.value, store.cls, store.function, depth + 1)
        if ex.is_none(store.value) and form == "value":
            return frozenset()
        if not element:
            return None if form != "value" else self.of(store.value, store.cls, store.function, depth + 1)
        return self.displayed(store.value, store.cls, store.function, depth)

    def displayed(self, value: ast.expr, cls: ast.ClassDef | None, function: FunctionNode | None, depth: int) -> Types:
        """The elements of `[A(), B()]`, `(A(),)`, `[A() for _ in range(n)]` (`[]` holds none)."""
        if isinstance(value, (ast.List, ast.Tuple)):
            if any(isinstance(element, ast.Starred) for element in value.elts):
                return None
            return union(self.of(element, cls, function, depth + 1) for element in value.elts)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            return self.of(value.elt, cls, function, depth + 1)
        return None


def annotated(facts: ClassView, annotation: ast.expr | None) -> Types:
    """The classes an annotation admits (None left out); None when it names a generic or an unknown form."""
    names = annotated_classes(annotation)
    if any(name.startswith("<") for name in names):
        return None
    return frozenset((facts, name) for name in names)


def element_annotated(facts: ClassView, annotation: ast.expr | None) -> Types:
    """The classes the elements of `list[A]`, `Sequence[A | B]`, `tuple[A, ...]`, `Optional[List[A]]` may be."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return element_annotated(facts, ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return union([element_annotated(facts, annotation.left), element_annotated(facts, annotation.right)])
    if annotation is None or ex.is_none(annotation):
        return frozenset()
    if not isinstance(annotation, ast.Subscript):
        return None
    wrapper = ex.dotted_name(annotation.value).rpartition(".")[2]
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if wrapper in ("Optional", "Union"):
        return union(element_annotated(facts, element) for element in elements)
    if wrapper not in CONTAINERS:
        return None
    if wrapper in ("Tuple", "tuple"):
        elements = [element for element in elements if not (isinstance(element, ast.Constant) and element.value is ...)]
    return union(annotated(facts, element) for element in elements)


def returned(facts: ClassView, function: FunctionNode) -> Types:
    """What a call of the function gives, by its return annotation (a coroutine for `async def`; a
    decorator may change it)."""
    if isinstance(function, ast.AsyncFunctionDef) or function.returns is None:
        return None
    if any(ex.dotted_name(decorator) not in SAFE_DECORATORS for decorator in function.decorator_list):
        return None
    return annotated(facts, function.returns)


def resolution_order(view: ClassView, cls: ast.ClassDef, depth: int = 0) -> list[tuple[ClassView, ast.ClassDef]] | None:
    """C3 linearization over the package's classes (a base outside it left out); None when a class in
    it binds names other than by `def` we cannot follow or the order is inconsistent."""
    if depth > MAX_DEPTH:
        return None
    sequences: list[list[tuple[ClassView, ast.ClassDef]]] = []
    direct: list[tuple[ClassView, ast.ClassDef]] = []
    for base in cls.bases:
        found = view.class_named(ex.dotted_name(base))
        if found is None:
            continue
        order = typing_of(found[0]).order(found[1], depth + 1)
        if order is None:
            return None
        sequences.append(order)
        direct.append(found)
    merged = c3_merge([*sequences, direct])
    return [(view, cls), *merged] if merged is not None else None


def c3_merge(sequences: list[list[tuple[ClassView, ast.ClassDef]]]) -> list[tuple[ClassView, ast.ClassDef]] | None:
    pending = [list(sequence) for sequence in sequences if sequence]
    merged: list[tuple[ClassView, ast.ClassDef]] = []
    while pending:
        head = next(
            (
                sequence[0]
                for sequence in pending
                if not any(sequence[0][1] is other[1] for rest in pending for other in rest[1:])
            ),
            None,
        )
        if head is None:
            return None
        merged.append(head)
        pending = [[member for member in sequence if member[1] is not head[1]] for sequence in pending]
        pending = [sequence for sequence in pending if sequence]
    return merged


def defines_method(cls: ast.ClassDef, name: str) -> bool:
    return own_method(cls, name) is not None or defines_name(cls, name)


def subclass_overrides(view: ClassView, cls: ast.ClassDef, method: str) -> list[tuple[ClassView, FunctionNode | None]]:
    """The `def method` of every class of the module that derives from `cls` (a binding of the name
    other than `def` gives None: unknown)."""
    found: list[tuple[ClassView, FunctionNode | None]] = []
    for other in view.classes.values():
        if other is cls:
            continue
        order = typing_of(view).order(other, 0)
        if order is None or not any(member is cls for _, member in order):
            continue
        if defines_name(other, method):
            found.append((view, None))
        elif own_method(other, method) is not None:
            found.append((view, own_method(other, method)))
    return found


def class_kin(view: ClassView, cls: ast.ClassDef) -> list[ast.ClassDef] | None:
    """The class, its bases and the classes deriving from it, in its module."""
    order = typing_of(view).order(cls, 0)
    if order is None:
        return None
    kin = [member for member_view, member in order if member_view is view]
    for other in view.classes.values():
        if other not in kin:
            other_order = typing_of(view).order(other, 0)
            if other_order is not None and any(member is cls for _, member in other_order):
                kin.append(other)
    return kin


def has_base_in_package(view: ClassView, kin: list[ast.ClassDef]) -> bool:
    """A class of the family derives from a class of another module of the package."""
    for member in kin:
        for base in member.bases:
            found = view.class_named(ex.dotted_name(base))
            if found is not None and found[0] is not view:
                return True
    return False


def has_base_outside(view: ClassView, kin: list[ast.ClassDef]) -> bool:
    """A class of the family derives from a class the package does not define (transformers' `Cache`)."""
    return any(view.class_named(ex.dotted_name(base)) is None for member in kin for base in member.bases)


def outermost_functions(body: list[ast.stmt]) -> Iterator[FunctionNode]:
    """The `def`s of the statements and of their blocks, and of the classes among them."""
    for statement in block_statements(body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
        elif isinstance(statement, ast.ClassDef):
            yield from outermost_functions(statement.body)
