"""Release matrix: the fixer's rewrite of every transformers 5.x minor, run under Inductor.

For the newest patch of every transformers minor from 5.5 to the newest 5.x on the
package index, with the venv's torch (never another one):

1. install the release with ``pip install --no-deps --target`` into ``.runtime/``
   (``build_envs.py``; a release whose requirements cannot be met here is listed
   with pip's reason);
2. copy it and rewrite the copy with the fixer (default: safe fixes only);
3. import every module the fixer changed, from the copy and from the release;
4. run the report scenario (GPT-2) and the continue-from-a-passed-cache scenario
   (Llama) with the release and with the copy, compiled (Inductor) and eager
   (``scenarios.py``, the runtime tests' runner);
5. compare: ``next_sequence_length`` and every guarded value are ints with the copy,
   the tokens are identical, the Dynamo counters (frames, graphs, graph breaks and
   recompiles with their reasons) are equal;
6. run the decode loops of ``vl_scenarios.py`` (Qwen2-VL through
   ``compute_3d_position_ids``, XGLM computing its own positions) with the release and
   the copy, compiled, eager and with an int length (the reference tokens): the copy's
   runs finish with the reference tokens, the release may only fail with its own
   ``arange`` TypeError, and the fixer's device rewrite only removes frames, graphs,
   graph breaks and recompiles (``seqlen_runtime.decode_loop_verdict``).

Writes ``RESULTS.md`` (one row per release) and ``RESULTS.json`` (what the table is
made from) beside this file, and exits 1 when the fix changes tokens or compilation
on any release (a failure), 0 otherwise. Not part of the pytest run (CI runs the
two anchor releases in ``test_fixer_runtime.py``). Jobs already done are reused from
``.runtime/matrix/jobs-<digest of the fixer's sources>/``; ``--fresh`` starts over.

Usage (from the repository root, after ``bash scripts/test.sh`` built the venv)::

    .venv/bin/python -m tests.runtime.matrix [--releases 5.5.4,5.24.0] [--fixer-commit HEAD] [--fresh]
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import seqlen_runtime as rt  # noqa: E402
from packaging.version import Version  # noqa: E402

WORK = rt.REPO_ROOT / ".runtime" / "matrix"
RESULTS_MD = HERE / "RESULTS.md"
RESULTS_JSON = HERE / "RESULTS.json"
FIRST_MINOR = (5, 5)  # GenerationMixin._prefill, the report's code, is new in 5.5
SCENARIOS = ("report", "continue_cache")
MODES = ("compiled", "eager")
INT_TYPES = {"int", "NoneType"}
IMPORT_PROBE = """
import importlib, json, sys
sys.path[:0] = sys.argv[2:]
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"[:300]
print("IMPORT-PROBE " + json.dumps(failed))  # modules may print on import: the last line is ours
"""


# --------------------------------------------------------------------------- releases


def index_versions() -> list[str]:
    """Every transformers version on the package index (``pip index versions``)."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", "transformers", "--disable-pip-version-check"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("Available versions:"))
    return [v.strip() for v in line.split(":", 1)[1].split(",")]


def newest_patch_per_minor(versions: list[str]) -> list[str]:
    """The newest final release of each 5.x minor from FIRST_MINOR on, oldest first."""
    newest: dict[tuple[int, int], Version] = {}
    for text in versions:
        version = Version(text)
        minor = (version.major, version.minor)
        if version.is_prerelease or version.major != 5 or minor < FIRST_MINOR:
            continue
        if minor not in newest or version > newest[minor]:
            newest[minor] = version
    return [str(newest[minor]) for minor in sorted(newest)]


def install(version: str) -> rt.Release | str:
    """The release installed under ``.runtime/`` (built if missing), or why it cannot be."""
    build_envs = rt.load_build_envs()
    target = build_envs.default_target(version)
    try:
        build_envs.build(target, version)
    except build_envs.InstallError as exc:
        return str(exc)
    return rt.Release(version, target, (target,))


# --------------------------------------------------------------------------- the fixer


