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
  recompiles or graph breaks;
- every value the fixer guards is an int after its guard (recorded in the eager runs).

Besides the report's scenarios it runs the other generation paths the fixer rewrites:
beam search (``reorder_cache``), assisted decoding (``_update_past_and_masks``) and the
position-ids helper. Where a release cannot run one of them with a static cache, the
test asserts the release's own error (``CANNOT_RUN``); where only the unmodified release
crashes, that the fix repairs it (``FIXED_CRASH``). The slower run over every 5.x minor is
``python -m tests.runtime.matrix`` (not collected by pytest).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import seqlen_runtime as rt
from seqlen_runtime import (
    MODEL,
    NEWEST_VERSION,
    PLAN,
    REPO_ROOT,
    VENV_VERSION,
    Jobs,
    Release,
    call_types,
    compile_profile,
    function_source,
    run_tokens,
    run_values,
)

pytestmark = pytest.mark.runtime

# generate() calls per scenario (see scenarios.py), each generating NEW_TOKENS tokens
CALLS = {
    "report": 3, "chunked_prefill": 2, "continue_cache": 2, "inputs_embeds": 2,
    "beam_search": 2, "assisted": 2, "assisted_static_assistant": 2, "position_ids": 2,
}  # fmt: skip
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
    (VENV_VERSION, "beam_search"),
    (NEWEST_VERSION, "continue_cache"),
}

# Where a release cannot run a mode with a static cache: the start of its own error, raised
# alike by the unmodified and the rewritten package (measured). With a static cache for the
# assistant too, the assistant's second generate() gets both its cache and the static
# cache_implementation copied from its generation config, which generate() refuses.
_BOTH_CACHES = (
    "ValueError: Passing both `cache_implementation` (used to initialize certain caches) and `{}` (a Cache object)"
)
CANNOT_RUN = {
    (VENV_VERSION, "assisted_static_assistant"): _BOTH_CACHES.format("past_key_values"),
    (NEWEST_VERSION, "assisted_static_assistant"): _BOTH_CACHES.format("cache"),
}
# Where the unmodified release crashes on a later generate() call and the rewritten one runs:
# 5.5.x's shape-(1,) cache length in torch.arange() in the position-ids helper.
FIXED_CRASH = {
    (VENV_VERSION, "position_ids"): "TypeError: arange() received an invalid combination of arguments - got (Tensor, ",
}
# Where generate() silently uses another cache than the static one asked for (measured):
# 5.5.3's assisted decoding runs the main model with a DynamicCache.
CACHE_USED = {(VENV_VERSION, "assisted"): "DynamicCache"}
# The guard each generation mode goes through, and the type of the value when the guard is
# reached (rewritten package, eager): shape (1,) in 5.5.x, 0-dim from 5.13 on; an int where
# the assistant keeps its default dynamic cache. 5.5.3's candidate generator has no
# get_seq_length() call, so nothing to guard there.
MODE_GUARD = {
    (VENV_VERSION, "beam_search"): ("CacheLayerMixin.reorder_cache", "Tensor[1]"),
    (NEWEST_VERSION, "beam_search"): ("CacheLayerMixin.reorder_cache", "Tensor[]"),
    (VENV_VERSION, "position_ids"): ("GenerationMixin._prepare_position_ids_for_generation", "Tensor[1]"),
    (NEWEST_VERSION, "position_ids"): ("GenerationMixin._prepare_position_ids_for_generation", "Tensor[]"),
    (NEWEST_VERSION, "assisted"): ("AssistedCandidateGenerator._update_past_and_masks", "int"),
    (NEWEST_VERSION, "assisted_static_assistant"): ("AssistedCandidateGenerator._update_past_and_masks", "Tensor[]"),
}
INT_TYPES = {"int", "NoneType"}
GUARD = "if isinstance(past_length, torch.Tensor):"
FINDING_KEYS = {
    "path", "line", "column", "end_line", "end_column", "code", "message", "origin_line",
    "source_method", "function", "compiled_region", "fix",
}  # fmt: skip

CASES = [(v, s) for v, scenarios in PLAN.items() for s in scenarios]
RUNNING_CASES = [c for c in CASES if c not in CANNOT_RUN and c not in FIXED_CRASH]


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


