"""`hasattr(c, "attr")` narrows `c` to an int-length cache where only the package's int-length classes
have `attr`: every class of the package (found across the whole package by the attribute's text)
that defines it (a class-level name, a method or property, a `self.attr` binding of any form,
`register_buffer("attr", ...)`), and every subclass of those, has an int length; no transformers
cache class has it (`TRANSFORMERS_CACHE_ATTRIBUTES`); and the package binds it on no other object
(`obj.attr = v`, `setattr(obj, "attr", v)`). A class that sets attributes by a name that is not
a literal (`setattr(self, name, v)`) or answers any (`__getattr__`) and whose file names the
attribute counts as defining it, and so does a class with a builtin or `collections` base that has
it (`class Holder(dict)` has `copy`), wherever its file is. A base from another library is not
looked into (docs/limits.md). What an object from outside the package has is not known: a
user's object with that attribute and a tensor length is the caveat (README Limits), as for
`isinstance` with a class of the package.
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_bindings import EVERY_ATTRIBUTE, attribute_bindings
from lint_rules.engine.facts.cache_attributes import TRANSFORMERS_CACHE_ATTRIBUTES
from lint_rules.engine.facts.classes import ClassFacts
from lint_rules.engine.facts.module_files import module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.module_text import statement_bindings, top_level_statements, whole_word
from lint_rules.engine.facts.subclasses import package_subclasses, whole_package_files

REGISTERING_METHODS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
ANSWERING_ANY = frozenset({"__getattr__", "__getattribute__"})


def only_int_length_classes_have(facts: ClassFacts, attribute: str) -> bool:
    """Only the package's int-length classes (and their subclasses) have `attribute`."""
    if not attribute or attribute.startswith("__") or attribute in TRANSFORMERS_CACHE_ATTRIBUTES:
        return False
    module, root = facts.module
    if root is None or not module:
        return False
    named = re.compile(whole_word(attribute).encode())
    inherited = builtin_bases_having(attribute)
    has_owners = False
    for file in whole_package_files(root / module.partition(".")[0]):
        try:
            data = read_bytes(file)
        except OSError:
            continue
        if not named.search(data) and not (inherited and may_derive_from(data, inherited)):
            continue
        owners = owners_in(file, attribute)
        if owners is None or not all(is_int_length_family(facts, owner, root) for owner in owners):
            return False  # the first file that shows otherwise decides: a common name reads few files
        has_owners = has_owners or bool(owners)
    return has_owners


def is_int_length_family(facts: ClassFacts, owner: tuple[str, ast.ClassDef], root: Path) -> bool:
    """The class and every subclass of it in the package have an int length."""
    module, cls = owner
    if not facts.subclass_length_is_int(module, cls):
        return False
    subclasses = package_subclasses(module, root, cls.name)
    return subclasses is not None and all(
        facts.subclass_length_is_int(name, subclass) for name, subclass, _ in subclasses
    )


def owners_in(file: Path, attribute: str) -> list[tuple[str, ast.ClassDef]] | None:
    """The classes of the file that have `attribute`; None when the file binds it on another object."""
    tree = parsed_module(file)
    if tree is None:
        return []
    module, _ = module_name_of(str(file))
    owners: list[tuple[str, ast.ClassDef]] = []
    bound_on_receivers: set[int] = set()
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        bindings = attribute_bindings(cls)
        on_receivers = set(receiver_bindings(cls, attribute))
        has_it = attribute in bindings or EVERY_ATTRIBUTE in bindings or bool(ANSWERING_ANY & set(bindings))
        if on_receivers or has_it or inherits_from_one_of(cls, builtin_bases_having(attribute), tree):
            owners.append((module, cls))
        bound_on_receivers |= on_receivers
    for node in ast.walk(tree):
        if id(node) not in bound_on_receivers and binds_elsewhere(node, attribute):
            return None
    return owners


