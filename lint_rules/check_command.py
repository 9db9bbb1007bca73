"""The standalone checker's command (entry: `lint_rules.cli`). With no path it checks the current
folder, as flake8 and ruff do.

With a baseline (`--baseline FILE`, `baseline = "..."` in `[tool.seqlen-guard]`, or a
`seqlen-guard-baseline.json` at or above the current folder) only findings that are not in it
are reported. On stderr, the entries no finding matches any more are listed as fixed (the first
ten), and one line counts new findings, known ones (and their entries, where a finding of several
values has one per value), fixed entries and suppressed ones (a suppression comment or the
configuration now silences their finding). `--write-baseline [FILE]` records today's findings
instead, dropping fixed and suppressed entries; `--add-noqa` writes a suppression comment for each
finding (`fixers.add_noqa`, handed in by `lint_rules.program`).

Exit status: 0 clean, 1 findings, 2 a usage or configuration error, or a file that could not be
read or parsed (the other files are still checked).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from lint_rules.baseline import (
    DEFAULT_NAME,
    Baseline,
    BaselineError,
    Entry,
    entries_for,
    find_baseline,
    load_baseline,
    write_baseline,
)
from lint_rules.checking import CheckedFile, check_path
from lint_rules.config import (
    ConfigError,
    add_common_arguments,
    add_paths_argument,
    find_config,
    new_parser,
    settings_from_args,
)
from lint_rules.engine import STAMPS
from lint_rules.exit_codes import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from lint_rules.files import ReadError, iter_python_files
from lint_rules.findings import Finding
from lint_rules.fingerprints import Fingerprints
from lint_rules.formats import render
from lint_rules.parallel import ordered_map
from lint_rules.settings import Settings
from lint_rules.wording import counted

PROG = "seqlen-guard"


def build_parser() -> argparse.ArgumentParser:
    parser = new_parser(
        PROG,
        "Find tensor-valued get_seq_length() results used as Python ints.",
    )
    add_paths_argument(parser, "check")
    parser.add_argument("--explain", metavar="RULE", help="print the documentation of a rule (code or name) and exit")
    parser.add_argument(
        "--show-silenced",
        action="store_true",
        help="also list the findings that a suppression comment, a declaration or the baseline silences",
    )
    adoption = parser.add_argument_group("adopting on a codebase with findings")
    baseline = adoption.add_mutually_exclusive_group()
    baseline.add_argument(
        "--baseline",
        metavar="FILE",
        help=f"report only findings not in FILE (default: the configured baseline, else the nearest {DEFAULT_NAME})",
    )
    baseline.add_argument("--no-baseline", action="store_true", help="report every finding, ignoring any baseline")
    baseline.add_argument(
        "--write-baseline",
        metavar="FILE",
        nargs="?",
        const="",
        help="record today's findings in FILE, a .json name (default: the baseline in use, else "
        f"{DEFAULT_NAME} next to the configuration) and exit 0; entries that no longer match are dropped",
    )
    baseline.add_argument(
        "--add-noqa",
        action="store_true",
        help="add a suppression comment (the configured suppression-style) for every finding, touching nothing else",
    )
    add_common_arguments(parser)
    return parser


AddNoqaCommand = Callable[[Sequence[str], Settings, int], int]
"""`--add-noqa` on (paths, settings, jobs): it writes files, so fixers carries it out (`fixers.add_noqa`);
the command over both packages (`lint_rules.program`) passes it in."""


def run(argv: Sequence[str] | None, add_noqa: AddNoqaCommand | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.explain:
        from lint_rules.explain import explain  # only for --explain

        return explain(args.explain, PROG, explained_releases(args))
    if args.write_baseline and not args.write_baseline.endswith(".json"):
        args.paths, args.write_baseline = [*remove_default(args.paths), args.write_baseline], ""
    try:
        settings = settings_from_args(args)
        baseline = None if args.no_baseline or args.add_noqa else chosen_baseline(args, settings)
    except (ConfigError, BaselineError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.write_baseline is not None:
        return write_command(args, settings, baseline)
    if args.add_noqa:
        if add_noqa is None:
            parser.error("--add-noqa is run by the seqlen-guard command (lint_rules.program)")
        return add_noqa(args.paths, settings, args.jobs)
    settings = settings._replace(
        baseline=None if baseline is None else str(baseline.file), show_silenced=args.show_silenced
    )
    if settings.transformers.described:
        print(f"{PROG}: checking for {settings.transformers.described}", file=sys.stderr)
    with STAMPS.kept_for_the_run():  # the check writes no source file
        results = Collected.of(check_paths(args.paths, settings, args.jobs))
    output = render(results.findings, args.format, fingerprints=results.fingerprints, baseline=baseline is not None)
    silenced = silenced_lines(results) if args.show_silenced else ""
    sys.stdout.write(output + silenced if args.format == "text" else output)
    if args.format != "text":
        sys.stderr.write(silenced)
    if baseline is not None:
        report_baseline(baseline, results, args.paths)
    results.print_errors()
    if results.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if results.findings and not args.exit_zero else EXIT_CLEAN


def explained_releases(args: argparse.Namespace) -> str:
    """The releases `--explain` names: those the run would find ("" where the configuration is broken)."""
    try:
        return settings_from_args(args).transformers.described
    except ConfigError:
        return ""


def remove_default(paths: list[str]) -> list[str]:
    """The paths given, without the default `.` argparse put in when `--write-baseline` took the only one."""
    return [] if paths == [os.curdir] else paths


def chosen_baseline(args: argparse.Namespace, settings: Settings) -> Baseline | None:
    """`--baseline FILE`, else the configured one, else the nearest default file; loaded."""
    if args.baseline is not None:
        return load_baseline(args.baseline)
    if settings.baseline is not None:
        if not os.path.isfile(settings.baseline):
            return None  # configured but not written yet: every finding is new
        return load_baseline(settings.baseline)
    found = find_baseline(Path.cwd())
    return None if found is None else load_baseline(found)


def baseline_target(args: argparse.Namespace, settings: Settings, current: Baseline | None) -> Path:
    if args.write_baseline:
        return Path(args.write_baseline)
    if current is not None:
        return current.file
    if settings.baseline is not None:
        return Path(settings.baseline)
    config = find_config(Path.cwd()) if args.config is None else Path(args.config)
    return (config.parent if config is not None else Path.cwd()) / DEFAULT_NAME


def write_command(args: argparse.Namespace, settings: Settings, current: Baseline | None) -> int:
    target = baseline_target(args, settings, current)
    try:
        old = load_baseline(target) if target.is_file() else Baseline(target, [])
    except BaselineError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_ERROR
    results = Collected.of(check_paths(args.paths, settings._replace(baseline=None), args.jobs))
    entries = entries_for(old, results.findings, results.fingerprints)
    stale = stale_entries(old, results, args.paths)
    scanned = {old.relative(path) for path in results.paths}
    vanished = set(stale.vanished)
    kept = [entry for entry in old.entries if entry.path not in scanned and entry not in vanished]
    write_baseline(target, [*entries, *kept])
    print(written_summary(target, len(results.findings), len(entries), len(kept), stale), file=sys.stderr)
    results.print_errors()
    return EXIT_ERROR if results.errors else EXIT_CLEAN


def written_summary(target: Path, findings: int, entries: int, kept: int, stale: StaleEntries) -> str:
    """`wrote FILE: 275 findings (277 entries), kept 3 entries of files not checked; dropped 1 fixed entry`."""
    kept_text = f", kept {counted(kept, 'entry', 'entries')} of files not checked" if kept else ""
    dropped = stale.counts()
    dropped_text = f"; dropped {dropped}" if dropped else ""
    return f"{PROG}: wrote {shown(target)}: {findings_and_entries(findings, entries)}{kept_text}{dropped_text}"


def findings_and_entries(findings: int, entries: int, label: str = "") -> str:
    """`275 findings (277 entries)`: the entries named too where they differ (one per value of a finding
    that values bound apart reach); with a `label`, `275 known (277 entries)`."""
    counted_findings = f"{findings} {label}" if label else counted(findings, "finding")
    return counted_findings if findings == entries else f"{counted_findings} ({counted(entries, 'entry', 'entries')})"


MAX_FIXED_LISTED = 10
"""Fixed entries listed one per line; past this many, one line counts the rest."""


class StaleEntries(NamedTuple):
    """The baseline's entries, as this run's findings left them."""

    known: int
    """Entries a finding that would be reported matches."""
    fixed: list[Entry]
    """Entries no finding matches (their file deleted included)."""
    suppressed: list[Entry]
    """Entries only a finding that a suppression comment or the configuration silences matches."""
    vanished: list[Entry]
    """The fixed entries of files that no longer exist."""

    def fixed_text(self) -> str:
        return counted(len(self.fixed), "fixed entry", "fixed entries")

    def suppressed_text(self) -> str:
        return counted(len(self.suppressed), "suppressed entry", "suppressed entries")

    def counts(self) -> str:
        """`1 fixed entry and 277 suppressed entries`; '' when there are none."""
        parts = [self.fixed_text()] if self.fixed else []
        return " and ".join([*parts, self.suppressed_text()] if self.suppressed else parts)


def stale_entries(baseline: Baseline, results: Collected, roots: Sequence[str]) -> StaleEntries:
    """Which entries of the checked files still match a finding, which only a silenced one, which none."""
    known = 0
    fixed: list[Entry] = []
    suppressed: list[Entry] = []
    for result in results.checked:
        stale = baseline.stale(result.path, result.found, result.suppressed, result.fingerprints)
        fixed += stale.fixed
        suppressed += stale.suppressed
        entries = baseline.by_path.get(baseline.relative(result.path), ())
        known += len(entries) - len(stale.fixed) - len(stale.suppressed)
    vanished = baseline.vanished_files({baseline.relative(path) for path in results.paths}, roots)
    return StaleEntries(known, fixed + vanished, suppressed, vanished)


def report_baseline(baseline: Baseline, results: Collected, roots: Sequence[str]) -> None:
    """On stderr: the first fixed entries, then one line of counts (suppressed entries only counted)."""
    stale = stale_entries(baseline, results, roots)
    for entry in stale.fixed[:MAX_FIXED_LISTED]:
        print(f"{entry.describe()}: fixed (in the baseline, no longer found)", file=sys.stderr)
    if len(stale.fixed) > MAX_FIXED_LISTED:
        more = counted(len(stale.fixed) - MAX_FIXED_LISTED, "more fixed entry", "more fixed entries")
        print(f"{PROG}: and {more}", file=sys.stderr)
    print(baseline_summary(baseline, results, stale), file=sys.stderr)


def baseline_summary(baseline: Baseline, results: Collected, stale: StaleEntries) -> str:
    """`baseline FILE: 1 new finding, 275 known (277 entries), 0 fixed entries, 2 suppressed entries
    (...); `seqlen-guard --write-baseline` drops them`."""
    known = findings_and_entries(sum(len(result.baselined) for result in results.checked), stale.known, "known")
    counts = [counted(len(results.findings), "new finding"), known, stale.fixed_text()]
    if stale.suppressed:
        whose = "its finding" if len(stale.suppressed) == 1 else "their findings"
        counts.append(f"{stale.suppressed_text()} (a suppression comment or the configuration silences {whose})")
    stale_count = len(stale.fixed) + len(stale.suppressed)
    note = f"; `{PROG} --write-baseline` drops {'it' if stale_count == 1 else 'them'}" if stale_count else ""
    return f"{PROG}: baseline {shown(baseline.file)}: {', '.join(counts)}{note}"


def shown(path: Path) -> str:
    """The path relative to the current folder when it lies below it."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith(os.pardir) else relative


