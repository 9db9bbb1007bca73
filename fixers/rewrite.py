"""The fixer's entry: `python -m fixers.rewrite PATH...` (console script `seqlen-guard-fix`).

Ctrl-C is deferred before the fixer's modules (LibCST among them) are imported, so that it exits
130 with one line however early it comes; the command itself is `fixers.fix_command`.
"""

from __future__ import annotations

import sys

from lint_rules.interrupts import run_command

INTERRUPTED = "seqlen-guard-fix: interrupted; every file is either as it was or fully rewritten"


def main(argv: list[str] | None = None) -> int:
    return run_command("fixers.fix_command", argv, INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
