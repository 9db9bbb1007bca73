"""A class of the package counts an int only while the package's other modules keep it one: its
subclasses there (here) and their stores into its objects (`package_stores.py`). An object of
such a subclass, or one such a store reached, may stand wherever the class is expected (an
annotation, an `isinstance` test, an attribute that holds one, `self`).

`ClassFacts` checks the subclasses and stores in the class's own module (`overrides_below_count_ints`,
the family's bindings, `outside_stores.py`); this module checks the others, and the subclasses of
the class's own module that its facts do not read as such (through an alias, a lookup, a factory
or a choice: `class Sub(Alias)`, `class Sub(A if flag else B)`). The subclasses are
found across the whole package by their `class` statements (`subclasses.package_subclasses`, a
read of the package per base name, once per run of the checker). Each, read in its own module, must:

- give the source method a body that returns only ints (`super().get_seq_length()` counting as the
  base's int; its own subclasses elsewhere are then checked against it in turn), an abstract body
  (its subclasses decide), or inherit it;
- bind what the class's family keeps as state (the attributes it binds, fills or calls methods
  of, its class-level names and properties, and the names its source methods read or call on
  `self`) only to structural ints: no other value, no property or method over them, nothing put
  into them, no method called on them, no store of them on another object (`Cache.n = t`);
- derive from the family alone (besides `object`-like bases): another base's methods may come first.

A class that inherits its length from a base in another module (`class Mine(KVCache)`) is kept an
int only while the base is, against the stores of the package's modules but the base's own, and
its own subclasses elsewhere must keep the base's state too (`lineage_state`): a store of `n` or a
subclass of `Mine` binding it, in a third module, makes `Mine` unknown.

The subclasses of an alias (`Alias = Cache`, `KV, other = Cache, int`, `from .base import Cache as
KV`) are searched for too (their base, the alias, is not the family's name: they make the class
unknown). A subclass nested in a function or a class, two subclasses of one name in one module,
one whose module cannot be read, a package that cannot be scanned and, in another module that
names the family, a class whose base cannot be named (`class X(make_base())`, `class
X(BASES["kv"])`) make the class unknown. An object the class builds itself (`Cache()`) is no
subclass's (`ClassFacts.length_kind_of_name`, `exact`), though stores into it still count; a class
`int-length-classes` declares is vouched for. transformers' own classes are
facts of the release (`caches.py`) and are not searched. A subclass or a store written outside the
package (a user's) is not seen; see docs/limits.md.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import defines_in_body
from lint_rules.engine.facts.attributes import AttributeBindings
from lint_rules.engine.facts.caches import is_transformers_module
from lint_rules.engine.facts.module_files import STAMPS, module_name_of
from lint_rules.engine.facts.package_stores import stored_elsewhere
from lint_rules.engine.facts.subclasses import NEUTRAL_BASES, is_abstract, package_subclasses

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts

Function = ast.FunctionDef | ast.AsyncFunctionDef


class SubclassName(NamedTuple):
    module: str
    name: str
    bases: tuple[frozenset[str], ...]
    """The names each of its bases may be known by."""


class FamilyState(NamedTuple):
    attributes: frozenset[str]
    """What the family keeps as state: its attributes, class-level names (its methods aside) and properties."""
    read: frozenset[str]
    """What its source methods, and the methods they call on `self`, read or call on `self`."""
    ancestors: frozenset[str] = frozenset()
    """The names of the classes above it, in its module and in the package's other modules: an
    object typed as one of them may be one of the family."""


_CHECKING: set[tuple[str, str]] = set()
"""The classes whose subclasses elsewhere are being checked: a class named again below itself (two
classes of one name) is not taken as checked."""


def keeps_int_elsewhere(facts: ClassFacts, cls: ast.ClassDef, subclasses_too: bool = True) -> bool:
    """No other module of the class's package stores into its objects what its length reads, and
    (`subclasses_too`: not for an object the class builds itself) every subclass of it there keeps
    its length an int."""
    module, root = facts.module
    if root is None or not module or is_transformers_module(module) or not in_a_package(facts.path, module):
        return True
    here, _ = module_name_of(facts.path)  # as the searches name modules (facts.module: as imported)
    subclasses = subclass_names(module, here, root, cls.name)
    if subclasses is None or has_two_of_a_name(subclasses):
        return False
    family = frozenset({cls.name} | {subclass.name for subclass in subclasses})
    own = family_state(facts, cls)
    state = lineage_state(facts, cls, own)
    watched = own.read - facts.source_methods
    if stored_elsewhere(facts, root / module.partition(".")[0], here, watched, family | state.ancestors):
        return False
    if not all(base_facts.kept_int_elsewhere(base, exact=True) for base_facts, base in package_bases(facts, cls)):
        return False  # stores there of what the bases' lengths read
    elsewhere = [subclass for subclass in subclasses if subclass.module != here or not seen_here(facts, cls, subclass)]
    if not elsewhere or not subclasses_too:
        return True
    key = (module, cls.name)
    if key in _CHECKING:
        return False
    _CHECKING.add(key)
    try:
        return all(keeps_int(facts, subclass, family, state) for subclass in elsewhere)
    finally:
        _CHECKING.discard(key)


def seen_here(facts: ClassFacts, cls: ast.ClassDef, subclass: SubclassName) -> bool:
    """A class of the class's own module that its facts read (`ClassBodies.subclasses`): a subclass
    of it, or one whose every base names another class (a class of the module, an import: `class
    MaskCache(HFCache)` beside a local `Cache`); not one through an alias, a lookup, a factory or a
    choice (`class Sub(Alias)`, `class Sub(A if f else B)`)."""
    node = facts.classes.get(subclass.name)
    if node is None:
        return False
    return any(node is below for below in facts.subclasses(cls)) or all(
        names_a_class(facts, ex.dotted_name(base)) for base in node.bases
    )


def names_a_class(facts: ClassFacts, name: str) -> bool:
    """`name` is a class of the module or a name an import binds (directly, or through a module)."""
    if not name:
        return False
    first = name.partition(".")[0]
    return name in facts.classes or name in facts.imports() or ("." in name and first in facts.bound_modules())


def has_two_of_a_name(subclasses: tuple[SubclassName, ...]) -> bool:
    """Two subclasses of one name in one module (`if flag: class Sub(...)` twice, or one nested in a
    function): which one a name stands for is not known."""
    named = [(subclass.module, subclass.name) for subclass in subclasses]
    return len(set(named)) != len(named)


def in_a_package(path: str, module: str) -> bool:
    """The module belongs to a package (other modules of it may subclass its classes)."""
    return "." in module or path.endswith("__init__.py")


def subclass_names(module: str, here: str, root: Path, base: str) -> tuple[SubclassName, ...] | None:
    """The package's subclasses of `base` (of `module`, the file's module `here`), searched once per
    module analyzed, or once per run (`module_files.Stamps`): a whole-tree check asks the same few
    bases from many modules."""

    def search() -> tuple[SubclassName, ...] | None:
        found = package_subclasses(module, root, base, beyond_its_module=True)
        if found is None:
            return None
        return tuple(SubclassName(name, node.name, tuple(map(frozenset, bases))) for name, node, bases in found)

    return STAMPS.remembered((subclass_names, root / module.partition(".")[0], module, here, base), search)


MAX_BASE_MODULES = 4
"""How many modules up a lineage's bases in other modules are read."""


