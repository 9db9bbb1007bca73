"""One file through the engine, as the standalone checker and the fixer both need it:
read, skip unless a source method's name occurs, parse once, analyze, apply settings and noqa."""

from __future__ import annotations

import ast
import dataclasses

from lint_rules.engine import analyze_tree
from lint_rules.engine.fixplan import SourceText
from lint_rules.files import ReadError, read_source
from lint_rules.findings import Finding
from lint_rules.noqa import split_silenced
from lint_rules.settings import Settings


@dataclasses.dataclass(frozen=True)
class CheckedFile:
    path: str
    findings: tuple[Finding, ...] = ()
    silenced: tuple[Finding, ...] = ()
    """Findings a `# noqa` comment silenced (listed with --show-silenced)."""
    error: str = ""
    parsed: bool = False


def check_path(path: str, settings: Settings) -> CheckedFile:
    source = read_source(path, settings.source_methods)
    if source is None:
        return CheckedFile(path)
    if isinstance(source, ReadError):
        return CheckedFile(path, error=source.reason)
    return check_text(source.path, source.text, settings)


def check_text(path: str, text: str, settings: Settings) -> CheckedFile:
    return parse_and_check(path, text, settings)[0]


def parse_and_check(path: str, text: str, settings: Settings) -> tuple[CheckedFile, ast.Module | None]:
    """The result, and the tree for a caller that goes on working on the file (the fixer)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        return CheckedFile(path, error=f"syntax error on line {error.lineno}: {error.msg}"), None
    except (ValueError, RecursionError, MemoryError) as error:
        return CheckedFile(path, error=f"cannot parse: {type(error).__name__}: {error}"), None
    return check_tree(path, text, tree, settings), tree


def check_tree(path: str, text: str, tree: ast.Module, settings: Settings) -> CheckedFile:
    findings = analyze_tree(tree, SourceText(text), path, settings.source_methods)
    enabled = [finding for finding in findings if settings.enabled(finding.code, path)]
    reported, silenced = split_silenced(enabled, text, tree)
    return CheckedFile(path, tuple(reported), tuple(silenced), parsed=True)
