"""Speed and memory of seqlen-guard on the newest transformers 5.x source tree.

    .venv/bin/python benchmarks/bench.py                    # everything, about 7 minutes on 2 cores
    .venv/bin/python benchmarks/bench.py --flake8-share 1   # flake8 on the whole tree (slow)
    .venv/bin/python benchmarks/bench.py --skip-flake8

Downloads the wheel once into benchmarks/.cache (`pip download --no-deps`), unpacks it, and prints
ratios (the machine is shared and noisy: only ratios mean something), then writes them to
benchmarks/RESULTS.md. Times are CPU seconds of the measured process and its children, taken from
`wait4`/`getrusage`, each the best of `--repeat` runs where a run is cheap.

Goals: check <= 1.5x the `ast.parse` floor, the flake8 plugin adds <= 5% to a flake8 run,
fixer --diff <= 2x check, peak memory flat in the number of files.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import os
import platform
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
CACHE = HERE / ".cache"
RESULTS = HERE / "RESULTS.md"
VERSION = "5.24.0"
SOURCE_METHOD = b"get_seq_length"
PLUGIN_DISTRIBUTION = "seqlen-guard"


# ------------------------------------------------------------------------------ the tree


def transformers_tree(version: str) -> Path:
    """benchmarks/.cache/transformers-VERSION/transformers, downloaded and unpacked on first use."""
    target = CACHE / f"transformers-{version}"
    tree = target / "transformers"
    if tree.is_dir():
        return tree
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


def run_child(command: Sequence[str], cwd: Path) -> Measure:
    """Run a command; its CPU time (children it waited for included) and peak RSS, from wait4."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env())
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)[:300]} failed ({process.returncode}):\n{stderr.decode()[-2000:]}")
    last_line = (stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
    return Measure(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, last_line)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
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


def parse_floor(files: Sequence[Path]) -> tuple[Measure, Measure, int]:
    """(read every file + ast.parse of the candidates, ast.parse of the candidates only, candidates)."""
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

    return in_process(read_and_parse), in_process(parse_only), len(candidates)


def checker(paths: Sequence[str], cwd: Path) -> Measure:
    return run_child([sys.executable, "-m", "lint_rules", "--exit-zero", *paths], cwd)


def fixer_diff(paths: Sequence[str], cwd: Path) -> Measure:
    return run_child([sys.executable, "-m", "fixers.rewrite", "--diff", "--exit-zero", *paths], cwd)


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
    notes: list[str] = dataclasses.field(default_factory=list)

    def add(self, name: str, value: str, goal: str = "") -> None:
        self.rows.append((name, value, goal))
        print(f"{name:<58} {value:<34} {goal}", flush=True)

    def markdown(self, header: str) -> str:
        lines = [header, "", "| measure | figure | goal |", "|---|---|---|"]
        lines += [f"| {name} | {value} | {goal} |" for name, value, goal in self.rows]
        lines += ["", *[f"- {note}" for note in self.notes]]
        return "\n".join(lines) + "\n"


def verdict(ratio: float, limit: float) -> str:
    return f"<= {limit:g}x: {'met' if ratio <= limit else 'NOT met'}"


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
    parser.add_argument("--skip-flake8", action="store_true")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    args = parser.parse_args(argv)

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
        f"{lines:,} lines."
    )
    print(header, flush=True)

    floor_all, floor_parse, candidates = best_floor(files, args.repeat)
    report.add("candidate files (contain get_seq_length)", str(candidates))
    report.add("floor: read all + ast.parse candidates", seconds(floor_all))
    report.add("floor: ast.parse candidates only", seconds(floor_parse))

    check_full = repeat(args.repeat, lambda: checker(["transformers"], root))
    report.add("check, whole tree (-j1)", seconds(check_full))
    report.add(
        "check / floor (read all + parse candidates)",
        f"{check_full.cpu / floor_all.cpu:.2f}x",
        verdict(check_full.cpu / floor_all.cpu, 1.5),
    )
    report.add(
        "check / floor (parse candidates only)",
        f"{check_full.cpu / floor_parse.cpu:.2f}x",
        verdict(check_full.cpu / floor_parse.cpu, 1.5),
    )

    fix_full = repeat(args.repeat, lambda: fixer_diff(["transformers"], root))
    report.add("fixer --diff, whole tree (-j1)", seconds(fix_full))
    report.add("fixer summary", fix_full.last_line.removeprefix("seqlen-guard-fix: "))
    report.add(
        "fixer --diff / check", f"{fix_full.cpu / check_full.cpu:.2f}x", verdict(fix_full.cpu / check_full.cpu, 2)
    )

    check_half = checker(half, root)
    fix_half = fixer_diff(half, root)
    report.add(
        "peak RSS check: half tree -> whole tree",
        f"{check_half.max_rss_mib:.0f} -> {check_full.max_rss_mib:.0f} MiB "
        f"({check_full.max_rss_mib / check_half.max_rss_mib:.2f}x)",
        "flat (<= 1.2x)",
    )
    report.add(
        "peak RSS fixer --diff: half tree -> whole tree",
        f"{fix_half.max_rss_mib:.0f} -> {fix_full.max_rss_mib:.0f} MiB "
        f"({fix_full.max_rss_mib / fix_half.max_rss_mib:.2f}x)",
        "flat (<= 1.2x)",
    )

    if not args.skip_flake8:
        run_flake8(report, tree, args.flake8_share, args.flake8_jobs)

    report.notes += [
        "CPU seconds of the measured process and the children it waited for; the floor, the check and the fixer are "
        f"the best of {args.repeat} runs, flake8 one run each. The check and the fixer run in child processes and "
        "include interpreter start-up (about 0.3 s).",
        "The fixer's figure covers its whole safety net on every rewritten file: the second `ast.parse`, the "
        "re-analysis of the result and the comparison with the original.",
        "The floor is the least any checker must do: read every file to find the candidates, parse those.",
        "Peak RSS is the largest single process (`ru_maxrss`), for half the files (first half in path order) "
        "and for all of them.",
        "flake8 runs every installed plugin whatever `--select` says, so the baseline drops the plugin's entry "
        "point (this script's `--flake8-child-without-plugin` mode) instead of relying on `--select=E999`.",
    ]
    if not args.no_write:
        RESULTS.write_text(report.markdown(header))
        print(f"\nwritten to {RESULTS}")
    return 0