def scenario_docs(jobs: Jobs, releases: dict[str, Release], version: str, scenario: str) -> dict[str, dict]:
    """Both variants' subprocess documents, checked to come from the package each was meant to import."""
    release_for(releases, version)
    docs = {variant: jobs.scenarios(version, variant, MODEL[scenario]) for variant in rt.VARIANTS}
    for variant, doc in docs.items():
        assert doc is not None
        where = f"{variant} {version}"
        assert doc["transformers_version"] == version, where
        # the subprocess imported the package it was meant to (the copy, for "rewritten")
        assert doc["transformers_file"].startswith(doc["expected_package"] + "/"), (where, doc["transformers_file"])
    assert docs["rewritten"]["tree_unchanged_since_fixer"], "the rewritten copy was modified after the fixer ran"
    return {variant: doc["scenarios"][scenario] for variant, doc in docs.items()}


def assert_completed(runs: dict[str, dict], variant: str, version: str, scenario: str) -> None:
    for mode, run in runs[variant].items():
        where = f"{variant} {version} {mode}"
        assert run["error"] is None, f"{where}: {run['error']}\n{run.get('traceback', '')}"
        assert len(run["calls"]) == CALLS[scenario], where
        for call in run["calls"]:
            assert all(len(row) == NEW_TOKENS for row in call["tokens"]), (where, call["tokens"])


def assert_int_contract(run: dict, where: str) -> None:
    """next_sequence_length is an int or None on every call."""
    for i, call in enumerate(run["calls"]):
        assert set(call_types(call)) <= INT_TYPES, f"{where}, generate() call {i}: {call_types(call)}"


def assert_guards(runs: dict[str, dict], version: str, scenario: str) -> None:
    """Every guard the rewritten eager run reached left an int; the mode's own guard was reached."""
    guards = runs["rewritten"]["eager"].get("guarded_values")
    assert guards is not None, "the rewritten eager run recorded no guarded values"
    for guard in guards:
        assert set(guard["after"]) <= INT_TYPES, f"after its guard: {guard}"
    if (version, scenario) in MODE_GUARD:
        function, before = MODE_GUARD[(version, scenario)]
        reached = [g for g in guards if g["function"] == function]
        assert reached, f"no guard in {function} was reached; reached: {[g['function'] for g in guards]}"
        seen = {t for g in reached for t in g["before"]}
        # an int where the cache is not yet initialized (a first call); otherwise the measured type
        assert (seen - {"int"} if before.startswith("Tensor") else seen) == {before}, f"{function}: {reached}"


def assert_cache_used(runs: dict[str, dict], version: str, scenario: str) -> None:
    """The cache generate() returned is the static one asked for, or the one the release uses instead."""
    expected = CACHE_USED.get((version, scenario), "StaticCache")
    for variant, by_mode in runs.items():
        for mode, run in by_mode.items():
            used = {call["cache"] for call in run["calls"]}
            assert used == {expected}, f"{variant} {mode}: generate() returned {used}, expected {expected}"


