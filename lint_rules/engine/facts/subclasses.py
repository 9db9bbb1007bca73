"""A private base of the package whose source method is abstract (`raise NotImplementedError`, `...`,
`pass`, `@abstractmethod`) has an int length when every subclass the package defines has one.

Only a private base counts (its name, or a module on its path, starts with one underscore: `_Base`,
`pkg._impl.Base`): a public base is the package's extension point, and a subclass a user writes
outside the package (which no check of the package sees) may return a tensor. The subclasses are
found across the whole package (`package.package_files`), a file read only when its text names the
base or one of the subclasses found (with the other portions of a namespace package it belongs
to); a base with no subclass there stays unknown; a module that binds one of those names to another name
(`Alias = _Base`) makes the base unknown, and so does a subclass that neither overrides the method
with an int length nor inherits only from the base's family.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.imports import imported_names
from lint_rules.engine.facts.module_files import STAMPS, module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.name_bindings import final_bindings, imports_among
from lint_rules.engine.facts.package import MAX_PACKAGE_FILES, package_files

Function = ast.FunctionDef | ast.AsyncFunctionDef
Subclass = tuple[str, ast.ClassDef, list[set[str]]]
"""The dotted name of a subclass's module, the subclass, and the names each of its bases may be known by."""
NEUTRAL_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol"})
"""Bases that define no source method: a subclass inheriting from them and the family inherits the family's."""


def is_private(module: str, name: str) -> bool:
    """The class's name or a module on its path starts with one underscore (`__init__` aside)."""
    return any(part.startswith("_") and not part.endswith("__") for part in [*module.split("."), name])


def is_abstractmethod(decorator: ast.expr) -> bool:
    """`@abstractmethod`, however its module is spelled (`abc.abstractmethod`)."""
    return ex.dotted_name(decorator).rpartition(".")[2] == "abstractmethod"


def is_abstract(method: Function) -> bool:
    """`@abstractmethod`, or a body (its docstring aside) of `...`, `pass` or `raise NotImplementedError`."""
    if any(map(is_abstractmethod, method.decorator_list)):
        return True
    body = method.body[1:] if ast.get_docstring(method, clean=False) is not None else method.body
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return ex.dotted_name(raised) == "NotImplementedError"
    return False


def package_subclasses(
    module: str, root: Path | None, base: str, beyond_its_module: bool = False
) -> list[Subclass] | None:
    """Every class of the package that has `base` (named by its own name) among its bases, however far
    up; None when the package cannot be scanned, names the family under another name (`Alias =
    Base`) or has a class whose base cannot be named (`class X(make_base())`). `beyond_its_module`
    (the other modules' check, `kept_elsewhere`): the subclasses of an alias are searched for too,
    and a base that cannot be named counts only in a file that names a class of the family."""
    if root is None or not module:
        return None
    files = whole_package_files(root / module.partition(".")[0])
    if not files:
        return None
    names = {base}
    classes = {base}
    """The family's class names: a base that cannot be named counts in a file that names one."""
    found: dict[int, Subclass] = {}
    pending = {base}
    while pending:
        searched, pending = pending, set()
        for file in files:
            try:
                data = read_bytes(file)
            except OSError:
                continue
            if not any(name.encode() in data for name in searched):
                continue
            in_file = subclasses_in(file, names)
            if not beyond_its_module and (in_file.aliases or in_file.unnamed_bases):
                return None
            if in_file.unnamed_bases and any(name.encode() in data for name in classes):
                return None
            subclass_names = [subclass[1].name for subclass in in_file.subclasses]
            classes.update(subclass_names)
            for subclass in in_file.subclasses:
                found.setdefault(id(subclass[1]), subclass)
            aliases = in_file.aliases + (in_file.imported_aliases if beyond_its_module else [])
            for name in subclass_names + aliases:
                if name not in names:
                    names.add(name)
                    pending.add(name)
    return list(found.values())


MAX_NAMESPACE_PORTIONS = 16


def whole_package_files(top: Path) -> tuple[Path, ...]:
    """The `.py` files of the top package, and of the other portions of its namespace package where the
    folder above it is one (named like a package, holding other packages: `fla/` holding `layers/` and
    `models/`); empty when they cannot all be scanned (too many files or portions). Listed once per
    module analyzed, or per run (`imports.Stamps`), as `package.package_files`."""
    return STAMPS.listing(top, list_whole_package_files)


def list_whole_package_files(top: Path) -> tuple[Path, ...]:
    root = top.parent
    portions = [top]
    if root.name.isidentifier():
        try:
            portions = sorted(folder for folder in root.iterdir() if (folder / "__init__.py").is_file())
        except OSError:
            return ()
    if len(portions) > MAX_NAMESPACE_PORTIONS:
        return ()
    found: list[Path] = []
    for portion in portions:
        files = package_files(portion)
        if not files or len(found) + len(files) > MAX_PACKAGE_FILES:
            return ()
        found += files
    return tuple(found)


class FileSubclasses(NamedTuple):
    subclasses: list[Subclass]
    aliases: list[str]
    """Names the file binds to one of the family (`Alias = Base`): its subclasses are the family's too."""
    imported_aliases: list[str]
    """Names the file imports one of the family as (`from .base import Base as B`), which a package's
    `__init__.py` may re-export: a subclass of `B` elsewhere is one of the family's."""
    unnamed_bases: bool
    """A class of the file has a base that cannot be named (`class X(*bases)`, `class X(make_base())`):
    which class it extends is not known."""


def subclasses_in(file: Path, names: set[str]) -> FileSubclasses:
    """The classes of the file with a base named in `names` (also when imported under another
    name), the names bound to one of them, and whether a class's base cannot be named."""
    index = file_classes(file)
    return FileSubclasses(
        [
            (index.module, node, known_as)
            for node, known_as in index.classes
            if any(names & known for known in known_as)
        ],
        [target for targets, values in index.bindings if names & values for target in targets],
        [alias for name, alias in index.imported_as if name in names],
        index.unnamed_bases,
    )


