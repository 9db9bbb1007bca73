"""What a fixer run found and did: a status per finding, the other formats, the summary, the exit code."""

from __future__ import annotations

from fixers.fix_files import FileOutcome, Mode
from lint_rules.exit_codes import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from lint_rules.findings import Finding, FixSafety
from lint_rules.formats import render
from lint_rules.wording import counted


class Report:
    """Counts and prints what the run did."""

    def __init__(self, mode: Mode, baseline: bool = False) -> None:
        self.mode = mode
        self.baseline = baseline
        self.files = 0
        self.outcomes_with_findings: list[FileOutcome] = []
        self.findings = self.fixed = self.unsafe = self.unfixable = self.errors = self.changed_files = 0
        self.partly_fixed = 0
        self.verb = "fixed" if mode is Mode.WRITE else "fixable"

    def add(self, outcome: FileOutcome) -> None:
        self.files += outcome.listed
        self.errors += bool(outcome.error)
        self.changed_files += outcome.changed
        self.findings += len(outcome.findings)
        for finding in outcome.findings:
            if outcome.is_fixed(finding):
                self.fixed += 1
                continue
            self.partly_fixed += any(plan in outcome.applied for plan in finding.plans)
            if finding.fix.safety is FixSafety.UNSAFE:
                self.unsafe += 1
            else:
                self.unfixable += 1
        if outcome.findings:
            self.outcomes_with_findings.append(outcome)

    def text_lines(self, outcome: FileOutcome) -> str:
        return "".join(f"{finding.text()} [{self.status(outcome, finding)}]\n" for finding in outcome.findings)

    def status(self, outcome: FileOutcome, finding: Finding) -> str:
        if outcome.is_fixed(finding):
            return self.verb
        applied = sum(plan in outcome.applied for plan in finding.plans)
        partly = f"partly {self.verb} ({applied} of {len(finding.plans)} values guarded); " if applied else ""
        if finding.fix.safety is FixSafety.UNSAFE:
            return f"{partly}unsafe fix, not applied without --unsafe-fixes: " + finding.fix.reason.split(";")[0]
        if finding.fix.safety is FixSafety.NONE:
            unsafe = sum(plan.safety is FixSafety.UNSAFE and plan not in outcome.applied for plan in finding.plans)
            more = f"; {unsafe} more with an unsafe fix (--unsafe-fixes)" if unsafe else ""
            return f"{partly}no automatic fix: {finding.fix.reason}{more}"
        return "not fixed: the file could not be rewritten"

    def render(self, fmt: str) -> str:
        findings = [finding for outcome in self.outcomes_with_findings for finding in outcome.findings]
        fixed = {
            (outcome.path, finding)
            for outcome in self.outcomes_with_findings
            for finding in outcome.findings
            if outcome.is_fixed(finding)
        }
        fingerprints = {
            key: value for outcome in self.outcomes_with_findings for key, value in outcome.fingerprints.items()
        }
        lines = {
            (outcome.path, line): text for outcome in self.outcomes_with_findings for line, text in outcome.origin_lines
        }
        if fmt in ("github", "sarif"):
            findings = [finding for finding in findings if (finding.path, finding) not in fixed]
        return render(
            findings,
            fmt,
            applied=lambda finding: (finding.path, finding) in fixed,
            source_line=lambda path, line: lines.get((path, line), ""),
            fingerprints=fingerprints,
            baseline=self.baseline,
        )

    def summary(self) -> str:
        left = self.unsafe + self.unfixable
        partly = f" ({self.partly_fixed} partly)" if self.partly_fixed else ""
        return (
            f"seqlen-guard-fix: {counted(self.files, 'file')} scanned, {counted(self.findings, 'finding')}, "
            f"{self.fixed} {self.verb}{partly} in {counted(self.changed_files, 'file')}, "
            f"{left} left ({self.unsafe} unsafe, {self.unfixable} no automatic fix), {counted(self.errors, 'error')}"
        )

    def exit_code(self, exit_zero: bool) -> int:
        """In place: 1 while findings remain. With --check or --diff the question is whether the fixer
        would change a file: 1 only then (remaining findings are the checker's business)."""
        if self.errors:
            return EXIT_ERROR
        failing = self.findings > self.fixed if self.mode is Mode.WRITE else self.changed_files > 0
        return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN
