"""The project as users get it: the pre-commit hooks, and `pip install .` in a clean venv.

Both install the distribution from a copy of this checkout (committed into a fresh git
repository for pre-commit, which installs hooks from a commit), so uncommitted work is
tested and the checkout gets no build/ or egg-info. pip reaches the package registry
for libcst and flake8, as a user's machine would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).resolve().parents[1]
DISTRIBUTION_FILES = ("pyproject.toml", ".pre-commit-hooks.yaml", "README.md", "LICENSE", "MANIFEST.in")
PACKAGES = ("lint_rules", "fixers")
INSTALL_TIMEOUT = 900

HookRepo = tuple[Path, dict[str, str]]
"""The hook repository's folder and the environment to run git and pre-commit in."""

BAD_SOURCE = """\
def f(cache, input_ids):
    past_length = cache.get_seq_length()
    return input_ids[:, past_length:]
"""


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )


def git_env(home: Path) -> dict[str, str]:
    """An environment for git and pre-commit that no outer git state or user config leaks into."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PRE_COMMIT"))}
    identity = {"NAME": "seqlen-guard tests", "EMAIL": "tests@seqlen-guard.invalid"}
    for role in ("AUTHOR", "COMMITTER"):
        for field, value in identity.items():
            env[f"GIT_{role}_{field}"] = value
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["PRE_COMMIT_HOME"] = str(home / "pre-commit-home")
    env.pop("VIRTUAL_ENV", None)
    return env


def git_repo(folder: Path, env: dict[str, str]) -> None:
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot", "--allow-empty"]):
        result = run("git", *command, cwd=folder, env=env)
        assert result.returncode == 0, result.stderr


def copy_distribution(target: Path) -> Path:
    target.mkdir(parents=True)
    for name in DISTRIBUTION_FILES:
        if (CHECKOUT / name).exists():
            shutil.copy2(CHECKOUT / name, target / name)
    for package in PACKAGES:
        shutil.copytree(CHECKOUT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HookRepo]:
    base = tmp_path_factory.mktemp("hooks")
    env = git_env(base)
    repo = copy_distribution(base / "seqlen-guard")
    git_repo(repo, env)
    yield repo, env


def try_repo(hook_repo: HookRepo, project: Path, hook: str, *options: str) -> subprocess.CompletedProcess[str]:
    repo, env = hook_repo
    command = (sys.executable, "-m", "pre_commit", "try-repo", repo, hook, "--color=never", *options)
    return run(*command, cwd=project, env=env)


def new_project(folder: Path, env: dict[str, str], files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    git_repo(folder, env)
    return folder


def test_pre_commit_check_then_fix_then_check(hook_repo: HookRepo, tmp_path: Path) -> None:
    project = new_project(tmp_path / "project", hook_repo[1], {"bad.py": BAD_SOURCE})

    checked = try_repo(hook_repo, project, "seqlen-guard", "--files", "bad.py")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "bad.py:3:" in checked.stdout and "SLG" in checked.stdout

    fixed = try_repo(hook_repo, project, "seqlen-guard-fix", "--files", "bad.py")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "files were modified by this hook" in fixed.stdout
    rewritten = (project / "bad.py").read_text()
    assert "isinstance(past_length, torch.Tensor)" in rewritten
    assert "int(past_length.item())" in rewritten
    assert "import torch" in rewritten

    rechecked = try_repo(hook_repo, project, "seqlen-guard", "--files", "bad.py")
    assert rechecked.returncode == 0, rechecked.stdout + rechecked.stderr
    refixed = try_repo(hook_repo, project, "seqlen-guard-fix", "--files", "bad.py")
    assert refixed.returncode == 0, refixed.stdout + refixed.stderr
    assert (project / "bad.py").read_text() == rewritten


def test_pre_commit_honours_configured_exclude(hook_repo: HookRepo, tmp_path: Path) -> None:
    config = '[tool.seqlen-guard]\nexclude = ["vendor/*"]\n'
    project = new_project(tmp_path / "project", hook_repo[1], {"pyproject.toml": config})
    (project / "vendor").mkdir()
    (project / "vendor" / "bad.py").write_text(BAD_SOURCE)
    for hook in ("seqlen-guard", "seqlen-guard-fix"):
        result = try_repo(hook_repo, project, hook, "--files", "vendor/bad.py")
        assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "vendor" / "bad.py").read_text() == BAD_SOURCE


def test_hooks_are_skipped_without_files(hook_repo: HookRepo, tmp_path: Path) -> None:
    """pre-commit skips a hook that matches no file, so the commands never see an empty file list:
    given no path, they work on `.` as flake8 and ruff do."""
    project = new_project(tmp_path / "project", hook_repo[1], {"notes.txt": "no python here\n"})
    for hook in ("seqlen-guard", "seqlen-guard-fix"):
        result = try_repo(hook_repo, project, hook, "--all-files")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "(no files to check)Skipped" in result.stdout, result.stdout


def test_pip_install_into_a_clean_venv(tmp_path: Path) -> None:
    source = copy_distribution(tmp_path / "source")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / "bin"
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}

    installed = run(bin_dir / "python", "-m", "pip", "install", "--quiet", source, cwd=tmp_path, env=env)
    assert installed.returncode == 0, installed.stderr

    listed = run(bin_dir / "python", "-m", "pip", "list", "--format=json", cwd=tmp_path, env=env)
    names = {package["name"].lower() for package in json.loads(listed.stdout)}
    assert {"seqlen-guard", "libcst", "flake8"} <= names
    assert not names & {"torch", "transformers", "numpy"}, "linting must not need torch"

    version = run(bin_dir / "flake8", "--version", cwd=tmp_path, env=env)
    # flake8 wraps the line: compare with the whitespace evened out.
    assert "seqlen-guard: 0.1.0" in " ".join(version.stdout.split()), version.stdout + version.stderr
    for script in ("seqlen-guard", "seqlen-guard-fix"):
        helped = run(bin_dir / script, "--help", cwd=tmp_path, env=env)
        assert helped.returncode == 0 and "usage:" in helped.stdout, helped.stdout + helped.stderr

    (tmp_path / "bad.py").write_text(BAD_SOURCE)
    flake8 = run(bin_dir / "flake8", "--select=SLG", "bad.py", cwd=tmp_path, env=env)
    assert flake8.returncode == 1 and "bad.py:3:" in flake8.stdout, flake8.stdout + flake8.stderr