def receiver_bindings(cls: ast.ClassDef, attribute: str) -> Iterator[int]:
    """The ids of the nodes binding `attribute` on the receiver of one of the class's methods."""
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ex.arguments_of(method):
            continue
        receiver = ex.arguments_of(method)[0].arg
        for node in ast.walk(method):
            if binds_elsewhere(node, attribute) and bound_object(node) == receiver:
                yield id(node)


def binds_elsewhere(node: ast.AST, attribute: str) -> bool:
    """`x.attribute = v` (any target form), `setattr(x, "attribute", v)`, `x.register_buffer("attribute", ...)`."""
    if isinstance(node, ast.Attribute):
        return node.attr == attribute and not isinstance(node.ctx, ast.Load)
    if not isinstance(node, ast.Call):
        return False
    name = ex.called_name(node)
    last = name.rpartition(".")[2] if name else ex.method_name(node)
    literal = literal_argument(node, 0 if last in REGISTERING_METHODS else 1)
    return (last in ("setattr", "__setattr__") or last in REGISTERING_METHODS) and literal in (attribute, None)


def literal_argument(call: ast.Call, position: int) -> str | None:
    """The string literal at `position` ("" when there is none there; None when it is not a literal)."""
    if len(call.args) <= position:
        return ""
    argument = call.args[position]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return None


def bound_object(node: ast.AST) -> str:
    """The name of the object a binding node binds an attribute on ("" when not a plain name)."""
    if isinstance(node, ast.Attribute):
        return ex.dotted_name(node.value)
    if not isinstance(node, ast.Call):
        return ""
    owner, _, last = ex.called_name(node).rpartition(".")
    first = ex.dotted_name(node.args[0]) if node.args else ""
    if last == "setattr" and not owner:
        return first
    if last == "__setattr__" and owner == "object":
        return first
    return owner


BUILTIN_BASES = {
    **{name: value for name, value in vars(builtins).items() if isinstance(value, type) and value is not object},
    **{
        name: getattr(collections, name) for name in collections.__all__ if isinstance(getattr(collections, name), type)
    },
}
"""Classes a package class may derive from by name whose attributes are known here: Python's builtin
types and `collections`' (`dict` has `copy`, `OrderedDict` has `move_to_end`)."""


@functools.lru_cache(maxsize=256)
def builtin_bases_having(attribute: str) -> frozenset[str]:
    """The names of the builtin and `collections` classes whose objects have `attribute`."""
    return frozenset(name for name, cls in BUILTIN_BASES.items() if hasattr(cls, attribute))


def may_derive_from(data: bytes, bases: frozenset[str]) -> bool:
    """Cheaply, from the text: a class statement may name one of `bases` among its bases, or a name
    may be bound to one (`Base = dict`)."""
    names = b"(?:" + b"|".join(re.escape(name.encode()) for name in sorted(bases)) + rb")\b"
    return (
        re.search(
            rb"\bclass\s+\w+\s*\([^)]*\b" + names + rb"|=[ \t]*(?:\w+\.)*" + names + rb"[ \t]*(?:#|\r?\n|$)", data
        )
        is not None
    )


def inherits_from_one_of(cls: ast.ClassDef, bases: frozenset[str], tree: ast.Module) -> bool:
    """A base of `cls` is written as one of `bases` (`dict`, `collections.OrderedDict`), or as a name
    the module binds to one (`Base = dict`), where the module binds no name of that spelling itself
    (then it is not the builtin); a name bound in a function does not count."""
    bound = module_bindings(tree)
    for base in cls.bases:
        written = ex.dotted_name(base).rpartition(".")[2]
        written = bound.get(written, written) if written not in bases else written
        if written in bases and written not in bound:
            return True
    return False


def module_bindings(tree: ast.Module) -> dict[str, str]:
    """The names the module's top level binds, each with the name it is bound to where that is a
    plain `A = B` (else "")."""
    found: dict[str, str] = {}
    for statement in top_level_statements(tree.body):
        value = statement.value if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        for name in statement_bindings(statement):
            found[name] = value.id if isinstance(value, ast.Name) and name not in found else ""
    return found
