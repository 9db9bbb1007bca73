"""The standalone checker's command (entry: `lint_rules.cli`). With no path it checks the current
folder, as flake8 and ruff do.

With a baseline (`--baseline FILE`, `baseline = "..."` in `[tool.seqlen-guard]`, or a
`seqlen-guard-baseline.json` at or above the current folder) only findings that are not in it
are reported; its entries that no longer match are listed on stderr as fixed.
`--write-baseline [FILE]` records today's findings instead; `--add-noqa` writes a suppression
comment for each of them.

Exit status: 0 clean, 1 findings, 2 a usage or configuration error, or a file that could not be
read or parsed (the other files are still checked).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

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
from lint_rules.config import ConfigError, add_common_arguments, add_paths_argument, find_config, settings_from_args
from lint_rules.engine import STAMPS
from lint_rules.exit_codes import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from lint_rules.files import ReadError, iter_python_files
from lint_rules.findings import Finding
from lint_rules.fingerprints import Fingerprints
from lint_rules.formats import render
from lint_rules.parallel import ordered_map
from lint_rules.settings import Settings

PROG = "seqlen-guard"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find tensor-valued get_seq_length() results used as Python ints.",
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


def run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.explain:
        from lint_rules.explain import explain  # only for --explain

        return explain(args.explain, PROG)
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
        return add_noqa_command(args, settings)
    settings = settings._replace(
        baseline=None if baseline is None else str(baseline.file), show_silenced=args.show_silenced
    )
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
    scanned = {old.relative(path) for path in results.paths}
    vanished = set(old.vanished_files(scanned, args.paths))
    kept = [entry for entry in old.entries if entry.path not in scanned and entry not in vanished]
    dropped = len(old.entries) - len(kept) - matched_count(old, entries)
    write_baseline(target, [*entries, *kept])
    print(
        f"{PROG}: wrote {len(entries) + len(kept)} findings to {shown(target)} "
        f"({len(entries)} found now, {dropped} no longer found dropped)",
        file=sys.stderr,
    )
    results.print_errors()
    return EXIT_ERROR if results.errors else EXIT_CLEAN


def matched_count(old: Baseline, entries: Sequence[Entry]) -> int:
    """How many of the old entries the new ones still match (as a multiset)."""
    return sum((collections.Counter(e.key for e in old.entries) & collections.Counter(e.key for e in entries)).values())


def add_noqa_command(args: argparse.Namespace, settings: Settings) -> int:
    from lint_rules.add_noqa import add_suppressions

    results = Collected.of(check_paths(args.paths, settings._replace(baseline=None), args.jobs))
    by_file: dict[str, list[Finding]] = {}
    for finding in results.findings:
        by_file.setdefault(finding.path, []).append(finding)
    added = changed = 0
    for path, findings in by_file.items():
        problem = add_suppressions(path, findings, settings.suppression_style)
        if problem:
            results.errors.append((path, problem))
        else:
            added, changed = added + len(findings), changed + 1
    print(f"{PROG}: added suppressions for {added} findings in {changed} files", file=sys.stderr)
    results.print_errors()
    return EXIT_ERROR if results.errors else EXIT_CLEAN


def report_baseline(baseline: Baseline, results: Collected, roots: Sequence[str]) -> None:
    """On stderr: each entry no finding matches any more, and the counts."""
    fixed: list[Entry] = []
    for result in results.checked:
        fixed.extend(baseline.unmatched(result.path, result.baselined, result.fingerprints))
    fixed.extend(baseline.vanished_files({baseline.relative(path) for path in results.paths}, roots))
    for entry in fixed:
        print(f"{entry.describe()}: fixed (in the baseline, no longer found)", file=sys.stderr)
    known = sum(len(result.baselined) for result in results.checked)
    note = f"; `{PROG} --write-baseline` drops them" if fixed else ""
    print(
        f"{PROG}: baseline {shown(baseline.file)}: {len(results.findings)} new, {known} known, {len(fixed)} fixed{note}",
        file=sys.stderr,
    )


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