def export_commit(rev: str) -> Path:
    """A commit's tree exported under ``.runtime/`` (``git archive``): a fixer that the
    engine being edited in the checkout cannot change under a long run."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=rt.REPO_ROOT, capture_output=True, text=True, check=True)
    root = rt.REPO_ROOT / ".runtime" / f"fixer-{sha.stdout.strip()[:12]}"
    if not (root / "fixers" / "rewrite.py").is_file():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha.stdout.strip()], cwd=rt.REPO_ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root


def fixer_identity(root: Path) -> str:
    """A digest of the fixer's and the engine's sources: jobs are reused only for the same fixer."""
    digest = hashlib.sha256()
    for path in sorted([*root.glob("fixers/**/*.py"), *root.glob("lint_rules/**/*.py")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def describe_fixer(root: Path, rev: str | None) -> str:
    if rev is not None:
        return f"commit {root.name.removeprefix('fixer-')} ({rev})"
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "fixers", "lint_rules"], cwd=root, capture_output=True, text=True
    )
    return f"working tree at {head.stdout.strip()}" + (" with uncommitted engine/fixer changes" if dirty.stdout else "")


def changed_modules(rewrite: rt.Rewrite) -> list[str]:
    """``transformers.x.y`` for every .py file the fixer changed."""
    names = []
    for relpath in rewrite.changed:
        if relpath.endswith(".py"):
            parts = relpath.removesuffix(".py").split("/")
            names.append(".".join(["transformers", *[p for p in parts if p != "__init__"]]))
    return sorted(names)


def import_failures(modules: list[str], paths: list[Path]) -> dict[str, str]:
    cmd = [sys.executable, "-c", IMPORT_PROBE, json.dumps(modules), *map(str, paths)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=rt.SUBPROCESS_TIMEOUT_S)
    ours = [line for line in proc.stdout.splitlines() if line.startswith("IMPORT-PROBE ")]
    if proc.returncode != 0 or not ours:
        return {"<interpreter>": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "crashed"}
    return json.loads(ours[-1].removeprefix("IMPORT-PROBE "))


def import_check(rewrite: rt.Rewrite) -> dict:
    """The changed modules import from the rewritten copy wherever they import from the release."""
    modules = changed_modules(rewrite)
    release_failed = import_failures(modules, list(rewrite.release.paths))
    rewritten_failed = import_failures(modules, [rewrite.root, *rewrite.release.paths])
    broken = {m: e for m, e in rewritten_failed.items() if m not in release_failed}
    return {"modules": len(modules), "release_failed": release_failed, "broken_by_rewrite": broken}


# --------------------------------------------------------------------------- one release


def _type_key(rec: dict) -> str:
    return f"Tensor{rec['shape']}".replace(" ", "") if rec["type"] == "Tensor" else rec["type"]


def sequence_length_types(run: dict) -> list[list[str]]:
    """Per generate() call, the type of each next_sequence_length received."""
    return [[_type_key(rec) for rec in call["next_sequence_length"]] for call in run["calls"]]


def later_call_types(types: list[list[str]]) -> str:
    """The type received by the prefill of each later generate() call (the first call sees an
    uninitialized cache), plus any non-int type seen in the later calls' decode steps."""
    prefill = sorted({call[0] for call in types[1:] if call})
    decode = sorted({t for call in types[1:] for t in call[1:]} - {"int"})
    text = "/".join(prefill) if prefill else "-"
    return text + (f" (decode steps: {'/'.join(decode)})" if decode else "")


def guarded_types(docs: dict, scenario: str) -> dict[str, dict]:
    """Each guard the rewritten eager run reached: the types before and after it."""
    out = {}
    for guard in docs["rewritten"]["scenarios"][scenario]["eager"].get("guarded_values", []):
        out[f"{guard['relpath']}:{guard['function']}:{guard['name']}"] = {
            "before": guard["before"],
            "after": guard["after"],
        }
    return out


