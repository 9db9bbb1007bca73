"""`# noqa` comments, read the way flake8 reads them, for the checker and the fixer.

A bare `# noqa` silences every finding on its line, `# noqa: SLG002,E501` only the codes named.
As in flake8, a comment anywhere in a statement that spans several lines covers all of them.
A `# flake8: noqa` (or `# ruff: noqa`) line silences the whole file; with codes
(`# flake8: noqa: SLG004`), as ruff reads it, only those codes in the whole file.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable

from lint_rules.engine.definitions import first_line_of, statements_at
from lint_rules.files import split_lines
from lint_rules.findings import Finding

CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)"
NOQA = re.compile(r"#\s*noqa(?::[\s]?" + CODES + ")?", re.IGNORECASE)
FILE_NOQA = re.compile(r"\s*#\s*(?:flake8|ruff)[:=]\s*noqa(?:\s*:\s*" + CODES + r")?\s*$", re.IGNORECASE)
"""A comment alone on its line, as flake8 reads it (`match`, not `search`: not inside a string)."""
EVERY_CODE = frozenset({"*"})


def noqa_codes(comment_text: str, pattern: re.Pattern[str] = NOQA) -> frozenset[str] | None:
    """The codes a piece of text silences: EVERY_CODE for a bare `# noqa`, None when it has none."""
    match = pattern.search(comment_text) if pattern is NOQA else pattern.match(comment_text)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return EVERY_CODE
    return frozenset(code.upper() for code in re.split(r"[,\s]+", codes) if code)


def is_silenced(code: str, silenced: frozenset[str] | None) -> bool:
    if silenced is None:
        return False
    return silenced == EVERY_CODE or any(code.startswith(prefix) for prefix in silenced)


def statement_line_ranges(text: str) -> dict[int, tuple[int, int]]:
    """Each physical line of a multi-line statement -> the statement's (first, last) line."""
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
    findings: Iterable[Finding], text: str, tree: ast.Module | None = None
) -> tuple[list[Finding], list[Finding]]:
    """(reported, silenced by a noqa comment). With the module's tree, the file is tokenized (to
    find each statement's lines exactly) only when a noqa comment lies inside the innermost
    statement around a finding."""
    findings = list(findings)
    if not findings or "noqa" not in text.lower():
        return findings, []
    lines = split_lines(text)
    whole_file = file_noqa_codes(lines)
    if tree is not None and whole_file is None and not any(may_be_silenced(f, tree, lines) for f in findings):
        return findings, []
    ranges = statement_line_ranges(text)
    reported: list[Finding] = []
    silenced: list[Finding] = []
    for finding in findings:
        first, last = ranges.get(finding.line, (finding.line, finding.line))
        codes = noqa_codes("\n".join(lines[first - 1 : last]))
        is_quiet = is_silenced(finding.code, codes) or is_silenced(finding.code, whole_file)
        (silenced if is_quiet else reported).append(finding)
    return reported, silenced


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


def may_be_silenced(finding: Finding, tree: ast.Module, lines: list[str]) -> bool:
    """A noqa comment lies within the innermost statement (a compound one with its body) that
    holds the finding: a cheap bound on the statement's logical lines."""
    statements = list(statements_at(tree.body, finding.line))
    first = min([finding.line, *(first_line_of(statement) for statement in statements)])
    last = max([finding.line, *(statement.end_lineno or statement.lineno for statement in statements)])
    return any("noqa" in line.lower() for line in lines[first - 1 : last])
