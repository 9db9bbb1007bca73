"""Int properties: `@property def n(self)` alone, over a getter every `return` of which gives an int,
which an object of the class answers before its own attributes (`ClassBodies` reads the bindings
it builds on; `held_objects` reads them off the objects a class holds)."""

from __future__ import annotations

import ast
import functools

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.class_bodies import ClassBodies
from lint_rules.engine.facts.module_text import may_declare_globals, occurrences, walrus_lines
from lint_rules.engine.facts.name_bindings import NameCount, block_statements, declared_global
from lint_rules.engine.facts.outside_stores import Store
from lint_rules.engine.facts.returned_values import returns_only_ints

ATTRIBUTE_HOOKS = ("__getattribute__", "__getattr__", "__new__", "__init_subclass__", "__class_getitem__")
"""Class-body names that may answer an attribute, or build or change a class, their own way."""
PROPERTY = "property"
UNSEEN_NAME_BINDERS = ("builtins", "globals", "vars", "sys.modules", "exec", "eval")


def binds_in_body(cls: ast.ClassDef, name: str) -> bool:
    """The class body binds `name` itself (a method, an import, any target, a star import)."""
    names = NameCount(None)
    names.count(cls.body, plainly_read=True)
    return names.star_imported or name in names.defined or name in names.otherwise_bound


def slot_names(values: list[ast.expr] | None) -> frozenset[str] | None:
    """The names a class body's `__slots__` (bound once, to strings written out) makes; None when
    they cannot be read."""
    if values is None:
        return frozenset()
    if len(values) != 1:
        return None
    value = values[0]
    elements = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
    names = [element.value for element in elements if isinstance(element, ast.Constant)]
    if len(names) != len(elements) or not all(isinstance(name, str) for name in names):
        return None
    return frozenset(str(name) for name in names)


def stores_an_int(store: Store) -> bool:
    """A store of an int to a property's name: on an instance it raises, on the class it leaves an int."""
    return store.value is not None and ex.is_structurally_int(store.value)


class ClassProperties(ClassBodies):
    """The int properties of one module's classes."""

    def int_properties(self, cls: ast.ClassDef) -> frozenset[str]:
        """The names an object built by `cls` itself answers with an int property: a getter alone
        (`@property`, no setter or other binding of the name in the class body) every `return` of
        which gives an int (`returns_only_ints`: through the class family's int attributes too), of
        `cls` or of a base on its chain of single bases, every class of which is in this module and
        bound once, none with a metaclass, `__slots__` over the name or a hook that answers or makes
        attributes its own way; and that the module binds on no object from outside."""
        found: set[str] = set()
        seen: set[str] = set()
        chain: list[ast.ClassDef] = []
        member: ast.ClassDef | None = cls
        while member is not None and member not in chain:
            chain.append(member)
            own = self.bindings(member)
            slots = slot_names(own.class_level.get("__slots__"))
            if member.keywords or slots is None or any(hook in own.class_level for hook in ATTRIBUTE_HOOKS):
                return frozenset()
            seen |= slots
            getters = {name: getter for name, getter in own.getters.items() if name not in seen}
            found |= {name for name, getter in getters.items() if self.is_int_getter(member, getter)}
            seen |= own.class_level.keys()
            bases = [ex.dotted_name(base) for base in member.bases]
            if bases in ([], ["object"]):
                if not found or self.may_rebind_property(chain):
                    return frozenset()
                return frozenset(found) - self.stored_elsewhere(frozenset(found), stores_an_int)
            base = self.classes.get(bases[0]) if len(bases) == 1 else None
            member = base if base is not None and self.binds_once(bases[0]) else None
        return frozenset()

    def binds_once(self, name: str) -> bool:
        """The module binds the class name `name` only by its one `class` statement: nothing else at
        its top level binds it (`NameCount`: an import, a `def`, any target, a walrus, a match
        capture), no star import may, and no function declares it `global`."""
        if name in self.alternatives() or self.may_bind_names_unseen:
            return False
        names = self.top_level_names
        if names.star_imported or names.defined.get(name) != 1 or name in names.otherwise_bound:
            return False
        return name not in self.declared_globals

    @functools.cached_property
    def may_bind_names_unseen(self) -> bool:
        """The text may bind a module's names where no statement shows it: through `builtins`,
        `globals()`, `vars()`, `sys.modules` or `exec`/`eval`."""
        text = self.own_str()
        return text is None or any(
            next(occurrences(text, word, whole_words=True), -1) >= 0 for word in UNSEEN_NAME_BINDERS
        )

    @functools.cached_property
    def top_level_names(self) -> NameCount:
        text = self.own_text()
        names = NameCount(walrus_lines(text) if text is not None else None)
        names.count(self.tree.body, plainly_read=True)
        return names

    @functools.cached_property
    def declared_globals(self) -> set[str]:
        text = self.own_text()
        return declared_global(self.tree) if text is None or may_declare_globals(text) else set()

    def may_rebind_property(self, chain: list[ast.ClassDef]) -> bool:
        """`property` may be something else where a class of `chain` reads it: the module's top level
        or a function's `global` binds it, the class body does, or the class stands in a function
        (which may bind it)."""
        names = self.top_level_names
        if (
            self.may_bind_names_unseen
            or names.star_imported
            or {PROPERTY} & {*names.defined, *names.otherwise_bound, *self.declared_globals}
        ):
            return True
        return any(id(member) not in self.top_level_classes or binds_in_body(member, PROPERTY) for member in chain)

    @functools.cached_property
    def top_level_classes(self) -> set[int]:
        return {id(statement) for statement in block_statements(self.tree.body) if isinstance(statement, ast.ClassDef)}

    def family_int_properties(self, cls: ast.ClassDef) -> frozenset[str]:
        """The int properties of `cls` that an object of each of its subclasses in the module answers
        with an int property too (one of them may be where `cls` is expected)."""
        found = self.int_properties(cls)
        for subclass in self.subclasses(cls):
            found &= self.int_properties(subclass)
        return found

    def is_int_getter(self, cls: ast.ClassDef, getter: ast.FunctionDef) -> bool:
        return len(self.bindings(cls).class_level[getter.name]) == 1 and returns_only_ints(
            getter, self.int_attributes(cls)
        )
