"""Speed and memory of seqlen-guard on the newest transformers 5.x source tree.

    .venv/bin/python benchmarks/bench.py                    # everything, about 9 minutes on 2 cores
    .venv/bin/python benchmarks/bench.py --flake8-share 1   # flake8 on the whole tree (slow)
    .venv/bin/python benchmarks/bench.py --skip-flake8

Downloads the wheel once into benchmarks/.cache (`pip download --no-deps`), unpacks it, and prints
ratios (the machine is shared and noisy: only ratios mean something), then writes them to
benchmarks/RESULTS.md. Times are CPU seconds of the measured process and its children, taken from
`wait4`/`getrusage`, each the best of `--repeat` runs where a run is cheap.

Goals (issue 15), each printed PASS/FAIL at the end: the whole tree checks within 1.5x the
`ast.parse` floor; a one-file run (`seqlen-guard FILE`, as pre-commit runs it) within 5x a bare
`python -c pass` of the same interpreter; the flake8 plugin adds at most 5% to a flake8 run; peak
memory flat in the number of files. Also fixer --diff <= 2x check.

The whole-tree check and the one-file runs use a copy of `lint_rules` compiled to bytecode
(benchmarks/.cache/installed), as an installed package is; the one-file run from the source tree
without bytecode (the first run after an edit, or any run under PYTHONDONTWRITEBYTECODE) is printed
beside it for information.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import dataclasses
import datetime
import functools
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any, NamedTuple

from lint_rules.process import settle_for_command

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
CACHE = HERE / ".cache"
RESULTS = HERE / "RESULTS.md"
VERSION = "5.24.0"
SOURCE_METHOD = b"get_seq_length"
PLUGIN_DISTRIBUTION = "seqlen-guard"
ONE_FILE_RUNS = ("transformers/models/llama/modeling_llama.py", "transformers/generation/utils.py")
"""A modeling file that calls get_seq_length and imports its siblings, and the largest user of it."""
INSTALLED = CACHE / "installed"


# ------------------------------------------------------------------------------ the tree


def transformers_tree(version: str) -> Path:
    """benchmarks/.cache/transformers-VERSION/transformers, downloaded and unpacked on first use."""
    target = CACHE / f"transformers-{version}"
    tree = target / "transformers"
    if tree.is_dir():
        return with_neutral_config(tree)
    CACHE.mkdir(parents=True, exist_ok=True)
    wheel = CACHE / f"transformers-{version}-py3-none-any.whl"
    if not wheel.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                f"transformers=={version}",
                "-d",
                str(CACHE),
            ],
            check=True,
        )
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if name.startswith("transformers/")]
        archive.extractall(target, members)
    return with_neutral_config(tree)


NEUTRAL_CONFIG = "[tool.seqlen-guard]\n"


def with_neutral_config(tree: Path) -> Path:
    """The tree, with an empty `[tool.seqlen-guard]` table in the folder the runs start from (its
    parent): the range of releases is then every one the table knows, not the one this repository's
    pyproject.toml pins for its own tests, which a run from there would find above the tree."""
    (tree.parent / "pyproject.toml").write_text(NEUTRAL_CONFIG, encoding="utf-8")
    return tree


def python_files(tree: Path) -> list[Path]:
    return sorted(path for path in tree.rglob("*.py") if path.is_file())


# --------------------------------------------------------------------------- measuring


@dataclasses.dataclass(frozen=True)
class Measure:
    cpu: float
    """CPU seconds, user + system."""
    wall: float
    max_rss_mib: float = 0.0
    """Peak resident memory of the measured process (largest single process), MiB."""
    last_line: str = ""
    """The last line the command printed on stderr (the fixer's summary)."""


def run_child(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Measure:
    """Run a command through the launcher; it must exit 0 (the commands run with --exit-zero, so
    anything else is a crash, not findings)."""
    result = launcher().run(command, cwd, env or child_env())
    if result["status"] != 0:
        raise SystemExit(f"{' '.join(command)[:300]} failed ({result['status']}):\n{result['stderr']}")
    last_line = (str(result["stderr"]).strip().splitlines() or [""])[-1]
    return Measure(float(result["cpu"]), float(result["wall"]), float(result["max_rss_kib"]) / 1024, last_line)


class Launcher:
    """A small process of this script (`--launcher`) that starts the measured commands, started before
    this one reads the tree. On Linux a child's peak RSS (`ru_maxrss`) includes the memory of the
    process it was forked from, so a command started from this process, which holds the tree's text,
    would report this process's size (84 MiB for `python -c pass`) instead of its own."""

    def __init__(self) -> None:
        command = [sys.executable, str(Path(__file__).resolve()), "--launcher"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, command: Sequence[str], cwd: Path, env: dict[str, str]) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"command": list(command), "cwd": str(cwd), "env": env}) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit("the launcher exited")
        result: dict[str, object] = json.loads(answer)
        return result


