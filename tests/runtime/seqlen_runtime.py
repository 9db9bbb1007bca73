"""Shared machinery of the runtime tests (imported by conftest.py and the test module).

The expensive jobs are

- copying a transformers release and rewriting the copy with the fixer
  (``python -m fixers.rewrite <copy>/transformers --format json``), and
- one ``scenarios.py`` subprocess per (release, variant, model), variant being
  ``unmodified`` (the installed package) or ``rewritten`` (the fixer's copy).

Each runs at most once per pytest run, also under ``pytest -n 2``: results are
written to a folder shared by all xdist workers, under a file lock per job, and
whoever needs a result later reads it from there. ``Jobs.prefetch`` starts the
jobs the collected tests need in background threads so that the single-threaded
fixer and the Inductor compiles overlap; a job that another thread or worker is
already running is skipped there and waited for by the test that needs it.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SCENARIOS_SCRIPT = HERE / "scenarios.py"
DECODE_LOOPS_SCRIPT = HERE / "vl_scenarios.py"
DECODE_LOOPS = ("text", "image", "positions")
"""vl_scenarios.py's decode loops: Qwen2-VL through compute_3d_position_ids (text, image) and a text
model computing its positions with torch.arange(past, past + n, ...) (positions)."""
DECODE_MODES = ("compiled", "eager", "reference")
# Time limits sized to the work: a subprocess gets STARTUP_S (imports, model build) plus
# RUN_S for every (scenario, mode) run it does. A cold Inductor compile of one model's graphs
# takes 1-3 minutes on 2 idle cores, a whole scenario (compiled and eager) up to 4 minutes on
# 2 cores loaded by other jobs; RUN_S leaves three times that per run.
STARTUP_S = 300
RUN_S = 360
SUBPROCESS_TIMEOUT_S = STARTUP_S + RUN_S
"""One run: e.g. the import probe of matrix.py."""
FIXER_TIMEOUT_S = 1200
PROGRESS_PREFIX = "seqlen-runtime: running "
"""Scenario scripts print this and the (scenario, mode) they start to stderr: a timeout names it."""

VENV_VERSION = "5.5.3"  # pinned by the project's test extra
NEWEST_VERSION = "5.24.0"  # newest 5.x, built into .runtime/ by build_envs.py

# Which model runs which scenario: GPT-2 is the report's model; Llama covers the
# rotary / GQA path.
MODEL = {
    "report": "gpt2",
    "inputs_embeds": "gpt2",
    "beam_search": "gpt2",
    "chunked_prefill": "llama",
    "continue_cache": "llama",
    "assisted": "llama",
    "assisted_static_assistant": "llama",
    "position_ids": "llama",
}
# The generation modes beyond the report, each on the path of one of the fixer's guards
MODES = ("assisted", "assisted_static_assistant", "beam_search", "position_ids")
PLAN = {
    VENV_VERSION: ("report", "chunked_prefill", "continue_cache", "inputs_embeds", *MODES),
    # chunked_prefill is cheap here (the Llama subprocess runs anyway) and runs the
    # guards the fixer adds to 5.24.0's chunk loop
    NEWEST_VERSION: ("report", "continue_cache", "chunked_prefill", *MODES),
}
VARIANTS = ("unmodified", "rewritten")


def scenario_group(version: str, model: str, plan: dict[str, tuple[str, ...]] = PLAN) -> list[str]:
    """The scenarios one subprocess runs: all of the release's scenarios for that model."""
    return [s for s in plan[version] if MODEL[s] == model]


