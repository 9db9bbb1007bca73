"""The text being analyzed, shared by the engine, its adapters and the fixer."""

from __future__ import annotations

import ast
import functools

from lint_rules.findings import Span
from lint_rules.lines import split_lines


class SourceText:
    """The text being analyzed, for positions in characters and layout questions."""

    def __init__(self, text: str) -> None:
        self.text = text

    @functools.cached_property
    def lines(self) -> list[str]:
        """Split on first use: most files analyzed have no finding to place."""
        return split_lines(self.text)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def char_col(self, line: int, byte_col: int) -> int:
        text = self.line(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        return Span(
            line,
            self.char_col(line, getattr(node, "col_offset", 0)),
            end_line,
            self.char_col(end_line, getattr(node, "end_col_offset", None) or 0),
        )

    def starts_its_line(self, node: ast.stmt) -> bool:
        """Nothing before the statement on its line, and the line above does not end in a backslash
        continuation that joins the two."""
        if self.line(node.lineno).encode("utf-8")[: node.col_offset].strip() != b"":
            return False
        return node.lineno == 1 or not self.line(node.lineno - 1).rstrip("\r\n").endswith("\\")

    def ends_its_line(self, node: ast.stmt) -> bool:
        rest = self.line(node.end_lineno or node.lineno).encode("utf-8")[node.end_col_offset or 0 :].strip()
        return rest == b"" or rest.startswith(b"#")
