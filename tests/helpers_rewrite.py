"""Shared by the corpus, bad-input and interrupt tests: running the two CLIs as a user would, and an
independent oracle for "the rewrite only inserted guards" that does not reuse `fixers.verify`.

The oracle works on bytes. It finds the statements the fixer inserted (int guards, hoisted
assignments, a leading `import torch`) among the lines a byte-level diff shows as new, takes them
out, puts each hoisted call back in place of its name, and requires the original bytes back.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import io
import os
import re
import subprocess
import sys
import tokenize
from collections.abc import Callable, Iterable, Sequence, Set
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CHECKER = "lint_rules"
FIXER = "fixers.rewrite"
FIXER_SUMMARY_PREFIX = "seqlen-guard-fix: "
FINDING_LINE = re.compile(r"\S.*:\d+:\d+: SLG\d{3} .*")
"""A finding as the CLIs print it (the fixer adds its status in brackets)."""
BOM = b"\xef\xbb\xbf"
NEWLINE = re.compile(rb"\r\n|\r|\n")
LEGIT_ERROR_REASONS = (
    re.compile(r"syntax error on line \d+: .+"),
    re.compile(r"cannot decode as [\w-]+: invalid byte 0x[0-9a-f]{2} on line \d+"),
    re.compile(r"bad encoding declaration: .+"),
    re.compile(r"binary file \(contains NUL bytes\), not Python source"),
    re.compile(r"cannot parse: RecursionError: .+"),
)
"""Reasons for which a file from code nobody wrote for this project may fail (exit 2)."""


# ----------------------------------------------------------------------------- running the CLIs


@dataclasses.dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes

    def error_lines(self) -> list[str]:
        """stderr without the fixer's own lines (summary, notes) and findings (--diff and --check
        print them there): each must be one `path: reason` line."""
        return [
            line
            for line in self.stderr.splitlines()
            if not line.startswith(FIXER_SUMMARY_PREFIX) and not FINDING_LINE.fullmatch(line)
        ]

    def finding_lines(self) -> list[str]:
        """The findings, from stdout or stderr, whichever the mode prints them on."""
        return [line for line in (*self.stdout.splitlines(), *self.stderr.splitlines()) if FINDING_LINE.fullmatch(line)]

    def errors(self) -> dict[str, str]:
        """`path -> reason` from stderr; fails on a line that is not `path: reason`."""
        found: dict[str, str] = {}
        for line in self.error_lines():
            path, separator, reason = line.partition(": ")
            assert separator and path and reason, f"stderr line is not `path: reason`: {line!r}\n{self.describe()}"
            found[path] = reason
        return found

    def summary(self) -> dict[str, int]:
        """The fixer's counts: files scanned, findings, fixed/fixable, files changed, left, errors."""
        lines = [
            line for line in self.stderr.splitlines() if line.startswith(FIXER_SUMMARY_PREFIX) and " scanned, " in line
        ]
        assert len(lines) == 1, f"expected one summary line\n{self.describe()}"
        match = re.fullmatch(
            r"seqlen-guard-fix: (\d+) files? scanned, (\d+) findings?, (\d+) (?:fixed|fixable) in (\d+) files?, "
            r"(\d+) left \((\d+) unsafe, (\d+) no automatic fix\), (\d+) errors?",
            lines[0],
        )
        assert match, f"unexpected summary line {lines[0]!r}"
        keys = ("files", "findings", "fixes", "changed_files", "left", "unsafe", "unfixable", "errors")
        return dict(zip(keys, map(int, match.groups()), strict=False))

    def describe(self) -> str:
        return (
            f"command: {' '.join(self.args)[:500]}\nexit code: {self.returncode}\n"
            f"stdout (end):\n{self.stdout[-3000:]}\nstderr (end):\n{self.stderr[-3000:]}"
        )


def run_cli(module: str, args: Sequence[str], cwd: Path | str, timeout: float = 600) -> Run:
    """`python -m module args...` in `cwd`; fails the test on a traceback."""
    command = (sys.executable, "-m", module, *args)
    completed = subprocess.run(command, cwd=cwd, env=cli_environment(), capture_output=True, timeout=timeout)
    run = Run(
        command,
        completed.returncode,
        completed.stdout.decode("utf-8", "surrogateescape"),
        completed.stderr.decode("utf-8", "surrogateescape"),
        completed.stdout,
    )
    assert "Traceback (most recent call last)" not in run.stderr, f"the CLI crashed\n{run.describe()}"
    return run


