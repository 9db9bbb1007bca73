"""The generated matrix: every source form x every use context (`tests/source_use_matrix.py`), inline
and after a binding. For each module:

- the checker, the flake8 plugin and the fixer (default and `--unsafe-fixes`) run without an
  exception, and the checker and the plugin report the same findings;
- the engine reports exactly the rules the pair expects (or stays silent, for the stated reason);
- each fixer run gives code that parses, has nothing left that this mode would fix, and does not
  change on a second run; every finding the mode leaves says why.

The whole matrix also goes through the three installed commands once, as files of one folder: no
traceback, and the fixer's exit status is 0 or 1. Once more, with code that neither makes nor reads a
length before the use (`padded`), the engine reports the same rules: the walk's stop
(`flow/quiet_rest.py`) must not cut off a use it cannot see coming.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from lint_rules.engine import analyze_source
from tests.helpers_rewrite import cli_environment
from tests.invariants import check_invariants
from tests.source_use_matrix import Case, cases

CASES = cases()


def test_the_matrix_is_valid_python_and_large() -> None:
    for case in CASES:
        ast.parse(case.module)
    assert len(CASES) >= 900
    for case in CASES:
        assert case.expected_codes or case.silent_because, f"{case.id}: a silent pair says why"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pair(case: Case) -> None:
    findings = check_invariants(case.module, case.id)
    reported = sorted({finding.code for finding in findings})
    assert reported == sorted(case.expected_codes), f"{case.id}\n{case.module}\n{findings}"


PADDED = cases(padded=True)


@pytest.mark.parametrize("case", PADDED, ids=[case.id for case in PADDED])
def test_pair_after_unrelated_code(case: Case) -> None:
    """Code that neither makes nor reads a length between the source and the use changes nothing:
    the walk stops only where the rest of a function cannot matter (`flow/quiet_rest.py`)."""
    ast.parse(case.module)
    reported = sorted({finding.code for finding in analyze_source(case.module, "module.py")})
    assert reported == sorted(case.expected_codes), f"{case.id}\n{case.module}"


@pytest.mark.slow
def test_the_commands_on_the_whole_matrix(tmp_path: Path) -> None:
    for index, case in enumerate(CASES):
        (tmp_path / f"case_{index:04d}.py").write_text(case.module, encoding="utf-8")
    environment = cli_environment()
    for command in (["-m", "lint_rules"], ["-m", "flake8", "--select=SLG"], ["-m", "fixers.rewrite", "--check"]):
        run = subprocess.run(
            [sys.executable, *command, "."], cwd=tmp_path, capture_output=True, text=True, env=environment
        )
        assert "Traceback" not in run.stderr, run.stderr[-3000:]
        assert run.returncode in (0, 1), (command, run.returncode, run.stderr[-3000:])
        assert "SLG9" not in run.stdout + run.stderr, "an internal error was reported"
    fixed = subprocess.run(
        [sys.executable, "-m", "fixers.rewrite", "--unsafe-fixes", "."], cwd=tmp_path, capture_output=True, text=True
    )
    assert fixed.returncode in (0, 1), fixed.stderr[-3000:]
    again = subprocess.run(
        [sys.executable, "-m", "fixers.rewrite", "--check", "--unsafe-fixes", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode in (0, 1)
    assert " 0 fixable " in again.stderr or "0 fixable in 0 files" in again.stderr, again.stderr[-2000:]
