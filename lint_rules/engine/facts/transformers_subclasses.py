"""A module's subclasses of transformers' int-length classes (`QuantizedLayer`, `DynamicSlidingWindowLayer`,
...). An object of one may stand wherever the transformers class is expected, so that class counts an
int in the module only while every subclass the module defines, at any depth and however its base is
spelled (`QuantizedLayer`, `cu.QuantizedLayer`, an alias `Base = QuantizedLayer`, a name bound some
other way), keeps an int length by its own code:
- the counters the class returns by value (`releases.ReleaseFacts.counters`) bound only to ints;
- no `get_seq_length` of its own that may return anything else (a `def`, or any other binding of the
  name in the class body);
- nothing but int-length layers put in `self.layers`, and no `layers=` handed to a base's `__init__`.
A subclass in another module, or in a user's code, is not seen (docs/limits.md). What the class's own
method gives an object of a subclass (an inherited length, `super().get_seq_length()`) depends on that
object's state alone (`ClassFacts.keeps_int_state`; `ClassFacts.super_length_kind` checks the counters)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import is_transformers_module
from lint_rules.engine.facts.class_containers import adds_only_int_length_layers
from lint_rules.engine.facts.name_bindings import Binding
from lint_rules.engine.facts.releases import length_state

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts


def some_subclass_may_break(facts: ClassFacts, original: str) -> bool:
    """A class of the module derives from transformers' `original` and may not keep its int length."""
    counters = length_state(original, facts.releases)
    return any(
        not keeps_an_int_length(facts, cls, counters) for cls in facts.every_class() if derives(facts, cls, original)
    )


def counters_of_bases(facts: ClassFacts, cls: ast.ClassDef) -> frozenset[str]:
    """The counters of the transformers classes the class's lineage in the module derives from."""
    found: frozenset[str] = frozenset()
    for member in facts.lineage(cls):
        for base in map(ex.dotted_name, member.bases):
            original = facts.transformers_class_named(base)
            if original:
                found |= length_state(original, facts.releases)
    return found


def binds_counters_to_ints(facts: ClassFacts, cls: ast.ClassDef, counters: frozenset[str] = frozenset()) -> bool:
    """The class and its lineage in the module bind the counters of their transformers bases (and
    `counters`) only to ints."""
    counters |= counters_of_bases(facts, cls)
    if not counters:
        return True
    return not any(facts.rebinds(facts.bindings(member), set(counters)) for member in facts.lineage(cls))


def derives(facts: ClassFacts, cls: ast.ClassDef, original: str, seen: frozenset[int] = frozenset()) -> bool:
    """`seen`: the classes a base's name led here through, so that a cycle of aliases ends."""
    return any(
        base_may_be(facts, ex.dotted_name(base), original, seen=seen | {id(cls)})
        for member in facts.lineage(cls)
        for base in member.bases
    )


def base_may_be(
    facts: ClassFacts,
    base: str,
    original: str,
    aliases: dict[str, str] | None = None,
    seen: frozenset[int] = frozenset(),
) -> bool:
    """`base` names transformers' `original`, or a name the module binds in a way not followed here
    (a star import, a function's import, an alias to anything but a dotted name)."""
    if not base:
        return False  # a call or subscript (`Generic[T]`)
    alternatives = facts.alternatives().get(base)
    if alternatives is not None:
        return any(binding_may_be(facts, binding, original, seen) for binding in alternatives)
    if base in facts.classes:
        return False  # a class of the module: its lineage is read
    named = facts.transformers_class_named(base)
    if named or "." in base or base in facts.imports() or base in BUILTIN_BASES:
        return named == original
    aliases = module_aliases(facts.tree) if aliases is None else aliases
    alias = aliases.pop(base, "")  # popped: a cycle of aliases ends
    return not alias or base_may_be(facts, alias, original, aliases, seen)


def binding_may_be(facts: ClassFacts, binding: Binding, original: str, seen: frozenset[int]) -> bool:
    """One of the bindings a base's name may hold: transformers' `original` imported, a class of the
    module that derives from it, or anything not followed (None)."""
    if binding is None:
        return True
    if isinstance(binding, ast.ClassDef):
        return id(binding) not in seen and derives(facts, binding, original, seen)
    return is_transformers_module(binding[0]) and binding[1] == original


BUILTIN_BASES = frozenset({"object", "Exception", "BaseException", "dict", "list", "tuple", "int", "str"})


def keeps_an_int_length(facts: ClassFacts, cls: ast.ClassDef, counters: frozenset[str]) -> bool:
    if not binds_counters_to_ints(facts, cls, counters):
        return False
    for member in facts.lineage(cls):
        bindings = facts.bindings(member)
        if (
            bindings.opaque
            or not all(map(ex.is_structurally_int, bindings.values.get("layers", [])))
            or "layers" in bindings.init_keywords  # `Cache.__init__(self, layers=[...])`
            or not adds_only_int_length_layers(facts, member)
            or not overrides_keep_ints(facts, member, facts.own_source_method(member))
        ):
            return False
    return True


def overrides_keep_ints(
    facts: ClassFacts, cls: ast.ClassDef, own: ast.FunctionDef | ast.AsyncFunctionDef | None
) -> bool:
    """No length method of its own, or one that returns only ints (given its base's); not one bound
    in the class body by anything but a `def` (`get_seq_length = f`)."""
    if own is None:
        return not any(method in facts.bindings(cls).class_level for method in facts.source_methods)
    return facts.own_method_returns_ints(cls, own, over_an_int_base=True)


def all_classes(tree: ast.Module) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def module_aliases(tree: ast.Module) -> dict[str, str]:
    """`Base = QuantizedLayer` at module level: the dotted name each such alias is bound to ("" for
    any other value, so that it is not followed)."""
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases[target.id] = ex.dotted_name(node.value)
    return aliases