def silenced_lines(results: Collected) -> str:
    lines = []
    for result in results.checked:
        lines += [f"{finding.text()}  (silenced by {result.silenced_by[finding]})\n" for finding in result.silenced]
        lines += [f"{finding.text()}  (in the baseline)\n" for finding in result.baselined]
    return "".join(lines)


def check_paths(paths: Sequence[str], settings: Settings, jobs: int) -> Iterator[CheckedFile]:
    """Each file's result, in path order; a path that could not be listed comes back as an error."""
    return ordered_map(check_item, iter_python_files(paths, settings.exclude), jobs, settings, lost=lost_file)


def lost_file(item: str | ReadError, reason: str) -> CheckedFile:
    """A file whose worker process died: an error of its own."""
    return CheckedFile(item.path if isinstance(item, ReadError) else item, error=reason)


def check_item(item: str | ReadError, settings: Settings) -> CheckedFile:
    if isinstance(item, ReadError):
        return CheckedFile(item.path, error=item.reason)
    return check_path(item, settings)


class Collected:
    """Every file's result of one run, gathered."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.errors: list[tuple[str, str]] = []
        self.fingerprints = Fingerprints()
        self.checked: list[CheckedFile] = []
        """The results of files that were read (those a baseline can speak about)."""

    @property
    def paths(self) -> list[str]:
        return [result.path for result in self.checked]

    @classmethod
    def of(cls, results: Iterable[CheckedFile]) -> Collected:
        collected = cls()
        for result in results:
            collected.findings.extend(result.findings)
            collected.fingerprints.include(result.fingerprints)
            if result.error:
                collected.errors.append((result.path, result.error))
            else:
                collected.checked.append(result)
        return collected

    def print_errors(self) -> None:
        for path, reason in self.errors:
            print(f"{path}: {reason}", file=sys.stderr)
