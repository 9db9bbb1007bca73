"""The --diff output: a unified diff that `git apply` and `patch -p1` take from the current folder,
each hunk header naming the `def` or `class` that its first change is in (git names the one
above the hunk's first context line)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence

from fixers.verify import Opcode, lines_opcodes

CONTEXT_LINES = 3
HEADER_BYTES = 80
DEFINITION = re.compile(r"[ \t]*((?:class|(?:async[ \t]+)?def)[ \t].*)")
"""git's hunk-header pattern for Python."""
NO_NEWLINE = "\\ No newline at end of file\n"
BYTES = "latin-1"
"""Bytes as characters one to one: the diff is worked out on text and written back as the same bytes."""


def unified_diff(path: str, old: bytes, new: bytes) -> bytes:
    """The patch from the bytes `old` to `new` of the file at `path`. It carries the file's own bytes
    (its encoding, BOM and line endings), so that it applies to the file on disk whatever its coding."""
    old_lines, new_lines = patch_lines(old), patch_lines(new)
    groups = KnownOpcodes(lines_opcodes(old_lines, new_lines)).get_grouped_opcodes(CONTEXT_LINES)
    hunks = "".join(hunk(group, old_lines, new_lines) for group in groups)
    if not hunks:
        return b""
    name = os.fsencode(patch_name(path))
    return b"--- a/" + name + b"\n+++ b/" + name + b"\n" + hunks.encode(BYTES)


def patch_lines(data: bytes) -> list[str]:
    """The lines as `git apply` and `patch` read them (each ends at \\n), one character per byte."""
    parts = data.decode(BYTES).split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


class KnownOpcodes(difflib.SequenceMatcher[str]):
    """difflib's grouping into hunks, over opcodes already computed."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self.known = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return list(self.known)


def hunk(group: Sequence[tuple[str, int, int, int, int]], old_lines: Sequence[str], new_lines: Sequence[str]) -> str:
    first, last = group[0], group[-1]
    header = f"@@ -{line_range(first[1], last[2])} +{line_range(first[3], last[4])} @@"
    first_change = next((operation[1] for operation in group if operation[0] != "equal"), first[1])
    context = definition_above(old_lines, first_change)
    lines = [f"{header} {context}\n" if context else f"{header}\n"]
    for operation, old_start, old_end, new_start, new_end in group:
        if operation == "equal":
            lines += [" " + line for line in old_lines[old_start:old_end]]
            continue
        lines += ["-" + line for line in old_lines[old_start:old_end]]
        lines += ["+" + line for line in new_lines[new_start:new_end]]
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines)


def line_range(start: int, end: int) -> str:
    """`start,count` as unified diffs write it (1-based; an empty range names the line before it)."""
    count = end - start
    if count == 1:
        return str(start + 1)
    return f"{start + 1 if count else start},{count}"


def definition_above(lines: Sequence[str], before: int) -> str:
    """The nearest `def` or `class` line above line index `before`, from its keyword on ("" if none)."""
    for index in range(before - 1, -1, -1):
        match = DEFINITION.match(lines[index])
        if match:
            return shortened(match.group(1).rstrip())
    return ""


def shortened(line: str) -> str:
    """The first 80 bytes of a hunk header's `def` line, as git keeps them, less a UTF-8 character cut
    in two at the end (so that the patch of a UTF-8 file stays UTF-8)."""
    head = line[:HEADER_BYTES].encode(BYTES)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.end == len(head) and error.reason == "unexpected end of data":
            head = head[: error.start]
    return head.decode(BYTES)


def patch_name(path: str) -> str:
    """The name in the `a/` and `b/` headers: relative to the current folder, where `git apply`
    and `patch -p1` are run; a file outside it keeps its `../` path."""
    relative = os.path.relpath(path).replace(os.sep, "/")
    if is_outside(relative):
        resolved = os.path.relpath(os.path.realpath(path), os.path.realpath(os.curdir)).replace(os.sep, "/")
        return relative if is_outside(resolved) else resolved
    return relative


def is_outside(name: str) -> bool:
    """Whether a `patch_name` leads out of the current folder."""
    return name == ".." or name.startswith("../")
