"""Suppression comments: `# noqa` as ruff reads it, and this tool's own `# seqlen-guard: ignore[...]`.

A bare `# noqa` silences every finding on its line, `# noqa: SLG002,E501` only the codes named.
As in ruff, a comment anywhere in a statement that spans several lines covers all of them.
A `# flake8: noqa` (or `# ruff: noqa`) line silences the whole file; with codes
(`# flake8: noqa: SLG004`), as ruff reads it, only those codes in the whole file.

`# seqlen-guard: ignore[SLG004]` (several codes separated by commas; bare `# seqlen-guard: ignore`
for every code) is this tool's own comment, in the style of `# pyright: ignore[rule]`, for
repositories that forbid `# noqa` (transformers' TRF035). It covers its statement the same way,
and reads the same in the checker, the fixer and the flake8 plugin (which honours only this one
itself: flake8 applies `# noqa`, with flake8's reading).
"""

from __future__ import annotations

import ast
import io
import re
from collections.abc import Iterable, Sequence

from lint_rules.engine import first_line_of, statements_at
from lint_rules.findings import Finding
from lint_rules.lines import split_lines


class LazyPattern:
    """A case-insensitive regular expression compiled when first used: most files and most runs meet
    no suppression comment (compiling the three took 1.1 ms of a one-file run)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.IGNORECASE)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled().match(text)


CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)"
NOQA = LazyPattern(r"#\s*noqa(?::[\s]?" + CODES + ")?")
FILE_NOQA = LazyPattern(r"\s*#\s*(?:flake8|ruff)[:=]\s*noqa(?:\s*:\s*" + CODES + r")?\s*$")
"""A comment alone on its line, as flake8 reads it (`match`, not `search`: not inside a string)."""
OWN = LazyPattern(r"#\s*seqlen-guard\s*:\s*ignore\b(?:\[\s*" + CODES + r"\s*\])?")
"""`# seqlen-guard: ignore[SLG001, SLG004]`, or bare for every code."""
EVERY_CODE = frozenset({"*"})
NOQA_MARKER, OWN_MARKER = "noqa", "seqlen-guard"


def noqa_codes(comment_text: str, pattern: LazyPattern = NOQA) -> frozenset[str] | None:
    """The codes a piece of text silences: EVERY_CODE for a bare `# noqa`, None when it has none."""
    match = pattern.match(comment_text) if pattern is FILE_NOQA else pattern.search(comment_text)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return EVERY_CODE
    return frozenset(code.upper() for code in re.split(r"[,\s]+", codes) if code)


def without_own_suppression(line: str) -> str:
    """The line as it was before `--add-noqa` (or a hand) silenced this tool's codes on it: an own
    comment removed, a `# noqa` losing its SLG codes (removed when none are left). What a baseline
    entry of a finding silenced since was fingerprinted from."""
    for pattern in (OWN, NOQA):
        match = pattern.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        others = [code for code in re.split(r"[,\s]+", codes or "") if code and not code.upper().startswith("SLG")]
        if pattern is NOQA and others:
            line = line[: match.start("codes")] + ", ".join(others) + line[match.end("codes") :]
        else:
            line = line[: match.start()] + line[match.end() :]
    return line


def is_silenced(code: str, silenced: frozenset[str] | None) -> bool:
    if silenced is None:
        return False
    return silenced == EVERY_CODE or any(code.startswith(prefix) for prefix in silenced)


def statement_line_ranges(text: str) -> dict[int, tuple[int, int]]:
    """Each physical line of a multi-line statement -> the statement's (first, last) line."""
    import tokenize  # only where a suppression comment lies inside a statement: start-up time

    ranges: dict[int, tuple[int, int]] = {}
    start = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if start is None and token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                start = token.start[0]
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and start is not None:
                end = token.end[0]
                for line in range(start, end + 1):
                    ranges[line] = (start, end)
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return ranges


def split_silenced(
    findings: Iterable[Finding], text: str, tree: ast.Module | None = None, *, noqa: bool = True
) -> tuple[list[Finding], dict[Finding, str]]:
    """(reported, silenced -> the comment that silenced it: "noqa" or "seqlen-guard: ignore"). With the module's tree, the file is tokenized (to find
    each statement's lines exactly) only when a suppression comment lies inside the innermost
    statement around a finding. `noqa=False` reads only `# seqlen-guard: ignore` (the flake8
    plugin: flake8 applies `# noqa` itself)."""
    findings = list(findings)
    markers = (NOQA_MARKER, OWN_MARKER) if noqa else (OWN_MARKER,)
    if not findings or not mentions_a_marker(text, markers):
        return findings, {}
    lines = split_lines(text)
    whole_file = file_noqa_codes(lines) if noqa else None
    if tree is not None and whole_file is None and not any(may_be_silenced(f, tree, lines, markers) for f in findings):
        return findings, {}
    ranges = statement_line_ranges(text)
    reported: list[Finding] = []
    silenced: dict[Finding, str] = {}
    for finding in findings:
        first, last = ranges.get(finding.line, (finding.line, finding.line))
        statement = "\n".join(lines[first - 1 : last])
        if is_silenced(finding.code, noqa_codes(statement, OWN)):
            silenced[finding] = "seqlen-guard: ignore"
        elif noqa and (is_silenced(finding.code, noqa_codes(statement)) or is_silenced(finding.code, whole_file)):
            silenced[finding] = "noqa"
        else:
            reported.append(finding)
    return reported, silenced


def mentions_a_marker(text: str, markers: Sequence[str]) -> bool:
    """Whether `text.lower()` holds one of the markers (lower-case ASCII words without `i` or `k`),
    without lowering the text: its UTF-8 bytes are lowered instead, which lowers the ASCII letters
    alike, and the only other characters that lower to ASCII letters are `İ` (to `i̇`) and the
    Kelvin sign (to `k`). Lowering a whole module's text cost 1.4 ms on generation/utils.py."""
    lowered = text.encode("utf-8", "surrogatepass").lower()
    return any(marker.encode() in lowered for marker in markers)


def file_noqa_codes(lines: list[str]) -> frozenset[str] | None:
    """What the file's `# flake8: noqa` / `# ruff: noqa` lines silence in the whole file."""
    found: set[str] = set()
    for line in lines:
        if "noqa" not in line.lower():
            continue
        codes = noqa_codes(line, FILE_NOQA)
        if codes == EVERY_CODE:
            return EVERY_CODE
        found |= codes or set()
    return frozenset(found) or None


def may_be_silenced(finding: Finding, tree: ast.Module, lines: list[str], markers: Sequence[str]) -> bool:
    """A suppression comment may lie within the innermost statement (a compound one with its body) that
    holds the finding: a cheap bound on the statement's logical lines."""
    statements = list(statements_at(tree.body, finding.line))
    first = min([finding.line, *(first_line_of(statement) for statement in statements)])
    last = max([finding.line, *(statement.end_lineno or statement.lineno for statement in statements)])
    return any(marker in line.lower() for line in lines[first - 1 : last] for marker in markers)
