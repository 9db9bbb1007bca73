"""`seqlen-guard --add-noqa`: a suppression comment for every current finding, nothing else touched.

The comment goes at the end of the finding's line, or, where that line ends inside a string or
with a backslash, at the end of its statement's last line (the checker and the fixer read a
comment anywhere in the statement). Its style is the configured `suppression-style`:
`# noqa: SLG001` or `# seqlen-guard: ignore[SLG001]`. A comment of that style already on the
line gets the new codes added to its list; any other comment stays and the new one follows it.
A second run finds nothing left to silence, so it changes nothing.

It writes files, so it lives with the fixer; the `seqlen-guard` command line (`lint_rules.cli`)
hands `--add-noqa` to `add_noqa_command`.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Sequence

from fixers.fix_files import atomic_write
from lint_rules.check_command import PROG, Collected, check_paths
from lint_rules.exit_codes import EXIT_CLEAN, EXIT_ERROR
from lint_rules.files import ReadError, read_source
from lint_rules.findings import Finding
from lint_rules.lines import split_lines
from lint_rules.noqa import NOQA, OWN, statement_line_ranges
from lint_rules.settings import Settings
from lint_rules.wording import counted


def add_noqa_command(paths: Sequence[str], settings: Settings, jobs: int) -> int:
    """`seqlen-guard --add-noqa PATH...`: every finding silenced in place; one summary line on stderr."""
    results = Collected.of(check_paths(paths, settings._replace(baseline=None), jobs))
    by_file: dict[str, list[Finding]] = {}
    for finding in results.findings:
        by_file.setdefault(finding.path, []).append(finding)
    added = changed = 0
    for path, findings in by_file.items():
        problem = add_suppressions(path, findings, settings.suppression_style)
        if problem:
            results.errors.append((path, problem))
        else:
            added, changed = added + len(findings), changed + 1
    print(f"{PROG}: added suppressions for {counted(added, 'finding')} in {counted(changed, 'file')}", file=sys.stderr)
    results.print_errors()
    return EXIT_ERROR if results.errors else EXIT_CLEAN


STYLES = {"noqa": (NOQA, "# noqa: {codes}"), "seqlen-guard": (OWN, "# seqlen-guard: ignore[{codes}]")}


def suppression_comment(codes: Iterable[str], style: str) -> str:
    return STYLES[style][1].format(codes=", ".join(sorted(set(codes))))


def line_ends(text: str) -> tuple[set[int], dict[int, tokenize.TokenInfo]]:
    """(lines whose end can take a comment, the comment already on each line)."""
    ends: set[int] = set()
    comments: dict[int, tokenize.TokenInfo] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            ends.add(token.start[0])
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
    return ends, comments


def with_suppressions(text: str, findings: Sequence[Finding], style: str) -> str:
    """`text` with a comment silencing each finding; only comments are added or extended."""
    ends, comments = line_ends(text)
    ranges = statement_line_ranges(text)
    wanted: dict[int, set[str]] = {}
    for finding in findings:
        line = finding.line if finding.line in ends else ranges.get(finding.line, (0, finding.line))[1]
        wanted.setdefault(line, set()).add(finding.code)
    lines = split_lines(text, keepends=True)
    for line, codes in wanted.items():
        lines[line - 1] = suppressed_line(lines[line - 1], codes, comments.get(line), style)
    return "".join(lines)


def suppressed_line(line: str, codes: set[str], comment: tokenize.TokenInfo | None, style: str) -> str:
    pattern, _ = STYLES[style]
    match = pattern.search(comment.string) if comment is not None else None
    if comment is not None and match is not None and match.group("codes"):
        merged = {*re.split(r"[,\s]+", match.group("codes")), *codes}
        start = comment.start[1] + match.start("codes")
        end = comment.start[1] + match.end("codes")
        return line[:start] + ", ".join(sorted(code.upper() for code in merged if code)) + line[end:]
    body = line.rstrip("\r\n")
    return f"{body}  {suppression_comment(codes, style)}{line[len(body) :]}"


def add_suppressions(path: str, findings: Sequence[Finding], style: str) -> str:
    """Write the comments into the file; '' when done, else why the file was left as it was."""
    source = read_source(path)
    if source is None or isinstance(source, ReadError):
        return source.reason if isinstance(source, ReadError) else "cannot read"
    new_text = with_suppressions(source.text, findings, style)
    if new_text == source.text:
        return ""
    try:
        same = ast.dump(ast.parse(new_text)) == ast.dump(ast.parse(source.text))
    except (SyntaxError, ValueError):
        same = False
    if not same:
        return "adding the comments would change the code; file left untouched"
    try:
        atomic_write(path, source.encode(new_text), source.raw)
    except OSError as error:
        return f"cannot write: {error.strerror or error}; file left untouched"
    return ""
