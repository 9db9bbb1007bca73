"""Finding the files to check and reading them, shared by the checker and the fixer.

Nothing here raises for a bad path or a bad file: each problem comes back as a
`ReadError` with a one-line reason, so a run can report it and go on (exit 2).
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import os
import stat
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from lint_rules.engine import mentions_any, read_bytes
from lint_rules.lines import line_of_offset

PYTHON_SUFFIXES = (".py", ".pyi")

SKIPPED_WHILE_WALKING: tuple[str, ...] = (
    ".*",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "*.egg",
)
"""Folder names never entered while walking a folder (ruff's defaults plus hidden folders).

They only apply below a folder given on the command line: a path given explicitly is
always taken, so `seqlen-guard .venv/lib/.../transformers` still works.
"""


class ReadError(NamedTuple):
    """A path that could not be listed or read, with a one-line reason."""

    path: str
    reason: str

    def text(self) -> str:
        return f"{self.path}: {self.reason}"


PathOrError = str | ReadError
FileId = tuple[int, int]
"""(st_dev, st_ino): what a file or folder is, whatever path leads to it."""


class SourceFile(NamedTuple):
    path: str
    raw: bytes
    text: str
    """The decoded source, without a BOM, newlines as in the file."""
    encoding: str
    """As `tokenize.detect_encoding` names it: "utf-8-sig" when the file has a BOM."""

    @property
    def has_bom(self) -> bool:
        return self.encoding == "utf-8-sig"

    def encode(self, text: str) -> bytes:
        """Bytes for a rewritten `text` in this file's encoding, BOM included."""
        return text.encode(self.encoding)


def path_matches(path: str, glob: str) -> bool:
    """Whether `path` matches an exclude glob, the way flake8's `--exclude` does.

    The glob is tried on the path as given, its posix form, its absolute form and each
    trailing run of its components, so `build/*`, `*_pb2.py` and `tests/fixtures/*`
    match wherever the folder sits.
    """
    glob = glob.replace(os.sep, "/").rstrip("/") or "/"
    return any(fnmatch.fnmatchcase(candidate, glob) for candidate in _match_candidates(path))


def _match_candidates(path: str) -> Iterator[str]:
    posix = path.replace(os.sep, "/")
    yield path
    yield posix
    yield os.path.abspath(path).replace(os.sep, "/")
    parts = [part for part in os.path.normpath(posix).replace(os.sep, "/").split("/") if part]
    for start in range(len(parts)):
        yield "/".join(parts[start:])


def is_excluded(path: str, exclude: Sequence[str]) -> bool:
    """Whether `path` or a folder it lies in matches one of the globs: `build` excludes build/lib/x.py."""
    return any(path_matches(candidate, glob) for candidate in _self_and_parents(path) for glob in exclude)


def _self_and_parents(path: str) -> Iterator[str]:
    current = os.path.normpath(path)
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent in ("", current):
            return
        current = parent


def iter_python_files(paths: Sequence[str], exclude: Sequence[str]) -> Iterator[PathOrError]:
    """The files to check under `paths`, sorted, each once, or why a path could not be used.

    Folders are walked for `*.py` and `*.pyi`; a file given explicitly is taken whatever
    its suffix. `exclude` applies to everything, explicitly given files included (a
    pre-commit hook passes files one by one and must still honour the configuration).
    """
    found: dict[str, PathOrError] = {}
    seen_files: set[FileId] = set()
    for given in paths:
        for item in _expand(os.path.normpath(given), exclude):
            if isinstance(item, ReadError):
                found.setdefault(item.path, item)
                continue
            path, identity = item
            if identity in seen_files:
                continue  # a file already taken under another name (a symlink or a repeated path)
            seen_files.add(identity)
            found.setdefault(path, path)
    for key in sorted(found):
        yield found[key]


Found = tuple[str, FileId] | ReadError
"""A file to check with its identity (device, inode: from the `stat` that found it), or a path's error."""


def _expand(path: str, exclude: Sequence[str]) -> Iterator[Found]:
    if is_excluded(path, exclude):
        return
    try:
        info = os.stat(path)
    except OSError as error:
        yield ReadError(path, _stat_failure(path, error))
        return
    if stat.S_ISDIR(info.st_mode):
        yield from _walk(path, exclude, ancestors=((info.st_dev, info.st_ino),))
    else:
        yield path, (info.st_dev, info.st_ino)


def _walk(folder: str, exclude: Sequence[str], ancestors: tuple[FileId, ...]) -> Iterator[Found]:
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries)
    except OSError as error:
        yield ReadError(folder, f"cannot list folder: {_describe(error)}")
        return
    for name in names:
        path = name if folder == os.curdir else os.path.join(folder, name)
        if not any(path_matches(path, glob) for glob in exclude):  # the folders above were checked
            yield from _walk_entry(path, name, exclude, ancestors)