def cli_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def unexplained_errors(errors: dict[str, str]) -> dict[str, str]:
    """The errors whose reason is not one a third-party file may legitimately have."""
    return {
        path: reason
        for path, reason in errors.items()
        if not any(pattern.fullmatch(reason) for pattern in LEGIT_ERROR_REASONS)
    }


def confirm_error_is_real(path: Path, reason: str) -> str:
    """ "" when the file really fails the way `reason` says (checked with Python itself), else why not."""
    raw = path.read_bytes()
    if reason.startswith("syntax error") or reason.startswith("cannot parse"):
        try:
            ast.parse(raw)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ""
        return "Python parses it"
    if reason.startswith("cannot decode") or reason.startswith("bad encoding"):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
            raw.decode(encoding)
        except (SyntaxError, UnicodeDecodeError, LookupError):
            return ""
        return "Python decodes it"
    if reason.startswith("binary file"):
        return "" if b"\0" in raw else "no NUL byte in it"
    return "unexpected reason"


# -------------------------------------------------------------------------------- the oracle


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their ends, split where Python's tokenizer splits (\\r\\n, \\r, \\n; not \\f)."""
    lines, start = [], 0
    for match in NEWLINE.finditer(data):
        lines.append(data[start : match.end()])
        start = match.end()
    if start < len(data):
        lines.append(data[start:])
    return lines