def best_floor(files: Sequence[Path], times: int) -> tuple[Measure, Measure, int]:
    runs = [parse_floor(files) for _ in range(times)]
    return best([run[0] for run in runs]), best([run[1] for run in runs]), runs[0][2]


def run_flake8(report: Report, tree: Path, share: float, jobs: int) -> None:
    if not plugin_is_registered():
        report.notes.append("flake8 skipped: `flake8 --version` does not list seqlen-guard (pip install -e .)")
        print(report.notes[-1])
        return
    paths = flake8_subset(tree, share)
    files = sum(len(python_files(tree.parent / path)) for path in paths)
    report.add("flake8 files", f"{files} ({'whole tree' if share >= 1 else f'generation/ + {share:g} of models/'})")
    baseline = flake8(paths, tree.parent, "E999", with_plugin=False, jobs=jobs)
    report.add(f"flake8 --select=E999 -j{jobs}, plugin left out", seconds(baseline))
    with_plugin = flake8(paths, tree.parent, "SLG", with_plugin=True, jobs=jobs)
    report.add(f"flake8 --select=SLG -j{jobs}, plugin installed", seconds(with_plugin))
    overhead = with_plugin.cpu / baseline.cpu - 1
    report.add("flake8 plugin overhead", f"{overhead:+.1%}", f"<= +5%: {'met' if overhead <= 0.05 else 'NOT met'}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1].startswith("--flake8-child-") and sys.argv[2] == "--":
        sys.exit(flake8_child(sys.argv[1] == "--flake8-child-with-plugin", sys.argv[3:]))
    sys.exit(main())
