"""The fixer's command (entry: `fixers.rewrite`). With no path it works on the current folder.

stdout carries what the mode produces and nothing else: the findings in place mode, only the
unified diff with --diff (so that `> fix.patch` is a patch), nothing with --check. Otherwise the
findings, errors and the summary go to stderr.

Exit status: in place, 0 nothing left to fix, 1 findings remain; with --check/--diff, 1 when a file
would change, else 0 (findings without a safe fix are the checker's business); 2 a usage error, or a
file could not be read, parsed, verified or written. The fixer ignores the baseline unless
`--baseline FILE` names one: then it leaves the findings recorded there alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fixers.fix_files import Mode, fix_paths
from fixers.patch import is_outside, patch_name
from fixers.report import Report
from lint_rules.baseline import BaselineError, load_baseline
from lint_rules.config import ConfigError, add_common_arguments, add_paths_argument, new_parser, settings_from_args
from lint_rules.exit_codes import EXIT_ERROR
from lint_rules.explain import explain
from lint_rules.wording import counted

PROG = "seqlen-guard-fix"


def build_parser() -> argparse.ArgumentParser:
    parser = new_parser(
        PROG,
        "Insert int guards after tensor-valued get_seq_length() bindings.",
    )
    add_paths_argument(parser, "fix")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--diff", action="store_true", help="print a unified diff (and nothing else) on stdout; write nothing"
    )
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change, else 0")
    parser.add_argument("--explain", metavar="RULE", help="print the documentation of a rule (code or name) and exit")
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="leave the findings recorded in FILE alone (by default the fixer fixes every finding it can, "
        "baselined ones included)",
    )
    add_common_arguments(parser, fixer=True)
    return parser


def run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.explain:
        return explain(args.explain, PROG)
    try:
        settings = settings_from_args(args)._replace(baseline=args.baseline)
        if args.baseline is not None:
            load_baseline(args.baseline)  # a bad file is a usage error here, not in every worker
    except (ConfigError, BaselineError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_ERROR
    mode = Mode.DIFF if args.diff else Mode.CHECK if args.check else Mode.WRITE
    findings_stream = sys.stdout if mode is Mode.WRITE else sys.stderr
    report = Report(mode, baseline=args.baseline is not None)
    outside = 0
    for outcome in fix_paths(args.paths, settings, mode, args.jobs):
        report.add(outcome)
        if outcome.diff:
            sys.stdout.buffer.write(outcome.diff)  # the file's own bytes, whatever its encoding
            sys.stdout.buffer.flush()  # before this file's findings on stderr, when both go to one terminal or pipe
        outside += bool(outcome.diff) and is_outside(patch_name(outcome.path))
        if args.format == "text":
            findings_stream.write(report.text_lines(outcome))
        if outcome.error:
            print(f"{outcome.path}: {outcome.error}", file=sys.stderr)
    if args.format != "text":
        findings_stream.write(report.render(args.format))
    if outside:
        print(outside_note(outside), file=sys.stderr)
    print(report.summary(), file=sys.stderr)
    return report.exit_code(args.exit_zero)


def outside_note(count: int) -> str:
    return (
        f"seqlen-guard-fix: note: the diff names {counted(count, 'file')} outside the current folder (a/../...), "
        f"which git apply and patch refuse; run it from a folder that holds {'it' if count == 1 else 'them'}"
    )
