"""One file through the engine, as the standalone checker and the fixer both need it:
read, skip unless a source method's name occurs, parse once, analyze, apply settings and noqa."""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from lint_rules.baseline import split_baselined
from lint_rules.engine import DeclarationRefused, SourceText, analyze_tree
from lint_rules.files import ReadError, read_source
from lint_rules.findings import Finding
from lint_rules.fingerprints import fingerprints
from lint_rules.noqa import split_silenced
from lint_rules.settings import Settings

MAX_ERROR_TEXT = 200
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
OWN_PACKAGES = tuple(os.path.join(PROJECT_ROOT, package) + os.sep for package in ("lint_rules", "fixers"))
"""Frames in these folders are this project's code."""


class CheckedFile(NamedTuple):
    path: str
    findings: tuple[Finding, ...] = ()
    silenced: tuple[Finding, ...] = ()
    """Findings a `# noqa` or `# seqlen-guard: ignore` comment silenced (listed with --show-silenced), and
    with --show-silenced those a declaration (`int-length-caches`, `int-length-classes`) silenced."""
    error: str = ""
    parsed: bool = False
    fingerprints: Mapping[Finding, str] = {}
    """Each finding's (reported, silenced or baselined) `lint_rules.fingerprints` value."""
    baselined: tuple[Finding, ...] = ()
    """Findings the baseline (`settings.baseline`) knows: not reported."""
    silenced_by: Mapping[Finding, str] = {}
    """Each silenced finding -> the comment that silenced it ("noqa" or "seqlen-guard: ignore"), or the
    declaration ("declaration int-length-caches")."""
    disabled: tuple[Finding, ...] = ()
    """Findings of rules the settings turn off for this file (select, ignore, per-file-ignores): never
    shown, but a baseline entry they match is suppressed, not fixed."""

    @property
    def found(self) -> tuple[Finding, ...]:
        """The findings that would be reported without a baseline."""
        return (*self.findings, *self.baselined)

    @property
    def suppressed(self) -> tuple[Finding, ...]:
        """The findings a suppression comment or the settings silence."""
        return (*self.silenced, *self.disabled)


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
    try:
        return check_tree(path, text, tree, settings), tree
    except Exception as error:  # an engine bug is this file's problem; Ctrl-C and exit still propagate
        return CheckedFile(path, error=internal_error(error)), tree


def check_tree(path: str, text: str, tree: ast.Module, settings: Settings) -> CheckedFile:
    """The file's result; a declaration its code refuses is an error of the file, whose findings are
    then those found without `int-length-caches`."""
    findings, refused = declared_findings(path, text, tree, settings)
    enabled: list[Finding] = []
    disabled: list[Finding] = []
    for finding in findings:
        (enabled if settings.enabled(finding.code, path) else disabled).append(finding)
    reported, silenced = (enabled, {}) if settings.disable_noqa else split_silenced(enabled, text, tree)
    if settings.show_silenced and settings.declarations:
        from lint_rules.declaration_audit import declaration_silenced  # only for --show-silenced

        silenced = {**declaration_silenced(path, text, tree, settings, findings), **silenced}
        silenced = dict(sorted(silenced.items(), key=lambda pair: (pair[0].span, pair[0].code)))
    keys = fingerprints([*reported, *silenced, *disabled], text, silenced)
    new, known = split_baselined(path, reported, keys, settings.baseline)
    return CheckedFile(
        path,
        tuple(new),
        tuple(silenced),
        error="" if refused is None else str(refused),
        parsed=True,
        fingerprints=keys,
        baselined=tuple(known),
        silenced_by=silenced,
        disabled=tuple(disabled),
    )


def declared_findings(
    path: str, text: str, tree: ast.Module, settings: Settings, source_methods: Sequence[str] | None = None
) -> tuple[list[Finding], DeclarationRefused | None]:
    """The engine's findings under the configured releases and declarations, and why the file refuses
    the declarations (None when it does not): its findings are then those found without `int-length-caches`."""
    methods = settings.source_methods if source_methods is None else source_methods
    declarations, releases = settings.declarations, settings.transformers.releases
    try:
        return analyze_tree(tree, SourceText(text), path, methods, releases, declarations), None
    except DeclarationRefused as refusal:
        kept = declarations.only_classes()
        return analyze_tree(tree, SourceText(text), path, methods, releases, kept), refusal


def internal_error(error: Exception) -> str:
    """One line for an exception raised on a file: `internal error: Type: text (at lint_rules/x.py:12)`,
    the place being the innermost frame in this project's code (else the innermost one)."""
    try:
        text = " ".join(str(error).split())
    except Exception:  # an exception whose text cannot be made
        text = "<no text>"
    text = text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 3] + "..."
    described = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return f"internal error: {described}{raised_at(error)}"


def raised_at(error: BaseException) -> str:
    import traceback  # only once something went wrong

    frames = traceback.extract_tb(error.__traceback__)
    own = [frame for frame in frames if os.path.realpath(frame.filename).startswith(OWN_PACKAGES)]
    if not frames:
        return ""
    frame = (own or frames)[-1]
    shown = os.path.relpath(os.path.realpath(frame.filename), PROJECT_ROOT) if own else os.path.basename(frame.filename)
    return f" (at {shown.replace(os.sep, '/')}:{frame.lineno})"
