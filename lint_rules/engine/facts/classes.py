"""What the module's classes tell about lengths: whose `get_seq_length()` is an int, which receivers
are such caches (annotations, constructors), and which attributes a class builds as tensors.

A class's *length kind* is "int" when its source method provably returns an int: a transformers
class in the table of `caches.py`, a class whose own override returns only ints (directly, through
a local, or through `self.attr` assigned only ints), or a subclass of an "int" class that does not
override it. Classes imported from other modules of the same package are read from disk.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import FunctionNode
from lint_rules.engine.facts.attributes import (
    self_attribute,
)
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.caches import (
    INT_LENGTH,
    TENSOR_LENGTH,
    is_transformers_module,
    joined_kind,
    length_kind_of_transformers_class,
)
from lint_rules.engine.facts.class_builders import builder_returns_its_class, runs_its_own_body
from lint_rules.engine.facts.class_containers import (
    adds_only_int_length_layers,
    holds_only_int_length_objects,
    replicated_layer_kind,
)
from lint_rules.engine.facts.class_properties import ClassProperties
from lint_rules.engine.facts.constructions import LEGACY_BUILDER, builds_without_config
from lint_rules.engine.facts.declarations import NO_DECLARATIONS, Declarations
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.held_objects import reads_an_int_property
from lint_rules.engine.facts.kept_elsewhere import keeps_int_elsewhere
from lint_rules.engine.facts.module_files import module_file, parsed_module
from lint_rules.engine.facts.name_bindings import Binding, module_named
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases, length_kind_in
from lint_rules.engine.facts.returned_values import (
    annotated_classes,
    returns_a_tensor,
    returns_ints_by_form,
    returns_only_ints,
)
from lint_rules.engine.facts.subclasses import every_subclass_int, is_abstract
from lint_rules.engine.facts.transformers_subclasses import (
    binds_counters_to_ints,
    counters_of_bases,
    some_subclass_may_break,
)

MAX_MODULE_DEPTH = 4
"""A `class` statement inside a block: the text of a module whose classes are not all at its top."""

KnownKind = Callable[[ast.expr], str]
"""What the walk knows a value holds: INT_LENGTH for a name bound to an int-length cache."""


def nothing_known(value: ast.expr) -> str:
    return ""


class ClassFacts(ClassProperties):
    """Length facts about the classes one module defines or imports."""

    def __init__(
        self,
        tree: ast.Module,
        source_methods: frozenset[str],
        path: str = "",
        module_name: str | None = None,
        root: Path | None = None,
        depth: int = 0,
        classes: dict[str, ast.ClassDef] | None = None,
        text: str | None = None,
        releases: Releases = ALL_RELEASES,
        declarations: Declarations = NO_DECLARATIONS,
    ) -> None:
        super().__init__(tree, path, module_name, root, classes, text)
        self.releases = releases
        """The transformers releases the module runs on: the table's classes have their length there."""
        self.declarations = declarations.only_classes()
        """`int-length-classes`: classes whose length is an int, though nothing here shows it."""
        self.source_methods = source_methods
        self.depth = depth
        self._kinds: dict[int, str] = {}
        self._computing: set[int] = set()
        self._read_a_cycle = False
        self._rebinding_subclasses: dict[str, bool] = {}
        self._counters_kept_below: dict[int, bool] = {}
        self._kept_elsewhere: dict[tuple[int, bool], bool] = {}
        self._kinds_in_module: dict[tuple[str, bool], str] = {}

    # ----- length kinds -----------------------------------------------------------------------

    def length_kind_of_name(self, name: str, as_a_base: bool = False, exact: bool = False) -> str:
        """ "int", "tensor" or "" (unknown) for a class named in this module (`DynamicCache`,
        `transformers.DynamicCache`, a local class, an import from the same package). `as_a_base`:
        the class's own kind, for an object of a subclass whose state the caller checks
        (`keeps_int_state`): other subclasses of it, and what they override, do not count. `exact`:
        for an object built by the class itself, which no subclass in another module can be."""
        kind = self.kind_in_its_module(name, as_a_base)
        if kind == INT_LENGTH and not as_a_base and not self.named_class_kept_int_elsewhere(name, exact):
            return ""
        return kind

    def kind_in_its_module(self, name: str, as_a_base: bool = False) -> str:
        """The kind as the class's module (and its bases') read it, before what the package's other
        modules do to it (`kept_elsewhere`): what a module asks of another one's class."""
        key = (name, as_a_base)
        if key in self._kinds_in_module:
            return self._kinds_in_module[key]
        cycles_read = CYCLE_READS.count
        kind = self.unless_replaced(self.named_kind(name, as_a_base))
        if CYCLE_READS.count == cycles_read:  # else it read a class still being computed, in any module
            self._kinds_in_module[key] = kind
        return kind

    def named_class_kept_int_elsewhere(self, name: str, exact: bool = False) -> bool:
        """Each package class `name` may stand for keeps its int in the package's other modules."""
        alternatives = self.alternatives().get(name)
        if alternatives is None:
            found = self.class_named(name)
            return found is None or found[0].kept_int_elsewhere(found[1], exact)
        for binding in alternatives:
            if isinstance(binding, ast.ClassDef) and not self.kept_int_elsewhere(binding, exact):
                return False
            other = self.other_module(binding[0]) if isinstance(binding, tuple) else None
            found = other.class_named(binding[1]) if other is not None and isinstance(binding, tuple) else None
            if found is not None and not found[0].kept_int_elsewhere(found[1], exact):
                return False
        return True

    def kept_int_elsewhere(self, cls: ast.ClassDef, exact: bool = False) -> bool:
        """`exact`: for an object the class builds itself, which no subclass can be; stores into it
        still count. A class `int-length-classes` declares is vouched for."""
        if self.declarations and self.declared_kind(self.module[0], cls.name):
            return True
        key = (id(cls), exact)
        if key not in self._kept_elsewhere:
            self._kept_elsewhere[key] = keeps_int_elsewhere(self, cls, subclasses_too=not exact)
        return self._kept_elsewhere[key]

    def unless_replaced(self, kind: str) -> str:
        """`kind`, but no int where the module binds a source method by name on an object
        (`Cache.get_seq_length = f`, `ClassBodies.binds_on_objects`): an object of any class may then
        answer it with anything."""
        return "" if kind == INT_LENGTH and self.replaces_a_source_method else kind

    @functools.cached_property
    def replaces_a_source_method(self) -> bool:
        """Also `obj.__class__ = Other`: the object's methods are then another class's."""
        return self.binds_on_objects(self.source_methods | {"__class__"}, unnamed=False)

    @functools.cached_property
    def may_replace_any_method(self) -> bool:
        """Also a store whose name is not written out (`setattr(obj, key, f)`): it may replace the
        length method of an object of the module's own classes. transformers' objects are taken as
        not changed that way, like any other store into them (docs/limits.md)."""
        return self.binds_on_objects(self.source_methods, unnamed=True)

    def named_kind(self, name: str, as_a_base: bool) -> str:
        prefix, _, last = name.rpartition(".")
        if prefix:
            kind = self.length_kind_through_module(prefix, last) or self.declared_kind(prefix, last)
            breaks = not as_a_base and self.a_subclass_breaks_transformers_int(prefix, last)
            return "" if kind == INT_LENGTH and breaks else kind
        alternatives = self.alternatives().get(name)
        if alternatives is not None:
            return joined_kind([self.bound_kind(name, binding, as_a_base) for binding in alternatives])
        local = self.classes.get(name)
        if local is not None:
            return self.length_kind(local)
        imported = self.imports().get(name) or self.function_imports().get(name)
        return "" if imported is None else self.imported_kind(name, imported, as_a_base)

    def bound_kind(self, name: str, binding: Binding, as_a_base: bool) -> str:
        if isinstance(binding, ast.ClassDef):
            return self.length_kind(binding)
        return "" if binding is None else self.imported_kind(name, binding, as_a_base)

    def imported_kind(self, name: str, imported: tuple[str, str], as_a_base: bool) -> str:
        """The kind of the class `name` holds when it is imported as `imported` (module, name there)."""
        module, original = imported
        if is_transformers_module(module):
            kind = self.transformers_kind(original)
            if kind == INT_LENGTH and not as_a_base and self.a_subclass_breaks_transformers_int(module, original):
                return ""
            return kind or self.declared_kind(module, original)
        if self.declared_kind(module, original):
            return INT_LENGTH
        other = self.other_module(module)
        kind = other.kind_in_its_module(original) if other is not None else ""
        return "" if kind == INT_LENGTH and self.a_subclass_rebinds_state(name) else kind

    def a_subclass_breaks_transformers_int(self, module: str, original: str) -> bool:
        """`original` is transformers' class (through `module`, an import or a module prefix), and a
        class of this module derives from it without keeping its int length (`transformers_subclasses`)."""
        if not (is_transformers_module(module) or self.names_transformers_module(module)):
            return False
        key = f"transformers:{original}"
        if key not in self._rebinding_subclasses:
            self._rebinding_subclasses[key] = False  # what a subclass asks of its base meanwhile: the table's kind
            self._rebinding_subclasses[key] = some_subclass_may_break(self, original)
        return self._rebinding_subclasses[key]

    def a_subclass_rebinds_state(self, name: str) -> bool:
        """A class of this module derives from the imported class `name` and binds (in its methods or
        its body) an attribute that class binds to something other than an int: an object of the
        imported class may be one of those."""
        if name not in self._rebinding_subclasses:
            found = self.class_named(name)
            state = found[0].instance_attributes(found[1]) if found is not None else None
            self._rebinding_subclasses[name] = any(
                self.rebinds(self.bindings(member), state)
                for member in self.classes.values()
                if any(ex.dotted_name(base) == name for ancestor in self.lineage(member) for base in ancestor.bases)
            )
        return self._rebinding_subclasses[name]

    def transformers_kind(self, name: str) -> str:
        return length_kind_of_transformers_class(name, self.releases)

    def length_kind_through_module(self, prefix: str, name: str) -> str:
        """`cache_utils.ZooCache`, `cu.ZooCache`, `zoo.utils.cache_utils.ZooCache`: the class `name` of
        the module a module-level import binds `prefix` to (transformers' by the table; a module of
        the package read from disk, or its package's `__init__.py` re-exporting the class)."""
        alternatives = self.alternatives().get(prefix)
        if alternatives is not None:
            modules = [module_named(binding) if isinstance(binding, tuple) else "" for binding in alternatives]
            return joined_kind(self.kind_in_module(module, name) for module in modules)
        if self.names_transformers_module(prefix):
            return self.transformers_kind(name)
        module = self.bound_modules().get(prefix)
        return "" if module is None else self.kind_in_module(module, name)

    def kind_in_module(self, module: str, name: str) -> str:
        """The kind of the class `name` of `module` (transformers' by the table, the package's read)."""
        if not module:
            return ""
        if is_transformers_module(module):
            return self.transformers_kind(name)
        other = self.other_module(module)
        return other.kind_in_its_module(name) if other is not None else ""

    def length_kind(self, cls: ast.ClassDef) -> str:
        """Kept once known; an answer that read a class still being computed (a cycle through bases or
        delegation, which proves nothing) is not kept, so no answer depends on which class was asked first."""
        key = id(cls)
        if key in self._kinds:
            return self._kinds[key]
        if key in self._computing:
            self._read_a_cycle = True
            CYCLE_READS.count += 1
            return ""
        outer_read_a_cycle, self._read_a_cycle = self._read_a_cycle, False
        self._computing.add(key)
        try:
            kind = self.compute_length_kind(cls)
        finally:
            self._computing.discard(key)
        if not self._read_a_cycle:
            self._kinds[key] = kind
        self._read_a_cycle = outer_read_a_cycle or self._read_a_cycle
        return self.unless_replaced(kind)

    def declared_kind(self, module: str, name: str) -> str:
        """INT_LENGTH for a class `int-length-classes` declares, else ""."""
        return INT_LENGTH if self.declarations.declares_class(module, name) else ""

    def compute_length_kind(self, cls: ast.ClassDef) -> str:
        if self.in_transformers_table_module() and self.transformers_kind(cls.name):
            return self.transformers_kind(cls.name)
        if self.declarations and self.declared_kind(self.module[0], cls.name):
            return INT_LENGTH
        kind = self.kind_of_its_own_objects(cls)
        if kind == INT_LENGTH and self.methods_may_be_others(cls):
            return ""
        return "" if kind == INT_LENGTH and not self.overrides_below_count_ints(cls) else kind

    def methods_may_be_others(self, cls: ast.ClassDef) -> bool:
        """What runs as the class's methods may not be its `def`s: a store whose name is not written
        out (`may_replace_any_method`), the class or a relative patched from outside
        (`patched_from_outside`), or a source method bound other than by a `def` in its lineage."""
        return (
            self.may_replace_any_method
            or any(self.patched_from_outside(member) for member in self.family(cls))
            or any(self.binds_source_method(member) for member in self.lineage(cls))
        )

    def own_receiver_kind(self, definition: Definition | None, receiver: ast.expr) -> str | None:
        """The length kind of `self` (`super()`: its bases) in a method of the module, no int where a
        call runs the method on another object (`methods_run_on_others`); None for any other receiver."""
        cls = definition.enclosing_class if definition is not None else None
        if cls is None:
            return None
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            kind = self.length_kind(cls)
        elif isinstance(receiver, ast.Call) and ex.called_name(receiver) == "super":
            kind = self.super_length_kind(cls)
        else:
            return None
        if kind == INT_LENGTH and (self.runs_on_others(definition) or not self.kept_int_elsewhere(cls)):
            return ""
        return kind

    def overrides_below_count_ints(self, cls: ast.ClassDef) -> bool:
        """Every subclass of `cls` in the module that gives the source method its own body (an object
        of it may stand where `cls` is expected) counts an int; one that binds the name otherwise
        (`get_seq_length = f`) may count anything."""
        for sub in self.subclasses(cls):
            if self.own_source_method(sub) is not None:
                if self.length_kind(sub) != INT_LENGTH:
                    return False
            elif self.binds_source_method(sub):
                return False
        return True

    def kind_of_its_own_objects(self, cls: ast.ClassDef) -> str:
        """The length of an object built by `cls` itself."""
        own = self.own_source_method(cls)
        if own is not None and is_abstract(own):
            return INT_LENGTH if self.every_subclass_int(cls) else ""
        if own is not None:
            if self.own_method_returns_ints(cls, own):
                return INT_LENGTH
            return TENSOR_LENGTH if returns_a_tensor(own, self.tensor_attributes(cls)) else ""
        inherited = self.bases_length_kind(cls)
        if not inherited and self.inherited_method_returns_ints(cls):
            return INT_LENGTH
        if inherited != INT_LENGTH:
            return inherited
        if self.inherits_an_int_by_its_form(cls):
            return INT_LENGTH  # what the subclass binds cannot change `return int(...)` or `return 0`
        return INT_LENGTH if self.keeps_int_state(cls) and self.counters_kept_below(cls) else ""

    def inherits_an_int_by_its_form(self, cls: ast.ClassDef) -> bool:
        """Every source method `cls` inherits, through single bases of the module, returns only values
        that are ints by their form (`returns_ints_by_form`: `0`, `int(...)`, `len(...)`), whatever
        the object's attributes hold: the first class of the lineage that defines one defines each
        of them that way (every `def` of those names in its body)."""
        for member in self.lineage(cls):
            if self.binds_source_method(member):
                return False
            defined = [
                statement
                for statement in member.body
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                and statement.name in self.source_methods
            ]
            if defined:
                return member is not cls and all(
                    runs_its_own_body(own) and returns_ints_by_form(own) for own in defined
                )
            if len(member.bases) != 1:
                return False  # another base's method may come first (`class Sub(Mixin, Base)`)
        return False

    def inherited_method_returns_ints(self, cls: ast.ClassDef) -> bool:
        """The source method `cls` inherits through single bases of the module returns only ints on an
        object of `cls` or of a subclass of it: the base's own answer may be unknown for a subclass
        of it beside `cls` (one that puts any object into the layers), whose state `cls` has not."""
        below = [cls, *self.subclasses(cls)]
        if any(len(member.bases) != 1 or self.binds_source_method(member) for member in below):
            return False  # another base's methods may run on an object of `cls` (`class Both(Child, Sibling)`)
        for member in self.lineage(cls):
            own = self.own_source_method(member)
            if own is not None:
                return member is not cls and not is_abstract(own) and self.own_method_returns_ints(cls, own)
            if len(member.bases) != 1 or self.binds_source_method(member):
                return False
        return False

    def binds_source_method(self, cls: ast.ClassDef) -> bool:
        """The class binds a source method's name other than by a `def` (`ClassBodies.binds_on_own_objects`)."""
        return self.binds_on_own_objects(cls, self.source_methods)

    def own_method_returns_ints(
        self, cls: ast.ClassDef, own: ast.FunctionDef | ast.AsyncFunctionDef, over_an_int_base: bool = False
    ) -> bool:
        """`over_an_int_base`: `super().get_seq_length()` counts as an int (what the base returns for
        an object that keeps the base's counters ints)."""

        def delegated(value: ast.expr) -> bool:
            return (
                (over_an_int_base and asks_the_base(value))
                or self.delegates_to_int_length(cls, value)
                or reads_an_int_property(self, cls, own, value)
            )

        def asks_the_base(value: ast.expr) -> bool:
            if not (isinstance(value, ast.Call) and ex.getter_name(value) in self.source_methods):
                return False
            receiver = ex.getter_receiver(value)
            return receiver is not None and ex.is_super_call(receiver)

        if not runs_its_own_body(own):
            return False
        return returns_only_ints(own, self.int_attributes(cls) | self.family_int_properties(cls), delegated)

    def every_subclass_int(self, cls: ast.ClassDef) -> bool:
        """A private base whose source method is abstract: every subclass in the package is int (`subclasses`)."""
        module, root = self.module
        return every_subclass_int(module, root, cls, self.subclass_length_is_int, self.own_source_method)

    def subclass_length_is_int(self, module: str, cls: ast.ClassDef) -> bool:
        facts = self if module == self.module[0] else self.other_module(module)
        if facts is None:
            return False
        same = facts.classes.get(cls.name)
        return facts.length_kind(same if same is not None and same.lineno == cls.lineno else cls) == INT_LENGTH

    def keeps_int_state(self, cls: ast.ClassDef) -> bool:
        """A subclass that inherits an int length keeps its bases' state ints and their layers int-length."""
        return (
            self.binds_shared_state_to_ints(cls)
            and adds_only_int_length_layers(self, cls)
            and replicated_layer_kind(self, cls) in (None, INT_LENGTH)
        )

    def binds_shared_state_to_ints(self, cls: ast.ClassDef) -> bool:
        """What the bases bind (and `self.layers`) the subclass binds only to ints; with a base read
        from another module (whose bindings are not merged here), everything it binds."""
        own = self.bindings(cls)
        inherited, _ = self.lineage_bindings(cls)
        elsewhere = any(map(self.has_base_elsewhere, self.lineage(cls)))
        counters = counters_of_bases(self, cls)
        shared = [
            value
            for attribute, values in own.values.items()
            if elsewhere or len(inherited.get(attribute, [])) > len(values) or attribute in ("layers", *counters)
            for value in values
        ]
        state = self.instance_attributes(cls)
        shadowed = [  # a default, a property or a method in the class body over state the bases bind
            value
            for attribute, values in own.class_level.items()
            if state is None or attribute in state
            for value in values
        ]
        return not own.opaque and all(map(ex.is_structurally_int, [*shared, *shadowed]))

    def instance_attributes(self, cls: ast.ClassDef) -> set[str] | None:
        """The attributes the lineage binds in its methods, bases in sibling modules read too; None
        when a base is neither found nor one of transformers' (anything may be state)."""
        names, _ = self.lineage_bindings(cls)
        found = set(names)
        for member in self.lineage(cls):
            for base in member.bases:
                name = ex.dotted_name(base)
                if name in self.classes or self.names_transformers_module(name.rpartition(".")[0]):
                    continue
                imported = self.imports().get(name)
                if imported is not None and is_transformers_module(imported[0]):
                    continue
                other = self.class_named(name)
                inner = other[0].instance_attributes(other[1]) if other is not None else None
                if inner is None:
                    return None
                found |= inner
        return found

    def delegates_to_int_length(self, cls: ast.ClassDef, value: ast.expr) -> bool:
        """`value` asks an object of an int-length class for its length: `self.inner.get_seq_length()`,
        `self.layers[i].get_seq_length()` or `self.parent.cache.get_seq_length()`, where the class (or
        the attribute's class) builds that object with an int-length class's constructor."""
        if not (isinstance(value, ast.Call) and ex.getter_name(value) in self.source_methods):
            return False
        receiver = ex.getter_receiver(value)
        if isinstance(receiver, ast.Subscript) and holds_only_int_length_objects(self, cls, receiver.value):
            return True
        bound = self.attribute_values(cls, receiver) if receiver is not None else []
        if bound and all(self.constructed_kind(value) == INT_LENGTH for value in bound):
            return True
        from lint_rules.engine.facts.attribute_receivers import receiver_length_kind  # above this file: it builds on it

        return receiver is not None and receiver_length_kind(self, cls, None, receiver) == INT_LENGTH

    def attribute_values(self, cls: ast.ClassDef, node: ast.expr) -> list[ast.expr]:
        """Every value bound to `self.attr` (or `self.attr.other`, through the class `self.attr` is
        built from) in the class and its same-module bases; [] when unknown."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            owner = self.attribute_class(cls, node.value)
            return owner[0].attribute_values(owner[1], ast.Attribute(ast.Name("self"), node.attr)) if owner else []
        attribute = self_attribute(node)
        values, _ = self.lineage_bindings(cls)
        return values.get(attribute, []) if attribute else []

    def attribute_class(self, cls: ast.ClassDef, node: ast.expr) -> tuple[ClassFacts, ast.ClassDef] | None:
        """The class every binding of `self.attr` constructs, with the facts of its module."""
        names = {
            ex.called_name(bound) if isinstance(bound, ast.Call) else "" for bound in self.attribute_values(cls, node)
        }
        if len(names) != 1 or "" in names:
            return None
        return self.class_named(names.pop())

    def holds_the_family(self, receiver: ast.expr, function: FunctionNode, family: set[int]) -> bool:
        """`layer` in `for layer in self.layers`, where the module shows every class `self.layers` may
        hold (`attribute_receivers`, which counts the bindings of the name in scopes inside
        `function` too: `max(layer.n for layer in others)`) to be one of `family`, classes of this module."""
        owner = self.class_of_method(function)
        if not isinstance(receiver, ast.Name) or (owner is not None and not self.has_own_receiver(function)):
            return False  # `Holder.crop(other, ...)`: what the typing takes `self` for may be anything
        from lint_rules.engine.facts.attribute_receivers import classes_held  # above this file: it builds on it

        classes = classes_held(self, owner, function, receiver)
        return bool(classes) and all(view is self and id(cls) in family for view, cls in classes)

    def class_named(self, name: str) -> tuple[ClassFacts, ast.ClassDef] | None:
        prefix, _, last = name.rpartition(".")
        if name.partition(".")[0] in self.alternatives():
            return None
        if prefix:  # `cache_utils.Owner`: through a name bound to a module of the package
            module = self.bound_modules().get(prefix)
            other = self.other_module(module) if module is not None and not is_transformers_module(module) else None
            return other.class_named(last) if other is not None else None
        local = self.classes.get(name)
        if local is not None:
            return self, local
        imported = self.imports().get(name)
        if imported is None or is_transformers_module(imported[0]):
            return None
        other = self.other_module(imported[0])
        return other.class_named(imported[1]) if other is not None else None

    def super_length_kind(self, cls: ast.ClassDef) -> str:
        """What `super().get_seq_length()` gives in a method of `cls`: its bases' length, read on an
        object of `cls` or of a subclass of it in the module, each of which must bind the counters of
        its transformers bases (`ReleaseFacts.counters`) only to ints."""
        kind = self.unless_replaced(self.bases_length_kind(cls))
        return "" if kind == INT_LENGTH and not self.counters_kept_below(cls) else kind

    def bases_length_kind(self, cls: ast.ClassDef) -> str:
        """The length kind `cls` inherits: that of its first base that has one."""
        for base in cls.bases:
            kind = self.length_kind_of_name(ex.dotted_name(base), as_a_base=True)
            if kind:
                return kind
        return ""

    def other_module(self, module: str) -> ClassFacts | None:
        if self.depth >= MAX_MODULE_DEPTH:
            return None
        _, root = self.module
        file = module_file(module, root)
        if file is None:
            return None
        key = (file, self.source_methods, self.depth + 1, self.releases, self.declarations)
        if key not in _OTHER_MODULES:
            tree = parsed_module(file)
            facts = None
            if tree is not None:
                depth = self.depth + 1
                facts = ClassFacts(
                    tree,
                    self.source_methods,
                    str(file),
                    module,
                    root,
                    depth,
                    releases=self.releases,
                    declarations=self.declarations,
                )
            _OTHER_MODULES[key] = facts
        return _OTHER_MODULES[key]

    def own_source_method(self, cls: ast.ClassDef) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for statement in cls.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in self.source_methods:
                return statement
        return None

    def counters_kept_below(self, cls: ast.ClassDef) -> bool:
        """`cls` and every class of the module below it bind the counters of their transformers bases
        only to ints: an object of any of them may be where `cls` is expected."""
        if id(cls) not in self._counters_kept_below:
            below = [other for other in self.every_class() if cls in self.lineage(other)]
            self._counters_kept_below[id(cls)] = all(binds_counters_to_ints(self, other) for other in below)
        return self._counters_kept_below[id(cls)]

    # ----- receivers and attributes -----------------------------------------------------------

    def annotation_kind(self, annotation: ast.expr | None) -> str:
        """ "int" when every class an annotation admits (None aside) has an int length."""
        classes = annotated_classes(annotation)
        if not classes:
            return ""
        return INT_LENGTH if all(self.length_kind_of_name(name) == INT_LENGTH for name in classes) else ""

    def admits_tensor_length(self, annotation: ast.expr | None) -> bool:
        """Some class the annotation admits has a tensor length (`StaticCache | None`, `Cache | StaticCache`)."""
        return any(self.length_kind_of_name(name) == TENSOR_LENGTH for name in annotated_classes(annotation))

    def constructed_kind(self, value: ast.expr, known_kind: KnownKind = nothing_known) -> str:
        """`DynamicCache(...)` or `DynamicCache.from_legacy_cache(...)`: the class's length kind;
        `known_kind` tells what a name given to a wrapper holds (`EncoderDecoderCache(own, cross)`)."""
        if not isinstance(value, ast.Call):
            return ""
        kind = self.unless_replaced(self.called_class_kind(value, known_kind))
        return "" if kind == INT_LENGTH and self.may_build_another(value) else kind

    def may_build_another(self, call: ast.Call) -> bool:
        """The constructor `call` (`DynamicCache()`, `DynamicCache.from_legacy_cache(...)`) may build another
        class here: its name is bound in the scope it is written in or one around it (`DynamicCache =
        StaticCache` in the function), or stored as an attribute (`transformers.DynamicCache =
        StaticCache`). (A cache whose layers the function changes, `cache.layers.append(...)`, is
        dropped by the walk: `walker.forget_changed_layers`.)"""
        called = ex.called_name(call)
        root = called.partition(".")[0]
        class_name = called.rpartition(".")[0] if called.rpartition(".")[2].startswith("from_") else called
        return self.bound_in_a_scope(root, call) or self.stored_as_an_attribute(class_name.rpartition(".")[2])

    def called_class_kind(self, value: ast.Call, known_kind: KnownKind) -> str:
        name = ex.called_name(value)
        owner, _, method = name.rpartition(".")
        if self.is_transformers_wrapper(name):
            return self.wrapped_kind(value, known_kind)
        if method[:1].isupper():
            return self.built_kind(name, builds_without_config(value))
        if owner.rpartition(".")[2][:1].isupper() and method.startswith("from_"):
            return self.built_kind(owner, method == LEGACY_BUILDER) if self.builds_its_own_class(owner, method) else ""
        return ""  # a function or a method call, not a class (classes are named in CapWords)

    def builds_its_own_class(self, owner: str, method: str) -> bool:
        """`Owner.from_x(...)` gives an object of `Owner`: transformers' classes by the table (their
        `from_*` return `cls(...)`); a class of the package by its lineage's `from_x`
        (`class_builders.builder_returns_its_class`)."""
        found = self.class_named(owner)
        return found is None or builder_returns_its_class(*found, method)

    def built_kind(self, name: str, without_config: bool) -> str:
        """The length kind of a new object of the class `name`; `without_config`: built from no config (a
        transformers class whose length only some configs make a tensor counts an int then:
        `releases.ReleaseFacts.int_without_config`). A package subclass keeps its class's kind: what its
        `__init__`s pass up, or do to `self.layers`, is not followed."""
        kind = self.length_kind_of_name(name, exact=True)
        if kind != TENSOR_LENGTH or not without_config:
            return kind
        alternatives = self.alternatives().get(name)
        if alternatives is not None:
            return joined_kind(self.built_without_config(name, binding) for binding in alternatives)
        transformers_class = self.transformers_class_named(name)
        return (
            length_kind_in(transformers_class, self.releases, built_without_config=True) if transformers_class else kind
        )

    def built_without_config(self, name: str, binding: Binding) -> str:
        """What `name()` builds from no config where `name` holds `binding` (one of its `alternatives`)."""
        if isinstance(binding, tuple) and is_transformers_module(binding[0]):
            kind = length_kind_in(binding[1], self.releases, built_without_config=True)
            if kind:
                return kind
        return self.bound_kind(name, binding, as_a_base=False)

    def wrapped_kind(self, call: ast.Call, known_kind: KnownKind) -> str:
        """The length kind of a wrapper built by `call`: its first cache's, or a DynamicCache's from
        one argument (legacy data)."""
        if not call.args or call.keywords or any(isinstance(argument, ast.Starred) for argument in call.args):
            return ""
        if len(call.args) == 1:
            return INT_LENGTH
        first = call.args[0]
        return self.constructed_kind(first, known_kind) or known_kind(first)


class CycleReads:
    """How many times a class's kind was asked while it was being computed, in any module: an answer
    that read one proves nothing and is not kept (`kind_in_its_module`)."""

    count = 0


CYCLE_READS = CycleReads()
MAX_OTHER_MODULES = 128
_OTHER_MODULES: BoundedCache[tuple[Path, frozenset[str], int, Releases, Declarations], ClassFacts | None] = (
    BoundedCache(MAX_OTHER_MODULES)
)
"""Facts of the sibling modules used last in this process, by the depth they were reached at
(which bounds how far their own imports are followed)."""
