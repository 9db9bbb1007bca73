"""The fixer: `python -m fixers.rewrite PATH...` (console script `seqlen-guard-fix`).

For each file: the engine finds the uses and plans their fixes (one `ast.parse`); only a file
with an applicable fix is parsed by LibCST and rewritten; every rewrite is checked
(`fixers.verify`) and re-analyzed before it is written atomically.

Exit status: 0 nothing left to fix; 1 findings remain, or with --check/--diff changes are pending;
2 a usage error, or a file could not be read, parsed, verified or written.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence

from fixers.codemod import FixError, applicable_plans, carry_out
from lint_rules.checking import check_text, parse_and_check
from lint_rules.config import ConfigError, add_common_arguments, settings_from_args
from lint_rules.files import ReadError, SourceFile, iter_python_files, may_contain_source, read_source, split_lines
from lint_rules.findings import Finding, FixPlan, FixSafety
from lint_rules.formats import render
from lint_rules.parallel import ordered_map, run_interruptible
from lint_rules.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
WRITE, DIFF, CHECK = "write", "diff", "check"


@dataclasses.dataclass(frozen=True)
class FileOutcome:
    path: str
    findings: tuple[Finding, ...] = ()
    """What the engine reported before any change."""
    applied: frozenset[FixPlan] = frozenset()
    """The plans carried out (or, with --diff/--check, that would be)."""
    diff: str = ""
    error: str = ""
    origin_lines: tuple[tuple[int, str], ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    def is_fixed(self, finding: Finding) -> bool:
        return finding.fix in self.applied

    @property
    def left(self) -> list[Finding]:
        return [finding for finding in self.findings if not self.is_fixed(finding)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seqlen-guard-fix",
        description="Insert int guards after tensor-valued get_seq_length() bindings.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files and folders to fix")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff and write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    add_common_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_interruptible(
        run, argv, "seqlen-guard-fix: interrupted; every file is either as it was or fully rewritten"
    )


def run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except ConfigError as error:
        print(f"seqlen-guard-fix: {error}", file=sys.stderr)
        return EXIT_ERROR
    mode = DIFF if args.diff else CHECK if args.check else WRITE
    report = Report(mode)
    for outcome in fix_paths(args.paths, settings, mode, args.jobs):
        report.add(outcome)
        if mode == DIFF and outcome.diff:
            sys.stdout.write(outcome.diff)
        elif args.format == "text":
            sys.stdout.write(report.text_lines(outcome))
        if outcome.error:
            print(f"{outcome.path}: {outcome.error}", file=sys.stderr)
    if args.format != "text":
        sys.stdout.write(report.render(args.format))
    print(report.summary(), file=sys.stderr)
    return report.exit_code(args.exit_zero)


def fix_paths(paths: Sequence[str], settings: Settings, mode: str, jobs: int) -> Iterator[FileOutcome]:
    return ordered_map(fix_item, iter_python_files(paths, settings.exclude), jobs, settings, mode)


def fix_item(item: str | ReadError, settings: Settings, mode: str) -> FileOutcome:
    if isinstance(item, ReadError):
        return FileOutcome(item.path, error=item.reason)
    source = read_source(item)
    if isinstance(source, ReadError):
        return FileOutcome(item, error=source.reason)
    return fix_source(source, settings, mode)


def fix_source(source: SourceFile, settings: Settings, mode: str) -> FileOutcome:
    if not may_contain_source(source.raw, settings.source_methods):
        return FileOutcome(source.path)
    checked, tree = parse_and_check(source.path, source.text, settings)
    outcome = FileOutcome(
        source.path, checked.findings, error=checked.error, origin_lines=origin_lines(source, checked.findings)
    )
    plans = applicable_plans(checked.findings, settings.unsafe_fixes)
    if checked.error or not plans:
        return outcome
    try:
        new_text = carry_out(source.text, plans, source.path, settings, tree)
    except FixError as error:
        return dataclasses.replace(outcome, error=f"{error}; file left untouched")
    diff = unified_diff(source, new_text) if mode == DIFF else ""
    if mode == WRITE:
        try:
            atomic_write(source.path, source.encode(new_text))
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


def origin_lines(source: SourceFile, findings: Iterable[Finding]) -> tuple[tuple[int, str], ...]:
    lines = split_lines(source.text)
    wanted = sorted({finding.origin.line for finding in findings})
    return tuple((line, lines[line - 1]) for line in wanted if 0 < line <= len(lines))


def unified_diff(source: SourceFile, new_text: str) -> str:
    name = source.path.replace(os.sep, "/").lstrip("/")
    bom = "\ufeff" if source.has_bom else ""  # the patch must apply to the bytes on disk
    old_lines = split_lines(bom + source.text, keepends=True)
    new_lines = split_lines(bom + new_text, keepends=True)
    lines = difflib.unified_diff(old_lines, new_lines, f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith(("\n", "\r")) else f"{line}\n\\ No newline at end of file\n" for line in lines)


def atomic_write(path: str, data: bytes) -> None:
    """Replace the file's content in one rename, keeping its permission bits; refuses read-only files."""
    target = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        raise PermissionError(1, "read-only file")
    folder, name = os.path.split(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".seqlen-guard.tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class Report:
    """Counts and prints what the run did."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.files = 0
        self.outcomes_with_findings: list[FileOutcome] = []
        self.findings = self.fixed = self.unsafe = self.unfixable = self.errors = self.changed_files = 0

    def add(self, outcome: FileOutcome) -> None:
        self.files += 1
        self.errors += bool(outcome.error)
        self.changed_files += outcome.changed
        self.findings += len(outcome.findings)
        for finding in outcome.findings:
            if outcome.is_fixed(finding):
                self.fixed += 1
            elif finding.fix.safety is FixSafety.UNSAFE:
                self.unsafe += 1
            else:
                self.unfixable += 1
        if outcome.findings:
            self.outcomes_with_findings.append(outcome)

    def text_lines(self, outcome: FileOutcome) -> str:
        return "".join(f"{finding.text()} [{self.status(outcome, finding)}]\n" for finding in outcome.findings)

    def status(self, outcome: FileOutcome, finding: Finding) -> str:
        if outcome.is_fixed(finding):
            return "fixed" if self.mode == WRITE else "fixable"
        if finding.fix.safety is FixSafety.UNSAFE:
            return "unsafe fix, not applied without --unsafe-fixes: " + finding.fix.reason.split(";")[0]
        if finding.fix.safety is FixSafety.NONE:
            return f"no automatic fix: {finding.fix.reason}"
        return "not fixed: the file could not be rewritten"

    def render(self, fmt: str) -> str:
        findings = [finding for outcome in self.outcomes_with_findings for finding in outcome.findings]
        applied = {(outcome.path, plan) for outcome in self.outcomes_with_findings for plan in outcome.applied}
        lines = {
            (outcome.path, line): text for outcome in self.outcomes_with_findings for line, text in outcome.origin_lines
        }
        if fmt in ("github", "sarif"):
            findings = [finding for finding in findings if (finding.path, finding.fix) not in applied]
        return render(
            findings,
            fmt,
            applied=lambda finding: (finding.path, finding.fix) in applied,
            source_line=lambda path, line: lines.get((path, line), ""),
        )

    def summary(self) -> str:
        verb = "fixed" if self.mode == WRITE else "fixable"
        left = self.unsafe + self.unfixable
        return (
            f"seqlen-guard-fix: {self.files} files scanned, {self.findings} findings, {self.fixed} {verb} "
            f"in {self.changed_files} files, {left} left ({self.unsafe} unsafe, {self.unfixable} no automatic fix), "
            f"{self.errors} errors"
        )

    def exit_code(self, exit_zero: bool) -> int:
        if self.errors:
            return EXIT_ERROR
        pending = self.mode != WRITE and self.fixed
        left = self.findings - self.fixed
        return EXIT_FINDINGS if (pending or left) and not exit_zero else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
