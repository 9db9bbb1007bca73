"""The checker's entry: `python -m lint_rules PATH...` (console script `seqlen-guard`).

Ctrl-C is deferred before the checker's modules are imported, so that it exits 130 with one line
however early it comes; the command itself is `lint_rules.program`.
"""

from __future__ import annotations

from lint_rules.interrupts import run_command


def main(argv: list[str] | None = None) -> int:
    return run_command("lint_rules.program", argv, "seqlen-guard: interrupted")
