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
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SCENARIOS_SCRIPT = HERE / "scenarios.py"
# Generous: a cold Inductor compile of one model's graphs takes 1-3 minutes on 2 busy cores.
SUBPROCESS_TIMEOUT_S = 1200
FIXER_TIMEOUT_S = 1200

VENV_VERSION = "5.5.3"  # pinned by the project's test extra
NEWEST_VERSION = "5.24.0"  # newest 5.x, built into .runtime/ by build_envs.py

# Which model runs which scenario: GPT-2 is the report's model; Llama covers the
# rotary / GQA path.
MODEL = {
    "report": "gpt2",
    "inputs_embeds": "gpt2",
    "chunked_prefill": "llama",
    "continue_cache": "llama",
}
PLAN = {
    VENV_VERSION: ("report", "chunked_prefill", "continue_cache", "inputs_embeds"),
    # chunked_prefill is cheap here (the Llama subprocess runs anyway) and runs the
    # guards the fixer adds to 5.24.0's chunk loop
    NEWEST_VERSION: ("report", "continue_cache", "chunked_prefill"),
}
VARIANTS = ("unmodified", "rewritten")


def scenario_group(version: str, model: str) -> list[str]:
    """The scenarios one subprocess runs: all of the release's scenarios for that model."""
    return [s for s in PLAN[version] if MODEL[s] == model]


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


# --------------------------------------------------------------------------- jobs


class JobFailed(AssertionError):
    pass


class Jobs:
    def __init__(self, shared: Path, cache_dir: Path, releases: dict[str, Release]):
        self.shared = shared
        self.cache_dir = cache_dir
        self.releases = releases
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
                proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=FIXER_TIMEOUT_S)
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
        group = scenario_group(version, model)

        def work() -> None:
            tmp = self.shared / f"{name}.out"
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            env.update(
                # one FX graph / AOT autograd cache for all subprocesses: the rewritten
                # package's runs reuse the kernels compiled for the unmodified one
                TORCHINDUCTOR_CACHE_DIR=str(self.cache_dir),
                TORCHINDUCTOR_FX_GRAPH_CACHE="1",
                TORCHINDUCTOR_AUTOGRAD_CACHE="1",
                TOKENIZERS_PARALLELISM="false",
                HF_HUB_OFFLINE="1",
            )
            cmd = [sys.executable, str(SCENARIOS_SCRIPT), "--model", model, "--out", str(tmp)]
            for p in paths:
                cmd += ["--path", str(p)]
            for s in group:
                cmd += ["--scenario", s]
            start = time.perf_counter()
            try:
                proc = subprocess.run(
                    cmd, cwd=self.shared, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S
                )
                failure = None if proc.returncode == 0 else f"exited {proc.returncode}"
                stdout, stderr = proc.stdout, proc.stderr
            except subprocess.TimeoutExpired as exc:
                failure, stdout, stderr = f"timed out after {SUBPROCESS_TIMEOUT_S}s", str(exc.stdout), str(exc.stderr)
            seconds = time.perf_counter() - start
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
