"""Runtime proof that the fixer leaves code a compiled ``forward`` reaches alone.

A guard ``if isinstance(x, torch.Tensor): x = int(x.item())`` is harmless on the
host but a graph break inside a compiled region, and the region is everything
``forward`` calls, not only ``forward``. The VL models' ``compute_3d_position_ids``
is such a function: ``Qwen2VLModel.forward`` calls it with the cache whenever it
gets no ``position_ids``, and it binds ``cache.get_seq_length()``.

``generate()`` always passes ``position_ids`` (computed on the host), so it never
gets there; a decode loop that calls the model itself does. ``vl_scenarios.py``
runs such loops with a tiny random Qwen2-VL model, a ``StaticCache`` and
``model.forward = torch.compile(model.forward, backend="inductor")`` (and
eagerly), against the unmodified release and the copy rewritten by the fixer's
default run (the same copy ``test_fixer_runtime.py`` checks). The rewrite must
not change what gets compiled: equal Dynamo counters (frames, graphs, captured
calls, graph breaks with reasons, recompiles with reasons) and equal tokens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import seqlen_runtime as rt
from seqlen_runtime import (
    HERE,
    NEWEST_VERSION,
    VENV_VERSION,
    JobFailed,
    Jobs,
    Release,
    compile_profile,
    tree_digests,
)

pytestmark = pytest.mark.runtime

VL_SCRIPT = HERE / "vl_scenarios.py"
# 5.5.3's shape-(1,) length makes the image decode step's torch.arange raise a
# TypeError in the unmodified release (see vl_scenarios.py): text only there
PLAN = {NEWEST_VERSION: ("text", "image"), VENV_VERSION: ("text",)}
CASES = [(v, s) for v, scenarios in PLAN.items() for s in scenarios]
MODELING = "models/qwen2_vl/modeling_qwen2_vl.py"
FUNCTION = "Qwen2VLModel.compute_3d_position_ids"
# vl_scenarios.py: PASSES x (prefill + DECODE_STEPS), one compute_3d_position_ids call each
FORWARDS = 2 * (1 + 3)


def _ids(case: tuple[str, str]) -> str:
    return f"{case[0]}-{case[1]}"


# --------------------------------------------------------------------------- subprocesses


def subprocess_env(cache_dir: Path) -> dict[str, str]:
    """As for scenarios.py: one Inductor cache, no hub, nothing from PYTHONPATH."""
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


def variant_paths(jobs: Jobs, version: str, variant: str) -> tuple[list[Path], Path, rt.Rewrite | None]:
    """sys.path entries for the subprocess, the package it must import, the fixer's copy."""
    release = jobs.releases[version]
    if variant == "unmodified":
        return list(release.paths), release.package, None
    rewritten = jobs.rewrite(version)
    assert rewritten is not None
    if rewritten.returncode not in (0, 1) or rewritten.findings is None:
        raise JobFailed(f"the fixer failed on {version} (exit {rewritten.returncode}):\n{rewritten.stderr[-4000:]}")
    return [rewritten.root, *release.paths], rewritten.package, rewritten


def vl_run(jobs: Jobs, version: str, variant: str) -> dict:
    """vl_scenarios.py on one release / variant, once per pytest run (also under xdist)."""
    paths, package, rewritten = variant_paths(jobs, version, variant)
    name = f"vl-scenarios-{version}-{variant}"
    record = jobs.shared / f"{name}.json"

    def work() -> None:
        out = jobs.shared / f"{name}.out"
        cmd = [sys.executable, str(VL_SCRIPT), "--out", str(out)]
        cmd += [arg for p in paths for arg in ("--path", str(p))]
        cmd += [arg for s in PLAN[version] for arg in ("--scenario", s)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd,
                cwd=jobs.shared,
                env=subprocess_env(jobs.cache_dir),
                capture_output=True,
                text=True,
                timeout=rt.SUBPROCESS_TIMEOUT_S,
            )
            failure = None if proc.returncode == 0 else f"exited {proc.returncode}"
            stderr = proc.stderr
        except subprocess.TimeoutExpired as exc:
            failure, stderr = f"timed out after {rt.SUBPROCESS_TIMEOUT_S}s", str(exc.stderr)
        if failure is None:
            doc = json.loads(out.read_text())
            out.unlink()
        else:
            doc = {"failed": f"{' '.join(cmd)}: {failure}\nstderr:\n{stderr[-8000:]}"}
        doc["wall_seconds"] = round(time.perf_counter() - start, 1)
        doc["expected_package"] = str(package.resolve())
        if rewritten is not None:
            doc["tree_unchanged_since_fixer"] = tree_digests(rewritten.package) == rewritten.digests
        record.write_text(json.dumps(doc))

    jobs._run_once(name, record, work, wait=True)
    doc = json.loads(record.read_text())
    if "failed" in doc:
        raise JobFailed(doc["failed"])
    return doc


