"""Both CLIs over code nobody wrote for this project: every `.py`/`.pyi` file of the test
environment's site-packages (torch, transformers, numpy, sympy, ...: ten thousand files or more).

Nothing may crash, every file is either processed or reported on one line with a reason that
Python itself confirms, and every rewrite is checked by the independent oracle in
`helpers_rewrite`: it parses, it is the original plus inserted statements byte for byte (a
hoisted call's statement aside), its `ast` is the original's, and a second run changes nothing.

The counts of each run are written to `corpus-counts.json` in the test's tmp dir and printed.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import sysconfig
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from helpers_rewrite import (
    CHECKER,
    FIXER,
    Run,
    apply_diff,
    confirm_error_is_real,
    parse_unified_diff,
    rewrite_problems,
    run_cli,
    unexplained_errors,
)

from lint_rules.files import PYTHON_SUFFIXES, SKIPPED_WHILE_WALKING

pytestmark = pytest.mark.corpus

SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"])
JOBS = ("-j", "2")
SOURCE_METHOD = b"get_seq_length"
BROADER_METHODS = ("--source-methods", "size,numel,item")
BROADER_SUBSET = (
    "transformers/generation",
    "transformers/data",
    "transformers/models/deberta_v2",
    "torch/nn/modules",
    "torch/_refs",
    "torch/_decomp",
    "numpy/lib",
    "networkx/algorithms/centrality",
)
"""Folders where `size()`, `numel()` and `item()` calls are dense: many plans, hoists among them.
The whole corpus with these methods takes about 20 minutes, too long for CI."""
FINDING_LINE = re.compile(rb"\S.*:\d+:\d+: SLG\d{3} .*\n?")


# ------------------------------------------------------------------------------ the corpus


def corpus_files(root: Path) -> dict[tuple[int, int], str]:
    """Every Python file under `root`, nothing skipped, once per (device, inode): relative paths."""
    found: dict[tuple[int, int], str] = {}
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(PYTHON_SUFFIXES):
                path = Path(folder, name)
                if path.is_file():
                    info = path.stat()
                    found.setdefault((info.st_dev, info.st_ino), str(path.relative_to(root)))
    return found


def corpus_arguments(root: Path) -> list[str]:
    """Each top-level package and module, plus every folder the walk would skip (`build`, `venv`,
    `.hidden`, ...) given explicitly, so that nothing below `root` is left out."""
    arguments = sorted(
        entry.name for entry in os.scandir(root) if entry.is_dir() or entry.name.endswith(PYTHON_SUFFIXES)
    )
    for folder, folders, _ in os.walk(root):
        for name in folders:
            skipped = Path(folder, name)
            if any(fnmatch.fnmatchcase(name, glob) for glob in SKIPPED_WHILE_WALKING) and holds_python(skipped):
                arguments.append(str(skipped.relative_to(root)))
    return arguments


def holds_python(folder: Path) -> bool:
    return any(path.suffix in PYTHON_SUFFIXES for path in folder.rglob("*"))


def candidate_files(root: Path, files: Iterable[str]) -> list[str]:
    """The files the engine parses: those containing the source method's name."""
    return sorted(path for path in files if SOURCE_METHOD in (root / path).read_bytes())


@pytest.fixture
def isolated_config(tmp_path: Path) -> list[str]:
    """An empty pyproject.toml, so that no configuration above site-packages applies."""
    config = tmp_path / "empty-pyproject.toml"
    config.write_text("")
    return ["--config", str(config)]


def record_counts(tmp_path: Path, name: str, counts: dict[str, object]) -> None:
    target = tmp_path / "corpus-counts.json"
    target.write_text(json.dumps({name: counts}, indent=2) + "\n")
    print(f"\n{name}: {json.dumps(counts)}  (written to {target})")


# ---------------------------------------------------------------------------- assertions


def assert_run_is_clean(run: Run, root: Path, allowed_codes: Sequence[int] = (0, 1)) -> dict[str, str]:
    """Exit code 0/1, or 2 only for files with a legitimate, confirmed one-line reason."""
    errors = run.errors()
    assert run.returncode in (*allowed_codes, 2), run.describe()
    assert (run.returncode == 2) == bool(errors), f"exit code and error lines disagree\n{run.describe()}"
    assert not unexplained_errors(errors), f"errors on valid input: {unexplained_errors(errors)}\n{run.describe()}"
    unconfirmed = {path: (reason, confirm_error_is_real(root / path, reason)) for path, reason in errors.items()}
    unconfirmed = {path: pair for path, pair in unconfirmed.items() if pair[1]}
    assert not unconfirmed, f"reported errors that Python does not confirm: {unconfirmed}"
    return errors


