"""The data the engine hands to its adapters: findings and the fix plan behind each one."""

from __future__ import annotations

import dataclasses
import enum


class FixSafety(str, enum.Enum):
    """How a finding can be fixed, in ruff's terms."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


class FixKind(str, enum.Enum):
    GUARD_AFTER = "guard-after"
    """Insert the int guard right after the statement that binds the value."""

    HOIST = "hoist"
    """Move the call into a fresh local, guarded, right before the statement."""

    NONE = "none"


@dataclasses.dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 0-based columns in characters."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclasses.dataclass(frozen=True)
class FixPlan:
    """How to neutralise one `get_seq_length()` call; shared by every finding it causes."""

    kind: FixKind
    safety: FixSafety
    statement: Span
    """The statement that binds the value (guard-after) or contains the call (hoist)."""
    call: Span
    targets: tuple[str, ...] = ()
    """Source text of the bound targets to guard, e.g. ("past_length",) or ("self.past",)."""
    hoisted_name: str = ""
    reason: str = ""
    """Why there is no automatic fix, or why it is unsafe."""
    scope_lines: tuple[int, int] = (0, 0)
    """First and last line of the enclosing `def` or `class` (decorators included); (0, 0) at module level.
    The fixer rewrites only these lines."""


@dataclasses.dataclass(frozen=True)
class Finding:
    path: str
    code: str
    message: str
    span: Span
    origin: Span
    """Where the `get_seq_length()` call that produced the value sits."""
    source_method: str
    compiled_region: str
    """Empty when the use runs on the host; else why it counts as compiled."""
    fix: FixPlan
    function: str = ""
    """Qualified name of the enclosing function, e.g. "GenerationMixin._prefill"."""

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def col(self) -> int:
        return self.span.col

    def text(self) -> str:
        """The `path:line:col: CODE message` form used by flake8 and the checker."""
        return f"{self.path}:{self.span.line}:{self.span.col + 1}: {self.code} {self.message}"
