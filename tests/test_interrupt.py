"""An interrupted rewrite leaves every file either as it was or fully fixed, never half-written.

The fixer runs over 400 files that all need a fix and is interrupted once a given number of them
has been rewritten (SIGINT as a terminal's Ctrl-C sends it to the process group; SIGKILL to the
group, or to the main process only, leaving its workers orphaned). Then every file must hold
exactly its old or its new bytes, and a second run must finish the job.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers_rewrite import FIXER, cli_environment, run_cli

FILE_COUNT = 400
TEMPORARY_SUFFIX = ".seqlen-guard.tmp"
GUARD = b"    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n"


def old_source(index: int) -> bytes:
    functions = b"".join(
        b"def f%d(cache, x):\n    n = cache.get_seq_length()  # file %d, function %d\n    return x[:, n:]\n\n\n"
        % (number, index, number)
        for number in range(2)
    )
    return b"import torch\n\n\n" + functions


def new_source(index: int) -> bytes:
    return old_source(index).replace(b"    return", GUARD + b"    return")


def file_name(index: int) -> str:
    return f"module_{index:03d}.py"


def make_files(folder: Path) -> dict[str, tuple[bytes, bytes]]:
    """The files, each name -> (old bytes, new bytes)."""
    folder.mkdir()
    versions = {}
    for index in range(FILE_COUNT):
        (folder / file_name(index)).write_bytes(old_source(index))
        versions[file_name(index)] = (old_source(index), new_source(index))
    return versions


def start_fixer(folder: Path, jobs: int) -> subprocess.Popen[bytes]:
    """The fixer in its own process group; stderr goes to a file beside `folder` (a pipe would
    stay open as long as any worker lives)."""
    with open(stderr_file(folder), "wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", FIXER, "-j", str(jobs), "."],
            cwd=folder,
            env=cli_environment(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )


def stderr_file(folder: Path) -> Path:
    return folder.with_name(folder.name + ".stderr")


def rewritten_count(folder: Path, original_inodes: dict[str, int]) -> int:
    """Files replaced so far: the atomic rename gives each rewritten file a new inode."""
    with os.scandir(folder) as entries:
        return sum(
            1 for entry in entries if entry.name in original_inodes and entry.inode() != original_inodes[entry.name]
        )


def wait_until_rewritten(process: subprocess.Popen[bytes], folder: Path, count: int) -> int:
    original_inodes = {entry.name: entry.inode() for entry in os.scandir(folder)}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = rewritten_count(folder, original_inodes)
        if done >= count:
            return done
        assert process.poll() is None, "the fixer finished before it could be interrupted"
        time.sleep(0.002)
    raise AssertionError(f"fewer than {count} files rewritten after 120 s")


def group_exits(group: int, timeout: float = 30) -> bool:
    """Whether every process of the run, orphaned workers included, exits within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def kill_group(process: subprocess.Popen[bytes], group: int) -> None:
    """No process of the run outlives the test, whatever failed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    process.wait()


def assert_each_file_old_or_new(folder: Path, versions: dict[str, tuple[bytes, bytes]]) -> tuple[int, int]:
    old = new = 0
    for name, (old_bytes, new_bytes) in versions.items():
        data = (folder / name).read_bytes()
        assert data in (old_bytes, new_bytes), f"{name} is neither the old nor the new version:\n{data!r}"
        old += data == old_bytes
        new += data == new_bytes
    return old, new


def leftovers(folder: Path, versions: dict[str, tuple[bytes, bytes]]) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name not in versions)


INTERRUPTIONS = [
    # (signal, to the whole process group?, jobs, rewritten files before the signal)
    (signal.SIGINT, True, 1, 1),
    (signal.SIGINT, True, 2, 150),
    (signal.SIGINT, True, 1, 300),
    (signal.SIGKILL, True, 1, 1),
    (signal.SIGKILL, True, 2, 150),
    (signal.SIGKILL, True, 1, 300),
    (signal.SIGKILL, False, 2, 100),
]


@pytest.mark.parametrize(
    ("sent", "to_group", "jobs", "after"),
    INTERRUPTIONS,
    ids=[f"{s.name}-{'group' if g else 'main-only'}-j{j}-after-{a}" for s, g, j, a in INTERRUPTIONS],
)
def test_interrupted_run_leaves_old_or_new_files(
    tmp_path: Path, sent: signal.Signals, to_group: bool, jobs: int, after: int
) -> None:
    folder = tmp_path / "project"
    versions = make_files(folder)
    process = start_fixer(folder, jobs)
    group = os.getpgid(process.pid)
    try:
        done = wait_until_rewritten(process, folder, after)
        assert process.poll() is None
        if to_group:
            os.killpg(group, sent)
        else:
            os.kill(process.pid, sent)
        process.wait(timeout=60)
        all_exited = group_exits(group)
    finally:
        kill_group(process, group)

    old, new = assert_each_file_old_or_new(folder, versions)
    assert new >= done and old > 0, f"{old} old and {new} new files: the signal did not land mid-run"
    left = leftovers(folder, versions)
    if sent == signal.SIGINT:
        assert left == [], f"an interrupted run left files behind: {left}"
    else:
        assert all(name.startswith(".") and name.endswith(TEMPORARY_SUFFIX) for name in left), left

    finish = run_cli(FIXER, ["-j", "2", "."], folder)
    assert finish.returncode == 0 and not finish.errors(), finish.describe()
    assert finish.summary()["changed_files"] == old
    assert all((folder / name).read_bytes() == new_bytes for name, (_, new_bytes) in versions.items())
    assert all_exited, "worker processes outlived the interrupted run by 30 s (orphaned, still alive)"


def test_uninterrupted_run_gives_the_new_versions(tmp_path: Path) -> None:
    """The reference the interrupted runs are held to."""
    folder = tmp_path / "project"
    versions = make_files(folder)
    run = run_cli(FIXER, ["-j", "2", "."], folder)
    assert run.returncode == 0, run.describe()
    assert run.summary()["changed_files"] == FILE_COUNT
    assert all((folder / name).read_bytes() == new_bytes for name, (_, new_bytes) in versions.items())
    assert leftovers(folder, versions) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_quietly(tmp_path: Path, jobs: int) -> None:
    """Ctrl-C ends the run with the shell's interrupt status (130, or death by SIGINT) and no
    traceback: never 0 or 1, which CI would read as "clean" or "findings"."""
    for after in (20, 60, 100, 140, 180):
        folder = tmp_path / f"project-{after}"
        make_files(folder)
        process = start_fixer(folder, jobs)
        group = os.getpgid(process.pid)
        try:
            wait_until_rewritten(process, folder, after)
            os.killpg(group, signal.SIGINT)
            process.wait(timeout=60)
            assert group_exits(group), "worker processes outlived the interrupted run"
        finally:
            kill_group(process, group)
        message = stderr_file(folder).read_text(errors="replace")
        excerpt = message if len(message) < 3000 else f"{message[:2000]}\n[...]\n{message[-800:]}"
        assert process.returncode in (130, -signal.SIGINT), (
            f"exit code {process.returncode} (after {after} files):\n{excerpt}"
        )
        assert "Traceback" not in message, f"a traceback on Ctrl-C (after {after} files):\n{excerpt}"
        assert len(message.splitlines()) <= 3, f"Ctrl-C printed {len(message.splitlines())} lines"
        shutil.rmtree(folder)


# ------------------------------------------------------------------------ start-up and the end

DRIVER = """
import os, runpy, signal, sys

