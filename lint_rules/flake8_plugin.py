"""The flake8 adapter: flake8 hands over the tree it parsed; the engine does the rest.

flake8 applies its own `--select`, `--ignore`, `--per-file-ignores` and `# noqa` (flake8's reading).
The plugin also reads `[tool.seqlen-guard]` of the nearest configured pyproject.toml, as the checker
does: its `select`, `ignore`, `per-file-ignores`, `exclude` and `source-methods` apply on top of
flake8's own options, its `int-length-caches` and `int-length-classes` declarations reach the engine
as in the checker, and it honours `# seqlen-guard: ignore[...]` comments itself. A declaration a
file refuses is one `SLG901` finding at the line that refuses it (the checker's error), beside the
findings made without `int-length-caches`. The transformers releases come from
`--slg-target-transformers`, else as the checker finds them (`target_range`).
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
from collections.abc import Iterator, Sequence
from typing import Any

from lint_rules.checking import declared_findings, internal_error
from lint_rules.config import ConfigError, check_specifier, file_values, transformers_range
from lint_rules.engine import DEFAULT_SOURCE_METHODS, DeclarationRefused, mentions_any
from lint_rules.files import is_excluded
from lint_rules.findings import Finding, FixKind, FixPlan, FixSafety, Span
from lint_rules.noqa import split_silenced
from lint_rules.rules import DECLARATION_REFUSED_CODE, INTERNAL_ERROR_CODE
from lint_rules.settings import Settings

TARGET_FLAG = "--slg-target-transformers"


def _version() -> str:
    try:
        return importlib.metadata.version("seqlen-guard")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


class SeqlenGuardChecker:
    name = "seqlen-guard"
    version = _version()
    source_methods: Sequence[str] = DEFAULT_SOURCE_METHODS
    settings = Settings()
    """`[tool.seqlen-guard]` of the nearest configured pyproject.toml (read in `parse_options`)."""

    def __init__(self, tree: ast.Module, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--slg-source-methods",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="extra method names whose result is treated like get_seq_length()'s (seqlen-guard)",
        )
        option_manager.add_option(
            TARGET_FLAG,
            default="",
            parse_from_config=True,
            help="the transformers releases the code runs on, a PEP 440 specifier (seqlen-guard; "
            "default: target-transformers of [tool.seqlen-guard], else the project's requirements)",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        try:
            cls.settings = plugin_settings(getattr(options, "slg_target_transformers", None) or None)
        except ConfigError as error:
            raise SystemExit(f"seqlen-guard: {error}") from None
        extra = [name for name in getattr(options, "slg_source_methods", None) or [] if name]
        cls.source_methods = tuple(dict.fromkeys([*cls.settings.source_methods, *extra]))

    def run(self) -> Iterator[tuple[int, int, str, type[SeqlenGuardChecker]]]:
        """The findings; an exception of the engine becomes one SLG900 finding on line 1, so that flake8
        goes on with this file's other plugins and the other files."""
        try:
            results = [(finding.line, finding.col, f"{finding.code} {finding.message}") for finding in self.findings()]
        except Exception as error:
            results = [(1, 0, f"{INTERNAL_ERROR_CODE} {internal_error(error)}")]
        for line, col, message in results:
            yield line, col, message, type(self)

    def findings(self) -> list[Finding]:
        text = "".join(self.lines)
        if not mentions_any(text, self.source_methods) or is_excluded(self.filename, self.settings.exclude):
            return []
        found, refusal = declared_findings(self.filename, text, self.tree, self.settings, self.source_methods)
        refused = [] if refusal is None else [refusal_finding(self.filename, refusal)]
        enabled = [finding for finding in found if self.settings.enabled(finding.code, self.filename)]
        return refused + split_silenced(enabled, text, self.tree, noqa=False)[0]


def plugin_settings(target: str | None) -> Settings:
    """`[tool.seqlen-guard]` of the nearest configured pyproject.toml, with the transformers releases of
    `--slg-target-transformers`, else those the checker would find (`config.transformers_range`)."""
    checked = None if target is None else check_specifier(target, TARGET_FLAG)
    return file_values(None).to_settings()._replace(transformers=transformers_range(checked, TARGET_FLAG, None))


def refusal_finding(path: str, refusal: DeclarationRefused) -> Finding:
    """The checker's error for a refused declaration, as a finding flake8 can show (no fix)."""
    span = Span(refusal.line, 0, refusal.line, 0)
    plan = FixPlan(FixKind.NONE, FixSafety.NONE, span, span)
    return Finding(path, DECLARATION_REFUSED_CODE, str(refusal), span, span, "", "", plan)
