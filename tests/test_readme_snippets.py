"""The README's pre-commit snippet, pasted into a fresh repository as a user would (only `repo`
changed to a local copy of this checkout, committed on a branch `main`): it runs, honours the
baseline, `pre-commit autoupdate` pins it to a commit, and the fix hook prints one summary
however many files it gets."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from tests.test_packaging import BAD_SOURCE, copy_distribution, git_env, run

pytestmark = pytest.mark.slow

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
PLACEHOLDER_URL = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
    "urls"
]["Repository"]
"""The canonical location, the one string a user replaces when installing from elsewhere."""


def readme_pre_commit_config() -> str:
    section = README.split("**pre-commit**", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None and PLACEHOLDER_URL in block.group(1)
    return block.group(1)


def git(*args: str, cwd: Path, env: dict[str, str]) -> None:
    result = run("git", *args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr


def commit_all(folder: Path, env: dict[str, str]) -> None:
    git("init", "-q", "-b", "main", cwd=folder, env=env)
    git("add", "-A", cwd=folder, env=env)
    git("commit", "-q", "-m", "snapshot", cwd=folder, env=env)


def pre_commit(project: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    result = run(sys.executable, "-m", "pre_commit", *args, "--color=never", cwd=project, env=env)
    return result.returncode, result.stdout + result.stderr


def hooks_and_project(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """A committed copy of this repository (the hooks) and an empty project folder beside it."""
    env = git_env(tmp_path)
    hooks = copy_distribution(tmp_path / "seqlen-guard")
    commit_all(hooks, env)
    project = tmp_path / "project"
    project.mkdir()
    return env, hooks, project


def test_the_readme_snippet_works_in_a_fresh_repository(tmp_path: Path) -> None:
    env, hooks, project = hooks_and_project(tmp_path)
    (project / "old.py").write_text(BAD_SOURCE)
    config = readme_pre_commit_config().replace(PLACEHOLDER_URL, str(hooks))
    (project / ".pre-commit-config.yaml").write_text(config)
    commit_all(project, env)

    status, output = pre_commit(project, env, "run", "seqlen-guard", "--all-files")
    assert status == 1 and "old.py:3:" in output, output

    accepted = run(sys.executable, "-m", "lint_rules", "--write-baseline", cwd=project)
    assert accepted.returncode == 0, accepted.stderr
    status, output = pre_commit(project, env, "run", "seqlen-guard", "--all-files")
    assert status == 0, output

    (project / "new.py").write_text(BAD_SOURCE)
    git("add", "new.py", cwd=project, env=env)
    status, output = pre_commit(project, env, "run", "seqlen-guard", "--files", "new.py", "old.py")
    assert status == 1 and "new.py:3:" in output and "old.py:3:" not in output, output

    status, output = pre_commit(project, env, "autoupdate")
    assert status == 0, output
    head = run("git", "rev-parse", "HEAD", cwd=hooks, env=env).stdout.strip()
    assert f"rev: {head}" in (project / ".pre-commit-config.yaml").read_text()
    status, output = pre_commit(project, env, "run", "seqlen-guard", "--files", "old.py")
    assert status == 0, output


def test_the_fix_hook_prints_one_summary_for_many_files(tmp_path: Path) -> None:
    env, hooks, project = hooks_and_project(tmp_path)
    for index in range(8):
        (project / f"bad_{index}.py").write_text(BAD_SOURCE)
    commit_all(project, env)
    command = (sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "seqlen-guard-fix", "--all-files")
    result = run(*command, "--color=never", cwd=project, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    summaries = [line for line in result.stdout.splitlines() if line.startswith("seqlen-guard-fix: ")]
    assert summaries == [
        "seqlen-guard-fix: 8 files scanned, 8 findings, 8 fixed in 8 files, 0 left (0 unsafe, 0 no automatic fix), 0 errors"
    ]
