"""Where a module's imported names come from, and the other modules of its package, read from disk.

Only classes are followed across modules (for what their `get_seq_length()` returns), only within
the package the file belongs to (found by walking up the folders that hold an `__init__.py`), and
each module file is parsed once while it stays among the most recently used (`parsed_module`, bounded).
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.caches import TRANSFORMERS_MODULES
from lint_rules.engine.facts.definitions import statements_within
from lint_rules.engine.facts.module_text import import_statements
from lint_rules.lines import lf_bytes


def module_name_of(path: str) -> tuple[str, Path | None]:
    """The dotted module name of the file at `path` and the folder its top package sits in
    (("", None) for a path that is not a file on disk, such as flake8's stdin); found once per process."""
    return absolute_module_name_of(os.path.abspath(path)) if path else ("", None)


@functools.lru_cache(maxsize=4096)
def absolute_module_name_of(path: str) -> tuple[str, Path | None]:
    file = resolved_file(path)
    if file is None:
        return "", None
    package, root = package_of(file.parent)
    name = ".".join(part for part in (package, file.stem if file.stem != "__init__" else "") if part)
    return name, root


def resolved_file(path: str) -> Path | None:
    """`Path(path).resolve()` for a file on disk (None for anything else), with the folder's part
    resolved once for all its files."""
    try:
        mode = os.lstat(path).st_mode
        is_link = stat.S_ISLNK(mode)
        if is_link:
            mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(mode):
        return None
    folder = os.path.dirname(path)
    absolute = folder if os.path.isabs(folder) else os.path.join(os.getcwd(), folder) if folder else os.getcwd()
    file = resolved_folder(absolute) / os.path.basename(path)
    return file.resolve() if is_link else file


@functools.lru_cache(maxsize=1024)
def resolved_folder(folder: str) -> Path:
    return Path(folder).resolve()


@functools.lru_cache(maxsize=1024)
def package_of(folder: Path) -> tuple[str, Path]:
    """The dotted package a folder is (by its `__init__.py` files up the tree) and where its top sits."""
    parts: list[str] = []
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), one_object(folder)


@functools.lru_cache(maxsize=64)
def one_object(root: Path) -> Path:
    """The same `Path` object for every folder of a package: a cache hit on an identical key skips
    `Path.__eq__`, and the import scans look up their caches by the root thousands of times per run."""
    return root


def imported_names(tree: ast.Module, module_name: str, is_package: bool) -> dict[str, tuple[str, str]]:
    """Local name -> (absolute module, name in that module) for every `from m import x [as y]`."""
    found: dict[str, tuple[str, str]] = {}
    for statement in import_statements(tree.body):
        if not isinstance(statement, ast.ImportFrom):
            continue
        source = absolute_module(statement, module_name, is_package)
        if not source:
            continue
        for alias in statement.names:
            if alias.name != "*":
                found[alias.asname or alias.name] = (source, alias.name)
    return found


Binding = tuple[str, str] | ast.ClassDef | None
"""What a module-level name may hold once the module has run: an import's (module, name), a class the
module defines, or None for anything else (a `def`, an assignment)."""
Held = dict[str, tuple[Binding, ...]]
PLACEHOLDERS = frozenset({"None", "object", "Any", "typing.Any"})
"""What a fallback binds where an import failed (`except ImportError: KV = object`): no class."""


def final_bindings(tree: ast.Module, module_name: str, is_package: bool, may_declare_globals: bool = True) -> Held:
    """Each name the module's top level binds by an import, a class or a `def`, with every binding
    that may hold once the module has run: the arms of an `if` or a `match`, the handlers of a `try`
    (`try: from transformers import StaticCache as KV` / `except ImportError: from .own import
    IntCache as KV`), and any part of a `try`, `with` or loop body having run. A later binding in the
    same block replaces an earlier one; a placeholder (`= None`, `= object`, `= Any`, a string) binds
    no class; an alias of a class (`KV = StaticCache`, `KV = cu.StaticCache`) holds what that name
    holds there; both arms of `if TYPE_CHECKING:` count (annotations name one, the code runs the other);
    a name a function declares `global` may hold anything that function binds (None: not followed),
    looked for unless the caller knows the module has no `global` statement (`may_declare_globals`);
    after a star import (`from .other import *`) every name may hold what that module binds (None)."""
    names = NameCount()
    names.count(tree.body, plainly_read=True)
    tracked = frozenset([*names.defined, *names.aliases])
    rebound = tracked & declared_global(tree) if may_declare_globals else set()
    if names.each_bound_once_where_plainly_read() and not rebound:
        return {}
    after = bindings_after(tree.body, {}, Scan(module_name, is_package, tracked))
    for name in rebound:
        after[name] = tuple(dict.fromkeys([*after.get(name, ()), None]))
    return {name: held for name, held in after.items() if held}