def compare_scenario(docs: dict, scenario: str) -> dict:
    """One scenario of one release: types, tokens, compile profiles and what went wrong."""
    runs = {variant: docs[variant]["scenarios"][scenario] for variant in rt.VARIANTS}
    problems: list[str] = []
    notes: list[str] = []
    errors = {f"{v}/{m}": runs[v][m]["error"] for v in rt.VARIANTS for m in MODES if runs[v][m]["error"]}
    types = {f"{v}/{m}": sequence_length_types(runs[v][m]) for v in rt.VARIANTS for m in MODES}
    for key, error in errors.items():
        same_in_release = key.startswith("rewritten/") and runs["unmodified"][key.split("/")[1]]["error"] == error
        (notes if same_in_release or key.startswith("unmodified/") else problems).append(f"{key} raised {error}")
    for mode in MODES:
        rewritten_types = {t for call in types[f"rewritten/{mode}"] for t in call}
        if not rewritten_types <= INT_TYPES:
            problems.append(f"rewritten {mode}: next_sequence_length {sorted(rewritten_types)}")
        if rt.run_values(runs["unmodified"][mode]) != rt.run_values(runs["rewritten"][mode]):
            problems.append(f"{mode}: next_sequence_length values differ")
    reference = rt.run_tokens(runs["unmodified"]["eager"])
    tokens_identical = all(rt.run_tokens(runs[v][m]) == reference for v in rt.VARIANTS for m in MODES)
    if not tokens_identical:
        problems.append("tokens differ")
    guards = guarded_types(docs, scenario)
    for site, seen in guards.items():
        if set(seen["after"]) - INT_TYPES:
            problems.append(f"guarded {site} is {sorted(seen['after'])} after its guard")
    profiles = {v: rt.compile_profile(runs[v]["compiled"]["counters"]) for v in rt.VARIANTS}
    if profiles["unmodified"] != profiles["rewritten"]:
        changed = sorted(k for k in profiles["unmodified"] if profiles["unmodified"][k] != profiles["rewritten"][k])
        problems.append(f"compile profile changed: {', '.join(changed)}")
    return {
        "next_sequence_length": types,
        "tokens_identical": tokens_identical,
        "tokens": reference,
        "guarded_values": guards,
        "compile_profile": profiles,
        "errors": errors,
        "problems": problems,
        "notes": notes,
    }


def run_release(jobs: rt.Jobs, version: str) -> dict:
    row: dict = {"version": version, "status": "pass", "problems": [], "notes": []}
    start = time.perf_counter()
    rewrite = jobs.rewrite(version)
    assert rewrite is not None
    row["fixer"] = {
        "returncode": rewrite.returncode,
        "summary": rt.fixer_summary(rewrite.stderr),
        "seconds": rewrite.seconds,
        "changed_files": rewrite.changed,
    }
    if rewrite.returncode not in (0, 1) or rewrite.findings is None:
        row["status"] = "fail"
        row["problems"].append(f"fixer exited {rewrite.returncode}: {rewrite.stderr.strip()[-500:]}")
        return row
    row["imports"] = import_check(rewrite)
    if row["imports"]["broken_by_rewrite"]:
        row["problems"].append(f"rewritten modules fail to import: {row['imports']['broken_by_rewrite']}")
    row["scenarios"] = {}
    for model in sorted({rt.MODEL[s] for s in SCENARIOS}):
        try:
            docs = {variant: jobs.scenarios(version, variant, model) for variant in rt.VARIANTS}
        except rt.JobFailed as exc:
            row["problems"].append(f"{model} subprocess failed: {str(exc)[-1500:]}")
            continue
        for scenario in rt.scenario_group(version, model, jobs.plan):
            result = compare_scenario(docs, scenario)
            row["scenarios"][scenario] = result
            row["problems"] += [f"{scenario}: {p}" for p in result["problems"]]
            row["notes"] += [f"{scenario}: {n}" for n in result["notes"]]
    row["decode_loops"] = decode_loops(jobs, version, row)
    row["notes"] += behaviour_notes(row)
    row["cache_keyword"] = cache_keyword(rewrite.release)
    if row["problems"]:
        row["status"] = "fail"
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def decode_loops(jobs: rt.Jobs, version: str, row: dict) -> dict:
    """The decode-loop verdicts of one release; problems and the release's own crashes go into the row."""
    try:
        docs = {variant: jobs.decode_loops(version, variant) for variant in rt.VARIANTS}
    except rt.JobFailed as exc:
        row["problems"].append(f"decode loops subprocess failed: {str(exc)[-1500:]}")
        return {}
    verdicts = {}
    for scenario in rt.DECODE_LOOPS:
        verdict = rt.decode_loop_verdict(docs, scenario)
        verdicts[scenario] = verdict
        row["problems"] += [f"{scenario} loop: {p}" for p in verdict["problems"]]
        if verdict["release_crash"]:
            row["notes"].append(f"{scenario} loop: the release raises {next(iter(verdict['release_crash'].values()))}")
    return verdicts


