"""The engine's cost in machine instructions, for comparing two versions of the code on a noisy machine.

    .venv/bin/python benchmarks/instructions.py                      # this tree
    .venv/bin/python benchmarks/instructions.py --against OTHER_TREE # and another checkout, side by side
    .venv/bin/python benchmarks/instructions.py --flake8 0.125       # the plugin's share of a flake8 run

CPU seconds on a shared virtual machine move by 5-10% from one minute to the next, more than most
changes to the engine weigh; `bench.py` measures its ratios in turn to cancel that, but cannot tell a
2% change from noise. The number of instructions executed can: under valgrind's cachegrind (no
cache simulation) with a fixed `PYTHONHASHSEED`, it repeats to the last digit. This script parses
every candidate file of the transformers tree (`bench.py` downloads it) and analyzes it in one
process, once with the analysis and once without, and prints the difference: the engine's
instructions, and their ratio to the parse's. About 80 seconds per run (two runs per tree, two at a
time). Needs `valgrind` on the PATH; a tool for the engineer, not a goal or a test.

`--flake8 SHARE` counts instead two flake8 runs (`-j1`) over `bench.py`'s subset (generation/ and
that share of the model folders), one with the plugin and one with its entry point left out, as
`bench.py` runs them, and prints the plugin's overhead: the flake8 goal in a figure that two runs
repeat, where `bench.py`'s CPU seconds move by more than the 5% the goal allows (about 12 minutes
for a share of 0.125, the two runs side by side). `lint_rules` is compiled to bytecode first, as an
installed plugin has it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import CACHE, REPO_ROOT, SOURCE_METHOD, VERSION, flake8_subset, transformers_tree  # noqa: E402

CHILD = """
import ast, sys
sys.path.insert(0, sys.argv[1])
from lint_rules.engine import STAMPS, SourceText, analyze_tree
from lint_rules.process import settle_for_command
settle_for_command()
with STAMPS.kept_for_the_run():  # as the checker runs
    for path in sys.argv[3:]:
        text = open(path, encoding="utf-8").read()
        tree = ast.parse(text, filename=path)
        if sys.argv[2] == "analyze":
            analyze_tree(tree, SourceText(text), path)
        del tree
"""
INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(tree: Path, mode: str, files: list[str]) -> int:
    """Instructions of one process that parses `files` (and analyzes them with `mode` "analyze")."""
    return counted([sys.executable, "-c", CHILD, str(tree), mode, *files], CACHE)


def counted(command: list[str], cwd: Path, environment: dict[str, str] | None = None) -> int:
    """The instructions `command` executes, under cachegrind with a fixed hash seed."""
    valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", "--cachegrind-out-file=/dev/null"]
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(environment or {}), "PYTHONHASHSEED": "0"}
    result = subprocess.run(
        [*valgrind, *command], capture_output=True, text=True, env=environment, cwd=cwd, check=False
    )
    found = INSTRUCTIONS.search(result.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{result.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def compiled_copy(tree: Path, name: str) -> Path:
    """`lint_rules` of `tree` copied and compiled to bytecode, as an installed package has it (the
    same for every tree compared, so that their paths weigh alike)."""
    target = CACHE / "instructions" / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(tree / "lint_rules", target / "lint_rules")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "lint_rules")], check=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="another checkout of this project, measured the same way")
    parser.add_argument("--version", default=VERSION, help=f"transformers version (default {VERSION})")
    parser.add_argument("--flake8", type=float, metavar="SHARE", help="the plugin's overhead on a flake8 run instead")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on the PATH")
    if args.flake8 is not None:
        return flake8_overhead(transformers_tree(args.version), args.flake8)
    candidates = [str(path) for path in sorted(transformers_tree(args.version).rglob("*.py"))]
    candidates = [path for path in candidates if SOURCE_METHOD in Path(path).read_bytes()]
    trees = {"this tree": compiled_copy(REPO_ROOT, "a")}
    if args.against:
        trees[str(args.against)] = compiled_copy(args.against.resolve(), "b")
    runs = [(name, mode) for name in trees for mode in ("parse", "analyze")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counted = pool.map(lambda run: instructions(trees[run[0]], run[1], candidates), runs)
        counts = dict(zip(runs, counted, strict=True))
    print(f"{len(candidates)} candidate files of transformers {args.version}, PYTHONHASHSEED=0")
    for name in trees:
        parse, engine = counts[(name, "parse")], counts[(name, "analyze")] - counts[(name, "parse")]
        print(f"{name:>30}: engine {engine / 1e9:.3f} G instructions, {engine / parse:.3f}x the parse's")
    return 0


def flake8_overhead(tree: Path, share: float) -> int:
    """The instructions of flake8 with the plugin against flake8 with its entry point left out."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO_ROOT / "lint_rules")], check=True)
    paths = flake8_subset(tree, share)
    child = [sys.executable, str(HERE / "bench.py")]
    sides = {
        "plugin left out": [*child, "--flake8-child-without-plugin", "--", "--select=E999", "-j1", *paths],
        "plugin installed": [*child, "--flake8-child-with-plugin", "--", "--select=SLG", "-j1", *paths],
    }
    with_bytecode = {"PYTHONDONTWRITEBYTECODE": ""}
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(
            zip(sides, pool.map(lambda side: counted(sides[side], tree.parent, with_bytecode), sides), strict=True)
        )
    for side, count in counts.items():
        print(f"flake8 -j1, {side}: {count / 1e9:.3f} G instructions")
    overhead = counts["plugin installed"] / counts["plugin left out"] - 1
    where = f"generation/ and {len(paths) - 1} model folders ({share:g} of them)"
    print(f"flake8 plugin overhead over {where}: {overhead:+.1%} (goal <= +5%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
