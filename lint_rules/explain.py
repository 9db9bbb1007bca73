"""`--explain CODE|NAME` on both commands: a rule's full documentation."""

from __future__ import annotations

import sys

from lint_rules.exit_codes import EXIT_CLEAN, EXIT_ERROR
from lint_rules.formats import rule_help_text
from lint_rules.rules import RULES, Rule


def find_rule(query: str) -> Rule | None:
    """The rule named by its code (`SLG002`) or its name (`tensor-length-slice-bound`), any case."""
    wanted = query.strip().lower()
    return next((rule for rule in RULES.values() if wanted in (rule.code.lower(), rule.name.lower())), None)


def explain(query: str, prog: str, releases: str = "") -> int:
    """Print the rule's page and return 0; an unknown rule is a usage error (2). `releases`: the
    transformers releases the run found (`TargetRange.described`), named after the page."""
    rule = find_rule(query)
    if rule is None:
        known = ", ".join(f"{rule.code} ({rule.name})" for rule in RULES.values())
        print(f"{prog}: unknown rule {query!r}; rules: {known}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(rule_help_text(rule))
    if releases:
        sys.stdout.write(f"\n{RELEASES_NOTE.format(releases=releases)}\n")
    return EXIT_CLEAN


RELEASES_NOTE = (
    "Verdicts assume {releases}: a cache class's length is a tensor if it is one in any of these "
    "releases, an int only if it is one in all of them, and a method no cache of theirs has ends the path."
)