def _walk_entry(path: str, name: str, exclude: Sequence[str], ancestors: tuple[FileId, ...]) -> Iterator[Found]:
    try:
        info = os.stat(path)
    except OSError as error:
        if name.endswith(PYTHON_SUFFIXES) or error.errno == errno.ELOOP:
            yield ReadError(path, _stat_failure(path, error))
        return
    if stat.S_ISDIR(info.st_mode):
        if any(fnmatch.fnmatchcase(name, glob) for glob in SKIPPED_WHILE_WALKING):
            return
        identity = (info.st_dev, info.st_ino)
        if identity in ancestors:
            yield ReadError(path, f"symlink loop: points back to {os.path.realpath(path)}, not followed")
            return
        yield from _walk(path, exclude, (*ancestors, identity))
    elif stat.S_ISREG(info.st_mode) and name.endswith(PYTHON_SUFFIXES):
        yield path, (info.st_dev, info.st_ino)


def _stat_failure(path: str, error: OSError) -> str:
    if os.path.islink(path):
        if error.errno == errno.ELOOP:
            return "symlink loop: the link resolves to itself"
        return f"broken symlink to {os.readlink(path)!r}"
    return _describe(error)


def _describe(error: OSError) -> str:
    """`[Errno 2] No such file or directory: 'x'` -> `no such file or directory`."""
    reason = error.strerror or str(error)
    return reason[:1].lower() + reason[1:]


def read_source(path: str, prefilter: Sequence[str] = ()) -> SourceFile | ReadError | None:
    """The file's bytes and text, decoded as Python would (coding cookie, BOM); None, without
    decoding, when `prefilter` names methods none of which the bytes mention."""
    try:
        info = os.stat(path)
        mode, size = info.st_mode, info.st_size
    except OSError:
        mode, size = stat.S_IFREG, -1  # `read_bytes` below says what is wrong
    if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        return ReadError(path, "not a regular file (a FIFO, socket or device), not read")
    try:
        raw = read_bytes(path, size)
    except IsADirectoryError:
        return ReadError(path, "is a folder, not a file")
    except OSError as error:
        return ReadError(path, f"cannot read: {_describe(error)}")
    if b"\0" in raw:
        return ReadError(path, "binary file (contains NUL bytes), not Python source")
    if prefilter and not may_contain_source(raw, prefilter):
        return None
    return _decode(path, raw)


def _decode(path: str, raw: bytes) -> SourceFile | ReadError:
    head = first_two_lines(raw)
    if any(b"coding" in line for line in head):
        found = _declared_encoding(path, head)
        if isinstance(found, ReadError):
            return found
        encoding = found
    else:  # no declaration: what `tokenize.detect_encoding` says, without importing it
        encoding = "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        start = error.start + len(raw) - len(error.object)  # "utf-8-sig" counts after the BOM
        line = line_of_offset(raw, start)
        name = _encoding_name(encoding)
        return ReadError(path, f"cannot decode as {name}: invalid byte 0x{raw[start]:02x} on line {line}")
    return SourceFile(path=path, raw=raw, text=text, encoding=encoding)


def _declared_encoding(path: str, head: list[bytes]) -> str | ReadError:
    import tokenize  # only for a file with a coding declaration: start-up time

    lines = iter(head)
    try:
        return tokenize.detect_encoding(lambda: next(lines, b""))[0]
    except SyntaxError as error:
        if not error.msg.startswith("invalid or missing encoding declaration"):
            return ReadError(path, f"bad encoding declaration: {error.msg}")
        return "utf-8"  # no declaration and not UTF-8: decoding says where it fails


def first_two_lines(raw: bytes) -> list[bytes]:
    """`raw.splitlines(keepends=True)[:2]` (all a coding declaration can be on), without splitting the rest."""
    first = raw.find(b"\n")
    second = raw.find(b"\n", first + 1) if first != -1 else -1
    head = raw[: second + 1] if second != -1 else raw
    return head.splitlines(keepends=True)[:2]


def _encoding_name(encoding: str) -> str:
    return "utf-8" if encoding == "utf-8-sig" else codecs.lookup(encoding).name


def may_contain_source(raw: bytes, source_methods: Sequence[str]) -> bool:
    """Cheap prefilter: False when no source method's name occurs in the bytes at all."""
    return mentions_any(raw, source_methods)
