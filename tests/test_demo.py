"""`bash scripts/demo.sh` as a newcomer runs it, in a fresh copy of the checkout (this venv lent to
it, so that nothing is installed): on transformers 5.5.3 fetched with pip, and, when the package
index cannot be reached, on the bundled example, said in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FALLBACK_NOTE = "the package index cannot be reached"


def fresh_copy(target: Path) -> Path:
    """The checkout's files as a clone would have them (tracked and new ones, nothing ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(REPO / ".venv", target_is_directory=True)
    return target


def run_demo(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/demo.sh"], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def offline_environment(tmp_path: Path, no_index: bool) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # no configured find-links or local indexes
    env["PIP_CACHE_DIR"] = str(tmp_path / "empty-pip-cache")
    env["PIP_INDEX_URL"] = "http://127.0.0.1:9/"  # the discard port: nothing listens there
    if no_index:
        env["PIP_NO_INDEX"] = "1"
    return env


@pytest.mark.parametrize("no_index", [False, True], ids=["unreachable-index", "no-index"])
def test_offline_demo_falls_back_to_the_bundled_example(tmp_path: Path, no_index: bool) -> None:
    folder = fresh_copy(tmp_path / "clone")
    result = run_demo(folder, offline_environment(tmp_path, no_index))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    notes = [line for line in output.splitlines() if FALLBACK_NOTE in line]
    assert len(notes) == 1, output
    assert "examples/prefill_before.py:18:28: SLG001" in result.stdout
    assert "fix.patch" not in output, "the demo writes no patch file"
    finding_lines = [line for line in output.splitlines() if ": SLG" in line and "[" not in line]
    assert len(finding_lines) == len(set(finding_lines)), "each finding printed once"
    assert "+    if isinstance(past_length, torch.Tensor):" in result.stdout
    compiled = [line for line in output.splitlines() if "[compiled region: forward method]" in line]
    assert any("[unsafe fix, not applied without --unsafe-fixes: the guard would add" in line for line in compiled)
    assert not list((folder / "benchmarks" / ".cache").glob("transformers-*")), "a partial download was left"
    assert (folder / "examples" / "prefill_before.py").read_bytes() == (
        REPO / "examples/prefill_before.py"
    ).read_bytes()


@pytest.mark.slow
def test_demo_fetches_transformers_and_shows_the_prefill_fix(tmp_path: Path) -> None:
    folder = fresh_copy(tmp_path / "clone")
    first = run_demo(folder, dict(os.environ))
    assert first.returncode == 0, first.stdout + first.stderr
    assert FALLBACK_NOTE not in first.stdout
    assert "transformers/generation/utils.py" in first.stdout
    assert " @@ def _prefill(" in first.stdout, "the patch shows the reported function"
    assert "+            if isinstance(past_length, torch.Tensor):" in first.stdout
    assert any("[compiled region: forward method] [unsafe fix" in line for line in first.stdout.splitlines()), (
        first.stdout
    )
    again = run_demo(folder, {**dict(os.environ), "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull})
    assert again.returncode == 0 and FALLBACK_NOTE not in again.stdout, "the second run needs no index"
    assert again.stdout == first.stdout
    checked = [
        line for line in first.stdout.splitlines() if line.startswith("transformers/generation/") and ": SLG" in line
    ]
    assert checked and len(checked) == len(set(checked)), "each finding printed once"
