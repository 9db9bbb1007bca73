"""The standalone checker's command (entry: `lint_rules.cli`). With no path it checks the current
folder, as flake8 and ruff do.

Exit status: 0 clean, 1 findings, 2 a usage or configuration error, or a file that could not be
read or parsed (the other files are still checked).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator, Sequence

from lint_rules.checking import CheckedFile, check_path
from lint_rules.config import ConfigError, add_common_arguments, add_paths_argument, settings_from_args
from lint_rules.files import ReadError, iter_python_files
from lint_rules.findings import Finding
from lint_rules.formats import render, rule_help_text
from lint_rules.parallel import ordered_map
from lint_rules.rules import RULES
from lint_rules.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seqlen-guard",
        description="Find tensor-valued get_seq_length() results used as Python ints.",
    )
    add_paths_argument(parser, "check")
    parser.add_argument("--explain", metavar="CODE", help="print the documentation of a rule and exit")
    parser.add_argument(
        "--show-silenced", action="store_true", help="also list the findings that a `# noqa` comment silences"
    )
    add_common_arguments(parser)
    return parser


def run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.explain:
        return explain(args.explain)
    try:
        settings = settings_from_args(args)
    except ConfigError as error:
        print(f"seqlen-guard: {error}", file=sys.stderr)
        return EXIT_ERROR
    results = check_paths(args.paths, settings, args.jobs)
    findings, silenced, errors = collect(results)
    output = render(findings, args.format)
    if args.show_silenced and silenced:
        output += "".join(f"{finding.text()}  (silenced by noqa)\n" for finding in silenced)
    sys.stdout.write(output)
    for path, reason in errors:
        print(f"{path}: {reason}", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def explain(code: str) -> int:
    rule = RULES.get(code.upper())
    if rule is None:
        print(f"seqlen-guard: unknown rule {code!r}; rules: {', '.join(RULES)}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(rule_help_text(rule))
    return EXIT_CLEAN


def check_paths(paths: Sequence[str], settings: Settings, jobs: int) -> Iterator[CheckedFile]:
    """Each file's result, in path order; a path that could not be listed comes back as an error."""
    return ordered_map(check_item, iter_python_files(paths, settings.exclude), jobs, settings)


def check_item(item: str | ReadError, settings: Settings) -> CheckedFile:
    if isinstance(item, ReadError):
        return CheckedFile(item.path, error=item.reason)
    return check_path(item, settings)


def collect(results: Iterable[CheckedFile]) -> tuple[list[Finding], list[Finding], list[tuple[str, str]]]:
    findings: list[Finding] = []
    silenced: list[Finding] = []
    errors: list[tuple[str, str]] = []
    for result in results:
        findings.extend(result.findings)
        silenced.extend(result.silenced)
        if result.error:
            errors.append((result.path, result.error))
    return findings, silenced, errors