def lineage_state(facts: ClassFacts, cls: ast.ClassDef, own: FamilyState | None = None, depth: int = 0) -> FamilyState:
    """The family's state, and that of its bases in the package's other modules, however far up:
    a subclass that inherits its length from a base there reads the base's attributes (what a
    subclass of it elsewhere must keep ints; stores from other modules are the base's own check)."""
    state = own if own is not None else family_state(facts, cls)
    lineage = facts.lineage(cls)
    ancestors = {member.name for member in lineage[1:]}
    ancestors |= {ex.dotted_name(base).rpartition(".")[2] for member in lineage for base in member.bases}
    if depth >= MAX_BASE_MODULES:
        return state._replace(ancestors=frozenset(ancestors))
    attributes, read = set(state.attributes), set(state.read)
    for found in package_bases(facts, cls):
        above = lineage_state(found[0], found[1], depth=depth + 1)
        attributes |= above.attributes
        read |= above.read
        ancestors |= {found[1].name} | above.ancestors
    return FamilyState(frozenset(attributes), frozenset(read), frozenset(ancestors))


def package_bases(facts: ClassFacts, cls: ast.ClassDef) -> list[tuple[ClassFacts, ast.ClassDef]]:
    """The bases of the class's lineage that are classes of the package's other modules."""
    found = (facts.class_named(ex.dotted_name(base)) for member in facts.lineage(cls) for base in member.bases)
    return [(other, base) for other, base in (pair for pair in found if pair is not None) if other.path != facts.path]


def family_state(facts: ClassFacts, cls: ast.ClassDef) -> FamilyState:
    members = facts.family(cls)
    methods = {statement.name for member in members for statement in member.body if isinstance(statement, Function)}
    attributes: set[str] = set()
    for member in members:
        bindings = facts.bindings(member)
        attributes |= bindings.values.keys() | bindings.contents.keys() | bindings.called | bindings.getters.keys()
        attributes |= {name for name in bindings.class_level if name not in methods}
    return FamilyState(frozenset(attributes), read_by_the_length(facts, members))


def read_by_the_length(facts: ClassFacts, members: list[ast.ClassDef]) -> frozenset[str]:
    """The names the family's source methods read or call on their receiver, and those that the
    methods so called read, however deep."""
    bodies: dict[str, list[Function]] = {}
    for member in members:
        for statement in member.body:
            if isinstance(statement, Function):
                bodies.setdefault(statement.name, []).append(statement)
    read: set[str] = set()
    pending = [name for name in bodies if name in facts.source_methods]
    while pending:
        for method in bodies.get(pending.pop(), []):
            names = receiver_attributes(method) - read
            read |= names
            pending += names
    return frozenset(read)


