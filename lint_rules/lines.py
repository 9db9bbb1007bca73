"""Splitting a text into lines as Python counts them: used by the engine and every adapter alike.

It sits at the bottom with `findings.py` and `rules.py` and imports nothing of the project, so the
engine never imports an adapter's module (`files.py`) for it.
"""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """Lines as Python's tokenizer counts them: split at \\r\\n, \\r and \\n only.

    `str.splitlines` also splits at form feeds and other separators, which would shift every
    line number after them.
    """
    if "\r" not in text:
        parts = text.split("\n")
        if keepends:
            return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        return parts[:-1] if not parts[-1] else parts
    lines = [line for line in LINE_BREAK.split(text) if line]
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def lf_text(text: str) -> str:
    """The text with `\r\n` and `\r` written as `\n`: the lines Python's tokenizer reads, numbered
    alike, for the text searches that look for `\n` (a Windows checkout ends its lines in `\r\n`)."""
    return text if "\r" not in text else text.replace("\r\n", "\n").replace("\r", "\n")


def lf_bytes(data: bytes) -> bytes:
    """`lf_text` for a file's bytes."""
    return data if b"\r" not in data else data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def line_of_offset(raw: bytes, offset: int) -> int:
    """The line the byte at `offset` is on, counting line breaks as `split_lines` does."""
    before = raw[:offset]
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1