@functools.cache
def launcher() -> Launcher:
    return Launcher()


def launcher_loop() -> int:
    """`--launcher`: run each command read from stdin (a JSON line) and answer its CPU seconds (user +
    system, children it waited for included), wall seconds, peak RSS and exit status, from wait4."""
    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        process = subprocess.Popen(
            request["command"],
            cwd=request["cwd"],
            env=request["env"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        stderr = process.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
        answer = {
            "cpu": usage.ru_utime + usage.ru_stime,
            "wall": time.monotonic() - started,
            "max_rss_kib": usage.ru_maxrss,
            "status": os.waitstatus_to_exitcode(status),
            "stderr": stderr[-2000:],
        }
        print(json.dumps(answer), flush=True)
    return 0


def child_env(package_root: Path = REPO_ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), env.get("PYTHONPATH", "")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def in_process(action: Callable[[], object]) -> Measure:
    cpu, wall = time.process_time(), time.monotonic()
    action()
    return Measure(time.process_time() - cpu, time.monotonic() - wall)


def best(measures: Sequence[Measure]) -> Measure:
    return min(measures, key=lambda measure: measure.cpu)


def repeat(times: int, action: Callable[[], Measure]) -> Measure:
    return best([action() for _ in range(times)])


# ------------------------------------------------------------------------------ the runs


class Floor(NamedTuple):
    read_and_parse: Measure
    """Read every file, `ast.parse` the candidates."""
    parse: Measure
    """`ast.parse` the candidates only."""
    parse_as_the_command: Measure
    """The same, under the garbage-collector setting the command gives its own process (information)."""
    candidates: int


def parse_floor(files: Sequence[Path]) -> Floor:
    sources = {path: path.read_bytes() for path in files}
    candidates = [data for data in sources.values() if SOURCE_METHOD in data]

    def read_and_parse() -> None:
        for path in files:
            data = path.read_bytes()
            if SOURCE_METHOD in data:
                ast.parse(data)

    def parse_only() -> None:
        for data in candidates:
            ast.parse(data)

    return Floor(
        in_process(read_and_parse),
        in_process(parse_only),
        in_process(lambda: with_the_commands_collector(parse_only)),
        len(candidates),
    )


def with_the_commands_collector(action: Callable[[], object]) -> None:
    """`action` under the collector setting a command gives its own process (`settle_for_command`: the
    objects made so far frozen, a young collection every `YOUNG_THRESHOLD` allocations), then this
    process's setting back."""
    threshold = gc.get_threshold()
    gc.collect()
    settle_for_command()
    try:
        action()
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def checker(paths: Sequence[str], cwd: Path, package_root: Path = REPO_ROOT) -> Measure:
    return run_child([sys.executable, "-m", "lint_rules", "--exit-zero", *paths], cwd, child_env(package_root))


def fixer_diff(paths: Sequence[str], cwd: Path) -> Measure:
    return run_child([sys.executable, "-m", "fixers.rewrite", "--diff", "--exit-zero", *paths], cwd)


def installed_copy() -> Path:
    """A fresh copy of `lint_rules` with its bytecode compiled, as `pip install` leaves it; its parent."""
    shutil.rmtree(INSTALLED, ignore_errors=True)
    shutil.copytree(REPO_ROOT / "lint_rules", INSTALLED / "lint_rules", ignore=shutil.ignore_patterns("__pycache__"))
    if not compileall.compile_dir(INSTALLED / "lint_rules", quiet=1):
        raise SystemExit(f"could not compile {INSTALLED / 'lint_rules'}")
    return INSTALLED


def seqlen_guard_command() -> list[str]:
    """The `seqlen-guard` console script of this interpreter (what pre-commit runs), else `-m lint_rules`."""
    script = Path(sys.executable).with_name("seqlen-guard")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "lint_rules"]


def one_file(path: str, cwd: Path, package_root: Path) -> Measure:
    return run_child([*seqlen_guard_command(), "--exit-zero", path], cwd, child_env(package_root))


def bare_python(cwd: Path, package_root: Path) -> Measure:
    return run_child([sys.executable, "-c", "pass"], cwd, child_env(package_root))


def flake8(paths: Sequence[str], cwd: Path, select: str, with_plugin: bool, jobs: int) -> Measure:
    """flake8 through this script's `--flake8-child` mode, which can leave the plugin out."""
    mode = "--flake8-child-with-plugin" if with_plugin else "--flake8-child-without-plugin"
    command = [sys.executable, str(Path(__file__).resolve()), mode, "--", f"--select={select}", f"-j{jobs}", *paths]
    return run_child(command, cwd)


def flake8_child(with_plugin: bool, arguments: Sequence[str]) -> int:
    """flake8's own main; without the plugin its entry point is dropped before plugins load.

    flake8 runs every installed plugin whatever `--select` says and filters afterwards, so
    `--select=E999` alone would still pay for the plugin.
    """
    from flake8.main import cli
    from flake8.plugins import finder

    if not with_plugin:
        find_plugins = finder.find_plugins

        def without_seqlen_guard(*args: object, **kwargs: object) -> list[finder.Plugin]:
            plugins = find_plugins(*args, **kwargs)  # type: ignore[arg-type]
            return [plugin for plugin in plugins if plugin.package != PLUGIN_DISTRIBUTION]

        finder.find_plugins = without_seqlen_guard  # type: ignore[assignment]
    status = cli.main(list(arguments))
    return 0 if status in (0, 1) else status


def flake8_subset(tree: Path, share: float) -> list[str]:
    """generation/ and the given share of the model folders (every n-th, in name order)."""
    models = sorted(path for path in (tree / "models").iterdir() if path.is_dir())
    step = max(1, round(1 / share)) if share > 0 else len(models) + 1
    chosen = [tree / "generation", *models[::step]] if share < 1 else [tree]
    return [str(path.relative_to(tree.parent)) for path in chosen]


def plugin_is_registered() -> bool:
    output = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True).stdout
    return PLUGIN_DISTRIBUTION in output


