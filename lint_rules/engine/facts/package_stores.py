"""Stores into a class's objects from the package's other modules: `cache.n = torch.zeros(1)` in
`other.py` makes the length of `Cache` (in `base.py`, which counts `self.n` in ints) a tensor for
that object, and any object of `Cache` may be that one.

The names watched are those the class's length reads on its object (`self.n`, and what the methods
it calls on `self` read, however deep: `kept_elsewhere.FamilyState.read`). Each other module of the
package whose text names one of them as a word is read as its own module's stores are
(`outside_stores.stores_elsewhere`: a store on an object other than a method's own receiver), and
each store of a watched name must bind a count as `OutsideCounts` reads one (`cache.n = 0`,
`cache.n += new` after `_, _, new, _ = k.shape`; a store that hides its value, a tuple or loop
target, binds none; one that names no attribute, `setattr(obj, key, v)` or `vars(obj).update(...)`,
binds none where the file writes a watched name as a string, `"n"`, or a keyword, `n=`), unless the
storing module shows every class the object may hold, each a class of the package that is neither
the class, a subclass or a base of it, nor a `Protocol` (`attribute_receivers`: `for layer in
self.layers` over `self.layers: list[OtherLayer]`). A class that derives from such a class and
from this one at once is the caveat: its objects are typed as the other class there.

A file that sets attributes dynamically without naming the attribute is not seen (docs/limits.md),
as for `hasattr` narrowing, and a method run on another object (`Other.grow(cache)`) stores on its
receiver as on its own. The search runs once per module analyzed, or once per checker run
(`module_files.Stamps`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.module_files import STAMPS, module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.outside_stores import ANY_ATTRIBUTE, OutsideCounts, Store, stores_elsewhere
from lint_rules.engine.facts.subclasses import whole_package_files

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts


def stored_elsewhere(
    facts: ClassFacts, top: Path, module: str, watched: frozenset[str], family: frozenset[str]
) -> bool:
    """A module of the top package `top` other than `module` may store on an object of the
    `family` (the class and its subclasses, by name) a `watched` name bound to something other
    than a count."""
    if not watched:
        return False

    def search() -> bool:
        named = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in sorted(watched)) + rb")\b")
        for file in whole_package_files(top):
            other_module, _ = module_name_of(str(file))
            if other_module == module:
                continue
            try:
                data = read_bytes(file)
            except OSError:
                continue
            if not named.search(data):
                continue
            tree = parsed_module(file)
            stores = stores_elsewhere(tree) if tree is not None else []
            spelled = watched if any(is_spelled(data, name) for name in watched) else frozenset()
            if any(
                breaks_a_count(store, watched, spelled)
                and may_hold_the_family(facts.other_module(other_module), store, family)
                for store in stores
            ):
                return True
        return False

    return STAMPS.remembered((stored_elsewhere, top, module, watched, family), search)


def is_spelled(data: bytes, name: str) -> bool:
    """`"name"` or `'name'` occurs in the file, or a keyword argument `name=` (`vars(c).update(n=t)`)."""
    encoded = name.encode()
    quoted = b'"' + encoded + b'"' in data or b"'" + encoded + b"'" in data
    return quoted or re.search(rb"[(,]\s*" + re.escape(encoded) + rb"\s*=(?!=)", data) is not None


def breaks_a_count(store: Store, watched: frozenset[str], spelled: frozenset[str]) -> bool:
    """`spelled`: the watched names the file writes as a string (`"n"`), which a store whose name
    is not written out (`setattr(obj, key, v)`) may bind."""
    if store.attribute == ANY_ATTRIBUTE:
        return bool(spelled)
    if store.attribute not in watched:
        return False
    if store.value is None:
        return True
    if store.function is None:
        return not ex.is_structurally_int(store.value)
    return not OutsideCounts(no_counter_read).is_count(store.value, store.attribute, store.function, store.increment)


def no_counter_read(read: ast.Attribute) -> bool:
    """A counter read on an object of another module's class is not this class's counter."""
    return False


def may_hold_the_family(storing: ClassFacts | None, store: Store, family: frozenset[str]) -> bool:
    """The object stored on may be one of the family (`family`: its classes and those above them,
    by name): unless the storing module shows every class it may hold (`attribute_receivers`: `for
    layer in self.layers` over `self.layers: list[OtherLayer]`), each a class of the package that is
    none of those and no `Protocol` (which any class may satisfy)."""
    if storing is None or store.receiver is None or store.function is None:
        return True
    from lint_rules.engine.facts.attribute_receivers import class_name, typing_of  # it builds on this layer

    method = storing.innermost_method_at(store.receiver.lineno)
    cls = storing.class_of_method(method) if method is not None else None
    types = typing_of(storing).of(store.receiver, cls, store.function, 0)
    return types is None or any(may_be_of_the_family(view, class_name(name), family) for view, name in types)


def may_be_of_the_family(view: ClassFacts, name: str, family: frozenset[str]) -> bool:
    found = view.class_named(name)
    if found is None:
        return True  # `Any`, `object`, an alias, a factory's name, a class outside the package
    facts, cls = found
    lineage = facts.lineage(cls)
    return cls.name in family or any(
        ex.dotted_name(base).rpartition(".")[2] == "Protocol" for member in lineage for base in member.bases
    )