def source_encoding(raw: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return encoding


@dataclasses.dataclass
class Insertion:
    """Inserted statements found in the rewritten file."""

    lines: set[int] = dataclasses.field(default_factory=set)
    """1-based line numbers (in the new file) of every inserted statement."""
    put_back: list[tuple[ast.Name, ast.expr]] = dataclasses.field(default_factory=list)
    """(hoisted name in the statement that follows, the call it stands for)."""
    statements: set[int] = dataclasses.field(default_factory=set)
    """`id()` of the inserted statement nodes."""


def rewrite_problems(old: bytes, new: bytes) -> list[str]:
    """Why `new` is not `old` with only guards inserted (and calls hoisted); [] when it is."""
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except SyntaxError as error:
        return [f"does not parse: line {error.lineno}: {error.msg}"]
    problems = []
    if old.startswith(BOM) != new.startswith(BOM):
        problems.append("the BOM was added or dropped")
    if source_encoding(old) != source_encoding(new):
        problems.append("the encoding changed")
    old_lines, new_lines = split_lines(old.removeprefix(BOM)), split_lines(new.removeprefix(BOM))
    opcodes = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    new_line_numbers = {
        number + 1
        for operation, _, _, new_start, new_end in opcodes
        if operation in ("insert", "replace")
        for number in range(new_start, new_end)
    }
    insertion = find_insertions(new_tree, new_line_numbers)
    rewritten_lines = device_rewrite_lines(new_tree, new_line_numbers)
    problems += line_diff_problems(opcodes, old_lines, new_tree, insertion, rewritten_lines)
    problems += newline_problems(old_lines, new_lines, new_line_numbers)
    problems += undone_bytes_problems(old, undo_insertions(new, insertion), rewritten_lines, insertion)
    old_arange, new_arange = ArangeForms(), ArangeForms()
    old_dump, new_dump = (
        ast.dump(old_arange.visit(old_tree)),
        ast.dump(new_arange.visit(strip_tree(new_tree, insertion))),
    )
    if old_dump != new_dump:
        problems.append("the ast differs from the original beyond the inserted statements and device rewrites")
    problems += device_problems(old_arange.devices, new_arange.devices)
    return problems


# ----------------------------------------------------------------- the device rewrite, independently
# `torch.arange(a, a + n, ...)` (or `n + a`, or `arange(b - n, b)`) becomes `torch.arange(n, ...) + a`,
# and a call without `device=` may gain one. Both forms are brought to one placeholder on each side,
# so that the trees compare equal exactly when the rewrite kept every operand and keyword.


class ArangeForms(ast.NodeTransformer):
    """Replaces both forms with `__arange_from__(a, n, <keywords but device>)`; `devices` lists the
    `device=` of each, in order (None where there is none)."""

    def __init__(self) -> None:
        self.devices: list[str | None] = []

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and is_arange(node.left) and len(node.left.args) == 1:
            return self.placeholder(node.right, node.left.args[0], node.left)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not (is_arange(node) and len(node.args) == 2):
            return node
        found = spans(*node.args)
        return self.placeholder(*found[0], node) if found else node

    def placeholder(self, offset: ast.expr, span: ast.expr, call: ast.Call) -> ast.Call:
        device = [keyword for keyword in call.keywords if keyword.arg == "device"]
        self.devices.append(ast.dump(device[0].value) if device else None)
        keywords = [keyword for keyword in call.keywords if keyword.arg != "device"]
        return ast.Call(ast.Name("__arange_from__", ast.Load()), [offset, span], keywords)


def is_arange(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arange"


def spans(start: ast.expr, end: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """(offset, span) when `end - start` is a term of the bounds: `a, a + n`, `a, n + a`, `b - n, b`."""
    same = ast.dump
    if isinstance(end, ast.BinOp) and isinstance(end.op, ast.Add):
        if same(end.left) == same(start):
            return [(start, end.right)]
        if same(end.right) == same(start):
            return [(start, end.left)]
    if isinstance(start, ast.BinOp) and isinstance(start.op, ast.Sub) and same(start.left) == same(end):
        return [(start, start.right)]
    return []


def device_problems(old: list[str | None], new: list[str | None]) -> list[str]:
    """A device the original named is kept; one may be added where it named none."""
    if len(old) != len(new):
        return [f"{len(old)} arange forms in the original, {len(new)} after the rewrite"]
    return [
        f"the device of an arange changed: {before} -> {after}"
        for before, after in zip(old, new, strict=True)
        if before is not None and before != after
    ]


def device_rewrite_lines(tree: ast.Module, new_line_numbers: set[int]) -> set[int]:
    """The lines of the statements, among the new lines, that hold an `arange(n, ...) + a`."""
    found: set[int] = set()
    for statement in ast.walk(tree):
        if not isinstance(statement, ast.stmt) or not statement_lines(statement) & new_line_numbers:
            continue
        own = [node for node in ast.walk(statement) if isinstance(node, ast.BinOp) and is_arange(node.left)]
        if own and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For)):
            found |= statement_lines(statement)
    return found


def undone_bytes_problems(old: bytes, undone: bytes, rewritten_lines: set[int], insertion: Insertion) -> list[str]:
    """With the inserted statements taken out, the bytes are the original's, but for the lines of
    statements holding a device rewrite (which the ast comparison checks)."""
    if undone == old:
        return []
    kept = [number for number in range(1, len(split_lines(undone)) + 2) if number not in insertion.lines]
    allowed = {kept.index(number) for number in rewritten_lines if number in kept}
    old_lines, undone_lines = split_lines(old), split_lines(undone)
    matcher = difflib.SequenceMatcher(None, old_lines, undone_lines, autojunk=False)
    for operation, _, _, start, end in matcher.get_opcodes():
        inside = set(range(start, end)) <= allowed if operation == "replace" else {start - 1, start} & allowed
        if operation != "equal" and not (operation in ("replace", "delete") and inside):
            return ["taking the inserted statements out does not give the original bytes back"]
    return []


def find_insertions(tree: ast.Module, new_line_numbers: set[int]) -> Insertion:
    insertion = Insertion()
    for body in statement_lists(tree):
        for index, statement in enumerate(body):
            if not statement_lines(statement) <= new_line_numbers:
                continue
            if is_guard(statement) or (body is tree.body and is_torch_import(statement)):
                mark(insertion, statement)
            elif hoisted := hoisted_call(body, index):
                name, call, user = hoisted
                for node in ast.walk(user):
                    if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                        insertion.put_back.append((node, call))
                        break
                mark(insertion, statement)
    return insertion


def mark(insertion: Insertion, statement: ast.stmt) -> None:
    insertion.lines |= statement_lines(statement)
    insertion.statements.add(id(statement))


def statement_lines(statement: ast.stmt) -> set[int]:
    return set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))


def statement_lists(tree: ast.AST) -> Iterable[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


def is_guard(statement: ast.stmt) -> bool:
    """`if isinstance(t, <x>.Tensor): t = int(t.item())`.

    Written out here on purpose rather than imported from `fixers.guard_text`: this is the tests'
    independent oracle, so that a change to the fixer's guard cannot also change what checks it.
    """
    if not (isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1):
        return False
    test, body = statement.test, statement.body[0]
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return False
    if len(test.args) != 2 or not (isinstance(test.args[1], ast.Attribute) and test.args[1].attr == "Tensor"):
        return False
    target = ast.unparse(test.args[0])
    return (
        isinstance(body, ast.Assign)
        and len(body.targets) == 1
        and ast.unparse(body.targets[0]) == target
        and ast.unparse(body.value) == f"int({target}.item())"
    )


def is_torch_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Import) and [alias.name for alias in statement.names] == ["torch"]


