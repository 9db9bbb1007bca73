"""What a run is asked to do; filled from `[tool.seqlen-guard]` and the command line."""

from __future__ import annotations

from typing import NamedTuple

from lint_rules.engine import DEFAULT_SOURCE_METHODS
from lint_rules.rules import ALL_CODES
from lint_rules.target_range import TargetRange

__all__ = ["DEFAULT_SOURCE_METHODS", "Settings"]


class Settings(NamedTuple):
    select: tuple[str, ...] = ALL_CODES
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(glob, codes) pairs: codes ignored in files matching the glob."""
    source_methods: tuple[str, ...] = DEFAULT_SOURCE_METHODS
    unsafe_fixes: bool = False
    disable_noqa: bool = False
    """Report what `# noqa` and `# seqlen-guard: ignore` comments would silence (audits)."""
    suppression_style: str = "noqa"
    """What `--add-noqa` writes: "noqa" (`# noqa: SLG001`) or "seqlen-guard" (`# seqlen-guard: ignore[SLG001]`)."""
    baseline: str | None = None
    """The configured baseline file (`baseline = "..."`), resolved against its pyproject.toml's folder."""
    transformers: TargetRange = TargetRange()
    """The transformers releases the project runs on, and where they were read (`target_range`)."""

    def enabled(self, code: str, path: str = "") -> bool:
        from lint_rules.files import path_matches

        if not any(code.startswith(prefix) for prefix in self.select):
            return False
        if any(code.startswith(prefix) for prefix in self.ignore):
            return False
        return not any(
            path_matches(path, glob) and any(code.startswith(prefix) for prefix in codes)
            for glob, codes in self.per_file_ignores
        )
