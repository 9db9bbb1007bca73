"""Compiled reach across the modules of a package: a function that no compiled region of its own
module reaches may still be called from a compiled `forward` in another module of the package
(`rope.py`'s helper called by `modeling.py`'s `TinyModel.forward`).

Here, module-level functions (methods: `package_methods`), through `from ... import name` (absolute or relative)
or a name bound to their module (`from . import rope` ... `rope.f()`, `import pkg.rope as r` ...
`r.f()`, `import pkg.rope` ... `pkg.rope.f()`), also when a package's `__init__.py` re-exports it
under its own name (`from pkg import f`, `import pkg` ... `pkg.f()`; not through `import *`, an
assignment or another name), in the other modules of the same top package. A caller found so
that no compiled region of its own module reaches is searched for in the same way, up to
`MAX_MODULE_HOPS` modules away from the function (a `forward` in `modeling.py` calling `layers.py`'s
`attend`, which calls `positions.py`'s `trim`); a search cut there takes the function as compiled
when another module names a function it reached. Files are found by their text (the
function's name, then their import lines, each parsed alone: `may_import`) before they are parsed,
and each is parsed once while it stays among the most recently used (`module_files.parsed_module`).
"""

from __future__ import annotations

import ast
import codecs
import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, Protocol

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.definitions import Definition, DefinitionIndex, calls_at
from lint_rules.engine.facts.imports import RE_EXPORT_HOPS, bound_modules, imported_names, re_export_source
from lint_rules.engine.facts.module_files import STAMPS, file_stamp, module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.module_text import lines_mentioning, torch_aliases

MAX_MODULE_HOPS = 4
"""How many modules away from a function its compiled callers are looked for: the module of each
caller found is searched in turn, to this depth."""
MAX_PACKAGE_FILES = 5000
"""A package larger than this is not scanned (its cross-module callers are not looked for)."""
MAX_IMPORT_LISTS = 2048
IMPORT_LINE = re.compile(
    rb"^[ \t\f]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t][^\n]*)", re.MULTILINE
)
"""An import statement that opens a line: `from m import (a, b)` over several lines, else to the
line's end."""
LOOSE_IMPORT_LINE = re.compile(rb"^[ \t\f]*(?:from\b[^\n]*\bimport\b|import\b)", re.MULTILINE)
"""A line that may open an import in a form `IMPORT_LINE` does not read (`from . rope import f`)."""
IMPORT_AFTER_A_STATEMENT = re.compile(rb"[;:][ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t(]")
"""An import that does not open its line (`x = 1; import m`, `if flag: from m import f`)."""


class ModuleHop(NamedTuple):
    """Where a module's call graph stands in a search across modules: the module being analyzed
    (`origin`, whose budget of searches it spends) and how many modules away from it this one is."""

    origin: str
    depth: int = 0

    @property
    def at_the_limit(self) -> bool:
        """Callers in other modules are not searched from here (`MAX_MODULE_HOPS`)."""
        return self.depth >= MAX_MODULE_HOPS

    def next(self) -> ModuleHop:
        return ModuleHop(self.origin, self.depth + 1)


class Graph(Protocol):
    """What this module needs of `callgraph.CallGraph` (which builds on this module)."""

    def __init__(
        self,
        tree: ast.Module,
        text: str,
        definitions: DefinitionIndex,
        torch_aliases: frozenset[str],
        path: str = "",
        hop: ModuleHop | None = None,
    ) -> None: ...

    def compiled_region(self, definition: Definition) -> str: ...

    def lineage(self, cls: ast.ClassDef) -> list[ast.ClassDef]: ...

    def own_method(self, cls: ast.ClassDef, name: str) -> list[Definition]: ...

    def attribute_classes(self, cls: ast.ClassDef) -> dict[str, str]: ...


def compiled_caller_elsewhere(path: str, function: Definition, graph: type[Graph], hop: ModuleHop) -> str:
    """Why `function` (module-level, in the module at `path`) runs compiled because another module of
    its package calls it from a compiled region; "" when none does."""
    for file, (module_name, name) in naming_files(path, function):
        region = compiled_call_in(file, module_name, name, graph, hop)
        if region:
            return region
    return ""


def named_elsewhere(path: str, function: Definition) -> bool:
    """Whether another module of the package may call `function` (module-level): its text names the
    function and may import it."""
    return any(may_name(file, *module) for file, module in naming_files(path, function))


def naming_files(path: str, function: Definition) -> Iterator[tuple[Path, tuple[str, str]]]:
    """The package's other files, each with the module name and the function's name to look for."""
    module_name, root = module_name_of(path)
    if root is None or not has_callers_elsewhere(path, function):
        return
    this_file = Path(path).resolve()
    for file in package_files(root / module_name.split(".")[0]):
        if file != this_file:
            yield file, (module_name, function.name)


def has_callers_elsewhere(path: str, function: Definition) -> bool:
    """Whether other modules may call the function: a module-level one in a module of a package."""
    module_name, root = module_name_of(path)
    return root is not None and bool(module_name) and function.parent is None and function.is_function


@functools.lru_cache(maxsize=8)
def package_top(path: str) -> Path | None:
    """The top package of the module at `path`; None for a module outside a regular package (any
    script beside it may import it)."""
    module_name, root = module_name_of(path)
    in_package = "." in module_name or path.endswith("__init__.py")
    if root is None or not in_package:
        return None
    return root / module_name.split(".")[0]


def package_files(top: Path) -> tuple[Path, ...]:
    """The `.py` files of a top package (empty for one too large to scan, or a single module), as
    resolved paths: `top` is resolved (`module_name_of`), so only a linked file needs resolving.
    Listed once per module analyzed, or per run (`imports.Stamps`)."""
    return STAMPS.listing(top, list_package_files)


