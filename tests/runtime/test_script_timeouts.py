"""The scenario subprocesses' time limits: sized to their work, and a timeout names the run."""

from __future__ import annotations

import sys
from pathlib import Path

import seqlen_runtime as rt

SLOW_SCRIPT = f"""
import sys, time
print({rt.PROGRESS_PREFIX!r} + "report (compiled)", file=sys.stderr, flush=True)
print({rt.PROGRESS_PREFIX!r} + "beam_search (eager)", file=sys.stderr, flush=True)
time.sleep(60)
"""


def test_a_timeout_names_the_scenario_that_was_running(tmp_path: Path) -> None:
    ran = rt.run_scenario_script([sys.executable, "-c", SLOW_SCRIPT], tmp_path, tmp_path, runs=4, timeout=3)
    assert ran.failure is not None
    assert ran.failure.startswith("timed out after 3s (4 runs) while running beam_search (eager)"), ran.failure


def test_a_timeout_before_any_scenario_says_so(tmp_path: Path) -> None:
    script = "import time; time.sleep(60)"
    ran = rt.run_scenario_script([sys.executable, "-c", script], tmp_path, tmp_path, runs=1, timeout=2)
    assert ran.failure is not None and "start-up (no scenario had started)" in ran.failure


def test_the_limit_grows_with_the_runs() -> None:
    assert rt.job_timeout(10) - rt.job_timeout(5) == 5 * rt.RUN_S
    assert rt.job_timeout(5 * 2) > 1200, "five scenarios, compiled and eager, get more than the old fixed limit"


def test_the_subprocess_environment_is_one_fact(tmp_path: Path) -> None:
    env = rt.subprocess_env(tmp_path)
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path) and env["HF_HUB_OFFLINE"] == "1"
    assert "PYTHONPATH" not in env