def declared_global(tree: ast.Module) -> set[str]:
    """The names some function's `global` statement lets it rebind."""
    statements = statements_within(tree.body, into_definitions=True)
    return {name for statement in statements if isinstance(statement, ast.Global) for name in statement.names}


class NameCount:
    """One cheap pass over a module's top level: how often each name is bound by an import, a class or a
    `def`, and which names anything else binds (most modules bind each imported name once, where the
    plain lookup reads it: then `imports` and `classes` say what every name holds)."""

    def __init__(self) -> None:
        self.defined: dict[str, int] = {}
        self.otherwise_bound: set[str] = set()
        self.defined_out_of_plain_reach = False
        self.aliases: set[str] = set()
        """Names bound to a class's name (`KV = StaticCache`)."""
        self.star_imported = False

    def count(self, body: list[ast.stmt], plainly_read: bool) -> None:
        for statement in body:
            if isinstance(statement, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.star_imported |= is_star_import(statement)
                for name in defined(statement):
                    self.defined[name] = self.defined.get(name, 0) + 1
                    self.defined_out_of_plain_reach |= not plainly_read
            else:
                self.otherwise_bound.update(stored_names(statement))
                self.aliases.update(class_alias_targets(statement))
                inside = plainly_read and isinstance(statement, (ast.If, ast.Try, ast.TryStar))
                for block in blocks_of(statement):
                    self.count(block, inside)

    def each_bound_once_where_plainly_read(self) -> bool:
        return (
            not self.defined_out_of_plain_reach
            and not self.aliases
            and not self.star_imported
            and all(times == 1 for times in self.defined.values())
            and not any(name in self.defined for name in self.otherwise_bound)
        )


class Scan(NamedTuple):
    module_name: str
    is_package: bool
    tracked: frozenset[str]
    """The names bound somewhere by an import, a class or a `def`: only those may name a class."""


def defined_functions(tree: ast.Module) -> frozenset[str]:
    """The names the module's top level binds by a `def` (in any arm)."""
    functions = (statement for statement in block_statements(tree.body) if isinstance(statement, FUNCTIONS))
    return frozenset(statement.name for statement in functions)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_named(origin: tuple[str, str]) -> str:
    """The module `from a import b` (or `import a.b as m`) binds, where `b` is a module: `a.b`."""
    return f"{origin[0]}.{origin[1]}"


def imports_among(bindings: Iterable[Binding]) -> list[tuple[str, str]]:
    """The (module, name) of each import among a name's bindings."""
    return [binding for binding in bindings if isinstance(binding, tuple)]


def block_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body and of the blocks of its compound statements, not of `def`s or classes."""
    for statement in body:
        yield statement
        for block in blocks_of(statement):
            yield from block_statements(block)


def blocks_of(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [statement.body, statement.orelse]
    if isinstance(statement, (ast.Try, ast.TryStar)):
        return [
            statement.body,
            *(handler.body for handler in statement.handlers),
            statement.orelse,
            statement.finalbody,
        ]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [statement.body]
    if isinstance(statement, ast.Match):
        return [case.body for case in statement.cases]
    return []


def defined(statement: ast.stmt) -> Iterator[str]:
    """The names an import, a class or a `def` binds."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        yield from (alias.asname or alias.name.partition(".")[0] for alias in statement.names if alias.name != "*")
    elif isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        yield statement.name


def bindings_after(body: list[ast.stmt], before: Held, scan: Scan) -> Held:
    held = dict(before)
    for statement in body:
        if isinstance(statement, ast.If):
            held = joined([bindings_after(statement.body, held, scan), bindings_after(statement.orelse, held, scan)])
        elif isinstance(statement, ast.Match):
            held = joined([held, *(bindings_after(case.body, held, scan) for case in statement.cases)])
        elif isinstance(statement, (ast.Try, ast.TryStar)):
            held = bindings_after_try(statement, held, scan)
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            held = bindings_after_block(statement, held, scan)
        else:
            for name, bindings in statement_bindings(statement, scan, held):
                may_keep = rewraps(statement, name) or is_star_import(statement)
                held[name] = (*held.get(name, ()), *bindings) if may_keep else bindings
    return held


def is_star_import(statement: ast.stmt) -> bool:
    """`from m import *`: it may bind any name, or none (`m`'s own, or those of its `__all__`)."""
    return isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names)


