"""The `seqlen-guard` command over both packages: the checker's command (`lint_rules.check_command`),
with `--add-noqa` handed to the fixer's side.

`--add-noqa` writes suppression comments into files, and writing files is the fixer's part
(`fixers.add_noqa`, with the fixer's atomic write). This is the one module of lint_rules that
imports fixers, and only for that flag; everywhere else fixers imports lint_rules, never the other
way round (tests/test_suppressions.py checks it).
"""

from __future__ import annotations

from collections.abc import Sequence

from lint_rules.check_command import run as check
from lint_rules.settings import Settings


def run(argv: Sequence[str] | None) -> int:
    return check(argv, add_noqa=add_noqa)


def add_noqa(paths: Sequence[str], settings: Settings, jobs: int) -> int:
    from fixers.add_noqa import add_noqa_command  # only for --add-noqa: the checker does without libcst

    return add_noqa_command(paths, settings, jobs)
