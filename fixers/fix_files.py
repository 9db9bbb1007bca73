"""One file through the fixer: the engine finds the uses and plans their fixes (one `ast.parse`);
only a file with an applicable fix is parsed by LibCST and rewritten; every rewrite goes through
the safety net (`fixers.fixing.carry_out`) before it is shown as a diff or written atomically.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence

from fixers.fixing import applicable_plans, carry_out
from fixers.guards import FixError
from fixers.patch import unified_diff
from lint_rules.checking import check_text, internal_error, parse_and_check
from lint_rules.engine import read_bytes
from lint_rules.files import ReadError, SourceFile, iter_python_files, read_source
from lint_rules.findings import Finding, FixPlan
from lint_rules.lines import split_lines
from lint_rules.parallel import ordered_map
from lint_rules.settings import Settings


class Mode(str, enum.Enum):
    WRITE = "write"
    DIFF = "diff"
    CHECK = "check"


@dataclasses.dataclass(frozen=True)
class FileOutcome:
    path: str
    findings: tuple[Finding, ...] = ()
    """What the engine reported before any change."""
    applied: frozenset[FixPlan] = frozenset()
    """The plans carried out (or, with --diff/--check, that would be)."""
    diff: bytes = b""
    """With --diff: the patch, in the file's own bytes."""
    error: str = ""
    origin_lines: tuple[tuple[int, str], ...] = ()
    fingerprints: Mapping[Finding, str] = dataclasses.field(default_factory=dict)
    listed: bool = True
    """False for a path that does not exist or could not be listed: not a scanned file."""

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    def is_fixed(self, finding: Finding) -> bool:
        return all(plan in self.applied for plan in finding.plans)


def fix_paths(paths: Sequence[str], settings: Settings, mode: Mode, jobs: int) -> Iterator[FileOutcome]:
    return ordered_map(fix_item, iter_python_files(paths, settings.exclude), jobs, settings, mode, lost=lost_file)


def lost_file(item: str | ReadError, reason: str) -> FileOutcome:
    """A file whose worker process died: an error of its own (an atomic write left it whole)."""
    return FileOutcome(item.path if isinstance(item, ReadError) else item, error=reason)


def fix_item(item: str | ReadError, settings: Settings, mode: Mode) -> FileOutcome:
    if isinstance(item, ReadError):
        return FileOutcome(item.path, error=item.reason, listed=False)
    source = read_source(item, settings.source_methods)
    if source is None:
        return FileOutcome(item)
    if isinstance(source, ReadError):
        return FileOutcome(item, error=source.reason)
    return fix_source(source, settings, mode)


def fix_source(source: SourceFile, settings: Settings, mode: Mode) -> FileOutcome:
    """A file `read_source` found and decoded (it mentions a source method)."""
    checked, tree = parse_and_check(source.path, source.text, settings)
    outcome = FileOutcome(
        source.path,
        checked.findings,
        error=checked.error,
        origin_lines=origin_lines(source, checked.findings),
        fingerprints=checked.fingerprints,
    )
    plans = applicable_plans(checked.findings, settings.unsafe_fixes)
    if checked.error or not plans:
        return outcome
    try:
        new_raw = source.encode(carry_out(source.text, plans, source.path, settings, tree))
    except Exception as error:  # a refused rewrite, or an internal error: this file's problem alone
        reason = str(error) if isinstance(error, FixError) else internal_error(error)
        return dataclasses.replace(outcome, error=f"{reason}; file left untouched")
    diff = unified_diff(source.path, source.raw, new_raw) if mode is Mode.DIFF else b""
    if mode is Mode.WRITE:
        try:
            atomic_write(source.path, new_raw, source.raw)
        except OSError as error:
            return dataclasses.replace(outcome, error=f"cannot write: {error.strerror or error}; file left untouched")
    return dataclasses.replace(outcome, applied=frozenset(plans), diff=diff)


def fix_text(path: str, text: str, settings: Settings) -> str:
    """`text` with every applicable fix carried out (unchanged if none); raises FixError."""
    checked = check_text(path, text, settings)
    if checked.error:
        raise FixError(checked.error)
    plans = applicable_plans(checked.findings, settings.unsafe_fixes)
    return carry_out(text, plans, path, settings) if plans else text


def origin_lines(source: SourceFile, findings: Sequence[Finding]) -> tuple[tuple[int, str], ...]:
    if not findings:
        return ()
    lines = split_lines(source.text)
    wanted = sorted({finding.origin.line for finding in findings})
    return tuple((line, lines[line - 1]) for line in wanted if 0 < line <= len(lines))


def atomic_write(path: str, data: bytes, expected: bytes) -> None:
    """Replace the file's content in one rename, keeping its permission bits, if it still holds
    `expected` (what was read and fixed: an edit saved meanwhile is not overwritten). Refuses read-only
    files and files with other hard links (a rename would leave those names holding the old text)."""
    target = os.path.realpath(path)
    info = os.stat(target)
    mode = stat.S_IMODE(info.st_mode)
    if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        raise PermissionError(1, "read-only file")
    if info.st_nlink > 1:
        raise OSError(0, "the file has other hard links, which a rewrite would leave with the old text")
    folder, name = os.path.split(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".seqlen-guard.tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        if read_bytes(target) != expected:
            raise OSError(0, "the file changed on disk while it was being fixed")
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