@pytest.mark.parametrize("case", RUNNING_CASES, ids=_ids)
def test_scenario(case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    version, scenario = case
    runs = scenario_docs(jobs, releases, version, scenario)
    for variant in rt.VARIANTS:
        assert_completed(runs, variant, version, scenario)
    unmod, rewr = runs["unmodified"], runs["rewritten"]
    detail = {f"{v}/{m}": [call_types(c) for c in runs[v][m]["calls"]] for v in runs for m in ("compiled", "eager")}

    # 1. the int contract: with the rewritten package, next_sequence_length is an int or None
    for mode in ("compiled", "eager"):
        assert_int_contract(rewr[mode], f"rewritten {mode}")

    # ... and red before green: the unmodified package passes a tensor on a later call
    for mode in ("compiled", "eager"):
        calls = unmod[mode]["calls"]
        assert set(call_types(calls[0])) <= INT_TYPES, f"first call sees an uninitialized cache: {detail}"
        later_tensor = any("Tensor" in call_types(c) for c in calls[1:])
        if (version, scenario) in RED:
            assert later_tensor, f"expected a tensor next_sequence_length from unmodified {version}: {detail}"
        else:
            assert not later_tensor and all(set(call_types(c)) <= INT_TYPES for c in calls), (
                f"unmodified {version} {scenario} was measured to pass ints only; now: {detail}"
            )
        # the same lengths either way: the rewrite changes the type, not the number
        assert run_values(unmod[mode]) == run_values(rewr[mode]), detail

    # ... and every guarded value is an int after its guard
    assert_guards(runs, version, scenario)
    if scenario in rt.MODES:
        assert_cache_used(runs, version, scenario)

    # 2. identical greedy tokens: unmodified / rewritten x compiled / eager
    reference = run_tokens(unmod["eager"])
    for variant, run in (("unmodified", unmod), ("rewritten", rewr)):
        for mode in ("compiled", "eager"):
            margins = [c["min_margin"] for c in run[mode]["calls"]]
            assert run_tokens(run[mode]) == reference, f"{variant} {mode} tokens differ (logit margins {margins})"

    # 3. no extra frames, graphs, recompiles or graph breaks from the rewrite
    before = compile_profile(unmod["compiled"]["counters"])
    after = compile_profile(rewr["compiled"]["counters"])
    assert before["unique_graphs"] > 0 and before["frames_ok"] > 0, f"nothing was compiled: {before}"
    # equal, not just "no more": a host-side guard must leave the compiled code alone
    assert after == before, f"compile profile changed\nunmodified: {before}\nrewritten:  {after}"


@pytest.mark.parametrize("case", list(CANNOT_RUN), ids=_ids)
def test_mode_the_release_cannot_run(case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    """The release refuses the mode with a static cache: the same error of its own, with and without the fix."""
    version, scenario = case
    runs = scenario_docs(jobs, releases, version, scenario)
    expected = CANNOT_RUN[case]
    for mode in ("compiled", "eager"):
        errors = {variant: runs[variant][mode]["error"] for variant in rt.VARIANTS}
        assert errors["unmodified"] is not None and errors["unmodified"].startswith(expected), errors
        assert errors["rewritten"] == errors["unmodified"], errors
        for variant in rt.VARIANTS:
            frames = [line for line in runs[variant][mode]["traceback"].splitlines() if line.startswith('  File "')]
            assert "/transformers/" in frames[-1], f"raised outside transformers: {frames[-1]}"
        assert run_tokens(runs["rewritten"][mode]) == run_tokens(runs["unmodified"][mode])
    # the guards run before the release gives up
    assert_guards(runs, version, scenario)


@pytest.mark.parametrize("case", list(FIXED_CRASH), ids=_ids)
def test_crash_the_fix_repairs(case: tuple[str, str], releases: dict[str, Release], jobs: Jobs) -> None:
    """The unmodified release crashes on the later call (its own error); the rewritten one runs it."""
    version, scenario = case
    runs = scenario_docs(jobs, releases, version, scenario)
    unmod, rewr = runs["unmodified"], runs["rewritten"]
    for mode in ("compiled", "eager"):
        error = unmod[mode]["error"]
        assert error is not None and error.startswith(FIXED_CRASH[case]), error
        assert len(unmod[mode]["calls"]) == 1, "the first call sees an uninitialized cache and completes"
    assert_completed(runs, "rewritten", version, scenario)
    for mode in ("compiled", "eager"):
        assert_int_contract(rewr[mode], f"rewritten {mode}")
    assert_guards(runs, version, scenario)
    # tokens: the rewritten runs agree with each other, and with the unmodified call that completed
    assert run_tokens(rewr["compiled"]) == run_tokens(rewr["eager"])
    for mode in ("compiled", "eager"):
        assert run_tokens(rewr[mode])[:1] == run_tokens(unmod[mode])
    # compilation: the unmodified run stopped early, so its counters cover less; neither breaks the graph
    before = compile_profile(unmod["compiled"]["counters"])
    after = compile_profile(rewr["compiled"]["counters"])
    assert before["graph_breaks"] == after["graph_breaks"] == 0, (before, after)
    assert set(before["recompile_reasons"]) <= set(after["recompile_reasons"]), (before, after)
