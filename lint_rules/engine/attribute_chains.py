"""Receivers known through the attributes of the package's classes: `self._cache.get_seq_length()`
where every binding of `self._cache` builds an int-length cache, and `self._parent._cache.
get_seq_length()` where every binding of `self._parent` is None or an `Owner` (a parameter annotated
with it, its constructor) and every binding of `Owner`'s `self._cache` builds one.

Every binding counts, in every form, in the class, its bases (of any module of the package) and
the subclasses of its module: `self.attr = value` and `self.attr: X = value` give their value, a
class-level `attr = value` too; an augmented assignment, a tuple or starred target, a `for`, `with`
or comprehension target, `setattr(self, ...)` or `object.__setattr__(self, ...)` make the
attribute unknown (one whose name is not a literal, every attribute). A base that transformers
defines (which binds attributes of its own) makes the class's attributes unknown; one from outside
the package and transformers (`nn.Module`) binds none of the package's. Bindings made from outside
the class (`child._parent = x`) are not seen (README Limits).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from lint_rules.engine import expressions as ex
from lint_rules.engine.caches import INT_LENGTH, is_transformers_module
from lint_rules.engine.classes import ClassFacts, annotated_classes
from lint_rules.engine.definitions import class_lineage
from lint_rules.engine.module_text import BINDING_NODES, bound_names

MAX_CHAIN = 3
"""`self.a.b.c`: attributes followed at most this many deep."""
EVERY_ATTRIBUTE = "*"
"""Stands for the attributes a binding whose name is not a literal may bind (`setattr(self, name, v)`)."""

Function = ast.FunctionDef | ast.AsyncFunctionDef
Binding = tuple[ast.expr | None, Function | None]
"""A value bound to an attribute and the method binding it (None: a class-level binding); a value of
None stands for a binding whose value is not known (see the module's docstring)."""
Member = tuple[ClassFacts, ast.ClassDef]


class Receivers:
    """What the attributes of the classes of one module (and those they reach) hold, asked per key."""

    def __init__(self, classes: ClassFacts) -> None:
        self.classes = classes
        self._bindings: dict[int, tuple[ast.ClassDef, dict[str, list[Binding]]]] = {}
        self._subclasses: dict[int, tuple[ClassFacts, dict[str, list[ast.ClassDef]]]] = {}
        self.owned_by_int_length_classes: dict[str, bool] = {}
        """Per attribute name, whether only the package's int-length classes have it (`attribute_owners`)."""

    def holds_int_length_cache(self, cls: ast.ClassDef, key: str) -> bool:
        """`self.a` (or `self.a.b`, up to MAX_CHAIN attributes) in a method of `cls` holds an object
        of an int-length class whenever the method runs."""
        attributes = key.split(".")[1:]
        if not attributes or len(attributes) > MAX_CHAIN:
            return False
        holder: Member | None = (self.classes, cls)
        for hop, attribute in enumerate(attributes[:-1]):
            if holder is None or self.binds_through(holder, ".".join(attributes[hop:])):
                return False
            holder = self.attribute_class(holder, attribute)
        return holder is not None and self.builds_int_length_caches(holder, attributes[-1])

    def binds_through(self, member: Member, chain: str) -> bool:
        """The family of `member` binds an attribute of what `self.a` holds along `chain` (`self.a.b = v`
        for `a.b.c`), which the class of `self.a` does not see; or the family is not known."""
        family = self.family(member)
        if family is None:
            return True
        parts = chain.split(".")
        prefixes = {".".join(parts[:end]) for end in range(2, len(parts) + 1)}
        return any(prefixes & set(self.bindings(cls)) for _, cls in family)

    def attribute_class(self, member: Member, attribute: str) -> Member | None:
        """The one class every binding of `self.attribute` in the family of `member` holds (None aside)."""
        bindings = self.family_bindings(member, attribute)
        if bindings is None:
            return None
        found: dict[int, Member] = {}
        for facts, value, method in bindings:
            if value is not None and ex.is_none(value):
                continue
            holder = held_class(facts, value, method)
            if holder is None:
                return None
            found[id(holder[1])] = holder
        return found.popitem()[1] if len(found) == 1 else None

    def builds_int_length_caches(self, member: Member, attribute: str) -> bool:
        """Every binding of `self.attribute` in the family of `member` is None or an object of an
        int-length class (its constructor, a parameter annotated with it), and one is not None."""
        bindings = self.family_bindings(member, attribute)
        if not bindings:
            return False
        values = [(facts, value, method) for facts, value, method in bindings if value is None or not ex.is_none(value)]
        return bool(values) and all(
            value is not None and int_length_object(facts, value, method) for facts, value, method in values
        )

    def family_bindings(
        self, member: Member, attribute: str
    ) -> list[tuple[ClassFacts, ast.expr | None, Function | None]] | None:
        """Every binding of `self.attribute` in the class, its bases and its module's subclasses; None
        when some class of that family is not known well enough to tell (a transformers base)."""
        family = self.family(member)
        if family is None:
            return None
        found: list[tuple[ClassFacts, ast.expr | None, Function | None]] = []
        for facts, cls in family:
            bindings = self.bindings(cls)
            for value, method in [*bindings.get(attribute, []), *bindings.get(EVERY_ATTRIBUTE, [])]:
                found.append((facts, value, method))
        return found

    def family(self, member: Member) -> list[Member] | None:
        facts, cls = member
        found: list[Member] = []
        pending = [member, *((facts, subclass) for subclass in self.subclasses(facts, cls))]
        while pending:
            facts, cls = pending.pop()
            if any(cls is known for _, known in found):
                continue
            found.append((facts, cls))
            for base in cls.bases:
                origin = base_class(facts, base)
                if origin is False:
                    return None
                if origin is not True:
                    pending.append(origin)
        return found

    def subclasses(self, facts: ClassFacts, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The classes of `facts`'s module that have `cls` among their bases, however far up."""
        kept = self._subclasses.get(id(facts))
        if kept is None or kept[0] is not facts:
            by_base: dict[str, list[ast.ClassDef]] = {}
            for candidate in facts.classes.values():
                for base in class_lineage(candidate, facts.classes)[1:]:
                    by_base.setdefault(base.name, []).append(candidate)
            kept = self._subclasses[id(facts)] = (facts, by_base)
        return [candidate for candidate in kept[1].get(cls.name, []) if facts.classes.get(cls.name) is cls]

    def bindings(self, cls: ast.ClassDef) -> dict[str, list[Binding]]:
        kept = self._bindings.get(id(cls))
        if kept is None or kept[0] is not cls:
            kept = self._bindings[id(cls)] = (cls, attribute_bindings(cls))
        return kept[1]


def base_class(facts: ClassFacts, base: ast.expr) -> Member | bool:
    """A base's class in the package (with its module's facts); True for one from outside the package
    and transformers (it binds none of the package's attributes); False when it cannot be told."""
    if isinstance(base, ast.Subscript):
        base = base.value  # `Generic[T]`
    name = ex.dotted_name(base)
    if not name:
        return False
    local = facts.classes.get(name)
    if local is not None:
        return facts, local
    origin = imported_module(facts, name)
    own_top = facts.module[0].partition(".")[0]
    if origin is None:
        return name in ("Generic", "Protocol") or (name in vars(builtins) and isinstance(vars(builtins)[name], type))
    if is_transformers_module(origin):
        return False
    if origin.partition(".")[0] != own_top:
        return True
    found = facts.class_named(name)
    return found if found is not None else False


def imported_module(facts: ClassFacts, name: str) -> str | None:
    """The module a base's name comes from (`Base`, `m.Base`, `nn.Module`), None if not imported."""
    prefix = name.rpartition(".")[0]
    if prefix:
        modules = facts.bound_modules()
        first, _, rest = prefix.partition(".")
        if prefix in modules:
            return modules[prefix]
        return f"{modules[first]}.{rest}" if first in modules else None  # `torch.nn.Module` after `import torch`
    imported = facts.imports().get(name)
    return imported[0] if imported is not None else None


def held_class(facts: ClassFacts, value: ast.expr | None, method: Function | None) -> Member | None:
    """The class of the object a bound value is: a constructor's, or a parameter's annotated class."""
    written = written_class(value, method)
    return facts.class_named(written) if written else None


def int_length_object(facts: ClassFacts, value: ast.expr, method: Function | None) -> bool:
    if facts.constructed_kind(value) == INT_LENGTH:
        return True
    written = written_class(value, method)
    return bool(written) and not isinstance(value, ast.Call) and facts.length_kind_of_name(written) == INT_LENGTH


def written_class(value: ast.expr | None, method: Function | None) -> str:
    """`Owner(...)`, `m.Owner(...)`; a parameter annotated with one class (`parent: "Owner"`,
    `Optional[Owner]`) that the method binds nowhere else: the class's name as written ("" if none)."""
    if isinstance(value, ast.Call):
        name = ex.called_name(value)
        return name if name.rpartition(".")[2][:1].isupper() else ""
    if not isinstance(value, ast.Name) or method is None:
        return ""
    parameter = next((argument for argument in ex.arguments_of(method) if argument.arg == value.id), None)
    if parameter is None or binding_count(method, value.id) != 1:
        return ""
    annotated = annotated_classes(parameter.annotation)
    return annotated[0] if len(annotated) == 1 else ""


def binding_count(method: Function, name: str) -> int:
    return sum(
        bound_names(node).count(name)
        for node in ast.walk(method)
        if isinstance(node, BINDING_NODES) and node is not method
    )


def attribute_bindings(cls: ast.ClassDef) -> dict[str, list[Binding]]:
    """Every binding of `self.attr` (`cls.attr` in a class method) in the class's methods, and of
    `attr` in its body, by attribute (see the module's docstring)."""
    found: dict[str, list[Binding]] = {}
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = ex.arguments_of(statement)
            receiver = arguments[0].arg if arguments else ""
            for attribute, value in method_bindings(statement, receiver):
                found.setdefault(attribute, []).append((value, statement))
            found.setdefault(statement.name, []).append((None, None))
        else:
            for attribute, value in class_body_bindings(statement):
                found.setdefault(attribute, []).append((value, None))
    return found


def class_body_bindings(statement: ast.stmt) -> Iterator[tuple[str, ast.expr | None]]:
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        if statement.value is not None:
            yield statement.target.id, statement.value
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            if isinstance(target, ast.Name):
                yield target.id, statement.value
            else:
                yield from ((name, None) for name in target_names(target))
    elif isinstance(statement, ast.ClassDef):
        yield statement.name, None
    else:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield node.id, None


def target_names(target: ast.expr) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id


def method_bindings(method: Function, receiver: str) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute, value) for each binding of `receiver.attribute` in the method (value None: not known)."""
    if not receiver:
        return
    for node in ast.walk(method):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                attribute = attribute_of(target, receiver)
                if attribute:
                    yield attribute, node.value
                else:
                    yield from ((name, None) for name in attributes_within(target, receiver))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            yield from ((name, None) for name in attributes_within(node.target, receiver))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            yield from ((name, None) for name in attributes_within(node.optional_vars, receiver))
        elif isinstance(node, ast.Call):
            yield from set_attribute_calls(node, receiver)


def attributes_within(target: ast.expr, receiver: str) -> Iterator[str]:
    """The attributes of `receiver` a (compound) target binds: `self.a`, `self.a, self.b = ...`, `*self.a`."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from attributes_within(element, receiver)
    elif isinstance(target, ast.Starred):
        yield from attributes_within(target.value, receiver)
    elif attribute_of(target, receiver):
        yield attribute_of(target, receiver)


def attribute_of(target: ast.expr, receiver: str) -> str:
    """`a` for `self.a`; `a.b` for `self.a.b` (an attribute of what `self.a` holds); "" otherwise."""
    name = ex.dotted_name(target)
    return name.partition(".")[2] if name.startswith(receiver + ".") else ""


def set_attribute_calls(call: ast.Call, receiver: str) -> Iterator[tuple[str, ast.expr | None]]:
    """`setattr(self, "a", v)`, `object.__setattr__(self, "a", v)`: "a" bound to an unknown value
    (EVERY_ATTRIBUTE for a name that is not a literal)."""
    name = ex.called_name(call)
    if name != "setattr" and not name.endswith("__setattr__"):
        return
    arguments = call.args
    if name != "setattr" and not name.startswith(("object.", "super")):
        arguments = [ast.Name(receiver), *arguments]  # `self.__setattr__("a", v)`
    if len(arguments) < 2 or ex.dotted_name(arguments[0]) != receiver:
        return
    attribute = arguments[1]
    literal = attribute.value if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str) else ""
    yield (literal or EVERY_ATTRIBUTE), None
