"""What must hold for any module, shared by the generated matrix and the fuzz test: the checker and
the flake8 plugin run and agree; every finding a fixer run leaves says why; each fixer run (safe
fixes, then unsafe too) gives code that parses, has nothing left that it would fix, and does not
change on a second run."""

from __future__ import annotations

import ast

from fixers.fix_files import fix_text
from fixers.fixing import is_applicable
from lint_rules.checking import check_text
from lint_rules.findings import Finding, FixKind, FixSafety
from lint_rules.flake8_plugin import SeqlenGuardChecker
from lint_rules.settings import Settings

SAFE_ONLY = Settings()
UNSAFE_TOO = Settings(unsafe_fixes=True)


def check_invariants(text: str, label: str) -> list[Finding]:
    """The findings of `text` (safe-fix settings), once every invariant has been checked."""
    checked = check_text("module.py", text, SAFE_ONLY)
    assert not checked.error, (label, checked.error)
    assert plugin_findings(text) == sorted((f.line, f.col, f.code) for f in checked.findings), label
    for settings in (SAFE_ONLY, UNSAFE_TOO):
        check_fix(text, label, settings)
    return list(checked.findings)


def plugin_findings(text: str) -> list[tuple[int, int, str]]:
    checker = SeqlenGuardChecker(ast.parse(text), text.splitlines(keepends=True), "module.py")
    return sorted((line, col, message.split()[0]) for line, col, message, _ in checker.run())


def check_fix(text: str, label: str, settings: Settings) -> None:
    for finding in check_text("module.py", text, settings).findings:
        if not is_applicable(finding.fix, settings.unsafe_fixes):
            assert finding.fix.reason, f"{label}: a finding left alone says why: {finding.message}"
            assert finding.fix.kind is FixKind.NONE or finding.fix.safety is FixSafety.UNSAFE, label
    fixed = fix_text("module.py", text, settings)
    ast.parse(fixed)
    left = check_text("module.py", fixed, settings).findings
    assert not [finding for finding in left if is_applicable(finding.fix, settings.unsafe_fixes)], label
    assert fix_text("module.py", fixed, settings) == fixed, f"{label}: a second run changed more"
