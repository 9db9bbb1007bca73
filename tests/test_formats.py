"""The four output formats, on findings built by hand (no engine involved)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from lint_rules.findings import Finding, FixKind, FixPlan, FixSafety, Span
from lint_rules.formats import FORMATS, github_annotation, render, rule_help_markdown, rule_help_text
from lint_rules.rules import Rule

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

RULES = {
    "SLG001": Rule(
        code="SLG001",
        name="tensor-length-in-slice",
        summary="A get_seq_length() result is used as a slice bound.",
        what_it_does="""
            Finds slices whose bound comes from `get_seq_length()`.
        """,
        why_bad="It is a tensor, not an int: a graph break under torch.compile.",
        example="""
            past = cache.get_seq_length()
            ids = input_ids[:, past:]
        """,
        use_instead="""
            past = cache.get_seq_length()
            if isinstance(past, torch.Tensor):
                past = int(past.item())
            ids = input_ids[:, past:]
        """,
        fix_safety="Safe in host code; unsafe inside a compiled region.",
        valid=(),
        invalid=(),
    ),
}


def finding(
    path: str = "src/gen.py",
    code: str = "SLG001",
    message: str = "past_length is a tensor here; the slice needs an int",
    *,
    span: Span = Span(3, 21, 3, 32),
    compiled_region: str = "",
    function: str = "prefill",
    safety: FixSafety = FixSafety.SAFE,
    kind: FixKind = FixKind.GUARD_AFTER,
    reason: str = "",
) -> Finding:
    return Finding(
        path=path,
        code=code,
        message=message,
        span=span,
        origin=Span(2, 18, 2, 38),
        source_method="get_seq_length",
        compiled_region=compiled_region,
        fix=FixPlan(
            kind=kind,
            safety=safety,
            statement=Span(2, 4, 2, 38),
            call=Span(2, 18, 2, 38),
            targets=("past_length",),
            reason=reason,
        ),
        function=function,
    )


SOURCE = {2: "    past_length = cache.get_seq_length()\n"}


def source_line(path: str, line: int) -> str:
    return SOURCE.get(line, "")


# -------------------------------------------------------------------------------- text


def test_text() -> None:
    rendered = render([finding(), finding(path="b.py", span=Span(9, 0, 9, 4))], "text")
    assert rendered == (
        "src/gen.py:3:22: SLG001 past_length is a tensor here; the slice needs an int\n"
        "b.py:9:1: SLG001 past_length is a tensor here; the slice needs an int\n"
    )


def test_nothing_to_report() -> None:
    assert render([], "text") == ""
    assert render([], "github") == ""
    assert json.loads(render([], "json")) == []
    assert json.loads(render([], "sarif", rules=RULES))["runs"][0]["results"] == []


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render([], "xml")
    assert FORMATS == ("text", "json", "github", "sarif")


# -------------------------------------------------------------------------------- json


def test_json_object() -> None:
    unsafe = finding(
        compiled_region="inside LlamaModel.forward, an nn.Module.forward",
        safety=FixSafety.UNSAFE,
        reason="the guard adds a graph break inside a compiled region",
        function="",
    )
    rendered = render([finding(), unsafe], "json", source_line=source_line, applied=lambda f: f is not unsafe)
    assert json.loads(rendered) == [
        {
            "path": "src/gen.py",
            "line": 3,
            "column": 22,
            "end_line": 3,
            "end_column": 33,
            "code": "SLG001",
            "message": "past_length is a tensor here; the slice needs an int",
            "origin_line": 2,
            "origin_column": 19,
            "origin_source": "past_length = cache.get_seq_length()",
            "source_method": "get_seq_length",
            "function": "prefill",
            "compiled_region": None,
            "fix": {"safety": "safe", "kind": "guard-after", "applied": True, "reason": None, "other_values": []},
        },
        {
            "path": "src/gen.py",
            "line": 3,
            "column": 22,
            "end_line": 3,
            "end_column": 33,
            "code": "SLG001",
            "message": "past_length is a tensor here; the slice needs an int",
            "origin_line": 2,
            "origin_column": 19,
            "origin_source": "past_length = cache.get_seq_length()",
            "source_method": "get_seq_length",
            "function": None,
            "compiled_region": "inside LlamaModel.forward, an nn.Module.forward",
            "fix": {
                "safety": "unsafe",
                "kind": "guard-after",
                "applied": False,
                "reason": "the guard adds a graph break inside a compiled region",
                "other_values": [],
            },
        },
    ]


def merged_finding() -> Finding:
    """One place that two values bound apart reach: the lead has no automatic fix, the other a guard."""
    other = FixPlan(FixKind.GUARD_AFTER, FixSafety.SAFE, Span(4, 8, 4, 40), Span(4, 20, 4, 40), ("past_length",))
    lead = finding(safety=FixSafety.NONE, kind=FixKind.NONE, reason="the binding shares its line")
    return lead._replace(other_fixes=(other,))


def test_json_and_sarif_name_every_value_of_a_merged_finding(
    tmp_path: Path, sarif_validator: jsonschema.Draft4Validator
) -> None:
    [rendered] = json.loads(render([merged_finding()], "json", source_line=source_line, applied=lambda f: False))
    assert rendered["fix"]["other_values"] == [
        {
            "origin_line": 4,
            "origin_column": 21,
            "origin_source": "",
            "safety": "safe",
            "kind": "guard-after",
            "reason": None,
        }
    ]
    log = sarif([merged_finding()], tmp_path)
    sarif_validator.validate(log)
    [run] = log["runs"]
    [result] = run["results"]
    lines = [location["physicalLocation"]["region"]["startLine"] for location in result["relatedLocations"]]
    assert lines == [2, 4]


def test_json_reads_origin_line_from_disk_by_default(tmp_path: Path) -> None:
    path = tmp_path / "gen.py"
    path.write_text("def f(cache, ids):\n    past = cache.get_seq_length()  # é\n    return ids[:, past:]\n")
    [rendered] = json.loads(render([finding(path=str(path))], "json"))
    assert rendered["origin_source"] == "past = cache.get_seq_length()  # é"
    assert rendered["fix"]["applied"] is False


# ------------------------------------------------------------------------------ github


def test_github_lines() -> None:
    findings = [
        finding(),
        finding(path="pkg/a,b:c.py", message="50% of it\nis on a new line\r", span=Span(7, 0, 9, 5)),
        finding(span=Span(4, 8, 4, 8), message="a::b"),
    ]
    assert render(findings, "github").splitlines() == [
        "::error file=src/gen.py,line=3,col=22,endLine=3,endColumn=32,title=SLG001"
        "::past_length is a tensor here; the slice needs an int",
        "::error file=pkg/a%2Cb%3Ac.py,line=7,col=1,endLine=9,endColumn=5,title=SLG001"
        "::50%25 of it%0Ais on a new line%0D",
        "::error file=src/gen.py,line=4,col=9,endLine=4,endColumn=9,title=SLG001::a::b",
    ]


def test_github_annotation_is_one_line() -> None:
    assert "\n" not in github_annotation(finding(message="x\ny", path="a\nb.py"))


# ------------------------------------------------------------------------------- sarif


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def sarif(findings: list[Finding], root: Path, rules: dict[str, Rule] = RULES) -> dict[str, object]:
    rendered = render(findings, "sarif", rules=rules, root=str(root))
    log: dict[str, object] = json.loads(rendered)
    return log


def test_sarif_is_valid_against_the_schema(tmp_path: Path, sarif_validator: jsonschema.Draft4Validator) -> None:
    findings = [
        finding(path=str(tmp_path / "src" / "gen.py")),
        finding(path=str(tmp_path / "src" / "with space.py"), compiled_region="forward", safety=FixSafety.UNSAFE),
        finding(path="/elsewhere/x.py", code="SLG004", kind=FixKind.NONE, safety=FixSafety.NONE, reason="no target"),
    ]
    log = sarif(findings, tmp_path)
    errors = sorted(sarif_validator.iter_errors(log), key=str)
    assert not errors, "\n".join(error.message for error in errors)


def test_schema_check_is_live(sarif_validator: jsonschema.Draft4Validator) -> None:
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"rules": []}}, "results": [{"level": "fatal"}]}]}
    messages = {error.message for error in sarif_validator.iter_errors(broken)}
    assert "'name' is a required property" in str(messages)


def test_sarif_with_the_real_rules_is_valid(tmp_path: Path, sarif_validator: jsonschema.Draft4Validator) -> None:
    """Whatever the real rule registry holds (maybe nothing yet) renders to valid SARIF."""
    log = json.loads(render([finding(path=str(tmp_path / "a.py"))], "sarif", root=str(tmp_path)))
    assert not list(sarif_validator.iter_errors(log))


def test_sarif_content_for_code_scanning(tmp_path: Path) -> None:
    log = sarif(
        [
            finding(path=str(tmp_path / "src" / "with space.py"), compiled_region="forward", safety=FixSafety.UNSAFE),
            finding(path="/elsewhere/x.py", code="SLG004"),
        ],
        tmp_path,
    )
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "seqlen-guard"
    assert [rule["id"] for rule in driver["rules"]] == ["SLG001", "SLG004"]

    documented = driver["rules"][0]
    assert documented["name"] == "tensor-length-in-slice"
    assert documented["shortDescription"]["text"] == "A get_seq_length() result is used as a slice bound."
    assert documented["fullDescription"]["text"] == "Finds slices whose bound comes from `get_seq_length()`."
    assert documented["properties"]["fixSafety"] == "Safe in host code; unsafe inside a compiled region."
    assert "## Why is this bad?" in documented["help"]["markdown"]
    assert "Use instead:\n    past = cache.get_seq_length()\n    if isinstance" in documented["help"]["text"]

    first, second = run["results"]
    assert first["ruleId"] == "SLG001" and first["ruleIndex"] == 0
    assert first["level"] == "error"
    assert first["message"]["text"] == "past_length is a tensor here; the slice needs an int"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/with%20space.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 22, "endLine": 3, "endColumn": 33}
    assert first["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert first["properties"] == {
        "fixSafety": "unsafe",
        "fixKind": "guard-after",
        "sourceMethod": "get_seq_length",
        "compiledRegion": "forward",
        "function": "prefill",
    }
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"

    assert second["ruleIndex"] == 1
    assert second["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///elsewhere/x.py"}


def test_relative_paths_are_relative_to_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    log = json.loads(render([finding(path="src/gen.py")], "sarif", rules=RULES))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "src/gen.py"


# ---------------------------------------------------------------------------- rule docs


def test_rule_help_markdown() -> None:
    assert rule_help_markdown(RULES["SLG001"]) == (
        "# SLG001: tensor-length-in-slice\n\n"
        "A get_seq_length() result is used as a slice bound.\n\n"
        "## What it does\n\nFinds slices whose bound comes from `get_seq_length()`.\n\n"
        "## Why is this bad?\n\nIt is a tensor, not an int: a graph break under torch.compile.\n\n"
        "## Example\n\n```python\npast = cache.get_seq_length()\nids = input_ids[:, past:]\n```\n\n"
        "## Use instead\n\n```python\npast = cache.get_seq_length()\nif isinstance(past, torch.Tensor):\n"
        "    past = int(past.item())\nids = input_ids[:, past:]\n```\n\n"
        "## Fix safety\n\nSafe in host code; unsafe inside a compiled region.\n"
    )


def test_rule_help_text_starts_with_the_summary() -> None:
    assert rule_help_text(RULES["SLG001"]).startswith(
        "SLG001 (tensor-length-in-slice): A get_seq_length() result is used as a slice bound.\n\nWhat it does:\n"
    )


# ------------------------------------------------------------------ fingerprints, baseline


def test_json_and_sarif_carry_the_same_fingerprint_and_the_baseline_state(
    tmp_path: Path, sarif_validator: jsonschema.Draft4Validator
) -> None:
    found = finding(path=str(tmp_path / "src" / "gen.py"))
    keys = {found: "0123456789abcdef"}
    as_json = json.loads(render([found], "json", source_line=source_line, fingerprints=keys, baseline=True))
    assert (as_json[0]["fingerprint"], as_json[0]["baseline_state"]) == ("0123456789abcdef", "new")
    log = json.loads(render([found], "sarif", rules=RULES, root=str(tmp_path), fingerprints=keys, baseline=True))
    result = log["runs"][0]["results"][0]
    assert result["partialFingerprints"] == {"seqlenGuard/v1": "0123456789abcdef"}
    assert result["baselineState"] == "new"
    assert not list(sarif_validator.iter_errors(log))


def test_without_a_baseline_there_is_no_baseline_state(tmp_path: Path) -> None:
    found = finding(path=str(tmp_path / "gen.py"))
    as_json = json.loads(render([found], "json", source_line=source_line, fingerprints={found: "f" * 16}))
    assert "baseline_state" not in as_json[0] and as_json[0]["fingerprint"] == "f" * 16
    result = json.loads(render([found], "sarif", rules=RULES, root=str(tmp_path)))["runs"][0]["results"][0]
    assert "baselineState" not in result and "partialFingerprints" not in result
