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
the class, a subclass or a base of it, nor a `Protocol`, or a class imported from outside the
package that the family does not derive from (`attribute_receivers`: `for layer in self.layers`
over `self.layers: list[OtherLayer]`; `args: argparse.Namespace`). A class that derives from such
a class and from this one at once is the caveat: its objects are typed as the other class there.

A file that sets attributes dynamically without naming the attribute is not seen (docs/limits.md),
as for `hasattr` narrowing, and a method run on another object (`Other.grow(cache)`) stores on its
receiver as on its own. The search runs once per module analyzed, or once per checker run
(`module_files.Stamps`).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.module_files import STAMPS, module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.module_text import whole_word
from lint_rules.engine.facts.outside_stores import (
    ANY_ATTRIBUTE,
    OutsideCounts,
    Store,
    after_self,
    attribute_mentions,
    may_bind_any_attribute,
    stores_elsewhere,
)
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
        named = re.compile(whole_word(*sorted(watched)).encode())
        for file in whole_package_files(top):
            other_module, _ = module_name_of(str(file))
            if other_module == module:
                continue
            try:
                data = read_bytes(file)
            except OSError:
                continue
            if not named.search(data) or not may_store_on_another(data, watched):
                continue
            stores = module_stores(file)
            spelled = watched if any(is_spelled(data, name) for name in watched) else frozenset()
            if any(
                breaks_a_count(store, watched, spelled)
                and may_hold_the_family(facts.other_module(other_module), store, family)
                for store in stores
            ):
                return True
        return False

    return STAMPS.remembered((stored_elsewhere, top, module, watched, family), search)


def module_stores(file: Path) -> list[Store]:
    """The stores of the file's module on objects other than a method's own receiver, read once per
    module analyzed or per run (each class asks about the same few files)."""

    def read() -> list[Store]:
        tree = parsed_module(file)
        return stores_elsewhere(tree) if tree is not None else []

    return STAMPS.remembered((module_stores, file), read)


def may_store_on_another(data: bytes, watched: frozenset[str]) -> bool:
    """Cheaply, from the text: a watched name written as a store target (`x.n =`, `x.n +=`, `x.n,`,
    `(x.n)`, `[x.n]`, `x.n: T`, `for x.n in`, in a `for`, `with` or `del` line) after something other than `self`, or after anything
    where a `def` outside a class body takes `self` first (`Cache.update = f` may bind it), or a name
    not written out (`setattr`, `vars`, `__dict__`). Otherwise the file stores none on another object."""
    text = data.decode("utf-8", errors="replace")
    text = text if text.isascii() else unicodedata.normalize("NFKC", text)
    if may_bind_any_attribute(text):
        return True
    any_receiver = has_self_function_outside_a_class(text)
    return any(
        is_store_target(text, mention) and (any_receiver or not after_self(text, mention.start()))
        for name in watched
        for mention in attribute_mentions(text, name)
    )


BREAK = r"(?:[ \t]|\\(?:\r\n|\r|\n))"
"""A space, a tab or a line continuation."""
STORE_AFTER = re.compile(BREAK + r"*(?:(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|,|\))")
"""What follows a target: `=` or an augmented `=`, `,` or `)`."""
LIST_TARGET_END = re.compile(r"(?:\s|\\(?:\r\n|\r|\n))*(?:\](?:\s|\\(?:\r\n|\r|\n))*)+(?:=(?!=)|,|\)|in\b)")
"""The end of a list target, over lines (`[x.n] = v`, `for [x.n] in v`)."""
ITERATED = re.compile(r"(?:\s|\\(?:\r\n|\r|\n))*in\b")
"""A `for` target's end, in a statement or a comprehension (`x.n in v` tests are rare: a parse more)."""
ANNOTATED = re.compile(BREAK + r"*:(?!=)")
ANNOTATED_TARGET_BEFORE = re.compile(r"[ \t]*[^\s=]*[ \t]*")
"""What may stand before an annotated target's `.name` on its line, after a `;` or `:`: one
expression without spaces or `=` (`x`, `xs[0]`, `(x)`; a slice's `a[b` too, a parse more)."""
STATEMENT_FOR_STORES = re.compile(r"[ \t]*(?:async[ \t]+)?(?:for|with|del)\b")