def receiver_attributes(method: Function) -> set[str]:
    """`x` of every `self.x` in the method (its first parameter's name for `self`)."""
    arguments = ex.arguments_of(method)
    receiver = arguments[0].arg if arguments else ""
    return {
        node.attr
        for node in ast.walk(method)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver
    }


def keeps_int(facts: ClassFacts, subclass: SubclassName, family: frozenset[str], state: FamilyState) -> bool:
    other = facts.other_module(subclass.module)
    node = other.classes.get(subclass.name) if other is not None else None
    if other is None or node is None:
        return False
    if not all(known & (family | NEUTRAL_BASES) for known in subclass.bases):
        return False
    own = other.own_source_method(node)
    if own is None and other.binds_source_method(node):
        return False
    if own is not None and not is_abstract(own):
        if not (other.own_method_returns_ints(node, own, over_an_int_base=True)):
            return False
        if not keeps_int_elsewhere(other, node):
            return False
    watched = (state.attributes | state.read) - other.source_methods
    return binds_state_to_ints(other.bindings(node), node, watched) and not stores_on_others(node, watched)


def binds_state_to_ints(bindings: AttributeBindings, cls: ast.ClassDef, watched: frozenset[str]) -> bool:
    """The subclass binds the `watched` names on its own objects only to structural ints."""
    if bindings.opaque:
        return False
    methods = {statement.name for statement in cls.body if isinstance(statement, Function)}
    if watched & (bindings.contents.keys() | bindings.called):
        return False
    for attribute, values in [*bindings.values.items(), *bindings.class_level.items()]:
        if attribute in watched and (attribute in methods or not all(map(ex.is_structurally_int, values))):
            return False
    return True


def stores_on_others(cls: ast.ClassDef, watched: frozenset[str]) -> bool:
    """The subclass's body stores or deletes a `watched` name on an object other than its methods'
    receivers (`Cache.n = t`, `other.n = t`), or calls `setattr`/`delattr` on one with that name or
    a name that is not a literal."""
    receivers = {arguments[0].arg for arguments in map(ex.arguments_of, functions_in(cls)) if arguments}
    return any(
        stores_on_another(node, watched, receivers) or sets_on_another(node, watched, receivers)
        for node in ast.walk(cls)
    )


def stores_on_another(node: ast.AST, watched: frozenset[str], receivers: set[str]) -> bool:
    if not (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) and node.attr in watched):
        return False
    return not (isinstance(node.value, ast.Name) and node.value.id in receivers)


def sets_on_another(node: ast.AST, watched: frozenset[str], receivers: set[str]) -> bool:
    if not (isinstance(node, ast.Call) and ex.called_name(node).rpartition(".")[2] in ("setattr", "delattr")):
        return False
    target = node.args[0] if node.args else None
    name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
    on_a_receiver = isinstance(target, ast.Name) and target.id in receivers
    return not on_a_receiver and (not isinstance(name, str) or name in watched)


def functions_in(cls: ast.ClassDef) -> list[Function]:
    return [node for node in ast.walk(cls) if isinstance(node, Function)]


def binds_elsewhere(facts: ClassFacts, cls: ast.ClassDef, attribute: str) -> bool:
    """Another module of the class's package may bind `attribute` on one of its objects: a subclass
    there binds it (on its own objects, in its class body, as a `def` or property), or a store there
    binds it on an object that may be one of the family (`package_stores.stored_elsewhere`). A
    package that cannot be scanned, or a subclass that cannot be read, may."""
    module, root = facts.module
    if root is None or not module or is_transformers_module(module) or not in_a_package(facts.path, module):
        return False
    here, _ = module_name_of(facts.path)
    subclasses = subclass_names(module, here, root, cls.name)
    if subclasses is None or has_two_of_a_name(subclasses):
        return True
    family = frozenset({cls.name} | {subclass.name for subclass in subclasses})
    if stored_elsewhere(facts, root / module.partition(".")[0], here, frozenset({attribute}), family):
        return True
    return any(subclass_binds(facts, subclass, attribute, family) for subclass in subclasses if subclass.module != here)


def subclass_binds(facts: ClassFacts, subclass: SubclassName, attribute: str, family: frozenset[str]) -> bool:
    """The subclass binds the attribute, or may through another base (`class Fast(Mixin, Runner)`,
    whose `Mixin.__init__` binds it): a base outside the family makes it unknown."""
    other = facts.other_module(subclass.module)
    node = other.classes.get(subclass.name) if other is not None else None
    if other is None or node is None or not all(known & (family | NEUTRAL_BASES) for known in subclass.bases):
        return True
    bindings = other.bindings(node)
    return (
        bindings.opaque
        or attribute in bindings.values
        or attribute in bindings.class_level
        or defines_in_body(node, attribute)
    )