# ----------------------------------------------------------------------------- reporting


@dataclasses.dataclass
class Report:
    rows: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    goals: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    def add(self, name: str, value: str, goal: str = "") -> None:
        self.rows.append((name, value, goal))
        print(f"{name:<58} {value:<34} {goal}", flush=True)

    def goal(self, name: str, figure: str, passed: bool | None) -> None:
        """One goal of the issue, PASS/FAIL (or "not run")."""
        outcome = "not run" if passed is None else "PASS" if passed else "FAIL"
        self.goals.append((name, figure, outcome))

    def print_goals(self) -> None:
        print("\ngoals", flush=True)
        for name, figure, outcome in self.goals:
            print(f"{outcome:<8} {name:<64} {figure}", flush=True)

    def markdown(self, header: str) -> str:
        lines = [header, "", "| goal | figure | result |", "|---|---|---|"]
        lines += [f"| {name} | {figure} | {outcome} |" for name, figure, outcome in self.goals]
        lines += ["", "| measure | figure | goal |", "|---|---|---|"]
        lines += [f"| {name} | {value} | {goal} |" for name, value, goal in self.rows]
        lines += ["", *[f"- {note}" for note in self.notes]]
        return "\n".join(lines) + "\n"


def verdict(ratio: float, limit: float) -> str:
    return f"<= {limit:g}x: {'PASS' if ratio <= limit else 'FAIL'}"


