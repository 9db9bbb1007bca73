"""What the bodies of one module's classes bind: each class's attribute bindings and lineage, its
subclasses in the module, the attributes it binds only to ints or to new tensors, and whether it
derives from a class of another module."""

from __future__ import annotations

import ast
import collections
import functools
import re
from collections.abc import Callable

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import (
    AttributeStores,
    FunctionNode,
    is_own_receiver,
    module_stores,
)
from lint_rules.engine.facts.attribute_stores import Store as AttributeStore
from lint_rules.engine.facts.attributes import AttributeBindings, attribute_bindings, is_new_tensor
from lint_rules.engine.facts.binding_forms import expression_lines_of, self_call_lines_of
from lint_rules.engine.facts.caches import is_transformers_module
from lint_rules.engine.facts.class_names import ClassNames
from lint_rules.engine.facts.definitions import Definition, class_lineage
from lint_rules.engine.facts.module_text import (
    follows_identifier,
    may_nest_classes,
)
from lint_rules.engine.facts.outside_stores import (
    ANY_ATTRIBUTE,
    OutsideCounts,
    Store,
    attribute_lines,
    defs_with_self,
    first_parameter,
    has_own_receiver,
    is_static_or_class_method,
    may_bind_any_attribute,
    may_store_on_a_class,
    named_after_other_than_self,
    named_other_than_called,
    stores_elsewhere,
)
from lint_rules.engine.facts.returned_values import is_int_counter
from lint_rules.engine.facts.transformers_subclasses import all_classes


class ReadClasses:
    """What has been read of each class of the module, by the class's `id`."""

    def __init__(self) -> None:
        self.int_attributes: dict[int, frozenset[str]] = {}
        self.tensor_attributes: dict[int, frozenset[str]] = {}
        self.bindings: dict[int, AttributeBindings] = {}