class FileClasses(NamedTuple):
    """What a file's subclass searches read of it, whatever names they search for."""

    module: str
    classes: list[tuple[ast.ClassDef, list[set[str]]]]
    """Each class, with the names each of its bases may be known by (`base_names`)."""
    bindings: list[tuple[list[str], set[str]]]
    """The names each binding binds and the names its value is made of (`KV, other = KVCache, int`)."""
    imported_as: list[tuple[str, str]]
    """(name, alias) of each `from m import name as alias`."""
    unnamed_bases: bool


def file_classes(file: Path) -> FileClasses:
    """Read once per module analyzed, or per run (`module_files.Stamps`): each base searched for, and
    each round of a search, reads the same files."""

    def read() -> FileClasses:
        tree = parsed_module(file)
        module, _ = module_name_of(str(file))
        if tree is None:
            return FileClasses(module, [], [], [], False)
        imported_as = names_imported_as(tree, module, file.name == "__init__.py")
        index = FileClasses(module, [], [], [], False)
        unnamed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                known_as = [base_names(base, imported_as) for base in node.bases]
                unnamed = unnamed or any("" in known for known in known_as)
                index.classes.append((node, known_as))
            elif isinstance(node, ast.ImportFrom):
                index.imported_as.extend((alias.name, alias.asname) for alias in node.names if alias.asname)
            else:
                index.bindings.extend(bindings_of(node, imported_as))
        return index._replace(unnamed_bases=unnamed)

    return STAMPS.remembered((file_classes, file), read)


def bindings_of(node: ast.AST, imported: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """The names a binding binds (each of a tuple target: it may hold any of its value's names) and
    the names its value is made of (`KV, other = KVCache, int`, `(KV := KVCache)`, `KV = A if f else
    B`, `KV = cast(type, A)`, `for KV in (A, B)`), where that value is made of names."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        value, targets = node.iter, [node.target]
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        value, targets = node.value, node.targets if isinstance(node, ast.Assign) else [node.target]
    else:
        return []
    values = set().union(*(base_names(named, imported) for named in named_values(value)))
    if not values:
        return []
    return [
        (
            [ex.dotted_name(bound).rpartition(".")[2] or "?" for target in targets for bound in bound_parts(target)],
            values,
        )
    ]


def named_values(value: ast.expr) -> list[ast.expr]:
    """The names and attributes a value may be (`A`, `mod.A`, the elements of `A, B`, either side of
    `A if f else B` and of `A or B`, the last argument of `cast(type, A)`)."""
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return [element for item in value.elts for element in named_values(item)]
    if isinstance(value, ast.IfExp):
        return named_values(value.body) + named_values(value.orelse)
    if isinstance(value, ast.BoolOp):
        return [element for item in value.values for element in named_values(item)]
    if isinstance(value, ast.Starred):
        return named_values(value.value)
    if isinstance(value, ast.Call) and ex.called_name(value).rpartition(".")[2] == "cast" and value.args:
        return named_values(value.args[-1])
    return [value] if isinstance(value, (ast.Name, ast.Attribute)) else []


def bound_parts(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [part for element in target.elts for part in bound_parts(element)]
    return [target.value if isinstance(target, ast.Starred) else target]


def names_imported_as(tree: ast.Module, module: str, is_package: bool) -> dict[str, set[str]]:
    """Local name -> the names it is imported as: the last import's, and every other that may hold
    (`try: from .base import _Base as B` / `except ImportError: from .other import Other as B`)."""
    found = {local: {origin[1]} for local, origin in imported_names(tree, module, is_package).items()}
    for local, held in final_bindings(tree, module, is_package, may_declare_globals=False, walrus_lines=[]).items():
        found.setdefault(local, set()).update(name for _, name in imports_among(held))
    return found


def base_names(base: ast.expr, imported: dict[str, set[str]]) -> set[str]:
    """The names a base may be known by in the package: as written, its last part, its imported names
    (either branch's for `A if flag else B`)."""
    if isinstance(base, ast.IfExp):
        return base_names(base.body, imported) | base_names(base.orelse, imported)
    if isinstance(base, ast.Subscript):
        if isinstance(base.slice, ast.Constant) and isinstance(base.slice.value, str):
            return {""}  # `BASES["kv"]`: a lookup, not a generic class
        base = base.value
    written = ex.dotted_name(base)
    if not written and isinstance(base, ast.Attribute):  # `import_module("pkg.m").Base`: known by its last part
        return {"", base.attr}
    return {written, written.rpartition(".")[2], *imported.get(written, ())}


def every_subclass_int(
    module: str,
    root: Path | None,
    cls: ast.ClassDef,
    length_is_int: Callable[[str, ast.ClassDef], bool],
    own_source_method: Callable[[ast.ClassDef], Function | None],
) -> bool:
    """The private base `cls` of `module`, whose source method is abstract, has an int length: every
    subclass in the package overrides it with an int length (`length_is_int`, in the subclass's
    module) or inherits only from the family and bases that define none."""
    if not is_private(module, cls.name):
        return False
    subclasses = package_subclasses(module, root, cls.name)
    if not subclasses:
        return False  # none in the package: those that run it are all elsewhere
    family = {cls.name} | {subclass.name for _, subclass, _ in subclasses}
    for subclass_module, subclass, bases in subclasses:
        if own_source_method(subclass) is not None:
            if not length_is_int(subclass_module, subclass):
                return False
        elif not all(known & (family | NEUTRAL_BASES) for known in bases):
            return False
    return True
