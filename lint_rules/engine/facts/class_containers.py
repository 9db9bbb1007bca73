"""What a cache class's containers hold: whether `self.layers` (or a container its bases fill) holds
only objects whose length is an int. It does when every object the class family and the module put
into it is built by an int-length class's constructor, or replicated by transformers' `Cache` from the
class the lineage passes as `layer_class_to_replicate`, and when no method hands the container on
as a whole. Asked by `ClassFacts` (a class's own length delegated to `self.layers[i]`) and by the
receiver typing (`self.layers[i].get_seq_length()` in a method)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attributes import self_attribute
from lint_rules.engine.facts.caches import INT_LENGTH
from lint_rules.engine.facts.held_objects import binds, constructor, displayed, values_of
from lint_rules.engine.facts.outside_stores import may_alias_unnamed

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts

REPLICATED_LAYER_CLASS = "layer_class_to_replicate"
"""The keyword of transformers' `Cache.__init__` naming the class of every layer `update` adds."""


def adds_only_int_length_layers(facts: ClassFacts, cls: ast.ClassDef) -> bool:
    """Only int-length objects go into `self.layers`, or a container the bases fill."""
    own = facts.bindings(cls)
    filled_by_bases = {attribute for base in facts.lineage(cls)[1:] for attribute in facts.bindings(base).contents}
    added = [
        value
        for attribute, values in own.contents.items()
        if attribute == "layers" or attribute in filled_by_bases
        for value in values
    ]
    return all(value is not None and is_int_length_object(facts, cls, value) for value in added)


def holds_only_int_length_objects(facts: ClassFacts, cls: ast.ClassDef, container: ast.expr) -> bool:
    """`self.layers` holds only int-length objects, in an object of `cls` or of a subclass of it in
    the module: it is built from their constructors (or, bound nowhere in the package, by
    transformers' `Cache` from the class the lineage passes as `layer_class_to_replicate`), and
    only such objects are put in later (`append`, an item store), by the family or from outside."""
    attribute = self_attribute(container)
    changed = facts.layer_changes.changed_attributes
    if "*" in changed or attribute in changed:
        return False  # `self.caches[0].layers.append(StaticLayer(8))` somewhere: an element counts its layers'
    subclasses = facts.subclasses(cls)  # an object of one may stand where `cls` is expected
    family = facts.family(cls)
    added = [value for member in family for value in facts.bindings(member).contents.get(attribute, [])]
    if not all(
        value is not None and is_int_length_object(facts, member, value)
        for value in added
        for member in [cls, *subclasses]
    ):
        return False
    if not puts_in_only_int_length_objects(facts, attribute):
        return False
    rebound = [
        value
        for member in family
        if member not in facts.lineage(cls)
        for value in [
            *facts.bindings(member).values.get(attribute, []),
            *facts.bindings(member).class_level.get(attribute, []),
        ]
    ]
    if not all(holds_int_length_objects(facts, value) for value in rebound):
        return False
    values = facts.attribute_values(cls, container)
    if values:
        held = all(holds_int_length_objects(facts, value) for value in values)
    else:
        held = attribute == "layers" and all(
            replicated_layer_kind(facts, member) == INT_LENGTH for member in [cls, *subclasses]
        )
    return held and not lets_go_of(facts, attribute, family)


def lets_go_of(facts: ClassFacts, attribute: str, family: list[ast.ClassDef]) -> bool:
    """A method of the family hands its own container on as a whole, which may then put anything
    into it: `helper(self.layers)`, `add = self.layers.append`, `getattr(self, "layers")`."""
    members = {id(member) for member in family}
    return any(
        store.value is None and store.cls is not None and id(store.cls) in members and facts.on_own_receiver(store)
        for store in facts.attribute_stores.contents.get(attribute, [])
    )


def puts_in_only_int_length_objects(facts: ClassFacts, attribute: str) -> bool:
    """From outside the class's own methods (`ClassBodies.from_outside`: `cache.layers.append(v)` in
    a function), the module binds to `attribute` or puts into it only int-length objects, each
    built by a constructor the function does not bind itself. Read from the tree only where the
    text shows such a store may be there (`ClassBodies.suspects`)."""
    text = facts.own_str()
    if not facts.suspects(text, frozenset({attribute})) and not (text and may_alias_unnamed(text, attribute)):
        return True
    stores = facts.attribute_stores
    if stores.any_attribute or facts.from_outside(stores.extended.get(attribute, [])):
        return False
    bound = facts.from_outside(stores.values.get(attribute, []))
    put_in = facts.from_outside(stores.contents.get(attribute, []))
    built = [(value, store.function) for store in bound for value in displayed(store.value)]
    built += [(value, store.function) for store in put_in for value in values_of(store.value, store.function)]
    return all(
        value is not None
        and constructor(value, function, facts.rebound_names)
        and facts.constructed_kind(value) == INT_LENGTH
        for value, function in built
    )


def is_int_length_object(facts: ClassFacts, cls: ast.ClassDef, value: ast.expr) -> bool:
    """`Layer()` of an int-length class, or `self.layer_class_to_replicate()` replicating one."""
    if isinstance(value, ast.Call) and ex.dotted_name(value.func) == f"self.{REPLICATED_LAYER_CLASS}":
        return replicated_layer_kind(facts, cls) == INT_LENGTH
    return not rebound_where_called(facts, value) and facts.constructed_kind(value) == INT_LENGTH


def rebound_where_called(facts: ClassFacts, value: ast.expr) -> bool:
    """The class name `value` calls (`Layer()` in a method) may be bound to another class where the
    call is: in the method (or a function or lambda in it), or in its class's body; anywhere but
    the module's top level for a call outside a method of a module-level class."""
    name = ex.called_name(value).partition(".")[0] if isinstance(value, ast.Call) else ""
    method = facts.innermost_method_at(value.lineno)
    owner = facts.class_of_method(method) if method is not None else None
    if method is None or owner is None or facts.classes.get(owner.name) is not owner:
        return name in facts.rebound_names
    return binds(method, name) or name in facts.bindings(owner).class_level


def replicated_layer_kind(facts: ClassFacts, cls: ast.ClassDef) -> str | None:
    """The length kind of the class the lineage gives transformers' `Cache` as
    `super().__init__(layer_class_to_replicate=Layer)`: every layer `update` adds is one. Unknown
    ("") when the lineage passes several or binds `self.layer_class_to_replicate` itself; None
    when it never names one."""
    lineage = facts.lineage(cls)
    if any(REPLICATED_LAYER_CLASS in facts.bindings(member).values for member in lineage):
        return ""
    names = {
        ex.dotted_name(value)
        for member in lineage
        for value in facts.bindings(member).init_keywords.get(REPLICATED_LAYER_CLASS, [])
    }
    if not names:
        return None
    return facts.length_kind_of_name(names.pop()) if len(names) == 1 and "" not in names else ""


def holds_int_length_objects(facts: ClassFacts, value: ast.expr) -> bool:
    """`[Layer() for _ in range(n)]`, `[Layer(), Layer()]`, `(Layer(),)`: only int-length objects."""
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return facts.constructed_kind(value.elt) == INT_LENGTH
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(facts.constructed_kind(element) == INT_LENGTH for element in value.elts)
    return False