def is_store_target(text: str, mention: re.Match[str]) -> bool:
    end = mention.end()
    if STORE_AFTER.match(text, end) or LIST_TARGET_END.match(text, end) or ITERATED.match(text, end):
        return True
    line_start = text.rfind("\n", 0, mention.start()) + 1
    if STATEMENT_FOR_STORES.match(text, line_start) is not None:
        return True
    if ANNOTATED.match(text, end) is None:
        return False
    statement = re.split(r"[;:]", text[line_start : mention.start()])[-1]
    return ANNOTATED_TARGET_BEFORE.fullmatch(statement) is not None


SELF_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t]*self\b", re.MULTILINE)


def has_self_function_outside_a_class(text: str) -> bool:
    """A `def f(self, ...)` whose enclosing line (the last one before it indented less) is no
    `class` header: a function that may be bound as a method later (`Cache.update = f`)."""
    for match in SELF_DEF.finditer(text):
        indentation = len(match.group(1))
        if indentation == 0 or not enclosed_by_a_class(text[: match.start()], indentation):
            return True
    return False


def enclosed_by_a_class(before: str, indentation: int) -> bool:
    for line in reversed(before.splitlines()):
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) < indentation:
            return stripped.startswith("class ") or stripped.startswith("class\t")
    return False


def is_spelled(data: bytes, name: str) -> bool:
    """`"name"` or `'name'` occurs in the file, or a keyword argument `name=` (`vars(c).update(n=t)`)."""
    encoded = name.encode()
    quoted = b'"' + encoded + b'"' in data or b"'" + encoded + b"'" in data
    return quoted or re.search(rb"[(,]\s*" + re.escape(encoded) + rb"\s*=(?!=)", data) is not None


def breaks_a_count(store: Store, watched: frozenset[str], spelled: frozenset[str]) -> bool:
    """`spelled`: the watched names the file writes as a string (`"n"`), which a store whose name
    is not written out (`setattr(obj, key, v)`) may bind."""
    if store.attribute == ANY_ATTRIBUTE:
        return bool(spelled) and not is_int_constant(store.value)
    if store.attribute not in watched:
        return False
    if store.value is None:
        return True
    if store.function is None:
        return not ex.is_structurally_int(store.value)
    return not OutsideCounts(no_counter_read).is_count(store.value, store.attribute, store.function, store.increment)


def is_int_constant(value: ast.expr | None) -> bool:
    """A literal Python counts as an int (`True`, `0`): whatever name it is bound to, it keeps a count
    one (`setattr(block, FLAG, True)`)."""
    return isinstance(value, ast.Constant) and type(value.value) in (int, bool)


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
    types = typing_of(storing, layers_matter=False).of(store.receiver, cls, store.function, 0)
    return types is None or any(may_be_of_the_family(view, class_name(name), family) for view, name in types)


ANY_OBJECT = frozenset({"Any", "object"})


def may_be_of_the_family(view: ClassFacts, name: str, family: frozenset[str]) -> bool:
    found = view.class_named(name)
    if found is None:  # `Any`, `object`, an alias, a factory's name, a class outside the package
        last = name.rpartition(".")[2]
        return last in ANY_OBJECT or last in family or not imported_from_outside(view, name)
    facts, cls = found
    lineage = facts.lineage(cls)
    return cls.name in family or any(
        ex.dotted_name(base).rpartition(".")[2] == "Protocol" for member in lineage for base in member.bases
    )


def imported_from_outside(view: ClassFacts, name: str) -> bool:
    """`name` is a class imported from outside the package (`nn.Module`, `argparse.Namespace`): an
    object of it is one of the family only where the family derives from it."""
    first, _, _ = name.partition(".")
    module = view.bound_modules().get(first) if "." in name else None
    imported = view.imports().get(name) if "." not in name else None
    origin = module if module is not None else imported[0] if imported is not None else None
    return origin is not None and origin.partition(".")[0] != view.module[0].partition(".")[0]