def assert_sound_rewrites(originals: Path, rewritten: dict[str, bytes]) -> None:
    failures = {}
    for path, new in sorted(rewritten.items()):
        problems = rewrite_problems((originals / path).read_bytes(), new)
        if problems:
            failures[path] = problems
    assert not failures, f"{len(failures)} unsound rewrites:\n" + "\n".join(f"{p}: {v}" for p, v in failures.items())


def assert_second_run_changes_nothing(files: Sequence[str], cwd: Path, options: Sequence[str]) -> Run:
    snapshot = {path: (cwd / path).read_bytes() for path in files}
    again = run_cli(FIXER, ["--diff", *options, *JOBS, *files], cwd)
    assert not parse_unified_diff(again.stdout_bytes, FINDING_LINE.fullmatch), (
        f"a second run changes more\n{again.describe()}"
    )
    assert again.summary()["fixes"] == 0, again.describe()
    assert again.returncode in (0, 1), again.describe()
    assert {path: (cwd / path).read_bytes() for path in files} == snapshot, "--diff wrote to a file"
    return again


def copy_packages(files: Iterable[str], source: Path, target: Path) -> None:
    """The top-level folders (packages) that hold `files`, whole; top-level modules alone."""
    tops = {Path(path).parts[0] for path in files}
    for top in sorted(tops):
        if (source / top).is_dir():
            shutil.copytree(source / top, target / top, symlinks=True)
        else:
            copy_files([top], source, target)


def copy_files(files: Iterable[str], source: Path, target: Path) -> None:
    for path in files:
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / path, target / path)


# --------------------------------------------------------------------------------- tests


def test_checker_and_fixer_diff_over_the_corpus(tmp_path: Path, isolated_config: list[str]) -> None:
    """The default settings over everything: the checker, then the fixer with --diff, whose
    patches must apply to the originals and yield sound, converged rewrites."""
    root = SITE_PACKAGES
    files = corpus_files(root)
    arguments = corpus_arguments(root)
    assert len(files) >= 5000, f"{root} holds only {len(files)} Python files: is this the test environment?"

    started = time.monotonic()
    checked = run_cli(CHECKER, [*isolated_config, *JOBS, *arguments], root)
    check_seconds = time.monotonic() - started
    check_errors = assert_run_is_clean(checked, root)
    finding_lines = [line for line in checked.stdout.splitlines() if line]
    assert all(FINDING_LINE.fullmatch(line.encode()) for line in finding_lines), checked.describe()

    started = time.monotonic()
    fixed = run_cli(FIXER, ["--diff", *isolated_config, *JOBS, *arguments], root)
    fix_seconds = time.monotonic() - started
    fix_errors = assert_run_is_clean(fixed, root)
    summary = fixed.summary()
    assert summary["files"] == len(files), "files scanned differ from the Python files in the corpus"
    assert summary["findings"] == len(finding_lines), "the fixer and the checker disagree on the findings"
    assert fix_errors == check_errors, "the fixer and the checker disagree on the files in error"

    diffs = parse_unified_diff(fixed.stdout_bytes, FINDING_LINE.fullmatch)
    assert len(diffs) == summary["changed_files"], fixed.describe()
    patched = {}
    for diff in diffs:
        path = diff.new_name.removeprefix("b/")
        assert diff.old_name == f"a/{path}", diff
        patched[path] = apply_diff((root / path).read_bytes(), diff)
    assert_sound_rewrites(root, patched)

    copy = tmp_path / "patched"
    copy_packages(patched, root, copy)  # the engine reads sibling modules: the second run needs them
    for path, new in patched.items():
        (copy / path).write_bytes(new)
    again = assert_second_run_changes_nothing(sorted(patched), copy, isolated_config)

    record_counts(
        tmp_path,
        "default settings, whole corpus",
        {
            "files scanned": summary["files"],
            "arguments given": len(arguments),
            "candidate files (contain get_seq_length)": len(candidate_files(root, files.values())),
            "findings": summary["findings"],
            "fixes (safe)": summary["fixes"],
            "files rewritten": summary["changed_files"],
            "left unsafe": summary["unsafe"],
            "left without automatic fix": summary["unfixable"],
            "errors": summary["errors"],
            "error reasons": sorted(set(fix_errors.values())),
            "findings left after the fix in rewritten files": again.summary()["findings"],
            "check seconds": round(check_seconds, 1),
            "fix --diff seconds": round(fix_seconds, 1),
        },
    )