def list_package_files(top: Path) -> tuple[Path, ...]:
    if not (top / "__init__.py").is_file():
        return ()
    found: list[Path] = []
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        found += [file for file in map(python_file, entries) if file is not None]
        folders += reversed([Path(entry.path) for entry in entries if is_package_folder(entry)])  # depth first
        if len(found) > MAX_PACKAGE_FILES:
            return ()
    return tuple(found)


def python_file(entry: os.DirEntry[str]) -> Path | None:
    """The `.py` file an entry is, a linked one resolved; None for anything else, a link that loops or
    points nowhere included."""
    if not entry.name.endswith(".py"):
        return None
    try:
        return (Path(entry.path).resolve() if entry.is_symlink() else Path(entry.path)) if entry.is_file() else None
    except (OSError, RuntimeError):  # RuntimeError: `resolve` of a symlink loop
        return None


def is_package_folder(entry: os.DirEntry[str]) -> bool:
    """A folder to look into (not a hidden one; a linked folder is not followed, as `os.walk` does not)."""
    return not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False)


def may_name(file: Path, module_name: str, function_name: str) -> bool:
    """Cheaply: the file's text names the function and one of its imports may bind it or its module."""
    try:
        raw = read_bytes(file)
    except OSError:
        return False
    return function_name.encode() in raw and may_import(file, raw, module_name, function_name)


def compiled_call_in(file: Path, module_name: str, function_name: str, graph_type: type[Graph], hop: ModuleHop) -> str:
    """The compiled region of `file` that calls `function_name` imported from `module_name`, if any."""
    if not may_name(file, module_name, function_name):
        return ""
    raw = read_bytes(file)
    tree = parsed_module(file)
    if tree is None:
        return ""
    local_names, modules = names_bound_to(tree.body, file, module_name, function_name)
    if not local_names and not modules:
        return ""
    text = raw.decode("utf-8", errors="replace")
    definitions = DefinitionIndex(tree, text)
    graph = graph_type(tree, text, definitions, torch_aliases(tree), str(file), hop.next())
    words = sorted(local_names | ({function_name} if modules else set()))
    for line in lines_mentioning(text, words, whole_words=True):
        caller = definitions.innermost_function_at(line)
        if caller is None or not any(
            calls_function(call, local_names, modules) for word in words for call in calls_at(caller.node, line, word)
        ):
            continue
        region = graph.compiled_region(caller)
        if region:
            return f"called from {caller.qualname} in {file.name} (line {line}), which is {region}"
    return ""


def names_bound_to(body: list[ast.stmt], file: Path, module_name: str, function_name: str) -> tuple[set[str], set[str]]:
    """The names the top-level imports of `body` bind to the function, and those bound to its module."""
    tree = ast.Module(body=body, type_ignores=[])
    other_module, root = module_name_of(str(file))
    is_package = file.name == "__init__.py"
    local_names = {
        local
        for local, origin in imported_names(tree, other_module, is_package).items()
        if origin == (module_name, function_name)
        or re_export_source(origin, root, RE_EXPORT_HOPS) == (module_name, function_name)
    }
    modules = {
        local
        for local, module in bound_modules(tree, other_module, is_package).items()
        if module == module_name
        or re_export_source((module, function_name), root, RE_EXPORT_HOPS) == (module_name, function_name)
    }
    return local_names, modules


def may_import(file: Path, raw: bytes, module_name: str, function_name: str) -> bool:
    """Cheaply, before the file is parsed: whether one of the import statements of its text, each
    taken alone, binds the function or its module (False only when none does: the top-level imports
    that `compiled_call_in` reads are among them)."""
    statements = import_statements_alone(file, raw)
    return statements is None or any(
        any(names_bound_to([statement], file, module_name, function_name)) for statement in statements
    )


_IMPORTS: BoundedCache[tuple[Path, int], tuple[ast.stmt, ...] | None] = BoundedCache(MAX_IMPORT_LISTS)


def import_statements_alone(file: Path, raw: bytes) -> tuple[ast.stmt, ...] | None:
    """The statements that open a line of the file's text with `import` or `from ... import`, at any
    depth, each parsed alone; None when one does not parse so (a docstring's example, a line
    continued with a backslash), a line that opens with `from ... import` or `import` is written in
    another form, or an import follows another statement on its line; kept for the run by the file's
    modification time."""
    key = (file, file_stamp(file))
    if key not in _IMPORTS:
        _IMPORTS[key] = parsed_alone(raw.removeprefix(codecs.BOM_UTF8))
    return _IMPORTS[key]


def parsed_alone(text: bytes) -> tuple[ast.stmt, ...] | None:
    statements = list(IMPORT_LINE.finditer(text))
    starts = {statement.start() for statement in statements}
    if IMPORT_AFTER_A_STATEMENT.search(text) or any(
        line.start() not in starts for line in LOOSE_IMPORT_LINE.finditer(text)
    ):
        return None
    try:
        return tuple(node for statement in statements for node in ast.parse(statement[0].strip()).body)
    except (SyntaxError, ValueError):
        return None


def calls_function(call: ast.Call, local_names: set[str], modules: set[str]) -> bool:
    """`call` may run the function: by a name it is imported under (also as `obj.name(...)`: when in
    doubt, compiled), or through a name bound to its module (`m.f(...)`, `pkg.mod.f(...)`)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in local_names
    return isinstance(func, ast.Attribute) and (func.attr in local_names or ex.dotted_name(func.value) in modules)
