"""Printing findings for people and for CI: text, json, GitHub annotations and SARIF 2.1.0.

`render(findings, fmt)` is the one entry point; both CLIs use it. Columns in the
outputs are 1-based; `end_column` is exclusive in json and SARIF (the column just
after the last character) and inclusive in GitHub annotations, as each consumer reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from lint_rules.findings import Finding, FixPlan, Span
from lint_rules.fingerprints import SARIF_KEY
from lint_rules.rules import RULES, Rule

FORMATS = ("text", "json", "github", "sarif")
TOOL_NAME = "seqlen-guard"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"

SourceLine = Callable[[str, int], str]
"""(path, 1-based line) -> that line's text; used for `origin_source` in json."""
Applied = Callable[[Finding], bool]
"""Whether the run applied the finding's fix (the fixer knows; the checker never does)."""


def render(
    findings: Sequence[Finding],
    fmt: str,
    *,
    source_line: SourceLine | None = None,
    applied: Applied | None = None,
    rules: Mapping[str, Rule] | None = None,
    root: str | None = None,
    fingerprints: Mapping[Finding, str] | None = None,
    baseline: bool = False,
) -> str:
    """The findings in format `fmt`, ready to print; one of `FORMATS`.

    `source_line` defaults to reading the file from disk: the fixer must pass the text
    as it was before rewriting. `rules` (default: all rules) documents each rule in SARIF;
    `root` (default: the current folder) is what SARIF paths are relative to.
    `fingerprints` (`lint_rules.fingerprints`) become `fingerprint` in json and
    `partialFingerprints` in SARIF; with `baseline`, every finding is marked new (the ones
    in the baseline are not reported).
    """
    marks = Marks(fingerprints or {}, baseline)
    if fmt == "text":
        return "".join(f"{finding.text()}\n" for finding in findings)
    if fmt == "json":
        objects = [_json_object(f, source_line or _line_on_disk, applied or _never, marks) for f in findings]
        return _json_text(objects)
    if fmt == "github":
        return "".join(f"{github_annotation(finding)}\n" for finding in findings)
    if fmt == "sarif":
        log = sarif_log(findings, rules=RULES if rules is None else rules, root=root or os.getcwd(), marks=marks)
        return _json_text(log)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


class Marks(NamedTuple):
    """What a run knows about each finding beyond the finding itself."""

    fingerprints: Mapping[Finding, str] = {}
    baseline: bool = False

    def json_fields(self, finding: Finding) -> dict[str, object]:
        fields: dict[str, object] = {}
        if finding in self.fingerprints:
            fields["fingerprint"] = self.fingerprints[finding]
        if self.baseline:
            fields["baseline_state"] = "new"
        return fields

    def sarif_fields(self, finding: Finding) -> dict[str, object]:
        fields: dict[str, object] = {}
        if finding in self.fingerprints:
            fields["partialFingerprints"] = {SARIF_KEY: self.fingerprints[finding]}
        if self.baseline:
            fields["baselineState"] = "new"
        return fields


def _line_on_disk(path: str, line: int) -> str:
    import linecache  # it imports `tokenize`: start-up time of a run that prints no line from disk

    return linecache.getline(path, line)


def _never(finding: Finding) -> bool:
    return False


def _json_text(document: object) -> str:
    import json  # only for the json and SARIF formats: a text run (pre-commit) does without

    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# -------------------------------------------------------------------------------- json


def _json_object(finding: Finding, source_line: SourceLine, applied: Applied, marks: Marks) -> dict[str, object]:
    span, origin, fix = finding.span, finding.origin, finding.fix
    return {
        "path": finding.path,
        "line": span.line,
        "column": span.col + 1,
        "end_line": span.end_line,
        "end_column": span.end_col + 1,
        "code": finding.code,
        "message": finding.message,
        "origin_line": origin.line,
        "origin_column": origin.col + 1,
        "origin_source": source_line(finding.path, origin.line).strip(),
        "source_method": finding.source_method,
        "function": finding.function or None,
        "compiled_region": finding.compiled_region or None,
        "fix": {
            "safety": fix.safety.value,
            "kind": fix.kind.value,
            "applied": applied(finding),
            "reason": fix.reason or None,
            "other_values": [_other_value(plan, source_line, finding.path) for plan in finding.other_fixes],
        },
        **marks.json_fields(finding),
    }


def _other_value(plan: FixPlan, source_line: SourceLine, path: str) -> dict[str, object]:
    """Another value that reaches the finding's place and needs a fix of its own (bound apart)."""
    return {
        "origin_line": plan.call.line,
        "origin_column": plan.call.col + 1,
        "origin_source": source_line(path, plan.call.line).strip(),
        "safety": plan.safety.value,
        "kind": plan.kind.value,
        "reason": plan.reason or None,
    }


# ------------------------------------------------------------------------------ github


def github_annotation(finding: Finding) -> str:
    """A workflow command that makes GitHub show the finding on the pull request's diff."""
    span = finding.span
    properties = {
        "file": finding.path,
        "line": span.line,
        "col": span.col + 1,
        "endLine": span.end_line,
        "endColumn": span.end_col if span.end_line > span.line else max(span.end_col, span.col + 1),
        "title": finding.code,
    }
    joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::error {joined}::{_escape_data(finding.message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# ------------------------------------------------------------------------------- sarif


def sarif_log(
    findings: Sequence[Finding], *, rules: Mapping[str, Rule], root: str, marks: Marks | None = None
) -> dict[str, object]:
    """A SARIF 2.1.0 log with one run, as GitHub code scanning reads it."""
    rule_ids = sorted({*rules, *(finding.code for finding in findings)})
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": _driver([_sarif_rule(rule_id, rules.get(rule_id)) for rule_id in rule_ids])},
                "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path(root).resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_sarif_result(f, index[f.code], root, marks or Marks()) for f in findings],
            }
        ],
    }


