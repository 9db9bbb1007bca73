"""How the commands word their counts: one place for the plural, so that no summary says "1 files"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str = "") -> str:
    """`1 file`, `0 files`, `2 files`; `plural` for a noun that does not just take an s (`entry`, `entries`)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
