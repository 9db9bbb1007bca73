"""Runtime proof that the fixer's rewrite of the real transformers package runs under Inductor.

For each transformers release (the venv's 5.5.3 and the newest 5.x, 5.24.0, from
``.runtime/``) the session copies the installed package, rewrites the copy with
``python -m fixers.rewrite <copy>/transformers`` (safe fixes only, the default)
and runs generation scenarios with tiny random GPT-2 / Llama models, in
subprocesses that import either the unmodified package or the rewritten copy,
each with ``model.forward = torch.compile(model.forward, backend="inductor")``
and eagerly (``tests/runtime/scenarios.py``). The tests compare the results:

- ``next_sequence_length`` reaching ``prepare_inputs_for_generation`` is an int
  (or None) on every call with the rewritten package, and a tensor on a later
  call with the unmodified one where the release has the bug on that path;
- the generated tokens are identical across unmodified / rewritten x compiled / eager;
- the rewritten package compiles the same: no extra Dynamo frames, graphs,
  recompiles or graph breaks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import seqlen_runtime as rt
from seqlen_runtime import MODEL, NEWEST_VERSION, PLAN, REPO_ROOT, VENV_VERSION, Jobs, Release, function_source

pytestmark = pytest.mark.runtime

# generate() calls per scenario (see scenarios.py), each generating NEW_TOKENS tokens
CALLS = {"report": 3, "chunked_prefill": 2, "continue_cache": 2, "inputs_embeds": 2}
NEW_TOKENS = 4

# Where the unmodified release passes a tensor as next_sequence_length on a later
# generate() call (measured; the first call always sees an uninitialized cache, so 0).
# 5.24.0 builds a fresh StaticCache in every generate() call, so the report's
# scenario no longer reuses an initialized cache there; continuing from a passed
# cache still does. Chunked prefill never passes next_sequence_length to
# prepare_inputs_for_generation.
RED = {
    (VENV_VERSION, "report"),
    (VENV_VERSION, "continue_cache"),
    (VENV_VERSION, "inputs_embeds"),
    (NEWEST_VERSION, "continue_cache"),
}
INT_TYPES = {"int", "NoneType"}
GUARD = "if isinstance(past_length, torch.Tensor):"
FINDING_KEYS = {
    "path", "line", "column", "end_line", "end_column", "code", "message", "origin_line",
    "source_method", "function", "compiled_region", "fix",
}  # fmt: skip

CASES = [(v, s) for v, scenarios in PLAN.items() for s in scenarios]


def _ids(case: tuple[str, str]) -> str:
    return f"{case[0]}-{case[1]}"


def release_for(releases: dict[str, Release], version: str) -> Release:
    assert version in releases, (
        f"transformers {version} not available (have {sorted(releases)}); the expectations here "
        f"were measured on {sorted(PLAN)}"
    )
    return releases[version]


def finding_relpath(finding: dict, package: Path) -> str:
    path = Path(finding["path"])
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path.resolve().relative_to(package.resolve()).as_posix()


# --------------------------------------------------------------------------- the fixer


@pytest.mark.parametrize("fixer_version", list(PLAN))
def test_fixer_rewrote_the_package(fixer_version: str, releases: dict[str, Release], jobs: Jobs) -> None:
    release = release_for(releases, fixer_version)
    result = jobs.rewrite(fixer_version)
    assert result is not None
    # 0: nothing left; 1: findings remain (unsafe ones in forward methods stay); 2: a file failed
    assert result.returncode in (0, 1), f"fixer exited {result.returncode}\n{result.stderr[-4000:]}"
    assert isinstance(result.findings, list), f"--format json printed no JSON array\n{result.stderr[-4000:]}"
    for finding in result.findings:
        missing = FINDING_KEYS - finding.keys()
        assert not missing, f"finding lacks {sorted(missing)}: {finding}"
        assert finding["fix"]["safety"] in ("safe", "unsafe", "none"), finding
    applied = [f for f in result.findings if f["fix"]["applied"]]
    # the default applies safe fixes only
    assert all(f["fix"]["safety"] == "safe" for f in applied), [f for f in applied if f["fix"]["safety"] != "safe"]
    if result.returncode == 1:
        assert any(not f["fix"]["applied"] for f in result.findings), "exit 1 but every finding was fixed"

    # the guard in _prefill was reported and applied
    prefill = [
        f
        for f in applied
        if (f["function"] or "").endswith("_prefill") and finding_relpath(f, result.package) == "generation/utils.py"
    ]
    assert prefill, "no applied finding in generation/utils.py's _prefill"
    rewritten_src = function_source(result.package / "generation" / "utils.py", "GenerationMixin._prefill")
    original_src = function_source(release.package / "generation" / "utils.py", "GenerationMixin._prefill")
    assert rewritten_src is not None and original_src is not None
    assert GUARD not in original_src, "the unmodified _prefill already has the guard"
    assert GUARD in rewritten_src, rewritten_src

    # the copy differs from the release exactly in the files the fixer says it fixed
    fixed_files = {finding_relpath(f, result.package) for f in applied}
    assert result.changed, "the fixer changed nothing"
    assert set(result.changed) == fixed_files, (
        f"changed but not reported: {sorted(set(result.changed) - fixed_files)}; "
        f"reported but unchanged: {sorted(fixed_files - set(result.changed))}"
    )


# --------------------------------------------------------------------------- scenarios


def _types(call: dict) -> list[str]:
    return [r["type"] for r in call["next_sequence_length"]]


def _values(run: dict) -> list[list[int | None]]:
    return [[r["value"] for r in call["next_sequence_length"]] for call in run["calls"]]


def _tokens(run: dict) -> list[list[list[int]]]:
    return [call["tokens"] for call in run["calls"]]


def _normalize_reason(reason: str) -> str:
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
        "graph_break_reasons": sorted(_normalize_reason(r) for r in breaks),
        "recompiles": sum(len(v) for v in failures.values()),
        "recompile_reasons": sorted(
            f"{code.split('@')[0]}: {_normalize_reason(r)}" for code, rs in failures.items() for r in rs
        ),
    }


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_scenario(case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    version, scenario = case
    release_for(releases, version)
    docs = {variant: jobs.scenarios(version, variant, MODEL[scenario]) for variant in rt.VARIANTS}

    for variant, doc in docs.items():
        assert doc is not None
        where = f"{variant} {version}"
        assert doc["transformers_version"] == version, where
        # the subprocess imported the package it was meant to (the copy, for "rewritten")
        assert doc["transformers_file"].startswith(doc["expected_package"] + "/"), (where, doc["transformers_file"])
        for mode, run in doc["scenarios"][scenario].items():
            assert run["error"] is None, f"{where} {mode}: {run['error']}\n{run.get('traceback', '')}"
            assert len(run["calls"]) == CALLS[scenario], (where, mode)
            for call in run["calls"]:
                assert all(len(row) == NEW_TOKENS for row in call["tokens"]), (where, mode, call["tokens"])
    assert docs["rewritten"]["tree_unchanged_since_fixer"], "the rewritten copy was modified after the fixer ran"

    unmod, rewr = docs["unmodified"]["scenarios"][scenario], docs["rewritten"]["scenarios"][scenario]
    detail = {
        f"{v}/{m}": [_types(c) for c in docs[v]["scenarios"][scenario][m]["calls"]]
        for v in docs
        for m in ("compiled", "eager")
    }

    # 1. the int contract: with the rewritten package, next_sequence_length is an int or None
    for mode in ("compiled", "eager"):
        for i, call in enumerate(rewr[mode]["calls"]):
            assert set(_types(call)) <= INT_TYPES, f"rewritten {mode}, generate() call {i}: {detail}"

    # ... and red before green: the unmodified package passes a tensor on a later call
    for mode in ("compiled", "eager"):
        calls = unmod[mode]["calls"]
        assert set(_types(calls[0])) <= INT_TYPES, f"first call sees an uninitialized cache: {detail}"
        later_tensor = any("Tensor" in _types(c) for c in calls[1:])
        if (version, scenario) in RED:
            assert later_tensor, f"expected a tensor next_sequence_length from unmodified {version}: {detail}"
        else:
            assert not later_tensor and all(set(_types(c)) <= INT_TYPES for c in calls), (
                f"unmodified {version} {scenario} was measured to pass ints only; now: {detail}"
            )
        # the same lengths either way: the rewrite changes the type, not the number
        assert _values(unmod[mode]) == _values(rewr[mode]), detail

    # 2. identical greedy tokens: unmodified / rewritten x compiled / eager
    reference = _tokens(unmod["eager"])
    for variant, run in (("unmodified", unmod), ("rewritten", rewr)):
        for mode in ("compiled", "eager"):
            margins = [c["min_margin"] for c in run[mode]["calls"]]
            assert _tokens(run[mode]) == reference, f"{variant} {mode} tokens differ (logit margins {margins})"

    # 3. no extra frames, graphs, recompiles or graph breaks from the rewrite
    before = compile_profile(unmod["compiled"]["counters"])
    after = compile_profile(rewr["compiled"]["counters"])
    assert before["unique_graphs"] > 0 and before["frames_ok"] > 0, f"nothing was compiled: {before}"
    # equal, not just "no more": a host-side guard must leave the compiled code alone
    assert after == before, f"compile profile changed\nunmodified: {before}\nrewritten:  {after}"
