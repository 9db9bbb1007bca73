"""The whole-tree check against a parse floor, in CPU seconds of two separate processes.

    python benchmarks/cpu_ratio.py TREE [--rounds 3]

The floor is a bare `python -c` that walks TREE with `pathlib.rglob('*.py')`, reads every file and
`ast.parse`s those containing `get_seq_length`; the check is `python -m lint_rules --exit-zero
TREE`. Each round runs the two in turn; each side's best round counts (user + sys of the child).
This is the second of the two speed measures (bench.py's floor is measured inside one process).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

FLOOR = """
import ast, pathlib, sys
for path in pathlib.Path(sys.argv[1]).rglob('*.py'):
    text = path.read_bytes()
    if b'get_seq_length' in text:
        ast.parse(text)
"""


def cpu_seconds(command: Sequence[str]) -> float:
    """user + sys of one child process run to its end (its output discarded)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    floor_command = [sys.executable, "-c", FLOOR, str(args.tree)]
    check_command = [sys.executable, "-m", "lint_rules", "--exit-zero", "--no-baseline", str(args.tree)]
    floors, checks = [], []
    for round_number in range(1, args.rounds + 1):
        floors.append(cpu_seconds(floor_command))
        checks.append(cpu_seconds(check_command))
        print(
            f"round {round_number}: floor {floors[-1]:.2f} s, check {checks[-1]:.2f} s, {checks[-1] / floors[-1]:.2f}x"
        )
    print(f"best: floor {min(floors):.2f} s CPU, check {min(checks):.2f} s CPU: {min(checks) / min(floors):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