point, module, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]


def interrupt():
    os.kill(os.getpid(), signal.SIGINT)


class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == point:
            sys.meta_path.remove(self)
            interrupt()
        return None


class InterruptOnText:
    def __init__(self, stream, text):
        self.stream, self.text = stream, text
        if hasattr(stream, "buffer"):  # the patch is written as bytes
            self.buffer = InterruptOnText(stream.buffer, text.encode())

    def write(self, data):
        if self.text in data:
            interrupt()
        return self.stream.write(data)

    def __getattr__(self, name):
        return getattr(self.stream, name)


stream, _, text = point.partition(":")
if stream == "stdout":
    sys.stdout = InterruptOnText(sys.stdout, text)
elif stream == "stderr":
    sys.stderr = InterruptOnText(sys.stderr, text)
else:
    sys.meta_path.insert(0, InterruptOnImport())
sys.argv = [module, *arguments]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
"""Runs a command line as `python -m` does, sending itself SIGINT at a chosen point: when a module
starts being imported, or when a given text is written to stdout or stderr."""

FIXER_POINTS = [
    "fixers.fix_command",  # the first import after the entry point
    "lint_rules.config",
    "tomllib",
    "libcst",
    "lint_rules.checking",
    "stdout:+++ b/",  # while the first patch is written
    "stderr:files scanned",  # the summary, after the last file
]
CHECKER_POINTS = ["lint_rules.check_command", "lint_rules.checking", "lint_rules.formats", "stdout:SLG"]


def interrupt_at(point: str, module: str, arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, point, module, *arguments],
        cwd=cwd,
        env=cli_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("module", "point"),
    [(FIXER, point) for point in FIXER_POINTS] + [("lint_rules", point) for point in CHECKER_POINTS],
)
def test_ctrl_c_at_start_up_and_after_the_last_file(tmp_path: Path, module: str, point: str) -> None:
    """130, one line, no traceback, wherever the interrupt lands; a file is never half-written."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "project"\n')  # read with tomllib
    for index in range(3):
        (folder / file_name(index)).write_bytes(old_source(index))
    arguments = ["--diff", "."] if module == FIXER and point.startswith("stdout") else ["."]
    result = interrupt_at(point, module, arguments, folder)
    assert result.returncode == 130, f"exit {result.returncode} at {point}:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1].endswith("interrupted") or "interrupted;" in result.stderr.splitlines()[-1]
    if ":" not in point:
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stdout == ""
        assert all((folder / file_name(index)).read_bytes() == old_source(index) for index in range(3))
    for index in range(3):
        assert (folder / file_name(index)).read_bytes() in (old_source(index), new_source(index))


@pytest.mark.parametrize("module", [FIXER, "lint_rules"])
def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path: Path, module: str) -> None:
    """`seqlen-guard-fix --diff . | head -1`: no BrokenPipeError traceback, no file written. The
    reader closes the pipe before the command writes to it."""
    folder = tmp_path / "project"
    versions = make_files(folder)
    arguments = ["--diff", "."] if module == FIXER else ["."]
    process = subprocess.Popen(
        [sys.executable, "-m", module, *arguments],
        cwd=folder,
        env=cli_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    assert process.returncode == 141, stderr[-2000:]
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr[-2000:]
    assert assert_each_file_old_or_new(folder, versions) == (FILE_COUNT, 0)