def load_build_envs() -> Any:
    """build_envs.py, loaded by path (tests/runtime is no package)."""
    spec = importlib.util.spec_from_file_location("seqlen_guard_build_envs", HERE / "build_envs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- packages


@dataclass(frozen=True)
class Release:
    """An installed transformers release: ``root`` holds the ``transformers`` folder."""

    version: str
    root: Path
    # sys.path entries a subprocess puts first to import this release: none for the
    # venv's own; the side environment (transformers and the tokenizers it needs) for 5.24.0
    paths: tuple[Path, ...] = ()

    @property
    def package(self) -> Path:
        return self.root / "transformers"


def venv_release() -> Release:
    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None
    return Release(importlib.metadata.version("transformers"), Path(spec.origin).resolve().parents[1])


@dataclass
class Rewrite:
    """A copy of a release, rewritten by the fixer in this run."""

    release: Release
    root: Path  # holds the rewritten ``transformers`` folder
    returncode: int
    findings: list[dict] | None
    stderr: str
    seconds: float
    digests: dict[str, str]  # relative path -> sha256 right after the fixer ran
    changed: list[str] = field(default_factory=list)  # relative paths that differ from the release

    @property
    def package(self) -> Path:
        return self.root / "transformers"


def tree_digests(package: Path) -> dict[str, str]:
    """sha256 of every file in a package folder (bytecode caches left out)."""
    out = {}
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[path.relative_to(package).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _is_int_guard(node: ast.stmt) -> str | None:
    """The guarded name if ``node`` is ``if isinstance(NAME, torch.Tensor): NAME = int(NAME.item())``."""
    if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1):
        return None
    test, body = node.test, node.body[0]
    is_isinstance = (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and ast.unparse(test.args[1]) == "torch.Tensor"
    )
    if not is_isinstance or not isinstance(body, ast.Assign):
        return None
    name = test.args[0].id  # type: ignore[union-attr]
    targets = [t.id for t in body.targets if isinstance(t, ast.Name)]
    return name if targets == [name] and ast.unparse(body.value) == f"int({name}.item())" else None


def guard_sites(package: Path, relpaths: Iterable[str]) -> list[dict]:
    """Every int guard in the given files of a rewritten package, with its enclosing function."""
    sites: list[dict] = []

    def visit(node: ast.AST, scope: list[str], relpath: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = [*scope, child.name]
            elif isinstance(child, ast.stmt) and (name := _is_int_guard(child)) is not None:
                sites.append(
                    {
                        "file": str((package / relpath).resolve()),
                        "relpath": relpath,
                        "line": child.lineno,
                        "end_line": child.end_lineno,
                        "name": name,
                        "function": ".".join(scope),
                    }
                )
            visit(child, inner, relpath)

    for relpath in relpaths:
        if relpath.endswith(".py"):
            visit(ast.parse((package / relpath).read_text()), [], relpath)
    return sites


def fixer_summary(stderr: str) -> str | None:
    """The fixer's closing summary line (``seqlen-guard-fix: N files scanned, ...``)."""
    lines = [line for line in stderr.splitlines() if line.startswith("seqlen-guard-fix: ") and "scanned" in line]
    return lines[-1].removeprefix("seqlen-guard-fix: ") if lines else None


def function_source(path: Path, qualname: str) -> str | None:
    """Source of ``Class.method`` or ``function`` in ``path``, or None."""
    source = path.read_text()
    tree = ast.parse(source)
    *outer, name = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    for part in outer:
        found = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == part]
        if not found:
            return None
        scope = found[0].body
    for node in scope:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(source, node)
    return None


# --------------------------------------------------------------------------- comparing runs


def call_types(call: dict) -> list[str]:
    return [r["type"] for r in call["next_sequence_length"]]


def run_values(run: dict) -> list[list[int | None]]:
    return [[r["value"] for r in call["next_sequence_length"]] for call in run["calls"]]


def run_tokens(run: dict) -> list[list[list[int]]]:
    return [call["tokens"] for call in run["calls"]]


def normalize_reason(reason: str) -> str:
    """First line of a Dynamo message without source locations (the copy lives elsewhere
    and a rewritten file has shifted line numbers)."""
    line = reason.strip().splitlines()[0] if reason.strip() else ""
    line = line.split("  #")[0]  # guard failures append '# <source>  # <file>:<line> in <fn>'
    line = re.sub(r"\S*transformers/", "transformers/", line)
    line = re.sub(r"\b\d{6,}\b", "<id>", line)  # type ids in ___check_type_id guards
    return re.sub(r"(\.py)?:\d+", r"\1", line).strip()


def compile_profile(counters: dict) -> dict:
    """What the rewrite must leave unchanged, from torch._dynamo.utils.counters:

    - frames total / ok: frames Dynamo converted, recompiles included; a guard added
      inside compiled code would show up as an extra frame (the code after the break);
    - stats unique_graphs: FX graphs handed to Inductor; each graph break or recompile
      makes one more;
    - stats calls_captured: operations captured into those graphs; changes if rewritten
      code runs inside the compiled forward (e.g. a guard in a cache method);
    - graph_break: graph breaks by reason (a `.item()` in compiled code is one);
    - guard failures: the reason of every recompile.
    Inductor's own counters (FX cache hits, pattern matches) depend on what ran before
    and are left out.
    """
    frames = counters.get("frames", {})
    stats = counters.get("stats", {})
    breaks = counters.get("graph_break", {})
    failures = counters.get("guard_failures", {})
    return {
        "frames_total": frames.get("total", 0),
        "frames_ok": frames.get("ok", 0),
        "unique_graphs": stats.get("unique_graphs", 0),
        "calls_captured": stats.get("calls_captured", 0),
        "graph_breaks": sum(breaks.values()),
        "graph_break_reasons": sorted(normalize_reason(r) for r in breaks),
        "recompiles": sum(len(v) for v in failures.values()),
        "recompile_reasons": sorted(
            f"{code.split('@')[0]}: {normalize_reason(r)}" for code, rs in failures.items() for r in rs
        ),
    }


# --------------------------------------------------------------------------- subprocesses


def subprocess_env(cache_dir: Path) -> dict[str, str]:
    """The environment of every scenario subprocess: one FX graph / AOT autograd cache for all
    (the rewritten package's runs reuse the kernels compiled for the unmodified one), no hub,
    nothing from PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(
        TORCHINDUCTOR_CACHE_DIR=str(cache_dir),
        TORCHINDUCTOR_FX_GRAPH_CACHE="1",
        TORCHINDUCTOR_AUTOGRAD_CACHE="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
    )
    return env


def job_timeout(runs: int) -> int:
    """The time limit of a subprocess doing `runs` (scenario, mode) runs."""
    return STARTUP_S + RUN_S * max(runs, 1)


@dataclass(frozen=True)
class ScriptRun:
    """What a scenario subprocess did: `failure` is None when it exited 0."""

    failure: str | None
    stdout: str
    stderr: str
    seconds: float


def run_scenario_script(cmd: list[str], cwd: Path, cache_dir: Path, runs: int, timeout: int | None = None) -> ScriptRun:
    """Run a scenario script with `subprocess_env` and a limit sized to its `runs` (or `timeout`);
    a timeout says which scenario and mode was running (the last one the script announced)."""
    timeout = timeout or job_timeout(runs)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=subprocess_env(cache_dir), capture_output=True, text=True, timeout=timeout
        )
        failure = None if proc.returncode == 0 else f"exited {proc.returncode}"
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        stdout, stderr = as_text(exc.stdout), as_text(exc.stderr)
        failure = f"timed out after {timeout}s ({runs} runs) while running {last_announced(stderr)}"
    return ScriptRun(failure, stdout, stderr, time.perf_counter() - start)


def as_text(output: str | bytes | None) -> str:
    """Partial output of a killed subprocess: bytes on POSIX even with text=True."""
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    return output or ""


def last_announced(stderr: str) -> str:
    announced = [line[len(PROGRESS_PREFIX) :] for line in stderr.splitlines() if line.startswith(PROGRESS_PREFIX)]
    return announced[-1] if announced else "its start-up (no scenario had started)"


# --------------------------------------------------------------------------- decode loops

COUNTED = ("frames_total", "unique_graphs", "graph_breaks", "recompiles")
"""What the device rewrite may only lower, never raise."""


def release_crash(error: str | None) -> bool:
    """The unmodified release's own failure on a tensor length: `torch.arange(tensor([p]), ...)`."""
    return bool(error) and error.startswith("TypeError: arange()")


def decode_loop_verdict(docs: dict, scenario: str) -> dict:
    """One decode-loop scenario, unmodified against rewritten: the rewritten runs all finish with the
    reference tokens (eager, the length an int); the unmodified release may only fail with its own
    `arange` TypeError; the rewrite only removes frames, graphs, graph breaks and recompiles."""
    runs = {variant: docs[variant]["scenarios"][scenario] for variant in VARIANTS}
    reference = runs["unmodified"]["reference"]
    problems: list[str] = []
    if reference["error"]:
        problems.append(f"the reference run failed: {reference['error'][:300]}")
    crashes = {}
    for variant, mode_runs in runs.items():
        for mode, run in mode_runs.items():
            if run["error"] and variant == "unmodified" and release_crash(run["error"]):
                crashes[mode] = run["error"].splitlines()[0][:120]
            elif run["error"]:
                problems.append(f"{variant} {mode} failed: {run['error'][:300]}")
            elif run["tokens"] != reference.get("tokens"):
                problems.append(f"{variant} {mode}: tokens differ from the reference (margin {run['min_margin']})")
    profiles = {
        variant: compile_profile(mode_runs["compiled"]["counters"])
        for variant, mode_runs in runs.items()
        if not mode_runs["compiled"]["error"]
    }
    removed = {}
    if len(profiles) == 2:
        before, after = profiles["unmodified"], profiles["rewritten"]
        removed = {key: before[key] - after[key] for key in COUNTED}
        problems += [f"the rewrite adds {-n} {key}" for key, n in removed.items() if n < 0]
        extra = Counter(after["graph_break_reasons"]) - Counter(before["graph_break_reasons"])
        problems += [f"new graph break: {reason}" for reason in extra]
    return {"problems": problems, "removed": removed, "release_crash": crashes, "profiles": profiles}


# --------------------------------------------------------------------------- jobs


class JobFailed(AssertionError):
    pass


def default_fixer_root() -> Path:
    """Where ``python -m fixers.rewrite`` runs: the checkout, or the tree named by
    ``SEQLEN_GUARD_FIXER_ROOT`` (e.g. an exported commit while the engine is being edited)."""
    return Path(os.environ.get("SEQLEN_GUARD_FIXER_ROOT") or REPO_ROOT).resolve()


class Jobs:
    def __init__(
        self,
        shared: Path,
        cache_dir: Path,
        releases: dict[str, Release],
        plan: dict[str, tuple[str, ...]] = PLAN,
        fixer_root: Path | None = None,
    ):
        self.shared = shared
        self.cache_dir = cache_dir
        self.releases = releases
        self.plan = plan
        self.fixer_root = fixer_root or default_fixer_root()
        self._memo: dict[Any, Any] = {}
        self._memo_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[Future] = []

    # -- locking ---------------------------------------------------------------

    def _run_once(self, name: str, record: Path, work: Any, wait: bool) -> bool:
        """Run ``work()`` unless ``record`` exists; False if someone else holds the job
        and ``wait`` is False."""
        lock = FileLock(str(self.shared / f"{name}.lock"))
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except Timeout:
            return False
        try:
            if not record.is_file():
                work()
        finally:
            lock.release()
        return True

    # -- the fixer ---------------------------------------------------------------

    def rewrite(self, version: str, wait: bool = True) -> Rewrite | None:
        release = self.releases[version]
        base = self.shared / f"rewritten-{version}"
        record = base / "fixer.json"

        def work() -> None:
            if base.exists():
                shutil.rmtree(base)
            root = base / "root"
            root.mkdir(parents=True)
            shutil.copytree(release.package, root / "transformers", ignore=shutil.ignore_patterns("__pycache__"))
            cmd = [sys.executable, "-m", "fixers.rewrite", str(root / "transformers"), "--format", "json"]
            start = time.perf_counter()
            try:
                proc = subprocess.run(cmd, cwd=self.fixer_root, capture_output=True, text=True, timeout=FIXER_TIMEOUT_S)
                rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
            except subprocess.TimeoutExpired as exc:
                rc, stdout, stderr = -1, str(exc.stdout or ""), f"timed out after {FIXER_TIMEOUT_S}s"
            seconds = time.perf_counter() - start
            try:
                findings = json.loads(stdout)
            except ValueError:
                findings = None
            data = {
                "command": cmd,
                "fixer_root": str(self.fixer_root),
                "returncode": rc,
                "findings": findings,
                "stdout": stdout if findings is None else None,
                "stderr": stderr,
                "seconds": round(seconds, 1),
                "digests": tree_digests(root / "transformers"),
            }
            record.write_text(json.dumps(data))

        if not self._run_once(f"rewrite-{version}", record, work, wait):
            return None
        with self._memo_lock:
            if ("rewrite", version) not in self._memo:
                data = json.loads(record.read_text())
                original = tree_digests(release.package)
                digests = data["digests"]
                changed = {p for p in digests if original.get(p) != digests[p]} | (original.keys() - digests.keys())
                stderr = data["stderr"]
                if data["stdout"]:
                    stderr += f"\nstdout (not JSON): {data['stdout'][:4000]}"
                self._memo[("rewrite", version)] = Rewrite(
                    release=release,
                    root=base / "root",
                    returncode=data["returncode"],
                    findings=data["findings"],
                    stderr=stderr,
                    seconds=data["seconds"],
                    digests=digests,
                    changed=sorted(changed),
                )
            return self._memo[("rewrite", version)]

    # -- scenario subprocesses ---------------------------------------------------

    def scenarios(self, version: str, variant: str, model: str, wait: bool = True) -> dict | None:
        release = self.releases[version]
        if variant == "unmodified":
            paths = list(release.paths)
            expected_package = release.package
            rewritten = None
        else:
            assert variant == "rewritten", variant
            rewritten = self.rewrite(version, wait=True)
            assert rewritten is not None
            if rewritten.returncode not in (0, 1) or rewritten.findings is None:
                raise JobFailed(
                    f"the fixer failed on {version} (exit {rewritten.returncode}):\n{rewritten.stderr[-4000:]}"
                )
            # the copy first; then the release's side environment, if any, for its dependencies
            paths = [rewritten.root, *release.paths]
            expected_package = rewritten.package
        name = f"scenarios-{version}-{variant}-{model}"
        record = self.shared / f"{name}.json"
        group = scenario_group(version, model, self.plan)

        def work() -> None:
            tmp = self.shared / f"{name}.out"
            cmd = [sys.executable, str(SCENARIOS_SCRIPT), "--model", model, "--out", str(tmp)]
            for p in paths:
                cmd += ["--path", str(p)]
            for s in group:
                cmd += ["--scenario", s]
            if rewritten is not None:
                # scenarios.py records the type of each guarded value before and after its guard
                guards = self.shared / f"{name}.guards.json"
                guards.write_text(json.dumps(guard_sites(rewritten.package, rewritten.changed)))
                cmd += ["--guards", str(guards)]
            ran = run_scenario_script(cmd, self.shared, self.cache_dir, runs=len(group) * 2)
            failure, stdout, stderr, seconds = ran.failure, ran.stdout, ran.stderr, ran.seconds
            if failure is None:
                doc = json.loads(tmp.read_text())
                tmp.unlink()
            else:
                doc = {"failed": f"{' '.join(cmd)}: {failure}\nstdout:\n{stdout[-4000:]}\nstderr:\n{stderr[-8000:]}"}
            doc["wall_seconds"] = round(seconds, 1)
            doc["stderr_tail"] = stderr[-4000:]
            doc["expected_package"] = str(expected_package)
            if rewritten is not None:
                # the rewritten copy is still byte for byte what the fixer wrote
                doc["tree_unchanged_since_fixer"] = tree_digests(rewritten.package) == rewritten.digests
            record.write_text(json.dumps(doc))

        if not self._run_once(name, record, work, wait):
            return None
        doc = json.loads(record.read_text())
        if "failed" in doc:
            raise JobFailed(doc["failed"])
        return doc

    # -- decode loops (vl_scenarios.py) -------------------------------------------------

    def decode_loops(self, version: str, variant: str, scenarios: Iterable[str] = DECODE_LOOPS) -> dict:
        """vl_scenarios.py on one release / variant, once per pytest run (also under xdist)."""
        release = self.releases[version]
        paths, package, rewritten = list(release.paths), release.package, None
        if variant == "rewritten":
            rewritten = self.rewrite(version)
            assert rewritten is not None
            if rewritten.returncode not in (0, 1) or rewritten.findings is None:
                raise JobFailed(
                    f"the fixer failed on {version} (exit {rewritten.returncode}):\n{rewritten.stderr[-4000:]}"
                )
            paths, package = [rewritten.root, *release.paths], rewritten.package
        scenarios = list(scenarios)
        name = f"decode-loops-{version}-{variant}-{'-'.join(scenarios)}"
        record = self.shared / f"{name}.json"

        def work() -> None:
            out = self.shared / f"{name}.out"
            cmd = [sys.executable, str(DECODE_LOOPS_SCRIPT), "--out", str(out), "--modes", ",".join(DECODE_MODES)]
            cmd += [arg for p in paths for arg in ("--path", str(p))]
            cmd += [arg for s in scenarios for arg in ("--scenario", s)]
            ran = run_scenario_script(cmd, self.shared, self.cache_dir, runs=len(scenarios) * len(DECODE_MODES))
            if ran.failure is None:
                doc = json.loads(out.read_text())
                out.unlink()
            else:
                doc = {"failed": f"{' '.join(cmd)}: {ran.failure}\nstderr:\n{ran.stderr[-8000:]}"}
            doc["wall_seconds"] = round(ran.seconds, 1)
            doc["expected_package"] = str(package.resolve())
            if rewritten is not None:
                doc["tree_unchanged_since_fixer"] = tree_digests(rewritten.package) == rewritten.digests
            record.write_text(json.dumps(doc))

        self._run_once(name, record, work, wait=True)
        doc = json.loads(record.read_text())
        if "failed" in doc:
            raise JobFailed(doc["failed"])
        return doc

    # -- background prefetch -------------------------------------------------------

    def prefetch(self, fixer_versions: Iterable[str], runs: Iterable[tuple[str, str, str]], threads: int) -> None:
        """Start the given jobs in the background: the fixer runs and the unmodified
        runs first (they do not depend on each other), the rewritten runs last."""
        fixer_versions = sorted(set(fixer_versions), key=lambda v: v != NEWEST_VERSION)  # the longest first
        runs = sorted(set(runs))
        unmodified = [r for r in runs if r[1] == "unmodified"]
        rewritten = [r for r in runs if r[1] == "rewritten"]
        order: list[Any] = []
        # interleave: fixer, unmodified, unmodified, fixer, unmodified, ...
        while fixer_versions or unmodified:
            if fixer_versions:
                order.append(("rewrite", fixer_versions.pop(0)))
            order += [("scenarios", *r) for r in unmodified[:2]]
            unmodified = unmodified[2:]
        order += [("scenarios", *r) for r in rewritten]
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="seqlen-runtime")
        for job in order:
            kind, *args = job
            fn = self.rewrite if kind == "rewrite" else self.scenarios
            self._futures.append(self._pool.submit(self._quietly, fn, *args))

    @staticmethod
    def _quietly(fn: Any, *args: Any) -> None:
        with contextlib.suppress(JobFailed):  # recorded; the test that needs the result reports it
            fn(*args, wait=False)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