def seconds(measure: Measure) -> str:
    return f"{measure.cpu:.1f} s CPU ({measure.wall:.1f} s wall)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default=VERSION, help=f"transformers version (default {VERSION})")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each cheap measurement; the best counts")
    parser.add_argument(
        "--flake8-share",
        type=float,
        default=0.5,
        help="share of models/ (plus generation/) given to flake8; 1 = the whole tree (default 0.5)",
    )
    parser.add_argument("--flake8-jobs", type=int, default=2, help="flake8 -j, the same for both runs (default 2)")
    parser.add_argument(
        "--flake8-repeat", type=int, default=3, help="flake8 runs of each side, in turn; the best counts (default 3)"
    )
    parser.add_argument("--skip-flake8", action="store_true")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    args = parser.parse_args(argv)
    launcher()  # before this process grows: see Launcher

    tree = transformers_tree(args.version)
    root = tree.parent
    files = python_files(tree)
    relative = [str(path.relative_to(root)) for path in files]
    half = relative[: len(relative) // 2]
    report = Report()
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    header = (
        f"# seqlen-guard benchmark: transformers {args.version}\n\n"
        f"{datetime.datetime.now().isoformat(timespec='minutes')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.machine()}. {len(files)} files, "
        f"{lines:,} lines. seqlen-guard {measured_revision()}."
    )
    print(header, flush=True)

    installed = installed_copy()
    floors, checks = interleaved(
        args.repeat, lambda: parse_floor(files), lambda: checker(["transformers"], root, installed)
    )
    floor_all = best([floor.read_and_parse for floor in floors])
    floor_parse = best([floor.parse for floor in floors])
    floor_as_command = best([floor.parse_as_the_command for floor in floors])
    report.add("candidate files (contain get_seq_length)", str(floors[0].candidates))
    report.add("floor: read all + ast.parse candidates", seconds(floor_all))
    report.add("floor: ast.parse candidates only", seconds(floor_parse))
    report.add("  same, under the command's collector setting (info)", seconds(floor_as_command))

    check_full = best(checks)
    report.add("check, whole tree (-j1)", seconds(check_full))
    over_floor, over_parse = check_full.cpu / floor_all.cpu, check_full.cpu / floor_parse.cpu
    report.add("check / floor (read all + parse candidates)", f"{over_floor:.2f}x", verdict(over_floor, 1.5))
    report.add("check / floor (parse candidates only)", f"{over_parse:.2f}x", verdict(over_parse, 1.5))
    rounds = sorted(check.cpu / floor.parse.cpu for floor, check in zip(floors, checks, strict=True))
    report.add("  same, each round's pair (info)", f"{rounds[0]:.2f}x-{rounds[-1]:.2f}x, median {median(rounds):.2f}x")
    over_command = check_full.cpu / floor_as_command.cpu
    report.add("  check / parse under the command's collector setting (info)", f"{over_command:.2f}x")
    report.goal(
        "whole tree check <= 1.5x the ast.parse floor",
        f"{over_floor:.2f}x (parse only: {over_parse:.2f}x)",
        max(over_floor, over_parse) <= 1.5,
    )

    run_one_file(report, root, args.repeat, installed)

    fix_full = repeat(args.repeat, lambda: fixer_diff(["transformers"], root))
    report.add("fixer --diff, whole tree (-j1)", seconds(fix_full))
    report.add("fixer summary", fix_full.last_line.removeprefix("seqlen-guard-fix: "))
    report.add(
        "fixer --diff / check", f"{fix_full.cpu / check_full.cpu:.2f}x", verdict(fix_full.cpu / check_full.cpu, 2)
    )

    check_half = checker(half, root, installed)
    fix_half = fixer_diff(half, root)
    memory = [("check", check_half, check_full), ("fixer --diff", fix_half, fix_full)]
    for name, half_run, full_run in memory:
        growth = full_run.max_rss_mib / half_run.max_rss_mib
        figure = f"{half_run.max_rss_mib:.0f} -> {full_run.max_rss_mib:.0f} MiB ({growth:.2f}x)"
        report.add(f"peak RSS {name}: half tree -> whole tree", figure, f"flat (<= 1.2x): {pass_fail(growth <= 1.2)}")
        report.goal(f"peak memory of {name} flat in files (half -> whole <= 1.2x)", figure, growth <= 1.2)

    overhead = (
        None if args.skip_flake8 else run_flake8(report, tree, args.flake8_share, args.flake8_jobs, args.flake8_repeat)
    )
    report.goal(
        "flake8 plugin adds <= 5% to a flake8 run",
        "-" if overhead is None else f"{overhead:+.1%}",
        None if overhead is None else overhead <= 0.05,
    )
    report.goal("fixer --diff <= 2x check", f"{fix_full.cpu / check_full.cpu:.2f}x", fix_full.cpu <= 2 * check_full.cpu)
    report.print_goals()

    report.notes += [
        "CPU seconds of the measured process and the children it waited for; the floor, the check, the fixer and "
        f"the one-file runs are the best of {args.repeat} runs, flake8 the best of {args.flake8_repeat} runs of each side "
        "(in turn). The check and the fixer run in "
        "child processes and include interpreter start-up; the check runs `lint_rules` compiled to bytecode, as "
        "installed (see the one-file run), since a run from a source tree without bytecode also compiles the "
        "package (about 0.1 s), and the fixer runs from the source tree. The floor and the check are measured in turn (floor, "
        "check, floor, check, ...), and so are each one-file run and the bare python, so that a slower stretch of "
        "a shared machine weighs on both sides of those ratios alike.",
        "One-file run: `seqlen-guard FILE` (the console script of this interpreter, as pre-commit runs it; "
        "default settings, so the package view reads the sibling modules it needs) against `python -c pass` "
        "of the same interpreter with the same environment. Both are timed with `lint_rules` as an installed "
        "package has it: a copy with its bytecode compiled. The run from the source tree without bytecode "
        "(`PYTHONDONTWRITEBYTECODE`, or the first run after an edit) also compiles `lint_rules` and is "
        "printed for information only.",
        "The fixer's figure covers its whole safety net on every rewritten file: the second `ast.parse`, the "
        "re-analysis of the result and the comparison with the original.",
        "The floor is the least any checker must do: read every file to find the candidates, parse those, with "
        "Python's default garbage-collector setting. The command sets its own collector (`lint_rules/process.py`), "
        "which makes its share of parsing about a fifth cheaper; the floor under that setting, and the check's "
        "ratio to it, are printed for information. Each round's pair shows how far this machine moves the ratio.",
        "Peak RSS is the largest single process (`ru_maxrss`), for half the files (first half in path order) "
        "and for all of them. Every command starts from a small launcher process (about 15 MiB, a floor for "
        "the figure), not from this script, whose own size a forked child's `ru_maxrss` would include.",
        "flake8 runs every installed plugin whatever `--select` says, so the baseline drops the plugin's entry "
        "point (this script's `--flake8-child-without-plugin` mode) instead of relying on `--select=E999`.",
    ]
    if not args.no_write:
        RESULTS.write_text(report.markdown(header))
        print(f"\nwritten to {RESULTS}")
    return 0


def measured_revision() -> str:
    """The commit of the measured code, marked when lint_rules/ or fixers/ differ from it."""
    git = ["git", "-C", str(REPO_ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--", "lint_rules", "fixers"], capture_output=True, text=True
    ).stdout.strip()
    return f"{commit or 'unknown commit'}{' with uncommitted changes' if changed else ''}"


def interleaved(times: int, *actions: Callable[[], Any]) -> list[list[Any]]:
    """Each action's results, the actions run in turn `times` times (a, b, a, b, ...): on a shared
    machine a slower stretch then weighs on both sides of a ratio alike."""
    results: list[list[Any]] = [[] for _ in actions]
    for _ in range(times):
        for action, found in zip(actions, results, strict=True):
            found.append(action())
    return results


def pass_fail(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def run_one_file(report: Report, root: Path, times: int, installed: Path) -> None:
    """`seqlen-guard FILE` against a bare `python -c pass`, both best of `times`, measured in turn."""
    for path in ONE_FILE_RUNS:
        name = path.removeprefix("transformers/")
        bares, runs, sources = interleaved(
            times,
            lambda: bare_python(root, installed),
            functools.partial(one_file, path, root, installed),
            functools.partial(one_file, path, root, REPO_ROOT),
        )
        bare, run, source = best(bares), best(runs), best(sources)
        ratio = run.cpu / bare.cpu
        report.add(
            f"bare `python -c pass` (in turn with {name})", f"{bare.cpu * 1000:.0f} ms CPU ({bare.max_rss_mib:.0f} MiB)"
        )
        report.add(f"seqlen-guard {name}", f"{run.cpu * 1000:.0f} ms CPU ({run.max_rss_mib:.0f} MiB)")
        report.add(f"seqlen-guard {name} / python -c pass", f"{ratio:.1f}x", verdict(ratio, 5))
        report.add(
            "  same, lint_rules without bytecode (info)",
            f"{source.cpu * 1000:.0f} ms CPU ({source.cpu / bare.cpu:.1f}x)",
        )
        report.goal(f"one-file run {name} <= 5x python -c pass", f"{ratio:.1f}x", ratio <= 5)


def run_flake8(report: Report, tree: Path, share: float, jobs: int, times: int) -> float | None:
    """The plugin's overhead on a flake8 run (a fraction), None when flake8 does not list the plugin."""
    if not plugin_is_registered():
        report.notes.append("flake8 skipped: `flake8 --version` does not list seqlen-guard (pip install -e .)")
        print(report.notes[-1])
        return None
    paths = flake8_subset(tree, share)
    files = sum(len(python_files(tree.parent / path)) for path in paths)
    report.add("flake8 files", f"{files} ({'whole tree' if share >= 1 else f'generation/ + {share:g} of models/'})")
    baselines, runs = interleaved(
        times,
        lambda: flake8(paths, tree.parent, "E999", with_plugin=False, jobs=jobs),
        lambda: flake8(paths, tree.parent, "SLG", with_plugin=True, jobs=jobs),
    )
    baseline, with_plugin = best(baselines), best(runs)
    report.add(f"flake8 --select=E999 -j{jobs}, plugin left out", seconds(baseline))
    report.add(f"flake8 --select=SLG -j{jobs}, plugin installed", seconds(with_plugin))
    overhead = with_plugin.cpu / baseline.cpu - 1
    report.add("flake8 plugin overhead", f"{overhead:+.1%}", f"<= +5%: {pass_fail(overhead <= 0.05)}")
    return overhead


if __name__ == "__main__":
    if sys.argv[1:] == ["--launcher"]:
        sys.exit(launcher_loop())
    if len(sys.argv) > 2 and sys.argv[1].startswith("--flake8-child-") and sys.argv[2] == "--":
        sys.exit(flake8_child(sys.argv[1] == "--flake8-child-with-plugin", sys.argv[3:]))
    sys.exit(main())
