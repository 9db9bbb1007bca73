"""A finding's fingerprint: what it is, not where it is, so that it survives unrelated edits.

The fingerprint hashes the rule, the enclosing function's qualified name, and the normalized
code involved: the text of the use, the line it sits on and the line of the `get_seq_length()`
call the value came from (whitespace removed). Line numbers are left out, so inserting or
deleting lines elsewhere in the file leaves it unchanged. Findings whose keys are equal (the
same statement written twice in one function) are told apart by their rank among them.

The path is not part of the hash: the baseline keys entries by path itself, and SARIF carries
the location next to the fingerprint. The same value is `fingerprint` in JSON and
`partialFingerprints["seqlenGuard/v1"]` in SARIF.
"""

from __future__ import annotations

from collections.abc import Sequence

from lint_rules.findings import Finding, Span
from lint_rules.lines import split_lines

SARIF_KEY = "seqlenGuard/v1"


def normalized(text: str) -> str:
    """The code without its whitespace: re-indenting, re-spacing or re-wrapping it changes nothing."""
    return "".join(text.split())


def span_text(lines: Sequence[str], span: Span) -> str:
    if not 0 < span.line <= len(lines):
        return ""
    if span.end_line == span.line:
        return lines[span.line - 1][span.col : span.end_col]
    inner = lines[span.line : span.end_line - 1]
    last = lines[span.end_line - 1][: span.end_col] if span.end_line <= len(lines) else ""
    return "\n".join([lines[span.line - 1][span.col :], *inner, last])


def line_text(lines: Sequence[str], line: int) -> str:
    return lines[line - 1] if 0 < line <= len(lines) else ""


def finding_key(finding: Finding, lines: Sequence[str]) -> str:
    """Everything the fingerprint stands for, before the rank among equal keys."""
    parts = (
        finding.code,
        finding.function,
        normalized(span_text(lines, finding.span)),
        normalized(line_text(lines, finding.span.line)),
        normalized(line_text(lines, finding.origin.line)),
    )
    return "\0".join(parts)


def fingerprints(findings: Sequence[Finding], text: str) -> dict[Finding, str]:
    """Each finding of one file (in the file's order) -> its fingerprint, 16 hex digits."""
    if not findings:
        return {}
    import hashlib  # only for a file with findings: most files of a run have none

    lines = split_lines(text)
    seen: dict[str, int] = {}
    result: dict[Finding, str] = {}
    for finding in sorted(findings, key=lambda f: (f.span.line, f.span.col, f.code, f.origin.line)):
        key = finding_key(finding, lines)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        result[finding] = hashlib.sha256(f"{key}\0{rank}".encode()).hexdigest()[:16]
    return result