# --------------------------------------------------------------------------- checks


def profile(counters: dict) -> dict:
    """seqlen_runtime.compile_profile(), with the line numbers in resume
    function names (``torch_dynamo_resume_in_forward_at_1179``) left out: guards the
    fixer adds further up a file shift them without changing what is compiled."""
    out = compile_profile(counters)
    out["recompile_reasons"] = sorted(re.sub(r"_at_\d+", "_at_N", r) for r in out["recompile_reasons"])
    return out


def check_run(doc: dict, version: str, scenario: str, where: str) -> None:
    assert doc["transformers_version"] == version, where
    # the subprocess imported the package it was meant to (the copy, for "rewritten")
    assert doc["transformers_file"].startswith(doc["expected_package"] + "/"), (where, doc["transformers_file"])
    assert doc["modeling_file"] == f"{doc['expected_package']}/{MODELING}", (where, doc["modeling_file"])
    for mode, run in doc["scenarios"][scenario].items():
        assert run["error"] is None, f"{where} {scenario} {mode}: {run['error']}\n{run.get('traceback', '')}"
        assert run["forwards"] == FORWARDS, (where, mode, run["forwards"])


def check_reached(doc: dict, scenario: str, where: str) -> None:
    """The release's compute_3d_position_ids ran in every forward (eager count) and
    Dynamo traced it, from that package's file, into the compiled graphs."""
    runs = doc["scenarios"][scenario]
    assert runs["eager"]["position_id_calls"] == FORWARDS, (where, runs["eager"]["position_id_calls"])
    traced = runs["compiled"]["traced"]
    assert traced, f"{where} {scenario}: Dynamo never traced compute_3d_position_ids"
    assert {filename for _, filename in traced} == {doc["modeling_file"]}, (where, traced)


def finding_relpath(finding: dict, jobs: Jobs, package: Path) -> str:
    path = Path(finding["path"])
    if not path.is_absolute():
        path = jobs.fixer_root / path  # the fixer's working directory
    return path.resolve().relative_to(package.resolve()).as_posix()


def check_finding(jobs: Jobs, version: str) -> None:
    """The fixer reports the get_seq_length() binding this test runs through."""
    rewritten = jobs.rewrite(version)
    assert rewritten is not None and rewritten.findings is not None
    found = [
        f
        for f in rewritten.findings
        if f["function"] == FUNCTION and finding_relpath(f, jobs, rewritten.package) == MODELING
    ]
    assert found, f"no finding in {FUNCTION} of {MODELING} ({version}): the test no longer covers a finding"


# not "case": conftest.py prefetches scenarios.py runs for tests with that parameter
@pytest.mark.parametrize("vl_case", CASES, ids=_ids)
def test_compiled_forward_unchanged(vl_case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    version, scenario = vl_case
    assert version in releases, f"transformers {version} not available (have {sorted(releases)})"
    check_finding(jobs, version)
    docs = {variant: vl_run(jobs, version, variant) for variant in rt.VARIANTS}
    for variant, doc in docs.items():
        where = f"{variant} {version}"
        check_run(doc, version, scenario, where)
        check_reached(doc, scenario, where)
    assert docs["rewritten"]["tree_unchanged_since_fixer"], "the rewritten copy was modified after the fixer ran"
    unmod, rewr = (docs[v]["scenarios"][scenario] for v in rt.VARIANTS)

    # identical greedy tokens: unmodified / rewritten x compiled / eager
    reference = unmod["eager"]["tokens"]
    for variant, runs in (("unmodified", unmod), ("rewritten", rewr)):
        for mode, run in runs.items():
            assert run["tokens"] == reference, f"{variant} {mode} tokens differ (logit margin {run['min_margin']})"

    # the same compiled code: no extra frames, graphs, graph breaks or recompiles
    before, after = profile(unmod["compiled"]["counters"]), profile(rewr["compiled"]["counters"])
    assert before["unique_graphs"] > 0 and before["frames_ok"] > 0, f"nothing was compiled: {before}"
    assert after == before, f"compile profile changed\nunmodified: {before}\nrewritten:  {after}"
