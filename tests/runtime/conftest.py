"""Fixtures for the runtime tests: the transformers releases, the fixer's rewrite of a
copy of each, and the scenario subprocesses (see seqlen_runtime.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # also under --import-mode=importlib
    sys.path.insert(0, str(HERE))

import seqlen_runtime as rt  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "runtime: runs transformers and torch to check a finding or a fix for real")


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder shared by all xdist workers of this run (the session's own otherwise)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    path = base / "seqlen-guard-runtime"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def inductor_cache_dir(shared_dir: Path) -> Path:
    # An explicit TORCHINDUCTOR_CACHE_DIR (e.g. a cache kept between CI runs) wins.
    path = Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR") or shared_dir / "inductor-cache")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def releases(shared_dir: Path) -> dict[str, rt.Release]:
    """The venv's transformers and the newest 5.x in ``.runtime/`` (built here if missing)."""
    build_envs = rt.load_build_envs()
    target = build_envs.default_target(rt.NEWEST_VERSION)
    with FileLock(str(shared_dir / "build-envs.lock")):
        if not build_envs.is_built(target, rt.NEWEST_VERSION):
            build_envs.build(target, rt.NEWEST_VERSION)
    venv = rt.venv_release()
    newest = rt.Release(rt.NEWEST_VERSION, target, (target,))
    return {venv.version: venv, newest.version: newest}


@pytest.fixture(scope="session")
def jobs(
    request: pytest.FixtureRequest, shared_dir: Path, inductor_cache_dir: Path, releases: dict[str, rt.Release]
) -> Iterator[rt.Jobs]:
    jobs = rt.Jobs(shared_dir, inductor_cache_dir, releases)
    # Start what the collected runtime tests will need, so the fixer runs and the
    # compiles overlap. Under xdist every worker does this; a job already taken by
    # another worker is skipped (and waited for when a test needs it).
    fixer_versions: set[str] = set()
    runs: set[tuple[str, str, str]] = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.get_closest_marker("runtime") is None:
            continue
        if "fixer_version" in params and params["fixer_version"] in releases:
            fixer_versions.add(params["fixer_version"])
        if "case" in params and params["case"][0] in releases:
            version, scenario = params["case"]
            fixer_versions.add(version)
            runs |= {(version, variant, rt.MODEL[scenario]) for variant in rt.VARIANTS}
    threads = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2
    jobs.prefetch(fixer_versions, runs, threads)
    yield jobs
    jobs.close()