def test_unsafe_fixes_over_the_corpus(tmp_path: Path, isolated_config: list[str]) -> None:
    """--unsafe-fixes rewrites many more files (modeling code runs compiled). Only a file holding
    the source method's name can have a finding, so those files are copied and fixed in write mode;
    the whole-corpus walk and reading is covered by the test above."""
    root = SITE_PACKAGES
    candidates = candidate_files(root, corpus_files(root).values())
    copy = tmp_path / "unsafe"
    copy_files(candidates, root, copy)

    started = time.monotonic()
    fixed = run_cli(FIXER, ["--unsafe-fixes", *isolated_config, *JOBS, *candidates], copy)
    fix_seconds = time.monotonic() - started
    errors = assert_run_is_clean(fixed, copy)
    summary = fixed.summary()
    assert summary["files"] == len(candidates)
    assert summary["unsafe"] == 0, "--unsafe-fixes left unsafe fixes unapplied"

    rewritten = {path: (copy / path).read_bytes() for path in candidates}
    rewritten = {path: new for path, new in rewritten.items() if new != (root / path).read_bytes()}
    assert len(rewritten) == summary["changed_files"], fixed.describe()
    assert_sound_rewrites(root, rewritten)
    again = assert_second_run_changes_nothing(sorted(rewritten), copy, ["--unsafe-fixes", *isolated_config])

    record_counts(
        tmp_path,
        "--unsafe-fixes, candidate files",
        {
            "files scanned": summary["files"],
            "findings": summary["findings"],
            "fixes (safe and unsafe)": summary["fixes"],
            "files rewritten": summary["changed_files"],
            "left without automatic fix": summary["unfixable"],
            "errors": summary["errors"],
            "error reasons": sorted(set(errors.values())),
            "findings left after the fix in rewritten files": again.summary()["findings"],
            "fix seconds": round(fix_seconds, 1),
        },
    )


def test_broader_source_methods_on_a_subset(tmp_path: Path, isolated_config: list[str]) -> None:
    """`--source-methods size,numel,item` turns thousands of ordinary calls into sources: many
    more plans per file, hoists out of conditions and arithmetic, several per statement. The
    findings are not meaningful, but every fix must still be sound and converge."""
    root = SITE_PACKAGES
    copy = tmp_path / "broader"
    files = sorted(
        str(path.relative_to(root))
        for folder in BROADER_SUBSET
        for path in (root / folder).rglob("*")
        if path.suffix in PYTHON_SUFFIXES and path.is_file()
    )
    assert len(files) > 100
    copy_files(files, root, copy)
    options = ["--unsafe-fixes", *BROADER_METHODS, *isolated_config]

    started = time.monotonic()
    fixed = run_cli(FIXER, [*options, *JOBS, *files], copy)
    fix_seconds = time.monotonic() - started
    rewritten = {path: (copy / path).read_bytes() for path in files}
    rewritten = {path: new for path, new in rewritten.items() if new != (root / path).read_bytes()}
    summary = fixed.summary()
    record_counts(
        tmp_path,
        "--unsafe-fixes --source-methods size,numel,item, subset",
        {
            "files scanned": summary["files"],
            "findings": summary["findings"],
            "fixes": summary["fixes"],
            "files rewritten": summary["changed_files"],
            "errors": summary["errors"],
            "errors by reason": _count_reasons(fixed.errors()),
            "fix seconds": round(fix_seconds, 1),
        },
    )
    assert_run_is_clean(fixed, copy)
    assert summary["files"] == len(files)
    assert len(rewritten) == summary["changed_files"], fixed.describe()
    assert_sound_rewrites(root, rewritten)
    assert_second_run_changes_nothing(sorted(rewritten), copy, options)


def _count_reasons(errors: dict[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for reason in errors.values():
        counts[reason] = counts.get(reason, 0) + 1
    return counts
