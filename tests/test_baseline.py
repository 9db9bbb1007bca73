"""The baseline: adopting the checker on a package with findings, as the issue's "done when" asks,
and the fingerprints it rests on."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

from lint_rules.checking import check_text
from lint_rules.fingerprints import every_fingerprint
from lint_rules.settings import Settings

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

GENERATION = textwrap.dedent(
    """\
    import torch


    def prefill(cache, input_ids):
        past_length = cache.get_seq_length()
        return input_ids[:, past_length:]


    def steps(cache):
        n = cache.get_seq_length()
        if n > 0:
            return list(range(n))
        return []
    """
)
MODEL = textwrap.dedent(
    """\
    import torch


    class Model(torch.nn.Module):
        def forward(self, x, past_key_values):
            n = past_key_values.get_seq_length()
            return x[:, n:], [0] * n
    """
)
NEW_USE = textwrap.dedent(
    """\


    def chunk(cache, mask):
        current = cache.get_seq_length()
        return mask[:, :current]
    """
)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, check=False)


def finding_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if ": SLG" in line]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "generation.py").write_text(GENERATION)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "clean.py").write_text("def f():\n    return 1\n")
    return root


def baseline_entries(root: Path, name: str = "seqlen-guard-baseline.json") -> list[dict[str, str]]:
    entries: list[dict[str, str]] = json.loads((root / name).read_text())["findings"]
    return entries


def test_adoption_flow(package: Path) -> None:
    """Write the baseline; a new use and a 20-line shift: only the new finding; fix an old one: it is
    reported fixed and the next --write-baseline drops it."""
    assert run("-m", "lint_rules", cwd=package).returncode == 1
    written = run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert written.returncode == 0, written.stderr
    assert len(baseline_entries(package)) == 5
    assert "line" not in json.dumps(baseline_entries(package)), "entries carry no line numbers"
    clean = run("-m", "lint_rules", cwd=package)
    assert (clean.returncode, clean.stdout) == (0, ""), clean.stdout + clean.stderr

    model = package / "pkg" / "model.py"
    model.write_text("# moved\n" * 20 + MODEL)
    generation = package / "pkg" / "generation.py"
    generation.write_text(GENERATION + NEW_USE)
    after = run("-m", "lint_rules", cwd=package)
    assert after.returncode == 1
    assert finding_lines(after.stdout) == [
        "pkg/generation.py:18:21: SLG002 slice bound `current`: tensor-valued length from "
        "`get_seq_length()` on line 17 used as a Python int"
    ]
    assert "1 new finding, 5 known, 0 fixed entries" in after.stderr

    generation.write_text(GENERATION.replace("    if n > 0:\n", "    if int(n) > 0:\n") + NEW_USE)
    fixed = run("-m", "lint_rules", cwd=package)
    assert "pkg/generation.py: SLG004 in steps: fixed (in the baseline, no longer found)" in fixed.stderr
    assert "1 new finding, 4 known, 1 fixed entry; `seqlen-guard --write-baseline` drops it" in fixed.stderr
    rewritten = run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert "seqlen-guard: wrote seqlen-guard-baseline.json: 5 findings; dropped 1 fixed entry" in rewritten.stderr
    rules = sorted(entry["rule"] for entry in baseline_entries(package))
    assert rules == ["SLG002", "SLG002", "SLG002", "SLG003", "SLG003"]
    assert run("-m", "lint_rules", cwd=package).returncode == 0


def test_equal_findings_need_equal_entries(package: Path) -> None:
    """Fingerprints of identical statements differ by rank: one more copy is one new finding."""
    twice = "def f(cache, x):\n    n = cache.get_seq_length()\n    a = x[:n]\n    a = x[:n]\n    return a\n"
    (package / "pkg" / "twice.py").write_text(twice)
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    (package / "pkg" / "twice.py").write_text(twice.replace("    return a\n", "    a = x[:n]\n    return a\n"))
    assert len(finding_lines(run("-m", "lint_rules", cwd=package).stdout)) == 1


TWO_VALUES = textwrap.dedent(
    """\
    def host(cache, other, x, flag):
        if flag:
            n = cache.get_seq_length()
        else:
            n = other.get_seq_length()
        return x[:, n:]
    """
)


@pytest.mark.parametrize("guarded", ["cache", "other"])
def test_a_finding_of_two_values_stays_known_when_one_is_guarded(package: Path, guarded: str) -> None:
    """Values bound apart make one finding, written as an entry per value: once either is guarded by
    hand, the finding left is still known and the other entry counts as fixed."""
    (package / "pkg" / "two.py").write_text(TWO_VALUES)
    assert run("-m", "lint_rules", "--write-baseline", "pkg", cwd=package).returncode == 0
    assert len([entry for entry in baseline_entries(package) if entry["path"] == "pkg/two.py"]) == 2
    edited = TWO_VALUES.replace(f"n = {guarded}.get_seq_length()", f"n = int({guarded}.get_seq_length())")
    (package / "pkg" / "two.py").write_text(edited)
    result = run("-m", "lint_rules", "pkg", cwd=package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": 0 new findings, 6 known, 1 fixed entry;" in result.stderr
    assert "pkg/two.py: SLG002 in host: fixed" in result.stderr


def test_fingerprints_ignore_line_numbers_and_whitespace() -> None:
    def prints(text: str) -> list[str]:
        result = check_text("m.py", text, Settings())
        return [result.fingerprints[finding] for finding in result.findings]

    moved = "\n\n\n# a comment\n" + GENERATION.replace("past_length:]", "past_length :]")
    assert prints(moved) == prints(GENERATION)
    renamed = GENERATION.replace("def prefill", "def prefill_chunk")
    assert prints(renamed)[0] != prints(GENERATION)[0], "the function is part of what a finding is"
    assert len(set(prints(GENERATION))) == 3


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_formats_and_jobs_report_only_new_findings(package: Path, fmt: str) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    (package / "pkg" / "generation.py").write_text(GENERATION + NEW_USE)
    serial = run("-m", "lint_rules", "--format", fmt, cwd=package)
    parallel = run("-m", "lint_rules", "--format", fmt, "-j", "2", cwd=package)
    assert serial.returncode == parallel.returncode == 1
    if fmt == "sarif":
        log = json.loads(serial.stdout)
        schema = json.loads(SCHEMA_PATH.read_text())
        assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))
        results = log["runs"][0]["results"]
        assert [(r["ruleId"], r["baselineState"]) for r in results] == [("SLG002", "new")]
        assert set(results[0]["partialFingerprints"]) == {"seqlenGuard/v1"}
        assert json.loads(parallel.stdout)["runs"][0]["results"] == results
    elif fmt == "json":
        objects = json.loads(serial.stdout)
        assert [(o["line"], o["baseline_state"]) for o in objects] == [(18, "new")]
        assert len(objects[0]["fingerprint"]) == 16
        assert json.loads(parallel.stdout) == objects
    else:
        assert serial.stdout.count("::error ") == 1 and serial.stdout == parallel.stdout


def test_sarif_fingerprints_survive_unrelated_line_moves(package: Path) -> None:
    def fingerprints() -> list[str]:
        log = json.loads(run("-m", "lint_rules", "--format", "sarif", "pkg", cwd=package).stdout)
        return [result["partialFingerprints"]["seqlenGuard/v1"] for result in log["runs"][0]["results"]]

    before = fingerprints()
    (package / "pkg" / "model.py").write_text("\n" * 20 + MODEL)
    (package / "pkg" / "generation.py").write_text("import os\n" + GENERATION)
    assert fingerprints() == before and len(set(before)) == 5


def test_configured_baseline_found_from_a_subfolder(package: Path) -> None:
    (package / "pyproject.toml").write_text('[tool.seqlen-guard]\nbaseline = "ci/accepted.json"\n')
    (package / "ci").mkdir()
    written = run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert written.returncode == 0 and (package / "ci" / "accepted.json").is_file(), written.stderr
    assert baseline_entries(package / "ci", "accepted.json")[0]["path"] == "../pkg/generation.py"
    below = package / "pkg"
    assert run("-m", "lint_rules", ".", cwd=below).returncode == 0
    everything = run("-m", "lint_rules", "--no-baseline", ".", cwd=below)
    assert len(finding_lines(everything.stdout)) == 5


def test_default_baseline_is_found_like_the_config(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert (package / "seqlen-guard-baseline.json").is_file()
    assert run("-m", "lint_rules", "generation.py", cwd=package / "pkg").returncode == 0


def test_a_subset_run_speaks_only_for_its_files(package: Path) -> None:
    """A pre-commit hook passes a few files: the others' entries are neither fixed nor dropped."""
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    only_model = run("-m", "lint_rules", "pkg/model.py", cwd=package)
    assert only_model.returncode == 0 and "0 fixed entries" in only_model.stderr
    (package / "pkg" / "model.py").write_text("import torch\n")
    rewritten = run("-m", "lint_rules", "--write-baseline", "pkg/model.py", cwd=package)
    assert "dropped 2 fixed entries" in rewritten.stderr
    assert {entry["path"] for entry in baseline_entries(package)} == {"pkg/generation.py"}
    assert len(baseline_entries(package)) == 3


