"""What the declarations (`int-length-caches`, `int-length-classes`) silence in one file, for
`--show-silenced`: the file's tree analyzed again without them (and, where both apply, with
`int-length-classes` alone, to tell which one silenced each finding). Only that flag pays for it;
the engine itself knows a declaration only as a fact about receivers."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from lint_rules.engine import NO_DECLARATIONS, Declarations, SourceText, analyze_tree
from lint_rules.engine.facts.declarations import INT_LENGTH_CACHES, INT_LENGTH_CLASSES
from lint_rules.findings import Finding, Span
from lint_rules.settings import Settings


def declaration_silenced(
    path: str, text: str, tree: ast.Module, settings: Settings, kept: Sequence[Finding]
) -> dict[Finding, str]:
    """Each enabled finding a declaration silenced -> "declaration int-length-caches" (or -classes).
    `kept`: the findings with every declaration (a refused file's, with `int-length-classes` alone)."""
    declarations = settings.declarations
    covered = declarations.covers(path)
    if not covered and not declarations.int_length_classes:
        return {}
    without = analyzed(path, text, tree, settings, NO_DECLARATIONS)
    steps = [(INT_LENGTH_CACHES if covered else INT_LENGTH_CLASSES, without, kept)]
    if covered and declarations.int_length_classes:
        classes_only = analyzed(path, text, tree, settings, declarations.only_classes())
        steps = [(INT_LENGTH_CLASSES, without, classes_only), (INT_LENGTH_CACHES, classes_only, kept)]
    silenced: dict[Finding, str] = {}
    for name, before, after in steps:
        still = places(after) | places(silenced)
        for finding in before:
            if place(finding) not in still and settings.enabled(finding.code, path):
                silenced[finding] = f"declaration {name}"
    return silenced


def analyzed(path: str, text: str, tree: ast.Module, settings: Settings, declarations: Declarations) -> list[Finding]:
    return analyze_tree(
        tree, SourceText(text), path, settings.source_methods, settings.transformers.releases, declarations
    )


def place(finding: Finding) -> tuple[str, Span]:
    """A finding's rule and place: a place another value still reaches is not silenced."""
    return finding.code, finding.span


def places(findings: Sequence[Finding] | dict[Finding, str]) -> set[tuple[str, Span]]:
    return {place(finding) for finding in findings}
