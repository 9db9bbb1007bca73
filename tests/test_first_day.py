"""The first day of a new user (issue 17): each item they tripped over, pinned.

The README's GitHub Actions steps run here on a small repository with a baseline; its pre-commit
snippet runs in tests/test_readme_snippets.py (slow: pre-commit builds an environment)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

HOST_AND_MODEL = textwrap.dedent(
    """\
    import torch


    def prefill(cache, input_ids):
        past_length = cache.get_seq_length()
        return input_ids[:, past_length:]


    class Model(torch.nn.Module):
        def forward(self, x, past_key_values):
            n = past_key_values.get_seq_length()
            return x[:, n:]
    """
)


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_unsafe_fixes_is_a_fixer_flag_only() -> None:
    assert "--unsafe-fixes" not in run("-m", "lint_rules", "--help").stdout
    assert "--unsafe-fixes" in run("-m", "fixers.rewrite", "--help").stdout
    assert run("-m", "lint_rules", "--unsafe-fixes", ".").returncode == 2


@pytest.mark.parametrize("command", ["lint_rules", "fixers.rewrite"])
@pytest.mark.parametrize("query", ["SLG002", "slg002", "tensor-length-slice-bound"])
def test_explain_takes_codes_and_the_names_of_the_readme_table(command: str, query: str) -> None:
    assert "`tensor-length-slice-bound`" in README
    result = run("-m", command, "--explain", query)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("SLG002 (tensor-length-slice-bound):")


def test_explain_of_an_unknown_rule_lists_the_rules() -> None:
    result = run("-m", "fixers.rewrite", "--explain", "slice-bound")
    assert result.returncode == 2 and "SLG002 (tensor-length-slice-bound)" in result.stderr


def test_fixer_check_exits_1_only_when_a_file_would_change(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(HOST_AND_MODEL)
    for mode in ("--check", "--diff"):
        assert run("-m", "fixers.rewrite", mode, "m.py", cwd=tmp_path).returncode == 1, "the host finding is fixable"
    assert run("-m", "fixers.rewrite", "m.py", cwd=tmp_path).returncode == 1, "in place: the unsafe one remains"
    for mode in ("--check", "--diff"):
        result = run("-m", "fixers.rewrite", mode, "m.py", cwd=tmp_path)
        assert result.returncode == 0, "only an unsafe finding is left: no file would change"
        assert "1 finding, 0 fixable in 0 files, 1 left (1 unsafe" in result.stderr
    assert run("-m", "lint_rules", "m.py", cwd=tmp_path).returncode == 1, "the checker still reports it"


@pytest.mark.parametrize("command", ["lint_rules", "fixers.rewrite"])
def test_a_missing_path_is_not_a_scanned_file(tmp_path: Path, command: str) -> None:
    result = run("-m", command, "nope.py", cwd=tmp_path)
    assert result.returncode == 2 and "nope.py" in result.stderr
    if command == "fixers.rewrite":
        assert "0 files scanned" in result.stderr


# ------------------------------------------------------------ flake8 reads [tool.seqlen-guard]

FLAKE8_CASES = {
    "ignore": ('ignore = ["SLG002"]', []),
    "select": ('select = ["SLG001"]', []),
    "per-file-ignores": ('per-file-ignores = { "m.py" = ["SLG002"] }', []),
    "exclude": ('exclude = ["m.py"]', []),
    "source-methods": ('source-methods = ["past_len"]', ["SLG002", "SLG002"]),
    "nothing": ("", ["SLG002"]),
}


@pytest.mark.parametrize("case", FLAKE8_CASES, ids=list(FLAKE8_CASES))
def test_flake8_plugin_reads_the_same_table_as_the_checker(tmp_path: Path, case: str) -> None:
    setting, expected = FLAKE8_CASES[case]
    (tmp_path / "pyproject.toml").write_text(f"[tool.seqlen-guard]\n{setting}\n")
    (tmp_path / "m.py").write_text(
        "def f(cache, x):\n    n = cache.get_seq_length()\n    m = cache.past_len()\n    return x[:n], x[:m]\n"
    )
    flake8 = run("-m", "flake8", "--select=SLG", "m.py", cwd=tmp_path)
    checker = run("-m", "lint_rules", "m.py", cwd=tmp_path)

    def codes(output: str) -> list[str]:
        return [line.split(": ", 1)[1].split()[0] for line in output.splitlines() if ": SLG" in line]

    assert codes(flake8.stdout) == codes(checker.stdout) == expected, flake8.stdout + flake8.stderr


def test_flake8_plugin_reports_a_bad_table_as_the_checker_does(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.seqlen-guard]\nselect = ["F401"]\n')
    (tmp_path / "m.py").write_text("x = 1\n")
    flake8 = run("-m", "flake8", "--select=SLG", "m.py", cwd=tmp_path)
    assert flake8.returncode != 0 and "unknown rule code 'F401'" in flake8.stderr


# ------------------------------------------------------------- the README's Actions steps


def readme_block(heading: str, language: str) -> str:
    section = README.split(heading, 1)[1]
    block = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1)


def test_the_actions_steps_fail_on_new_findings_only_and_upload_valid_sarif(tmp_path: Path) -> None:
    steps = [
        line.split("- run:", 1)[1].split("#")[0].strip()
        for line in readme_block("**GitHub Actions**", "yaml").splitlines()
        if "- run:" in line
    ]
    assert steps[0].startswith("pip install") and "git+" in steps[0] and "pip install seqlen-guard" not in steps[0]
    checks = steps[1:]
    assert checks == ["seqlen-guard --format github", "seqlen-guard --format sarif --exit-zero > seqlen-guard.sarif"]
    (tmp_path / "old.py").write_text(HOST_AND_MODEL)
    assert run("-m", "lint_rules", "--write-baseline", cwd=tmp_path).returncode == 0
    (tmp_path / "new.py").write_text(HOST_AND_MODEL.replace("def prefill", "def prefill_again"))

    def step(command: str) -> subprocess.CompletedProcess[str]:
        arguments, _, target = command.partition(" > ")
        result = run("-m", "lint_rules", *arguments.split()[1:], cwd=tmp_path)
        if target:
            (tmp_path / target).write_text(result.stdout)
        return result

    annotate = step(checks[0])
    assert annotate.returncode == 1
    assert [line.split(",")[0] for line in annotate.stdout.splitlines()] == ["::error file=new.py"] * 2
    assert step(checks[1]).returncode == 0
    log = json.loads((tmp_path / "seqlen-guard.sarif").read_text())
    assert not list(jsonschema.Draft4Validator(json.loads(SCHEMA_PATH.read_text())).iter_errors(log))
    results = log["runs"][0]["results"]
    assert len(results) == 2 and all(result["baselineState"] == "new" for result in results)
    assert all(len(result["partialFingerprints"]["seqlenGuard/v1"]) == 16 for result in results)


def test_the_first_screen_says_how_to_run_it_on_your_own_repository() -> None:
    """Right after the two commands: install into your environment, run it on your repository, the hook."""
    section = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2
    commands = [line.split("#")[0].strip() for line in blocks[1].splitlines() if line.strip()]
    assert commands[0].startswith("pip install ")
    assert "seqlen-guard" in commands[1:] and "seqlen-guard --write-baseline" in commands
    assert any(command.startswith("pre-commit try-repo") for command in commands)
    assert README.index(blocks[1]) < len("\n".join(README.splitlines()[:60])), "on the first screen"
