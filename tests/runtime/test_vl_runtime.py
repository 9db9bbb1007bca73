"""Runtime proof of the fixer's device rewrite in code a compiled ``forward`` reaches.

A guard ``if isinstance(x, torch.Tensor): x = int(x.item())`` is harmless on the
host but a graph break inside a compiled region, and the region is everything
``forward`` calls, not only ``forward``. There the fixer rewrites
``torch.arange(past, past + n, ...)`` as ``torch.arange(n, ...) + past`` instead
(lint_rules/engine/fixes/deviceplan.py) and leaves the other uses alone.

``vl_scenarios.py`` runs decode loops that call the model themselves, with a
``StaticCache`` (its length a tensor once it holds tokens) and ``model.forward``
compiled by Inductor, eagerly, and eagerly with the length turned into an int (the
reference tokens), against the unmodified release and the copy rewritten by the
fixer's default run (the copy ``test_fixer_runtime.py`` checks):

- ``text`` / ``image``: a tiny Qwen2-VL through ``Qwen2VLModel.compute_3d_position_ids``
  (``generate()`` never gets there: it passes ``position_ids``). The image decode steps
  run ``torch.arange(cache_length, cache_length + seq_length)``, which raises a TypeError
  with 5.5.3's shape-(1,) length and breaks the graph with 5.24.0's 0-dim one;
- ``positions``: a tiny XGLM, whose ``forward`` computes ``torch.arange(past, past + n,
  dtype=torch.long, device=...)`` when no positions are passed.

The rewritten runs must all finish with the reference tokens; the unmodified release
may only fail with its own ``arange`` TypeError; the Dynamo counters may only lose
frames, graphs, graph breaks and recompiles (``seqlen_runtime.decode_loop_verdict``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import seqlen_runtime as rt
from seqlen_runtime import NEWEST_VERSION, VENV_VERSION, Jobs, Release

pytestmark = pytest.mark.runtime

CASES = [(version, scenario) for version in (NEWEST_VERSION, VENV_VERSION) for scenario in rt.DECODE_LOOPS]
MODELING = "models/qwen2_vl/modeling_qwen2_vl.py"
FUNCTION = "Qwen2VLModel.compute_3d_position_ids"
TEXT_MODELING = "models/xglm/modeling_xglm.py"
TEXT_FUNCTION = "XGLMModel.forward"
# vl_scenarios.py: PASSES x (prefill + DECODE_STEPS)
FORWARDS = 2 * (1 + 3)
# where the rewrite must remove breaks: the release's length is a tensor that reaches the arange
BREAKS_REMOVED = {(NEWEST_VERSION, "image"), (NEWEST_VERSION, "positions")}
RELEASE_CRASHES = {(VENV_VERSION, "image"), (VENV_VERSION, "positions")}


def _ids(case: tuple[str, str]) -> str:
    return f"{case[0]}-{case[1]}"


# --------------------------------------------------------------------------- checks


def check_imports(doc: dict, version: str, where: str) -> None:
    assert doc["transformers_version"] == version, where
    # the subprocess imported the package it was meant to (the copy, for "rewritten")
    assert doc["transformers_file"].startswith(doc["expected_package"] + "/"), (where, doc["transformers_file"])
    assert doc["modeling_file"] == f"{doc['expected_package']}/{MODELING}", (where, doc["modeling_file"])
    assert doc["text_modeling_file"] == f"{doc['expected_package']}/{TEXT_MODELING}", where


def check_reached(doc: dict, scenario: str, where: str) -> None:
    """The release's compute_3d_position_ids ran in every forward (eager count) and
    Dynamo traced it, from that package's file, into the compiled graphs."""
    runs = doc["scenarios"][scenario]
    for mode in ("eager", "compiled"):
        assert runs[mode]["error"] is None, (where, mode, runs[mode]["error"])
        assert runs[mode]["forwards"] == FORWARDS, (where, mode, runs[mode]["forwards"])
    assert runs["eager"]["position_id_calls"] == FORWARDS, (where, runs["eager"]["position_id_calls"])
    traced = runs["compiled"]["traced"]
    assert traced, f"{where} {scenario}: Dynamo never traced compute_3d_position_ids"
    assert {filename for _, filename in traced} == {doc["modeling_file"]}, (where, traced)


def finding_relpath(finding: dict, jobs: Jobs, package: Path) -> str:
    path = Path(finding["path"])
    if not path.is_absolute():
        path = jobs.fixer_root / path  # the fixer's working directory
    return path.resolve().relative_to(package.resolve()).as_posix()


def check_rewritten(jobs: Jobs, version: str, relpath: str, function: str) -> None:
    """The fixer rewrote the function's torch.arange on the device, and added no `.item()` to it
    (transformers' own linter, TRF056, forbids one inside a forward)."""
    rewritten = jobs.rewrite(version)
    assert rewritten is not None and rewritten.findings is not None
    found = [
        f
        for f in rewritten.findings
        if f["function"] == function and finding_relpath(f, jobs, rewritten.package) == relpath
    ]
    assert found, f"no finding in {function} of {relpath} ({version}): the test no longer covers a finding"
    kinds = {f["fix"]["kind"] for f in found if f["fix"]["applied"]}
    assert kinds == {"device-rewrite"}, (version, function, [f["fix"] for f in found])
    source = rt.function_source(rewritten.package / relpath, function)
    assert source is not None and ".item()" not in source, source


# not "case": conftest.py prefetches scenarios.py runs for tests with that parameter
@pytest.mark.parametrize("vl_case", CASES, ids=_ids)
def test_rewrite_only_removes_graph_breaks(vl_case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    version, scenario = vl_case
    assert version in releases, f"transformers {version} not available (have {sorted(releases)})"
    if scenario == "positions":
        check_rewritten(jobs, version, TEXT_MODELING, TEXT_FUNCTION)
    else:
        check_rewritten(jobs, version, MODELING, FUNCTION)
    docs = {variant: jobs.decode_loops(version, variant) for variant in rt.VARIANTS}
    for variant, doc in docs.items():
        check_imports(doc, version, f"{variant} {version}")
    assert docs["rewritten"]["tree_unchanged_since_fixer"], "the rewritten copy was modified after the fixer ran"
    if scenario != "positions":
        check_reached(docs["rewritten"], scenario, f"rewritten {version}")
    verdict = rt.decode_loop_verdict(docs, scenario)
    (jobs.shared / f"decode-loop-verdict-{version}-{scenario}.json").write_text(json.dumps(verdict, indent=1))
    assert not verdict["problems"], verdict
    if (version, scenario) in RELEASE_CRASHES:
        assert set(verdict["release_crash"]) == {"compiled", "eager"}, verdict["release_crash"]
    else:
        assert not verdict["release_crash"], verdict["release_crash"]
        assert verdict["profiles"]["unmodified"]["unique_graphs"] > 0, "nothing was compiled"
    if (version, scenario) in BREAKS_REMOVED:
        assert verdict["removed"]["graph_breaks"] > 0, verdict
    elif scenario == "text":
        assert verdict["removed"] == dict.fromkeys(rt.COUNTED, 0), verdict