def hoisted_call(body: list[ast.stmt], index: int) -> tuple[str, ast.expr, ast.stmt] | None:
    """(name, call, the statement using it) for `name = call` + its guard, before the statement that
    uses the name (several hoists out of one statement come one after the other)."""
    hoist = hoist_pair(body, index)
    if hoist is None:
        return None
    user = index + 2
    while hoist_pair(body, user) is not None:
        user += 2
    return (*hoist, body[user]) if user < len(body) else None


def hoist_pair(body: list[ast.stmt], index: int) -> tuple[str, ast.expr] | None:
    """(name, call) when body[index] is `name = call` and body[index + 1] guards `name`."""
    if index + 1 >= len(body):
        return None
    statement, guard = body[index], body[index + 1]
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call)
        and is_guard(guard)
        and isinstance(guard, ast.If)
        and isinstance(guard.test, ast.Call)
        and ast.unparse(guard.test.args[0]) == statement.targets[0].id
    ):
        return None
    return statement.targets[0].id, statement.value


def line_diff_problems(
    opcodes: list[tuple[str, int, int, int, int]],
    old_lines: list[bytes],
    new_tree: ast.Module,
    insertion: Insertion,
    rewritten_lines: Set[int] = frozenset(),
) -> list[str]:
    """Only inserted lines, except that the statement using a hoisted call's name, or holding a
    device rewrite, may change."""
    parents = {}
    if insertion.put_back:
        parents = {id(child): node for node in ast.walk(new_tree) for child in ast.iter_child_nodes(node)}
    hoisted_users: set[int] = set(rewritten_lines)
    for name, _ in insertion.put_back:
        statement = innermost_statement(name, parents)
        hoisted_users |= statement_lines(statement) if statement else set()
    problems = []
    for operation, old_start, _, new_start, new_end in opcodes:
        if operation in ("equal", "insert"):
            continue
        changed = set(range(new_start + 1, new_end + 1)) - insertion.lines
        if not changed or not changed <= hoisted_users:
            problems.append(f"original line {old_start + 1} changed: {old_lines[old_start][:120]!r}")
    return problems


def innermost_statement(node: ast.AST, parents: dict[int, ast.AST]) -> ast.stmt | None:
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = parents.get(id(current))
    return current


def newline_problems(old_lines: list[bytes], new_lines: list[bytes], new_line_numbers: set[int]) -> list[str]:
    """Inserted lines end the way the file's lines do (CRLF in a CRLF file)."""
    old_ends = {line_end(line) for line in old_lines if line_end(line)}
    inserted_ends = {line_end(new_lines[number - 1]) for number in new_line_numbers if line_end(new_lines[number - 1])}
    if old_ends and not inserted_ends <= old_ends:
        return [f"inserted lines end with {sorted(inserted_ends)}, the file's lines with {sorted(old_ends)}"]
    return []


def line_end(line: bytes) -> bytes:
    match = NEWLINE.search(line)
    return match.group() if match else b""


def undo_insertions(new: bytes, insertion: Insertion) -> bytes:
    """`new` without the inserted lines, each hoisted name replaced by its call's source text."""
    encoding = source_encoding(new)
    bom = BOM if new.startswith(BOM) else b""
    lines = [line.decode(encoding if not bom else "utf-8") for line in split_lines(new[len(bom) :])]
    text = "".join(lines)
    for name, call in sorted(insertion.put_back, key=lambda pair: (pair[0].lineno, pair[0].col_offset), reverse=True):
        line = lines[name.lineno - 1].encode("utf-8")
        call_text = ast.get_source_segment(text, call) or ""
        replaced = line[: name.col_offset] + call_text.encode("utf-8") + line[name.end_col_offset or 0 :]
        lines[name.lineno - 1] = replaced.decode("utf-8")
    kept = [line for number, line in enumerate(lines, start=1) if number not in insertion.lines]
    return bom + "".join(kept).encode(encoding if not bom else "utf-8")