class ClassBodies(ClassNames):
    """The bindings of one module's classes (read lazily, each class once)."""

    @functools.cached_property
    def _read(self) -> ReadClasses:
        return ReadClasses()

    @staticmethod
    def rebinds(own: AttributeBindings, state: set[str] | None) -> bool:
        """`own` binds an attribute of `state` (any, when None) to something other than an int."""
        bound = [*own.values.items(), *own.class_level.items()]
        return own.opaque or any(
            not all(map(ex.is_structurally_int, values))
            for attribute, values in bound
            if state is None or attribute in state
        )

    def has_base_elsewhere(self, cls: ast.ClassDef) -> bool:
        """A base that is neither a class of this module nor one of transformers'."""
        for base in cls.bases:
            name = ex.dotted_name(base)
            prefix = name.rpartition(".")[0]
            imported = self.imports().get(name)
            if name in self.classes or self.names_transformers_module(prefix):
                continue
            if imported is None or not is_transformers_module(imported[0]):
                return True
        return False

    def has_package_base(self, cls: ast.ClassDef) -> bool:
        """A base imported from a module that is not transformers' (maybe a sibling's class)."""
        imports = self.imports()
        return any(
            name in imports and not is_transformers_module(imports[name][0]) for name in map(ex.dotted_name, cls.bases)
        )

    def every_class(self) -> list[ast.ClassDef]:
        """The module's classes at any depth (in a function, in a class), read once."""
        return self._every_class

    @functools.cached_property
    def _every_class(self) -> list[ast.ClassDef]:
        if self.text is None or may_nest_classes(self.text):
            return all_classes(self.tree)
        return [node for node in self.tree.body if isinstance(node, ast.ClassDef)]

    def int_attributes(self, cls: ast.ClassDef) -> frozenset[str]:
        """`self.attr` names every binding of which is an int: in its methods, a class body's default
        (a property or any other form there is not one), in the class, its same-module bases and its
        same-module subclasses (an instance of one may stand where the class is expected). None
        when one of them may bind any attribute (`setattr(self, name, v)`, `self.__dict__`)."""
        if id(cls) not in self._read.int_attributes:
            members = self.family(cls)
            bindings = [self.bindings(member) for member in members]
            bound: dict[str, list[ast.expr]] = {}
            for binding in bindings:
                for attribute, values in [*binding.values.items(), *binding.class_level.items()]:
                    bound.setdefault(attribute, []).extend(values)
            called = {attribute for binding in bindings for attribute in binding.called}
            opaque = any(binding.opaque for binding in bindings)
            ints = frozenset(
                attribute
                for attribute, values in bound.items()
                if not opaque and attribute not in called and is_int_counter(values)
            )
            family = {id(member) for member in members}
            self._read.int_attributes[id(cls)] = ints - self.stored_elsewhere(
                ints, lambda store: self.binds_a_count(store, family)
            )
        return self._read.int_attributes[id(cls)]

    def stored_elsewhere(self, names: frozenset[str], keeps: Callable[[Store], bool]) -> frozenset[str]:
        """Of `names`, those a store on an object other than a method's own receiver binds in a way
        `keeps` does not accept (`outside_stores`): `layer.n = t` in a function."""
        suspects = self.suspects(self.own_str() if names else "", names)
        broken: set[str] = set()
        for store in self._stores_elsewhere if suspects else []:
            named = store.attribute in suspects or store.attribute == ANY_ATTRIBUTE
            if named and not keeps(store):
                broken |= suspects if store.attribute == ANY_ATTRIBUTE else {store.attribute}
        return frozenset(broken)

    def binds_on_objects(self, names: frozenset[str], unnamed: bool) -> bool:
        """The module may bind one of `names` on an object other than a method's own receiver:
        `Cache.name = f`, `cache.name = f.__get__(cache)`, `setattr(Cache, "name", f)`; with `unnamed`,
        also a store whose attribute is not written out (`setattr(obj, key, f)`, `vars(obj)[key] =
        f`). Not a literal or a count. What a class binds on its own objects is `binds_on_own_objects`."""
        text = self.own_str()
        if text is not None and not (
            (unnamed and self.text_may_bind_any_attribute) or any(named_other_than_called(text, n) for n in names)
        ):
            return False
        bound = names | {ANY_ATTRIBUTE} if unnamed else names
        return any(store.attribute in bound and not is_plain_data(store.value) for store in self._stores_elsewhere)

    def patched_from_outside(self, cls: ast.ClassDef) -> bool:
        """The module binds an attribute on the class object itself outside its body (`Cache.__init__ =
        f`, `setattr(Cache, "n", v)`), on the class of an object (`type(cache).update = f`), or a
        method's name of the class, or a special name, on any object but a method's own receiver
        (`klass.update = f` for a parameter or an alias `klass`, `obj.__init__ = f`): any method of it
        may then be another. Not a literal (`Cache.verbose = True`): what one does to an attribute the
        length reads is the counters' and layers' concern."""
        text = self.own_str()
        methods = {
            statement.name for statement in cls.body if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        if text is not None and not may_store_on_a_class(text, cls.name, methods):
            return False
        stores = self.attribute_stores
        on_the_class = any(
            store.receiver is not None and names_a_class(store.receiver, cls.name) and not is_plain_data(store.value)
            for table in (stores.values, stores.extended)
            for bound in table.values()
            for store in bound
        )
        return on_the_class or any(
            (store.attribute in methods or is_special(store.attribute)) and not is_plain_data(store.value)
            for store in self._stores_elsewhere
        )

    def binds_on_own_objects(self, cls: ast.ClassDef, names: frozenset[str]) -> bool:
        """The class binds one of `names` in its body other than by a `def` (`get_seq_length = f`), or on
        its own objects (`self.get_seq_length = f`, `cls.get_seq_length = f` in `__init_subclass__`), or
        may bind any attribute there (`setattr(self, key, f)`)."""
        bindings = self.bindings(cls)
        defined = collections.Counter(
            statement.name
            for statement in cls.body
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in names
        )
        in_body = any(len(bindings.class_level.get(name, [])) > defined[name] for name in names)
        return bindings.opaque or in_body or not names.isdisjoint(bindings.values)

    def suspects(self, text: str | None, names: frozenset[str]) -> frozenset[str]:
        """Of `names`, those whose stores the text and the methods that name them cannot rule out:
        every one where a `def` that is no method names its first parameter `self`."""
        if text is None or self.text_may_bind_any_attribute or self.def_count_with_self > self.methods_with_self:
            return names
        return frozenset(
            name for name in names if named_after_other_than_self(text, name) or not self.named_on_own_self(text, name)
        )

    @functools.cached_property
    def text_may_bind_any_attribute(self) -> bool:
        text = self.own_str()
        return text is None or may_bind_any_attribute(text)

    @functools.cached_property
    def def_count_with_self(self) -> int:
        """`defs_with_self` of the text, counted once."""
        text = self.own_str()
        return defs_with_self(text) if text is not None else 0

    def named_on_own_self(self, text: str, name: str) -> bool:
        """Each `self.name` of the text (the only kind `named_after_other_than_self` lets by) is in a method
        whose first parameter `self` is never rebound: elsewhere (`self = other`, a function's local
        `self`) `self` is another object."""
        return all(
            method is not None and self.keeps_self(method)
            for method in map(self.innermost_method_at, attribute_lines(text, name))
        )

    def innermost_method_at(self, line: int) -> FunctionNode | None:
        """The innermost method whose body holds the line: not its header, whose defaults and
        annotations the enclosing scope evaluates (where `self` may be anything)."""
        spanning = [
            method
            for method, _ in self._methods
            if method.lineno <= line <= (method.end_lineno or 0) and body_start(method) <= line
        ]
        return max(spanning, key=lambda method: method.lineno, default=None)

    def class_of_method(self, method: FunctionNode) -> ast.ClassDef | None:
        return self._method_classes.get(id(method))

    def keeps_self(self, method: FunctionNode) -> bool:
        return first_parameter(method) == "self" and self.has_own_receiver(method)

    def has_own_receiver(self, method: FunctionNode) -> bool:
        """`outside_stores.has_own_receiver`, and no call runs the method on another object
        (`methods_run_on_others`)."""
        return has_own_receiver(method) and id(method) not in self.methods_run_on_others

    def runs_on_others(self, definition: Definition | None) -> bool:
        """A method of the module that some call runs on another object (`methods_run_on_others`)."""
        return definition is not None and id(definition.node) in self.methods_run_on_others

    @functools.cached_property
    def methods_run_on_others(self) -> frozenset[int]:
        """The methods (by `id`) that a call runs through their class, or a subclass of it, on an
        object given first (`Model.grow(cache)`): not the caller's own receiver (`Base.__init__(self)`),
        so their first parameter may be any object."""
        text = self.own_str()
        if text is None:
            return frozenset(id(method) for method, _ in self._methods)
        calls = {
            (name, match.group(1))
            for name in self.classes
            for match in re.finditer(re.escape(name) + CALL_THROUGH_THE_CLASS, text)
            if not follows_identifier(text, match.start()) and match.group(2).strip() not in ("self", "cls")
        }
        return frozenset(
            id(method)
            for method, cls in self._methods
            if calls and any((member.name, method.name) in calls for member in [cls, *self.subclasses(cls)])
        )

    @functools.cached_property
    def methods_with_self(self) -> int:
        return sum(
            1
            for method, _ in self._methods
            if not is_static_or_class_method(method) and first_parameter(method) == "self"
        )

    def binds_a_count(self, store: Store, family: set[int]) -> bool:
        """A count as the class's own methods read one (`CountReader`), where the counter itself may be
        read on the own receiver of a method of the family (`copied.n = self.n`) or on an object the
        module shows to be of the family (`layer.n` in `for layer in self.layers`: `holds_the_family`)."""

        def counter_read(read: ast.Attribute) -> bool:
            owner = self._method_classes.get(id(store.method)) if store.method is not None else None
            if owner is not None and is_own_receiver(read.value, store.method) and id(owner) in family:
                return True
            return store.function is not None and self.holds_the_family(read.value, store.function, family)

        if store.value is None:
            return False
        if store.function is None:
            return ex.is_structurally_int(store.value)
        return OutsideCounts(counter_read).is_count(store.value, store.attribute, store.function, store.increment)

    def holds_the_family(self, receiver: ast.expr, function: FunctionNode, family: set[int]) -> bool:
        """Every object `receiver` may hold in `function` is of a class of `family`. Only the class
        facts can type a receiver (`ClassFacts.holds_the_family`); here, nothing is known."""
        return False

    def from_outside(self, stores: list[AttributeStore]) -> list[AttributeStore]:
        """The stores made on an object other than the own receiver of a method that keeps it (a
        class body's own bindings aside): `cache.layers.append(v)` in a function."""
        return [store for store in stores if store.receiver is not None and not self.on_own_receiver(store)]

    def on_own_receiver(self, store: AttributeStore) -> bool:
        method, receiver = store.function if store.cls is not None else None, store.receiver
        return (
            method is not None
            and receiver is not None
            and is_own_receiver(receiver, method)
            and self.has_own_receiver(method)
        )

    @functools.cached_property
    def attribute_stores(self) -> AttributeStores:
        """Every store of the module to an attribute, by name, on any object (`attribute_stores`)."""
        return module_stores(self.tree)

    @functools.cached_property
    def _stores_elsewhere(self) -> list[Store]:
        return stores_elsewhere(self.tree, self.methods_run_on_others)

    def binds_unnamed_attributes(self, cls: ast.ClassDef) -> bool:
        """An attribute of an object of `cls` may be bound without its name written out: the class
        itself (`setattr(self, name, v)`, `self.__dict__`, `vars(self)`: `opaque`), or the module on
        another object (`obj.__dict__[k] = v`, `vars(obj).update(...)`, `setattr(obj, name, v)`)."""
        if self.bindings(cls).opaque:
            return True
        if self.own_str() is not None and not self.text_may_bind_any_attribute:
            return False
        return any(store.attribute == ANY_ATTRIBUTE for store in self._stores_elsewhere)

    @functools.cached_property
    def _methods(self) -> list[tuple[FunctionNode, ast.ClassDef]]:
        """Each method (a `def` directly in a class body) with its class."""
        return [
            (statement, cls)
            for cls in self.every_class()
            for statement in cls.body
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]

    @functools.cached_property
    def _method_classes(self) -> dict[int, ast.ClassDef]:
        """The class of each method, by the method's `id`."""
        return {id(method): cls for method, cls in self._methods}

    def family(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """`cls`, its subclasses in the module, and every base of any of them there: the classes whose
        methods may run on an object that stands where `cls` is expected (`class Both(Mixin, Child)`)."""
        members = {id(member): member for below in [cls, *self.subclasses(cls)] for member in self.lineage(below)}
        return list(members.values())

    def subclasses(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The module's classes that have `cls` among their bases, however far up."""
        return self._subclasses_by_base.get(id(cls), [])

    @functools.cached_property
    def _subclasses_by_base(self) -> dict[int, list[ast.ClassDef]]:
        found: dict[int, list[ast.ClassDef]] = {}
        for member in self.classes.values():
            for base in self.lineage(member)[1:]:
                found.setdefault(id(base), []).append(member)
        return found

    def tensor_attributes(self, cls: ast.ClassDef) -> frozenset[str]:
        """`self.attr` names the class (and its same-module bases) only ever binds to a new tensor."""
        if id(cls) not in self._read.tensor_attributes:
            values, _ = self.lineage_bindings(cls)
            self._read.tensor_attributes[id(cls)] = frozenset(
                attribute for attribute, bound in values.items() if all(map(is_new_tensor, bound))
            )
        return self._read.tensor_attributes[id(cls)]

    def attribute_annotations(self, cls: ast.ClassDef) -> dict[str, ast.expr]:
        return self.bindings(cls).annotations

    def lineage_bindings(self, cls: ast.ClassDef) -> tuple[dict[str, list[ast.expr]], set[str]]:
        values: dict[str, list[ast.expr]] = {}
        called: set[str] = set()
        for member in self.lineage(cls):
            bindings = self.bindings(member)
            for attribute, bound in bindings.values.items():
                values.setdefault(attribute, []).extend(bound)
            called |= bindings.called
        return values, called

    def bindings(self, cls: ast.ClassDef) -> AttributeBindings:
        if id(cls) not in self._read.bindings:
            self._read.bindings[id(cls)] = attribute_bindings(cls, self.expression_lines(), self.self_call_lines)
        return self._read.bindings[id(cls)]

    def expression_lines(self) -> list[int] | None:
        """The lines where a binding form inside an expression may be (None: no text, look everywhere)."""
        return self._expression_lines

    @functools.cached_property
    def _expression_lines(self) -> list[int] | None:
        return expression_lines_of(self.text) if self.text is not None else None

    @functools.cached_property
    def self_call_lines(self) -> list[int] | None:
        """The lines where a method may be called on an attribute of `self` (None: no text, look everywhere)."""
        return self_call_lines_of(self.text) if self.text is not None else None

    def lineage(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        return class_lineage(cls, self.classes)


CALL_THROUGH_THE_CLASS = r"\s*\.\s*(\w+)\s*\(([^,)]*)"
"""After a class's name: `.method(first, ...)`, a method run through its class, with its first
argument's text (`self`, `self.inner`, ...)."""


def is_plain_data(value: ast.expr | None) -> bool:
    """A literal: no method, so what replaces one with it makes a call of it fail."""
    return isinstance(value, ast.Constant)


def is_special(name: str) -> bool:
    """`__init__`, `__new__`, `__getattribute__`, ...: every class has them, from `object` at least."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def names_a_class(receiver: ast.expr, name: str) -> bool:
    """`name` itself, or the class of some object (`type(obj)`, `obj.__class__`)."""
    if isinstance(receiver, ast.Call):
        return ex.called_name(receiver) == "type"
    return ex.dotted_name(receiver) == name or (isinstance(receiver, ast.Attribute) and receiver.attr == "__class__")


def body_start(function: FunctionNode) -> int:
    """The first line that holds the body alone: after the header's last default or annotation (a
    body on the header's line counts as the header's)."""
    header = [function.args, *([function.returns] if function.returns else [])]
    ends = [getattr(node, "end_lineno", None) or 0 for part in header for node in ast.walk(part)]
    return max(function.body[0].lineno, max([function.lineno, *ends]) + 1)