def test_a_deleted_file_is_fixed(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    (package / "pkg" / "model.py").unlink()
    result = run("-m", "lint_rules", cwd=package)
    assert result.returncode == 0
    assert result.stderr.count("pkg/model.py: SLG00") == 2 and "2 fixed entries" in result.stderr


def test_show_silenced_lists_the_baselined_findings(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    shown = run("-m", "lint_rules", "--show-silenced", cwd=package)
    assert shown.returncode == 0
    assert len(shown.stdout.splitlines()) == 5 and all(
        line.endswith("(in the baseline)") for line in shown.stdout.splitlines()
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "invalid JSON"),
        ('{"findings": []}', "baseline version None"),
        ('{"version": 1, "findings": [3]}', "needs"),
    ],
)
def test_a_bad_baseline_is_a_usage_error(package: Path, content: str, message: str) -> None:
    (package / "bad.json").write_text(content)
    result = run("-m", "lint_rules", "--baseline", "bad.json", cwd=package)
    assert result.returncode == 2 and message in result.stderr and "bad.json" in result.stderr
    fixer = run("-m", "fixers.rewrite", "--check", "--baseline", "bad.json", cwd=package)
    assert fixer.returncode == 2 and message in fixer.stderr


def test_the_fixer_ignores_the_baseline_unless_told(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    generation = package / "pkg" / "generation.py"
    generation.write_text(GENERATION + NEW_USE)
    everything = run("-m", "fixers.rewrite", "--diff", cwd=package)
    assert everything.stdout.count("+    if isinstance(") == 3, everything.stdout
    told = run("-m", "fixers.rewrite", "--baseline", "seqlen-guard-baseline.json", cwd=package)
    assert told.returncode == 0, told.stderr
    text = generation.read_text()
    assert "isinstance(current, torch.Tensor)" in text
    assert "isinstance(past_length" not in text and "isinstance(n," not in text, "baselined findings left alone"
    assert run("-m", "lint_rules", cwd=package).returncode == 0


@pytest.mark.parametrize("style", ["noqa", "seqlen-guard"])
def test_entries_a_suppression_comment_silences_are_suppressed_not_fixed(package: Path, style: str) -> None:
    """Issue 27: after --write-baseline, --add-noqa silences every finding: nothing was fixed. One line
    counts the suppressed entries (none listed), and --write-baseline drops them, so that a comment
    removed later brings its finding back as new."""
    (package / "pyproject.toml").write_text(f'[tool.seqlen-guard]\nsuppression-style = "{style}"\n')
    (package / "pkg" / "two.py").write_text(TWO_VALUES)
    assert "6 findings (7 entries)" in run("-m", "lint_rules", "--write-baseline", cwd=package).stderr
    assert run("-m", "lint_rules", "--add-noqa", cwd=package).returncode == 0
    result = run("-m", "lint_rules", cwd=package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fixed (in the baseline" not in result.stderr
    assert result.stderr.splitlines() == [
        "seqlen-guard: baseline seqlen-guard-baseline.json: 0 new findings, 0 known, 0 fixed entries, "
        "7 suppressed entries (a suppression comment or the configuration silences their findings); "
        "`seqlen-guard --write-baseline` drops them"
    ]
    rewritten = run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert "wrote seqlen-guard-baseline.json: 0 findings; dropped 7 suppressed entries" in rewritten.stderr
    assert baseline_entries(package) == []
    model = package / "pkg" / "model.py"
    model.write_text(
        model.read_text()
        .replace("  # noqa: SLG002, SLG003", "")
        .replace("  # seqlen-guard: ignore[SLG002, SLG003]", "")
    )
    back = run("-m", "lint_rules", cwd=package)
    assert back.returncode == 1 and len(finding_lines(back.stdout)) == 2, (
        "a removed comment brings the findings back new"
    )


def test_a_suppressed_entry_and_a_fixed_one_are_told_apart(package: Path) -> None:
    """Must-report twin of the suppressed count: an entry whose finding is gone stays fixed (and listed)
    while a commented one in the same file is suppressed."""
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    generation = package / "pkg" / "generation.py"
    text = GENERATION.replace("    if n > 0:\n", "    if int(n) > 0:\n")
    generation.write_text(text.replace("input_ids[:, past_length:]", "input_ids[:, past_length:]  # noqa: SLG002"))
    result = run("-m", "lint_rules", cwd=package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "pkg/generation.py: SLG004 in steps: fixed (in the baseline, no longer found)",
        "seqlen-guard: baseline seqlen-guard-baseline.json: 0 new findings, 3 known, 1 fixed entry, "
        "1 suppressed entry (a suppression comment or the configuration silences its finding); "
        "`seqlen-guard --write-baseline` drops them",
    ]


def test_entries_of_a_rule_the_configuration_turns_off_are_suppressed(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    (package / "pyproject.toml").write_text('[tool.seqlen-guard]\nper-file-ignores = { "pkg/model.py" = ["SLG002"] }\n')
    result = run("-m", "lint_rules", cwd=package)
    assert "0 new findings, 4 known, 0 fixed entries, 1 suppressed entry" in result.stderr, result.stderr
    model = MODEL.replace("n = past_key_values.get_seq_length()", "n = int(past_key_values.get_seq_length())")
    (package / "pkg" / "model.py").write_text(model)
    fixed = run("-m", "lint_rules", cwd=package)
    assert "3 known, 2 fixed entries;" in fixed.stderr, "a finding gone is fixed, whatever the configuration says"


def test_the_written_and_the_known_counts_agree(package: Path) -> None:
    """Issue 27: a finding that values bound apart reach is one finding and two entries; both messages
    count findings and name the entries where they differ."""
    (package / "pkg" / "two.py").write_text(TWO_VALUES)
    written = run("-m", "lint_rules", "--write-baseline", cwd=package)
    assert written.stderr == "seqlen-guard: wrote seqlen-guard-baseline.json: 6 findings (7 entries)\n"
    assert len(baseline_entries(package)) == 7
    known = run("-m", "lint_rules", cwd=package)
    assert (
        known.stderr
        == "seqlen-guard: baseline seqlen-guard-baseline.json: 0 new findings, 6 known (7 entries), 0 fixed entries\n"
    )


def test_a_subset_rewrite_names_the_entries_it_kept(package: Path) -> None:
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    rewritten = run("-m", "lint_rules", "--write-baseline", "pkg/model.py", cwd=package)
    assert (
        rewritten.stderr
        == "seqlen-guard: wrote seqlen-guard-baseline.json: 2 findings, kept 3 entries of files not checked\n"
    )


def test_many_fixed_entries_are_listed_up_to_ten(package: Path) -> None:
    many = "".join(f"def f{i}(cache, x):\n    n = cache.get_seq_length()\n    return x[:n]\n\n\n" for i in range(12))
    (package / "pkg" / "many.py").write_text(many)
    run("-m", "lint_rules", "--write-baseline", cwd=package)
    (package / "pkg" / "many.py").unlink()
    lines = run("-m", "lint_rules", cwd=package).stderr.splitlines()
    assert len(lines) == 12 and all(line.endswith(": fixed (in the baseline, no longer found)") for line in lines[:10])
    assert lines[10] == "seqlen-guard: and 2 more fixed entries"
    assert lines[11].endswith("0 new findings, 5 known, 12 fixed entries; `seqlen-guard --write-baseline` drops them")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x[:n]", "x[:n]  # noqa: SLG002"),
        ("x[:n]  # noqa: E501", "x[:n]  # noqa: E501, SLG002"),
        ("x[:n]  # why", "x[:n]  # why  # seqlen-guard: ignore[SLG002]"),
        ("x[:n]", "x[:n]  # noqa"),
    ],
)
def test_a_silenced_finding_keeps_the_fingerprint_it_had_before_its_comment(before: str, after: str) -> None:
    """The comment is on the finding's line, part of what its fingerprint hashes: the silenced finding
    also carries the one it had before (this tool's codes taken out of the comment)."""
    code = "def f(cache, x):\n    n = cache.get_seq_length()\n    return {}\n"
    [reported] = check_text("m.py", code.format(before), Settings()).findings
    original = check_text("m.py", code.format(before), Settings()).fingerprints[reported]
    silenced = check_text("m.py", code.format(after), Settings())
    [finding] = silenced.silenced
    assert silenced.fingerprints[finding] != original, "the line changed, so did the fingerprint"
    assert original in every_fingerprint(silenced.fingerprints, finding)


def test_a_reported_finding_gets_no_fingerprint_without_its_comment() -> None:
    """Must-stay twin: a finding a comment does not silence (another code) is written with its one
    fingerprint per value; the comment-free one would be a second, phantom entry."""
    code = "def f(cache, x):\n    n = cache.get_seq_length()\n    return x[:n]  # noqa: E501\n"
    result = check_text("m.py", code, Settings())
    [finding] = result.findings
    assert every_fingerprint(result.fingerprints, finding) == [result.fingerprints[finding]]
