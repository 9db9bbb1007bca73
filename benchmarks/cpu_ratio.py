"""The whole-tree check against a parse floor, in CPU seconds of two separate processes.

    python benchmarks/cpu_ratio.py TREE [--rounds 3]

The floor is a bare `python -c` that walks TREE with `pathlib.rglob('*.py')`, reads every file and
`ast.parse`s those containing `get_seq_length`; the check is `python -m lint_rules --exit-zero
TREE`. Each round runs the two in turn; each side's best round counts (user + sys of the child).
This is the second of the two speed measures (bench.py's floor is measured inside one process).
`lint_rules` is compiled to bytecode first, as an installed package is: with PYTHONDONTWRITEBYTECODE
set (the development machine sets it), a module edited since its last compilation would be compiled from
source in every run (about 20 ms for the largest two). Both run in a folder whose pyproject.toml
has an empty `[tool.seqlen-guard]` table, so that the range of releases is every one the table
knows, not the one this repository's own pyproject.toml pins for its tests.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import NEUTRAL_CONFIG

FLOOR = """
import ast, pathlib, sys
for path in pathlib.Path(sys.argv[1]).rglob('*.py'):
    text = path.read_bytes()
    if b'get_seq_length' in text:
        ast.parse(text)
"""


def cpu_seconds(command: Sequence[str], cwd: str) -> float:
    """user + sys of one child process run to its end (its output discarded)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "lint_rules", quiet=1)
    tree = str(args.tree.resolve())
    floor_command = [sys.executable, "-c", FLOOR, tree]
    check_command = [sys.executable, "-m", "lint_rules", "--exit-zero", "--no-baseline", tree]
    with tempfile.TemporaryDirectory(prefix="cpu_ratio_") as folder:
        (Path(folder) / "pyproject.toml").write_text(NEUTRAL_CONFIG, encoding="utf-8")
        floors, checks = measure_in_turn(floor_command, check_command, args.rounds, folder)
    print(f"best: floor {min(floors):.2f} s CPU, check {min(checks):.2f} s CPU: {min(checks) / min(floors):.2f}x")
    return 0


def measure_in_turn(
    floor_command: list[str], check_command: list[str], rounds: int, cwd: str
) -> tuple[list[float], list[float]]:
    """Each round runs the floor, then the check; each side's CPU seconds by round."""
    floors: list[float] = []
    checks: list[float] = []
    for round_number in range(1, rounds + 1):
        floors.append(cpu_seconds(floor_command, cwd))
        checks.append(cpu_seconds(check_command, cwd))
        print(
            f"round {round_number}: floor {floors[-1]:.2f} s, check {checks[-1]:.2f} s, {checks[-1] / floors[-1]:.2f}x"
        )
    return floors, checks


if __name__ == "__main__":
    sys.exit(main())