def _driver(rules: list[dict[str, object]]) -> dict[str, object]:
    driver: dict[str, object] = {"name": TOOL_NAME}
    metadata = _distribution_metadata()
    if "version" in metadata:
        driver["version"] = metadata["version"]
    if "url" in metadata:
        driver["informationUri"] = metadata["url"]
    driver["rules"] = rules
    return driver


def _distribution_metadata() -> dict[str, str]:
    """Version and home page of the installed distribution; empty when run from a bare checkout."""
    import importlib.metadata  # only SARIF needs it: it costs start-up time

    try:
        metadata = importlib.metadata.metadata(TOOL_NAME)
    except importlib.metadata.PackageNotFoundError:
        return {}
    found = {"version": metadata["Version"]}
    project_urls = [entry.partition(",")[2].strip() for entry in metadata.get_all("Project-URL") or []]
    urls = [*(metadata.get_all("Home-page") or []), *project_urls]
    if urls:
        found["url"] = urls[0]
    return found


def _sarif_rule(rule_id: str, rule: Rule | None) -> dict[str, object]:
    if rule is None:
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _paragraph(rule.what_it_does)},
        "help": {"text": rule_help_text(rule), "markdown": rule_help_markdown(rule)},
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixSafety": _paragraph(rule.fix_safety), "tags": ["correctness", "torch.compile"]},
    }


def _sarif_result(finding: Finding, rule_index: int, root: str, marks: Marks) -> dict[str, object]:
    fix = finding.fix
    properties: dict[str, object] = {
        "fixSafety": fix.safety.value,
        "fixKind": fix.kind.value,
        "sourceMethod": finding.source_method,
    }
    if fix.reason:
        properties["fixReason"] = fix.reason
    if finding.compiled_region:
        properties["compiledRegion"] = finding.compiled_region
    if finding.function:
        properties["function"] = finding.function
    return {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [_location(finding.path, finding.span, root)],
        "relatedLocations": _origin_locations(finding, root),
        **marks.sarif_fields(finding),
        "properties": properties,
    }


def _origin_locations(finding: Finding, root: str) -> list[dict[str, object]]:
    """The source call of the finding's value, then those of the other values bound apart."""
    message = {"text": f"the length comes from this {finding.source_method}() call"}
    calls = [finding.origin, *(plan.call for plan in finding.other_fixes)]
    return [
        {"id": number, **_location(finding.path, call, root), "message": message}
        for number, call in enumerate(dict.fromkeys(calls), start=1)
    ]


def _location(path: str, span: Span, root: str) -> dict[str, object]:
    return {
        "physicalLocation": {
            "artifactLocation": _artifact(path, root),
            "region": {
                "startLine": span.line,
                "startColumn": span.col + 1,
                "endLine": span.end_line,
                "endColumn": span.end_col + 1,
            },
        }
    }


def _artifact(path: str, root: str) -> dict[str, str]:
    """The file relative to `root` under %SRCROOT%, or an absolute file URI when it lies outside."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(Path(root).resolve())
    except ValueError:
        return {"uri": absolute.as_uri()}
    from urllib.parse import quote  # SARIF only: start-up time of the other formats

    return {"uri": quote(relative.as_posix()), "uriBaseId": SOURCE_ROOT}


# ---------------------------------------------------------------------------- rule docs
# (`textwrap` is imported where it is used: a check that prints no rule's docs does not pay for it)


def _sections(rule: Rule) -> Iterator[tuple[str, str, bool]]:
    """(heading, body, body is code) for each part of a rule's documentation."""
    yield "What it does", _paragraph(rule.what_it_does), False
    yield "Why is this bad?", _paragraph(rule.why_bad), False
    yield "Example", _code(rule.example), True
    yield "Use instead", _code(rule.use_instead), True
    yield "Fix safety", _paragraph(rule.fix_safety), False


def rule_help_text(rule: Rule) -> str:
    """A rule's documentation as plain text (`--explain`, SARIF help.text)."""
    from textwrap import indent

    parts = [f"{rule.code} ({rule.name}): {rule.summary}"]
    for heading, body, is_code in _sections(rule):
        label = heading if heading.endswith("?") else f"{heading}:"
        parts.append(f"{label}\n{indent(body, '    ') if is_code else body}")
    return "\n\n".join(parts) + "\n"


def rule_help_markdown(rule: Rule) -> str:
    """A rule's documentation as Markdown (SARIF help.markdown, the README)."""
    parts = [f"# {rule.code}: {rule.name}", rule.summary]
    for heading, body, is_code in _sections(rule):
        parts.append(f"## {heading}\n\n" + (f"```python\n{body}\n```" if is_code else body))
    return "\n\n".join(parts) + "\n"


def _paragraph(text: str) -> str:
    from textwrap import dedent

    return dedent(text).strip()


def _code(text: str) -> str:
    from textwrap import dedent

    return dedent(text).strip("\n").rstrip()
