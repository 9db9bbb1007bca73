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

from collections.abc import Collection, Iterator, Mapping, Sequence

from lint_rules.findings import Finding, Span
from lint_rules.lines import split_lines
from lint_rules.noqa import NOQA_MARKER, OWN_MARKER, mentions_a_marker, without_own_suppression

MARKERS = (NOQA_MARKER, OWN_MARKER)

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


def finding_key(finding: Finding, lines: Sequence[str], origin_line: int = 0) -> str:
    """Everything the fingerprint stands for, before the rank among equal keys (`origin_line`: that
    of another value reaching the place, instead of the finding's own origin)."""
    parts = (
        finding.code,
        finding.function,
        normalized(span_text(lines, finding.span)),
        normalized(line_text(lines, finding.span.line)),
        normalized(line_text(lines, origin_line or finding.origin.line)),
    )
    return "\0".join(parts)


def fingerprints(findings: Sequence[Finding], text: str, silenced: Collection[Finding] = ()) -> Fingerprints:
    """Each finding of one file (in the file's order) -> its fingerprint, 16 hex digits. A `silenced`
    finding also gets those it had before its suppression comment was written (`Fingerprints.every`),
    so that a baseline entry of it counts as suppressed, not fixed."""
    if not findings:
        return Fingerprints()
    lines = split_lines(text)
    unsuppressed = unsuppressed_lines(lines) if silenced else lines
    seen: dict[str, int] = {}
    hashed: dict[Finding, str] = {}
    alternates: dict[Finding, list[str]] = {}
    for finding in sorted(findings, key=lambda f: (f.span.line, f.span.col, f.code, f.origin.line)):
        key, *other_values = value_keys(finding, lines)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        ranked = [f"{each}\0{rank}" for each in (key, *other_values)]
        if finding in silenced and unsuppressed is not lines:
            ranked += [f"{each}\0{rank}" for each in value_keys(finding, unsuppressed)]
        hashed[finding] = ranked[0]
        alternates[finding] = list(dict.fromkeys(each for each in ranked[1:] if each != ranked[0]))
    return Fingerprints(hashed, alternates)


def value_keys(finding: Finding, lines: Sequence[str]) -> list[str]:
    """The finding's key, then its key with each other value bound apart as the origin."""
    others = dict.fromkeys(plan.call.line for plan in finding.other_fixes if plan.call.line != finding.origin.line)
    return [finding_key(finding, lines), *(finding_key(finding, lines, line) for line in others)]


def unsuppressed_lines(lines: list[str]) -> list[str]:
    """The lines without this tool's suppression comments; `lines` itself when none has one."""
    stripped = [without_own_suppression(line) if mentions_a_marker(line, MARKERS) else line for line in lines]
    return lines if stripped == lines else stripped


class Fingerprints(Mapping[Finding, str]):
    """Findings -> fingerprints, each hashed when it is first read: a run that prints text without a
    baseline never reads one (nor imports `hashlib`: 2 ms of a one-file run)."""

    def __init__(
        self, unhashed: Mapping[Finding, str] | None = None, alternates: Mapping[Finding, list[str]] | None = None
    ) -> None:
        self._unhashed: dict[Finding, str] = dict(unhashed or {})
        """What each fingerprint hashes (the key and its rank)."""
        self._hashed: dict[Finding, str] = {}
        self._alternates: dict[Finding, list[str]] = dict(alternates or {})
        """For a finding that several values bound apart reach: what its fingerprint would hash with each
        other value as its origin, so that a baseline still knows it once one of them is gone."""

    def every(self, finding: Finding) -> list[str]:
        """The finding's fingerprint, then those it would have with each of its other values as origin."""
        return [self[finding], *map(digest, self._alternates.get(finding, ()))]

    def __getitem__(self, finding: Finding) -> str:
        if finding not in self._hashed:
            self._hashed[finding] = digest(self._unhashed[finding])
        return self._hashed[finding]

    def __contains__(self, finding: object) -> bool:
        return finding in self._unhashed

    def __iter__(self) -> Iterator[Finding]:
        return iter(self._unhashed)

    def __len__(self) -> int:
        return len(self._unhashed)

    def include(self, other: Mapping[Finding, str]) -> None:
        """Adds another file's fingerprints, hashing none of them."""
        if isinstance(other, Fingerprints):
            self._unhashed.update(other._unhashed)
            self._hashed.update(other._hashed)
            self._alternates.update(other._alternates)
        else:
            for finding, value in other.items():
                self._unhashed[finding] = ""
                self._hashed[finding] = value


def digest(unhashed: str) -> str:
    import hashlib  # only once a fingerprint is read

    return hashlib.sha256(unhashed.encode()).hexdigest()[:16]


def every_fingerprint(fingerprints: Mapping[Finding, str], finding: Finding) -> list[str]:
    """`Fingerprints.every`, or the one fingerprint a plain mapping holds."""
    if isinstance(fingerprints, Fingerprints):
        return fingerprints.every(finding)
    return [fingerprints.get(finding, "")]
