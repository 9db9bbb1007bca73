"""The files of a module's package on disk: which module a file is, where a module's file is, and
reading it (its bytes, its tree: each parsed once while it stays among the most recently used,
`parsed_module`), with each file's modification time read once per module analyzed or per run
(`Stamps`), so that a file the fixer rewrote is read again."""

from __future__ import annotations

import ast
import codecs
import contextlib
import functools
import os
import stat
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import TypeVar, cast

from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.lines import lf_bytes

T = TypeVar("T")


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
        for candidate in (folder / relative / "__init__.py", folder / relative.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


@functools.lru_cache(maxsize=32)
def file_bytes(file: Path, stamp: int) -> bytes:
    """The file's bytes for the text searches of other modules, its line breaks written as `\n`
    (`lf_bytes`: the searches look for a line start after `\n`) and without a UTF-8 byte order mark
    (the first line starts the file), kept for the few files asked about in turn (`stamp`: see
    `module_files.file_stamp`)."""
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
        self.answers: dict[Hashable, object] = {}
        """What a search across a package's files found (`remembered`), kept as long as the stamps."""
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

    def remembered(self, key: Hashable, search: Callable[[], T]) -> T:
        """`search()`, run once per module analyzed, or once per run when kept (`key`: what it searched
        for, and where)."""
        if key not in self.answers:
            self.answers[key] = search()
        return cast(T, self.answers[key])

    def forget(self) -> None:
        """Before a module's analysis: a file may have changed since the last one (the fixer rewrites
        files during a run; an editor's process lints again after an edit), unless they are kept."""
        if not self.kept:
            self.read.clear()
            self.listings.clear()
            self.answers.clear()

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
            self.answers.clear()


STAMPS = Stamps()
file_stamp = STAMPS.of
forget_stamps = STAMPS.forget
