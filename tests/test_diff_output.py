"""`--diff` writes a patch and nothing else to stdout; `--check` writes nothing there; both list every
finding (and the summary) on stderr. The patch applies with `git apply` and `patch -p1` from the
folder the fixer ran in, and gives the bytes an in-place run gives."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from helpers_rewrite import FIXER, Run, parse_unified_diff, run_cli

FILES = {
    "pkg/model.py": """
        import torch


        class Model(torch.nn.Module):
            def forward(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]


        def prefill(cache, input_ids):
            past_length = cache.get_seq_length()
            return input_ids[:, past_length:]
    """,
    "pkg/host.py": """
        def step(cache, x):
            n = cache.get_seq_length()
            return range(n)
    """,
    "pkg/clean.py": """
        def f(x):
            return x[:1]
    """,
    "vendor/other.py": """
        def step(cache, x):
            n = cache.get_seq_length()
            return range(n)
    """,
}
CONFIG = '[tool.seqlen-guard]\nexclude = ["vendor/*"]\n'


def make_project(folder: Path) -> Path:
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    (folder / "pyproject.toml").write_text(CONFIG)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*.py"))}


def without_status(lines: list[str]) -> list[str]:
    return sorted(line.rsplit(" [", 1)[0] if line.endswith("]") else line for line in lines)


def shell(*command: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


def test_diff_is_a_patch_that_gives_the_in_place_result(project: Path, tmp_path: Path) -> None:
    shown = run_cli(FIXER, ["--diff", "pkg"], project)
    assert shown.returncode == 1, shown.describe()
    diffs = parse_unified_diff(shown.stdout_bytes, lambda line: False)  # nothing but diffs on stdout
    assert sorted(diff.new_name for diff in diffs) == ["b/pkg/host.py", "b/pkg/model.py"]
    assert all(diff.old_name == "a" + diff.new_name[1:] for diff in diffs)
    hunk_headers = [line for line in shown.stdout.splitlines() if line.startswith("@@ ")]
    assert hunk_headers[-1].endswith(" @@ def prefill(cache, input_ids):"), "git's function context"

    in_place = tmp_path / "in-place"
    shutil.copytree(project, in_place)
    fixed = run_cli(FIXER, ["pkg"], in_place)
    assert fixed.returncode == 1, fixed.describe()  # the unsafe finding in `forward` is left

    for tool in (("git", "apply"), ("patch", "-p1", "--quiet")):
        copy = tmp_path / tool[0]
        shutil.copytree(project, copy)
        if tool[0] == "git":
            assert shell("git", "apply", "--check", cwd=copy, stdin=shown.stdout_bytes).returncode == 0
        applied = shell(*tool, cwd=copy, stdin=shown.stdout_bytes)
        assert applied.returncode == 0, applied.stderr.decode()
        assert snapshot(copy) == snapshot(in_place), f"{tool[0]} gives other bytes than an in-place run"
    assert snapshot(in_place) != snapshot(project)


def test_diff_lists_every_finding_on_stderr(project: Path, tmp_path: Path) -> None:
    """Including the finding left in a file that also gets a hunk (model.py's `forward`)."""
    shown = run_cli(FIXER, ["--diff", "pkg"], project)
    in_place = tmp_path / "in-place"
    shutil.copytree(project, in_place)
    fixed = run_cli(FIXER, ["pkg"], in_place)
    listed = [line for line in shown.finding_lines() if line in shown.stderr]
    assert listed == shown.finding_lines(), "--diff printed a finding on stdout"
    assert without_status(listed) == without_status(fixed.finding_lines())
    assert len(listed) == 3
    unsafe = [line for line in listed if "pkg/model.py:7:" in line]
    assert len(unsafe) == 1 and "[unsafe fix, not applied without --unsafe-fixes" in unsafe[0], listed
    assert shown.summary()["left"] == 1 and shown.summary()["fixes"] == 2


def test_check_writes_nothing_on_stdout(project: Path) -> None:
    before = snapshot(project)
    checked = run_cli(FIXER, ["--check", "pkg"], project)
    assert checked.returncode == 1, checked.describe()
    assert checked.stdout == ""
    assert len(checked.finding_lines()) == 3 and all(line in checked.stderr for line in checked.finding_lines())
    assert checked.summary()["fixes"] == 2
    assert snapshot(project) == before


def headers(run: Run) -> list[str]:
    return sorted(diff.old_name for diff in parse_unified_diff(run.stdout_bytes, lambda line: False))


@pytest.mark.parametrize("form", ["relative", "absolute", "dotted", "file"])
def test_diff_headers_are_relative_to_the_current_folder(project: Path, form: str) -> None:
    given = {
        "relative": "pkg",
        "absolute": str(project / "pkg"),
        "dotted": "./pkg/../pkg/",
        "file": str(project / "pkg" / "host.py"),
    }[form]
    shown = run_cli(FIXER, ["--diff", given], project)
    expected = ["a/pkg/host.py"] if form == "file" else ["a/pkg/host.py", "a/pkg/model.py"]
    assert headers(shown) == expected, shown.describe()
    assert shell("git", "apply", "--check", cwd=project, stdin=shown.stdout_bytes).returncode == 0
    assert "outside the current folder" not in shown.stderr


def test_diff_of_files_outside_the_current_folder_says_so(project: Path) -> None:
    """`git apply` and `patch` refuse `../` paths: the patch keeps them (it cannot name the files
    otherwise) and one line on stderr says to run the fixer from a folder that holds them."""
    below = project / "docs"
    below.mkdir()
    shown = run_cli(FIXER, ["--diff", "../pkg"], below)
    assert headers(shown) == ["a/../pkg/host.py", "a/../pkg/model.py"]
    notes = [line for line in shown.stderr.splitlines() if "outside the current folder" in line]
    assert len(notes) == 1 and "2 files" in notes[0], shown.describe()
    assert shell("git", "apply", "--check", cwd=below, stdin=shown.stdout_bytes).returncode != 0


def test_diff_header_through_a_symlinked_folder(project: Path, tmp_path: Path) -> None:
    """A path that reaches the project through a symlink still gets headers relative to it."""
    link = tmp_path / "link"
    link.symlink_to(project, target_is_directory=True)
    shown = run_cli(FIXER, ["--diff", str(link / "pkg")], project)
    assert headers(shown) == ["a/pkg/host.py", "a/pkg/model.py"], shown.describe()


def test_no_path_means_the_current_folder_without_excluded_files(project: Path) -> None:
    checked = run_cli("lint_rules", [], project)
    assert checked.returncode == 1, checked.describe()
    assert {line.split(":")[0] for line in checked.stdout.splitlines()} == {"pkg/model.py", "pkg/host.py"}

    shown = run_cli(FIXER, ["--diff"], project)
    assert headers(shown) == ["a/pkg/host.py", "a/pkg/model.py"]
    vendor = (project / "vendor" / "other.py").read_bytes()
    fixed = run_cli(FIXER, [], project)
    assert fixed.summary()["changed_files"] == 2, fixed.describe()
    assert (project / "vendor" / "other.py").read_bytes() == vendor
    assert "isinstance(n, torch.Tensor)" in (project / "pkg" / "host.py").read_text()
    assert run_cli(FIXER, ["--check"], project).returncode == 0, "only an unsafe finding is left: no file would change"
    assert run_cli("lint_rules", [], project).returncode == 1, "the checker still reports it"


def test_diff_with_another_format_keeps_stdout_a_patch(project: Path) -> None:
    shown = run_cli(FIXER, ["--diff", "--format", "json", "pkg"], project)
    assert headers(shown) == ["a/pkg/host.py", "a/pkg/model.py"]  # parse_unified_diff allows nothing else
    report, summary = shown.stderr.rstrip("\n").rsplit("\n", 1)
    assert "files scanned" in summary
    assert len(json.loads(report)) == 3


def test_hunk_header_keeps_80_bytes_and_whole_utf8_characters(tmp_path: Path) -> None:
    """git keeps the first 80 bytes of the `def` line; a UTF-8 character that the cut would split
    is left out, so that the patch of a UTF-8 file is still UTF-8."""
    definition = 'def greet(cache, x, greeting_for_x="' + "grüß dich, " * 8 + '"):'
    with pytest.raises(UnicodeDecodeError):
        definition.encode()[:80].decode()  # the 80th byte is the first half of a character
    source = f"import torch\n\n\n{definition}\n    n = cache.get_seq_length()\n    return x[:, n:]\n"
    (tmp_path / "greet.py").write_text(source, encoding="utf-8")
    shown = run_cli(FIXER, ["--diff", "greet.py"], tmp_path)
    header = next(line for line in shown.stdout_bytes.decode("utf-8").splitlines() if line.startswith("@@ "))
    context = header.split(" @@ ", 1)[1]
    assert definition.startswith(context) and 77 <= len(context.encode()) <= 80, header
    assert shell("git", "apply", "--check", cwd=tmp_path, stdin=shown.stdout_bytes).returncode == 0
