"""The data the engine hands to its adapters: findings and the fix plan behind each one."""

from __future__ import annotations

import enum
from typing import NamedTuple


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

    DEVICE_REWRITE = "device-rewrite"
    """Rewrite the use so that the length stays on the device: `torch.arange(a, a + n, ...)` becomes
    `torch.arange(n, ...) + a`. Identical values for an int, a 0-dim and a shape-(1,) length, and no
    graph break, so it is safe in compiled regions and on the host alike."""

    NONE = "none"


class Span(NamedTuple):
    """A source range: 1-based lines, 0-based columns in characters."""

    line: int
    col: int
    end_line: int
    end_col: int


class DeviceRewrite(NamedTuple):
    """How a `torch.arange(start, end, ...)` call becomes `torch.arange(span, ...) + start`."""

    span_at: str
    """Where the int span is in the call: "end-right" (`arange(a, a + n)`), "end-left"
    (`arange(a, n + a)`) or "start-right" (`arange(b - n, b)`)."""
    device: str = ""
    """The device expression to add as `device=` ("" when the call has one): the device the value is
    moved to right after, as `.to(x.device)`."""
    parenthesize: bool = False
    """The sum needs parentheses where the call sits (`(torch.arange(n) + a).unsqueeze(0)`)."""


class FixPlan(NamedTuple):
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
    """Why there is no automatic fix, or why it is unsafe (and, for a use that is not rewritten on the
    device, why not). Not part of the plan's identity: findings that differ only in it share one edit."""
    scope_lines: tuple[int, int] = (0, 0)
    """First and last line of the enclosing `def` or `class` (decorators included); (0, 0) at module level.
    The fixer rewrites only these lines."""
    rewrite: DeviceRewrite | None = None
    """For DEVICE_REWRITE: how the call at `call` is rewritten (`statement` is the statement holding it)."""

    @property
    def identity(self) -> tuple[object, ...]:
        """What equality and hashing compare: every field but `reason`."""
        kept = (self.kind, self.safety, self.statement, self.call, self.targets, self.hoisted_name)
        return (*kept, self.scope_lines, self.rewrite)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FixPlan) and self.identity == other.identity

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.identity)


class Finding(NamedTuple):
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
    """The plan for the value of `origin`; where several values reach the place, the least safe one."""
    function: str = ""
    """Qualified name of the enclosing function, e.g. "GenerationMixin._prefill"."""
    other_fixes: tuple[FixPlan, ...] = ()
    """The plans for the other values that reach the same place (bound on two branches), each its own
    edit: the finding is fixed when all of its plans are applied."""

    @property
    def plans(self) -> tuple[FixPlan, ...]:
        return (self.fix, *self.other_fixes)

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def col(self) -> int:
        return self.span.col

    def text(self) -> str:
        """The `path:line:col: CODE message` form used by flake8 and the checker."""
        return f"{self.path}:{self.span.line}:{self.span.col + 1}: {self.code} {self.message}"