def rewraps(statement: ast.stmt, name: str) -> bool:
    """`f = torch.compile(f)`, `KV = wrap(KV)`: what the name held may still be what it holds."""
    value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
    return value is not None and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(value))


def bindings_after_try(statement: ast.Try | ast.TryStar, before: Held, scan: Scan) -> Held:
    """A handler runs after any part of the body, nested blocks included, may have run."""
    after_body = bindings_after(statement.body, before, scan)
    interrupted = joined([before, bound_anywhere(statement.body, scan, before)])
    ends = [bindings_after(statement.orelse, after_body, scan)]
    ends += [bindings_after(handler.body, interrupted, scan) for handler in statement.handlers]
    return bindings_after(statement.finalbody, joined(ends), scan)


def bindings_after_block(
    statement: ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith, before: Held, scan: Scan
) -> Held:
    """A loop's body runs any number of times and a `with` body may be cut short
    (`suppress(ImportError)`): any of their bindings may hold after them."""
    held = dict(before)
    held.update(statement_bindings(statement, scan, before))
    after = joined([held, bound_anywhere(statement.body, scan, before)])
    orelse = statement.orelse if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)) else []
    return bindings_after(orelse, after, scan)


def bound_anywhere(body: list[ast.stmt], scan: Scan, before: Held) -> Held:
    """What any statement of the body (or of its blocks) binds, in any order and any number of times
    (a loop, a body cut short): an alias reads what its class's name held before the body or is bound
    to anywhere in it, round after round until a round adds no binding (each keeps the last's, so
    the rounds end)."""
    statements = list(block_statements(body))
    anywhere: Held = {}
    while True:
        context = joined([before, anywhere])
        found = joined([anywhere, *(dict(statement_bindings(statement, scan, context)) for statement in statements)])
        if binding_count(found) == binding_count(anywhere):
            return found
        anywhere = found


def binding_count(held: Held) -> int:
    return sum(len(set(bindings)) for bindings in held.values())


def joined(arms: list[Held]) -> Held:
    held: Held = {}
    for arm in arms:
        for name, bindings in arm.items():
            known = held.get(name)
            held[name] = bindings if known is None or known is bindings else tuple(dict.fromkeys([*known, *bindings]))
    return held


def statement_bindings(statement: ast.stmt, scan: Scan, held: Held) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    """The tracked names one statement binds itself (not in its blocks), each to what it then holds
    (`held`: what each name holds before it)."""
    aliased = dict(class_aliases(statement, scan, held))
    for name, bindings in own_bindings(statement, scan):
        if name in scan.tracked:
            yield name, aliased.get(name, bindings)


def class_alias_targets(statement: ast.stmt) -> Iterator[str]:
    """`KV = StaticCache`, `KV = cu.StaticCache`: the names bound to a class's name (CapWords)."""
    if (
        isinstance(statement, ast.Assign)
        and ex.dotted_name(statement.value).rpartition(".")[2][:1].isupper()
        and not is_placeholder(statement.value)
    ):
        yield from (target.id for target in statement.targets if isinstance(target, ast.Name))


def class_aliases(statement: ast.stmt, scan: Scan, held: Held) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    """Each alias the statement makes, with what the aliased name holds: an import or a class of the
    module held by the name (`KV = StaticCache`), a class of a module a held import names (`KV =
    cu.StaticCache`), or of transformers written out (`KV = transformers.StaticCache`); None for any
    other name."""
    for target in class_alias_targets(statement):
        assert isinstance(statement, ast.Assign)
        yield target, aliased_bindings(ex.dotted_name(statement.value), scan, held)


def aliased_bindings(value: str, scan: Scan, held: Held) -> tuple[Binding, ...]:
    prefix, _, last = value.rpartition(".")
    if not prefix:
        return held.get(value, (None,)) if value in scan.tracked else (None,)
    if prefix in TRANSFORMERS_MODULES:
        return ((prefix, last),)
    modules = held.get(prefix, (None,)) if prefix in scan.tracked else (None,)
    return tuple((module_named(binding), last) if isinstance(binding, tuple) else None for binding in modules)