def _decode_loops_cell(verdicts: dict) -> str:
    cells = []
    for scenario, verdict in verdicts.items():
        removed = verdict["removed"]
        if verdict["release_crash"]:
            cells.append(f"{scenario}: release raises, rewrite runs")
        elif removed:
            cells.append(f"{scenario}: -{removed['graph_breaks']} breaks, -{removed['recompiles']} recompiles")
    return "; ".join(cells) or "not run"


def cache_keyword(release: rt.Release) -> str | None:
    """The keyword ``prepare_inputs_for_generation`` takes the cache as (``past_key_values``, later ``cache``)."""
    source = rt.function_source(
        release.package / "generation" / "utils.py", "GenerationMixin.prepare_inputs_for_generation"
    )
    if source is None:
        return None
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    names = {arg.arg for arg in node.args.args + node.args.kwonlyargs}
    return next((name for name in ("cache", "past_key_values") if name in names), None)


def behaviour_notes(row: dict) -> list[str]:
    """How the release differs: which type the unmodified release passes on later calls, and
    where the compiled and the eager runs saw different types."""
    notes = []
    for scenario, result in row["scenarios"].items():
        types = result["next_sequence_length"]
        later = later_call_types(types["unmodified/eager"])
        if later in ("int", "-"):
            notes.append(f"{scenario}: the unmodified release passes int on every call (no tensor on this path)")
        for variant in rt.VARIANTS:
            if types[f"{variant}/compiled"] != types[f"{variant}/eager"]:
                notes.append(
                    f"{scenario}: {variant} compiled and eager types differ: {types[f'{variant}/eager']} eager"
                )
    return notes


# --------------------------------------------------------------------------- the table


def _profile_cell(profile: dict) -> str:
    return (
        f"{profile['frames_ok']}/{profile['frames_total']} frames, {profile['unique_graphs']} graphs, "
        f"{profile['graph_breaks']} breaks, {profile['recompiles']} recompiles"
    )


def _guards_cell(result: dict) -> str:
    cells = []
    for site, seen in result["guarded_values"].items():
        function, name = site.split(":")[1].rsplit(".", 1)[-1], site.split(":")[2]
        before = "/".join(sorted(seen["before"]))
        after = "/".join(sorted(seen["after"]))
        cells.append(f"`{function}.{name}` {before}→{after}")
    return "; ".join(cells) or "none reached"


def _scenario_cell(result: dict | None) -> str:
    if result is None:
        return "not run"
    unmodified = later_call_types(result["next_sequence_length"]["unmodified/compiled"])
    rewritten = later_call_types(result["next_sequence_length"]["rewritten/compiled"])
    tokens = "tokens =" if result["tokens_identical"] else "**tokens differ**"
    same = result["compile_profile"]["unmodified"] == result["compile_profile"]["rewritten"]
    profile = _profile_cell(result["compile_profile"]["rewritten"]) + ("" if same else " **changed**")
    return f"{unmodified}→{rewritten}; {tokens}; {profile}; guards: {_guards_cell(result)}"