def strip_tree(tree: ast.Module, insertion: Insertion) -> ast.Module:
    calls = {id(name): call for name, call in insertion.put_back}

    class Strip(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return calls.get(id(node), node)

        def generic_visit(self, node: ast.AST) -> ast.AST:
            for field in ("body", "orelse", "finalbody"):
                value = getattr(node, field, None)
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    setattr(node, field, [item for item in value if id(item) not in insertion.statements])
            return super().generic_visit(node)

    return Strip().visit(tree)


# ------------------------------------------------------------------------- unified diffs


@dataclasses.dataclass(frozen=True)
class FileDiff:
    old_name: str
    new_name: str
    hunks: tuple[tuple[int, int, int, int, tuple[bytes, ...]], ...]
    """(old start, old count, new start, new count, lines with their one-character prefix)."""


HUNK_HEADER = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_unified_diff(output: bytes, is_other_line: Callable[[bytes], bool]) -> list[FileDiff]:
    """The file diffs in `output`, read the way `patch` and `git apply` read them (lines end at \\n).

    Lines outside a diff for which `is_other_line` is true (e.g. findings printed between diffs)
    are passed over; anything else there is an error.
    """
    lines = lines_ending_at_newline(output)
    diffs: list[FileDiff] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith(b"--- "):
            assert is_other_line(line), f"unexpected line outside a diff: {line[:200]!r}"
            index += 1
            continue
        new_line = lines[index + 1] if index + 1 < len(lines) else b""
        assert new_line.startswith(b"+++ "), f"`---` header without `+++`: {line!r} then {new_line[:200]!r}"
        index += 2
        hunks = []
        while index < len(lines) and lines[index].startswith(b"@@ "):
            hunk, index = read_hunk(lines, index)
            hunks.append(hunk)
        assert hunks, f"diff of {line!r} has no hunk"
        diffs.append(FileDiff(header_name(line), header_name(new_line), tuple(hunks)))
    return diffs


def lines_ending_at_newline(data: bytes) -> list[bytes]:
    """Lines as `patch` and `git apply` split them: at \\n only (a lone \\r stays inside its line)."""
    return [line for line in re.split(rb"(?<=\n)", data) if line]


def header_name(line: bytes) -> str:
    return line[4:].rstrip(b"\r\n").split(b"\t")[0].decode("utf-8", "surrogateescape")


def read_hunk(lines: list[bytes], index: int) -> tuple[tuple[int, int, int, int, tuple[bytes, ...]], int]:
    match = HUNK_HEADER.match(lines[index])
    assert match, f"bad hunk header {lines[index]!r}"
    old_start, old_count, new_start, new_count = (int(group) if group is not None else 1 for group in match.groups())
    index += 1
    body: list[bytes] = []
    old_seen = new_seen = 0
    while old_seen < old_count or new_seen < new_count:
        assert index < len(lines), "hunk ends early"
        line = lines[index]
        kind = line[:1]
        assert kind in (b" ", b"-", b"+"), f"bad hunk line {line[:200]!r}"
        old_seen += kind in (b" ", b"-")
        new_seen += kind in (b" ", b"+")
        body.append(line)
        index += 1
        if index < len(lines) and lines[index].startswith(b"\\ No newline at end of file"):
            body[-1] = body[-1].rstrip(b"\n")
            index += 1
    return (old_start, old_count, new_start, new_count, tuple(body)), index


def apply_diff(old: bytes, diff: FileDiff) -> bytes:
    """`old` patched by `diff`; fails where a context or removed line does not match exactly."""
    old_lines = lines_ending_at_newline(old)
    result: list[bytes] = []
    position = 0
    for old_start, _, _, _, body in diff.hunks:
        start = max(old_start - 1, 0) if any(line[:1] in (b" ", b"-") for line in body) else old_start
        assert start >= position, f"{diff.new_name}: hunks overlap or are out of order"
        result.extend(old_lines[position:start])
        position = start
        for line in body:
            kind, content = line[:1], line[1:]
            if kind in (b" ", b"-"):
                assert position < len(old_lines) and old_lines[position] == content, (
                    f"{diff.new_name}: line {position + 1} is {old_lines[position] if position < len(old_lines) else b''!r}, "
                    f"the diff expects {content!r}"
                )
                position += 1
            if kind in (b" ", b"+"):
                result.append(content)
    result.extend(old_lines[position:])
    return b"".join(result)
