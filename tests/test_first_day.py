"""The first day of a new user: each item they tripped over, pinned.

The GitHub Actions steps (written out in docs/adoption.md, and the composite action's `run` steps
from action.yml) run here on a small repository with a baseline; the README's pre-commit snippet
runs in tests/test_readme_snippets.py (slow: pre-commit builds an environment)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.test_packaging import copy_distribution

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


# ------------------------------------------------------------- the Actions steps


def yaml_block(text: str, heading: str, index: int = 0) -> str:
    section = text.split(heading, 1)[1]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert len(blocks) > index
    return blocks[index]


def job_permissions(workflow: str) -> dict[str, str]:
    job = next(iter(yaml.safe_load(workflow)["jobs"].values()))
    assert isinstance(job["permissions"], dict)
    return dict(job["permissions"])


@pytest.mark.parametrize(
    ("page", "heading", "index"),
    [
        ("README.md", "**GitHub Actions**", 0),
        ("docs/adoption.md", "## GitHub Actions", 0),
        ("docs/adoption.md", "## GitHub Actions", 1),
    ],
)
def test_every_actions_snippet_grants_what_checkout_and_upload_sarif_need(page: str, heading: str, index: int) -> None:
    """A job-level `permissions:` block sets every permission it does not name to none."""
    workflow = yaml_block((REPO / page).read_text(), heading, index)
    assert job_permissions(workflow) == {"contents": "read", "actions": "read", "security-events": "write"}


def sarif_results(path: Path) -> list[dict[str, object]]:
    log = json.loads(path.read_text())
    assert not list(jsonschema.Draft4Validator(json.loads(SCHEMA_PATH.read_text())).iter_errors(log))
    results = log["runs"][0]["results"]
    assert isinstance(results, list)
    return results


def repository_with_a_baseline(folder: Path) -> None:
    """An old finding in the baseline, then a new file with two new ones."""
    (folder / "old.py").write_text(HOST_AND_MODEL)
    assert run("-m", "lint_rules", "--write-baseline", cwd=folder).returncode == 0
    (folder / "new.py").write_text(HOST_AND_MODEL.replace("def prefill", "def prefill_again"))


def assert_two_new_findings(annotate: subprocess.CompletedProcess[str], sarif: Path) -> None:
    assert annotate.returncode == 1, annotate.stdout + annotate.stderr
    assert [line.split(",")[0] for line in annotate.stdout.splitlines()] == ["::error file=new.py"] * 2
    results = sarif_results(sarif)
    assert len(results) == 2 and all(result["baselineState"] == "new" for result in results)
    assert all(len(result["partialFingerprints"]["seqlenGuard/v1"]) == 16 for result in results)  # type: ignore[index]


def test_the_written_out_actions_steps_fail_on_new_findings_only_and_upload_valid_sarif(tmp_path: Path) -> None:
    steps = [
        line.split("- run:", 1)[1].split("#")[0].strip()
        for line in yaml_block((REPO / "docs/adoption.md").read_text(), "## GitHub Actions", 1).splitlines()
        if "- run:" in line
    ]
    assert steps[0].startswith("pip install") and "git+" in steps[0] and "pip install seqlen-guard" not in steps[0]
    checks = steps[1:]
    assert checks == ["seqlen-guard --format github", "seqlen-guard --format sarif --exit-zero > seqlen-guard.sarif"]
    repository_with_a_baseline(tmp_path)

    def step(command: str) -> subprocess.CompletedProcess[str]:
        arguments, _, target = command.partition(" > ")
        result = run("-m", "lint_rules", *arguments.split()[1:], cwd=tmp_path)
        if target:
            (tmp_path / target).write_text(result.stdout)
        return result

    annotate = step(checks[0])
    assert step(checks[1]).returncode == 0
    assert_two_new_findings(annotate, tmp_path / "seqlen-guard.sarif")


def action_run_steps(inputs: dict[str, str]) -> list[tuple[str, str]]:
    """(name, bash script) of each `run` step of action.yml whose `if` holds, `${{ ... }}` filled in."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    values = {f"inputs.{name}": spec.get("default", "") for name, spec in action["inputs"].items()}
    values.update({f"inputs.{name}": value for name, value in inputs.items()})

    def filled(text: str) -> str:
        return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda match: values[match.group(1)], text)

    steps = []
    for step in action["runs"]["steps"]:
        if "if" in step and not condition_holds(step["if"], values):
            continue
        if "run" in step:
            assert step["shell"] == "bash"
            steps.append((step["name"], filled(step["run"])))
    return steps


def condition_holds(condition: str, values: dict[str, str]) -> bool:
    """The one form of condition action.yml uses: `inputs.NAME == 'literal'`."""
    match = re.fullmatch(r"(inputs\.[\w-]+) == '([^']*)'", condition.strip())
    assert match is not None, f"a condition this test cannot read: {condition}"
    return values[match.group(1)] == match.group(2)


@pytest.mark.slow
def test_the_composite_action_runs_its_steps_from_the_file(tmp_path: Path) -> None:
    """Each `run` step of action.yml, as the runner would run it: installed from the action's own
    checkout into a fresh venv, then the SARIF and the annotations of a repository with a baseline."""
    action_path = copy_distribution(tmp_path / "action")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    repository_with_a_baseline(workspace)
    (tmp_path / "runner-temp").mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(
        PATH=f"{environment / 'bin'}{os.pathsep}{env['PATH']}",
        GITHUB_ACTION_PATH=str(action_path),
        RUNNER_TEMP=str(tmp_path / "runner-temp"),
    )
    outcomes = {}
    for name, script in action_run_steps({}):
        outcomes[name] = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
    assert list(outcomes) == ["Install seqlen-guard", "Write SARIF", "Check (new findings fail the step)"]
    assert outcomes["Install seqlen-guard"].returncode == 0, outcomes["Install seqlen-guard"].stderr
    assert outcomes["Write SARIF"].returncode == 0, outcomes["Write SARIF"].stderr
    assert_two_new_findings(
        outcomes["Check (new findings fail the step)"], tmp_path / "runner-temp" / "seqlen-guard.sarif"
    )
    assert [name for name, _ in action_run_steps({"upload-sarif": "false"})] == [
        "Install seqlen-guard",
        "Check (new findings fail the step)",
    ]


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