def markdown(report: dict) -> str:
    lines = [
        "# Release matrix: the fixer's rewrite of every transformers 5.x minor",
        "",
        f"{report['date']}, torch {report['torch']}, Python {report['python']}, {report['cpus']} CPUs; "
        f"fixer: {report['fixer']}; {report['seconds'] / 60:.0f} min wall. "
        "Generated by `python -m tests.runtime.matrix`; the data is in `RESULTS.json`.",
        "",
        "Scenario cells: type of `next_sequence_length` at `prepare_inputs_for_generation` in the "
        "prefill of the later generate() calls (the first call sees an uninitialized cache), unmodified→rewritten (compiled; eager is the same unless a note says "
        "otherwise); whether the tokens are identical across unmodified/rewritten × compiled/eager; the "
        "rewritten package's Dynamo counters (equal to the unmodified one's unless marked **changed**); "
        "each guard the eager run reached, with the type of its value before→after the guard. Decode loops: "
        "what the device rewrite removed from the compiled decode loops (`vl_scenarios.py`).",
        "",
        "| release | status | fixer summary | imports | report (GPT-2, static cache on the generation config) "
        "| continue_cache (Llama, a passed StaticCache) | decode loops (device rewrite) | cache keyword | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["releases"]:
        if row["status"] == "cannot install":
            lines.append(f"| {row['version']} | cannot install | | | | | | | {row['reason']} |")
            continue
        imports = row.get("imports")
        import_cell = (
            "-"
            if imports is None
            else f"{imports['modules']} changed modules import"
            if not imports["broken_by_rewrite"]
            else f"**broken: {', '.join(imports['broken_by_rewrite'])}**"
        )
        scenarios = row.get("scenarios", {})
        notes = "; ".join(row["problems"] + row["notes"]).replace("|", "\\|").replace("\n", " ")
        status = row["status"] if row["status"] == "pass" else f"**{row['status']}**"
        summary = (row.get("fixer", {}).get("summary") or "no summary").replace("|", "\\|")
        cells = [_scenario_cell(scenarios.get(s)) for s in SCENARIOS]
        keyword = f"`{row['cache_keyword']}=`" if row.get("cache_keyword") else "-"
        lines.append(
            f"| {row['version']} | {status} | {summary} | {import_cell} | {cells[0]} | {cells[1]} "
            f"| {_decode_loops_cell(row.get('decode_loops', {}))} | {keyword} | {notes} |"
        )
    counts = Counter(row["status"] for row in report["releases"])
    lines += ["", "Totals: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + "."]
    reasons = sorted(
        {
            reason
            for row in report["releases"]
            for result in row.get("scenarios", {}).values()
            for profile in result["compile_profile"].values()
            for reason in profile["graph_break_reasons"] + profile["recompile_reasons"]
        }
    )
    if reasons:
        lines += [
            "",
            "Graph-break and recompile reasons seen (identical before and after the fix where the row passes):",
        ]
        lines += [f"- `{reason}`" for reason in reasons]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.runtime.matrix", description=__doc__.splitlines()[0])
    parser.add_argument("--releases", default=None, help="comma-separated versions instead of the index's minors")
    parser.add_argument("--fixer-commit", default=None, help="run the fixer of this commit (git archive) instead")
    parser.add_argument("--fresh", action="store_true", help="discard the jobs and compiled kernels of earlier runs")
    parser.add_argument("--threads", type=int, default=2, help="jobs run at once (default 2)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    versions = args.releases.split(",") if args.releases else newest_patch_per_minor(index_versions())
    print(f"releases: {', '.join(versions)}", flush=True)
    fixer_root = export_commit(args.fixer_commit) if args.fixer_commit else rt.default_fixer_root()
    shared = WORK / f"jobs-{fixer_identity(fixer_root)}"
    if args.fresh:  # a cold start: no jobs and no compiled kernels kept
        for path in (shared, WORK / "inductor-cache"):
            shutil.rmtree(path, ignore_errors=True)
    shared.mkdir(parents=True, exist_ok=True)

    rows: dict[str, dict] = {}
    releases: dict[str, rt.Release] = {}
    for version in versions:
        installed = install(version)
        if isinstance(installed, str):
            rows[version] = {"version": version, "status": "cannot install", "reason": installed}
        else:
            releases[version] = installed
    plan = {version: SCENARIOS for version in releases}
    jobs = rt.Jobs(shared, WORK / "inductor-cache", releases, plan=plan, fixer_root=fixer_root)
    runs = {(v, variant, rt.MODEL[s]) for v in releases for variant in rt.VARIANTS for s in SCENARIOS}
    jobs.prefetch(releases, runs, args.threads)
    try:
        for version in releases:
            try:
                rows[version] = run_release(jobs, version)
            except Exception as exc:  # a fault of this script: the row says so, the run goes on and fails
                rows[version] = {"version": version, "status": "error", "problems": [f"matrix: {exc!r}"], "notes": []}
            print(f"{version}: {rows[version]['status']} {rows[version]['problems']}", flush=True)
    finally:
        jobs.close()

    report = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%MZ"),
        "torch": _torch_version(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "fixer": describe_fixer(fixer_root, args.fixer_commit),
        "seconds": round(time.perf_counter() - start),
        "releases": [rows[v] for v in versions],
    }
    RESULTS_JSON.write_text(json.dumps(report, indent=1) + "\n")
    RESULTS_MD.write_text(markdown(report))
    print(f"wrote {RESULTS_MD} and {RESULTS_JSON}", flush=True)
    failed = [row["version"] for row in report["releases"] if row["status"] in ("fail", "error")]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def _torch_version() -> str:
    from importlib.metadata import version

    return version("torch")


if __name__ == "__main__":
    sys.exit(main())
