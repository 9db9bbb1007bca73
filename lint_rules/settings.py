"""What a run is asked to do; filled from `[tool.seqlen-guard]` and the command line."""

from __future__ import annotations

from typing import NamedTuple

from lint_rules.engine import DEFAULT_SOURCE_METHODS, NO_DECLARATIONS, Declarations
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
    int_length_caches: tuple[str, ...] = ()
    """`int-length-caches`: globs of the files no tensor-length cache reaches (`("*",)`: every file)."""
    int_length_classes: tuple[str, ...] = ()
    """`int-length-classes`: dotted names of classes whose length is an int."""
    no_declarations: bool = False
    """Ignore both declarations: report what they would silence (audits; `--no-declarations`)."""
    show_silenced: bool = False
    """Also find what the declarations silence (`--show-silenced`: a second analysis of a declared file)."""

    @property
    def declarations(self) -> Declarations:
        if self.no_declarations:
            return NO_DECLARATIONS
        return Declarations(self.int_length_caches, frozenset(self.int_length_classes))

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