def own_bindings(statement: ast.stmt, scan: Scan) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    if is_star_import(statement):
        yield from ((name, (None,)) for name in scan.tracked)
    elif isinstance(statement, ast.ImportFrom):
        source = absolute_module(statement, scan.module_name, scan.is_package)
        for alias in statement.names:
            if alias.name != "*":
                yield alias.asname or alias.name, ((source, alias.name) if source else None,)
    elif isinstance(statement, ast.Import):
        for alias in statement.names:
            parent, _, last = alias.name.rpartition(".")
            yield alias.asname or alias.name.partition(".")[0], ((parent, last) if alias.asname and parent else None,)
    elif isinstance(statement, ast.ClassDef):
        yield statement.name, (statement,)
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield statement.name, (None,)
    elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and is_placeholder(statement.value):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        yield from ((target.id, ()) for target in targets if isinstance(target, ast.Name))
    else:
        yield from ((name, (None,)) for name in stored_names(statement))


def is_placeholder(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None or isinstance(value.value, str)
    return value is not None and ex.dotted_name(value) in PLACEHOLDERS


def stored_names(statement: ast.stmt) -> Iterator[str]:
    """The names a statement's own targets bind (`a, b = ...`, `x += 1`, `for k in ...`, `with ...
    as m`, a walrus), not those its blocks bind; an annotation without a value binds nothing."""
    headers: list[ast.AST]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        headers = [statement.target, statement.iter]
    elif isinstance(statement, ast.While):
        headers = [statement.test]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        headers = list(statement.items)
    elif isinstance(statement, ast.Assign):
        headers = list(statement.targets)
    elif isinstance(statement, ast.AugAssign) or (isinstance(statement, ast.AnnAssign) and statement.value):
        headers = [statement.target]
    elif isinstance(statement, ast.Expr):
        headers = [statement.value]
    else:
        headers = []
    for header in headers:
        for node in ast.walk(header):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield node.id


def bound_modules(tree: ast.Module, module_name: str, is_package: bool) -> dict[str, str]:
    """Dotted local name -> the absolute module it may name, for calls `local.f(...)`: `import a.b as m`
    (m -> a.b), `import a.b` (a -> a, a.b -> a.b) and `from a import b` (b -> a.b, which names a
    module only when such a module exists: callers look it up)."""
    found: dict[str, str] = {}
    for statement in import_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                parts = alias.name.split(".")
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    found.update((".".join(parts[:end]), ".".join(parts[:end])) for end in range(1, len(parts) + 1))
    for local, (source, name) in imported_names(tree, module_name, is_package).items():
        found[local] = f"{source}.{name}"
    return found


def absolute_module(statement: ast.ImportFrom, module_name: str, is_package: bool) -> str:
    if statement.level == 0:
        return statement.module or ""
    package = module_name.split(".") if module_name else []
    if not is_package:
        package = package[:-1]
    if statement.level - 1 > len(package):
        return ""
    base = package[: len(package) - (statement.level - 1)]
    return ".".join([*base, *([statement.module] if statement.module else [])])


@functools.lru_cache(maxsize=4096)
def module_file(module: str, root: Path | None) -> Path | None:
    """The file of a module of the same top package under `root`, if it is on disk; a module of a
    namespace package (no `__init__.py`: `fla.models.cache_utils` imported from `fla/layers/attn.py`,
    whose root is then `fla/`) is also looked for beside the folder that has the package's name."""
    if root is None or not module:
        return None
    relative = Path(*module.split("."))
    folders = [root.parent, root] if root.name == relative.parts[0] else [root]
    for folder in folders:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


RE_EXPORT_HOPS = 3


def re_export_source(origin: tuple[str, str], root: Path | None, hops: int) -> tuple[str, str]:
    """Where a name imported from a package's `__init__.py` really comes from (its own imports only)."""
    file = module_file(origin[0], root)
    if hops <= 0 or file is None or file.name != "__init__.py":
        return origin
    re_exported = package_imports(file, file_stamp(file), origin[0]).get(origin[1])
    return re_export_source(re_exported, root, hops - 1) if re_exported else origin


@functools.lru_cache(maxsize=256)
def package_imports(file: Path, stamp: int, package: str) -> dict[str, tuple[str, str]]:
    """What a package's `__init__.py` imports, by local name (`stamp`: see `imports.file_stamp`)."""
    tree = parsed_module(file)
    return imported_names(tree, package, is_package=True) if tree else {}


@functools.lru_cache(maxsize=32)
def file_bytes(file: Path, stamp: int) -> bytes:
    """The file's bytes for the text searches of other modules, its line breaks written as `\n`
    (`lf_bytes`: the searches look for a line start after `\n`) and without a UTF-8 byte order mark
    (the first line starts the file), kept for the few files asked about in turn (`stamp`: see
    `imports.file_stamp`)."""
    try:
        return lf_bytes(read_bytes(file)).removeprefix(codecs.BOM_UTF8)
    except OSError:
        return b""


def read_bytes(path: str | Path, size: int = -1) -> bytes:
    """The file's bytes in three system calls (open, read, close) when `size` (what `os.stat` said) is
    still right, four without it (an `fstat` for it): `open(path, "rb").read()` adds two `fstat`s, two
    `lseek`s, an `ioctl` and a read that finds the end, and the thousands of files of a tree (and of a
    package searched for callers) pay them. A file that grew is read to its end."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        if size < 0:
            size = os.fstat(descriptor).st_size
        first = os.read(descriptor, max(size + 1, MIN_READ))
        if len(first) == size:
            return first
        chunks = [first]
        while chunks[-1]:
            chunks.append(os.read(descriptor, MIN_READ))
        return b"".join(chunks)
    finally:
        os.close(descriptor)


MIN_READ = 1 << 16


MAX_PARSED_MODULES = 128
_PARSED: BoundedCache[tuple[Path, int], ast.Module | None] = BoundedCache(MAX_PARSED_MODULES)


def parsed_module(file: Path) -> ast.Module | None:
    """The module's tree, parsed once while it stays among the modules used last and is not rewritten
    (keyed by its modification time: the fixer rewrites files during a run); None if it cannot be
    read or parsed."""
    key = (file, file_stamp(file))
    if key not in _PARSED:
        try:
            _PARSED[key] = ast.parse(read_bytes(file), filename=str(file))
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            _PARSED[key] = None
    return _PARSED[key]


class Stamps:
    """Each file's modification time in nanoseconds (-1 when it cannot be read): part of every key
    under which something read from another module's file is kept. Read once per module analyzed
    (`forget`): one analysis asks about the same few files dozens of times; or once per run, for a
    run that writes no source file (`kept_for_the_run`): a whole-tree check asked the same files
    some 7,500 times, a `stat` each."""

    def __init__(self) -> None:
        self.read: dict[Path, int] = {}
        self.listings: dict[tuple[Callable[[Path], tuple[Path, ...]], Path], tuple[Path, ...]] = {}
        """The files each listing function found for a folder (`listing`), kept as long as the stamps."""
        self.kept = False

    def of(self, file: Path) -> int:
        stamp = self.read.get(file)
        if stamp is None:
            try:
                stamp = os.stat(file).st_mtime_ns
            except OSError:
                stamp = -1
            self.read[file] = stamp
        return stamp

    def listing(self, folder: Path, list_files: Callable[[Path], tuple[Path, ...]]) -> tuple[Path, ...]:
        """`list_files(folder)`, listed once per module analyzed, or once per run when kept: a
        whole-tree check scanned the same package's folders three times."""
        key = (list_files, folder)
        found = self.listings.get(key)
        if found is None:
            found = self.listings[key] = list_files(folder)
        return found

    def forget(self) -> None:
        """Before a module's analysis: a file may have changed since the last one (the fixer rewrites
        files during a run; an editor's process lints again after an edit), unless they are kept."""
        if not self.kept:
            self.read.clear()
            self.listings.clear()

    @contextlib.contextmanager
    def kept_for_the_run(self) -> Iterator[None]:
        """For a run that writes no source file (the checker, not the fixer nor `--add-noqa`): a file
        edited by someone else while it runs is read as the run first found it."""
        before, self.kept = self.kept, True
        try:
            yield
        finally:
            self.kept = before
            self.read.clear()
            self.listings.clear()


STAMPS = Stamps()
file_stamp = STAMPS.of
forget_stamps = STAMPS.forget
