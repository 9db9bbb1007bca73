"""The entry points: one module in, its findings out, in source order."""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.declarations import NO_DECLARATIONS, Declarations, check_refusal
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_files import file_stamp, forget_stamps, read_bytes
from lint_rules.engine.facts.module_text import DEFAULT_SOURCE_METHODS, mentions_any
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from lint_rules.engine.facts.source_text import SourceText
from lint_rules.engine.fixes.deviceplan import UseSite, plan_for_use
from lint_rules.engine.fixes.fixplan import origin_fix_plan
from lint_rules.engine.flow.imported_calls import imported_source_functions
from lint_rules.engine.flow.imported_methods import imported_source_methods
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.receiver_notes import only_outside_callers
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.summarizer import Summaries
from lint_rules.engine.flow.taint import Origin
from lint_rules.engine.flow.uses import Use
from lint_rules.engine.flow.walker import FunctionWalker
from lint_rules.findings import Finding, FixPlan, FixSafety

MAX_MODULE_HOPS = 2
"""Calls are followed into modules at most this many imports away from the module checked."""
MODULES_KEPT = 64
"""Other modules' runs kept for the files of one folder (see `LoadedModules`)."""


def analyze_tree(
    tree: ast.Module,
    source: SourceText,
    path: str,
    source_methods: Sequence[str] = DEFAULT_SOURCE_METHODS,
    releases: Releases = ALL_RELEASES,
    declarations: Declarations = NO_DECLARATIONS,
) -> list[Finding]:
    """All findings in a parsed module, in source order. `path` locates the module's package on
    disk, so that classes imported from sibling modules can be read, and tells which `declarations`
    cover it; `releases`: the transformers releases the module runs on (`releases.py`, every one by
    default). Raises `DeclarationRefused` when `int-length-caches` covers a module that shows a
    tensor-length cache (analyze it again without the declarations for its findings)."""
    LOADED.keep_for(path)
    forget_stamps()
    run = module_run(
        tree, source, path, frozenset(source_methods), hops=0, releases=releases, declarations=declarations
    )
    try:
        if run.facts.int_length_receivers:
            check_refusal(run.facts)
        uses = [use for scope in run.scopes_to_walk() for use in uses_in(scope, run)]
        findings = {finding_key(finding): finding for finding in to_findings(uses, run, path)}
    finally:
        run.release()
    return sorted(findings.values(), key=finding_key)


def analyze_source(
    text: str,
    path: str,
    source_methods: Sequence[str] = DEFAULT_SOURCE_METHODS,
    releases: Releases = ALL_RELEASES,
    declarations: Declarations = NO_DECLARATIONS,
) -> list[Finding]:
    """Parse and analyze; raises SyntaxError (and ValueError for NUL bytes) like `ast.parse`."""
    if not mentions_any(text, source_methods):
        return []
    tree = ast.parse(text, filename=path)
    return analyze_tree(tree, SourceText(text), path, source_methods, releases, declarations)


def module_run(
    tree: ast.Module,
    source: SourceText,
    path: str,
    source_methods: frozenset[str],
    hops: int,
    releases: Releases = ALL_RELEASES,
    declarations: Declarations = NO_DECLARATIONS,
) -> ModuleRun:
    """The module's facts in a run with its summaries; `hops`: how many modules away from the one being checked."""
    run = ModuleRun(ModuleFacts(tree, source, sorted(source_methods), path, releases, declarations))
    if hops < MAX_MODULE_HOPS:
        run.load_module = functools.partial(
            load_module, source_methods=source_methods, hops=hops + 1, releases=releases, declarations=declarations
        )
    summaries = run.summaries = Summaries(run)
    if hops > 0:
        return run  # read for a callee's summary: what it calls is summarized on demand
    run.imported_sources = imported_source_functions(run) | imported_source_methods(run)
    source_functions = summaries.discover_source_functions() | run.imported_sources
    if source_functions:
        run.add_mentions(source_functions)
        run.summaries = Summaries(run, source_functions)
    return run


RunKey = tuple[Path, int, frozenset[str], int, Releases, Declarations]
"""A module's file, its stamp, the source methods, the hops away, the releases and the declarations of the run."""


class LoadedModules:
    """The runs of the package's other modules that the files being checked read, kept while those
    files are in one folder: the files of a folder call the same siblings (a model's modeling and
    modular files), and a big sibling's tree is not kept through the rest of a run. The runs let go
    are released (`ModuleRun.release`), so they are freed at once, not at a full collection."""

    def __init__(self, maxsize: int) -> None:
        self.runs: BoundedCache[RunKey, ModuleRun | None] = BoundedCache(maxsize)
        self.folder = ""

    def keep_for(self, path: str) -> None:
        """Before a file's analysis: lets go of the runs kept for another folder."""
        folder = os.path.dirname(path)
        if folder != self.folder:
            for run in self.runs.values():
                if run is not None:
                    run.release()
            self.runs.clear()
            self.folder = folder

    def get(
        self,
        file: Path,
        source_methods: frozenset[str],
        hops: int,
        releases: Releases = ALL_RELEASES,
        declarations: Declarations = NO_DECLARATIONS,
    ) -> ModuleRun | None:
        key = (file, file_stamp(file), source_methods, hops, releases, declarations)
        if key not in self.runs:
            self.runs[key] = loaded_module(*key)
        return self.runs[key]


LOADED = LoadedModules(MODULES_KEPT)


def load_module(
    file: Path,
    source_methods: frozenset[str],
    hops: int,
    releases: Releases = ALL_RELEASES,
    declarations: Declarations = NO_DECLARATIONS,
) -> ModuleRun | None:
    return LOADED.get(file, source_methods, hops, releases, declarations)


def loaded_module(
    file: Path,
    stamp: int,
    source_methods: frozenset[str],
    hops: int,
    releases: Releases = ALL_RELEASES,
    declarations: Declarations = NO_DECLARATIONS,
) -> ModuleRun | None:
    """Another module of the package, read for its summaries (`stamp`: its mtime, so a file the fixer
    rewrote, or an edited one in a long-lived process, is read again). A module that cannot be read,
    parsed or analyzed is not followed: its failure is not the importing file's."""
    try:
        raw = read_bytes(file)
        tree = ast.parse(raw, filename=str(file))
        text = SourceText(raw.decode("utf-8", errors="replace"))
        return module_run(tree, text, str(file), source_methods, hops, releases, declarations)
    except Exception:
        return None


def uses_in(scope: Scope, run: ModuleRun) -> Iterable[Use]:
    if scope.definition is not None and run.summaries is not None:
        return run.summaries.of(scope.definition).uses
    walker = FunctionWalker(scope, run)
    walker.walk()
    return walker.uses.found.values()


def to_findings(uses: Iterable[Use], run: ModuleRun, path: str) -> Iterator[Finding]:
    uses = list(uses)
    for use in uses:
        if isinstance(use.origin, Origin):
            use.origin.reported = True
    at_place: dict[tuple[int, str], list[tuple[Use, Finding]]] = {}
    for use in uses:
        if isinstance(use.origin, Origin):
            pair = (use, to_finding(use, use.origin, run, path))
            at_place.setdefault((id(use.node), use.rule.code), []).append(pair)
    for found in at_place.values():
        yield merged(found, run)


def merged(found: list[tuple[Use, Finding]], run: ModuleRun) -> Finding:
    """One finding per place and rule, naming every source call whose value reaches it. Values that
    one edit serves (`a.get_seq_length() if x else b.get_seq_length()`) share its plan; values bound
    apart (on two branches) keep theirs as `other_fixes`, the least safe plan leading."""
    found = sorted(
        {finding_key(finding): (use, finding) for use, finding in found}.values(), key=lambda f: finding_key(f[1])
    )
    if len(found) == 1:
        return found[0][1]
    findings = [finding for _, finding in found]
    use, first = min(found, key=lambda pair: SAFETY_ORDER.index(pair[1].fix.safety))
    others = [(finding.source_method, finding.origin.line) for finding in findings if finding is not first]
    message = use.rule.message(
        use.detail,
        first.source_method,
        first.origin.line,
        first.compiled_region,
        others,
        only_outside_callers=all(
            isinstance(each.origin, Origin) and only_outside_callers(each.origin, run) for each, _ in found
        ),
    )
    plans = dict.fromkeys(finding.fix for finding in findings if finding is not first)
    plans.pop(first.fix, None)
    other_fixes = () if one_fix([finding.fix for finding in findings]) else tuple(plans)
    return first._replace(message=message, other_fixes=other_fixes)


SAFETY_ORDER = (FixSafety.NONE, FixSafety.UNSAFE, FixSafety.SAFE)
"""Which plan leads a finding that several values reach: the one furthest from an automatic fix."""


def one_fix(plans: Sequence[FixPlan]) -> bool:
    """Nothing to apply for any of them, or the same edit for all (a guard after the one statement that
    binds them all), whichever call each plan started from."""
    first = plans[0]
    if all(plan.safety is FixSafety.NONE for plan in plans):
        return True
    return all(plan._replace(call=first.call) == first for plan in plans)


def finding_key(finding: Finding) -> tuple[int, int, str, int, int]:
    return (finding.span.line, finding.span.col, finding.code, finding.origin.line, finding.origin.col)


def to_finding(use: Use, origin: Origin, run: ModuleRun, path: str) -> Finding:
    region = use.scope.compiled_region
    source = run.facts.source
    return Finding(
        path=path,
        code=use.rule.code,
        message=use.rule.message(
            use.detail,
            origin.method,
            origin.line,
            region,
            only_outside_callers=only_outside_callers(origin, run),
        ),
        span=source.span(use.node),
        origin=source.span(origin.call),
        source_method=origin.method,
        compiled_region=region,
        fix=plan_for_use(
            UseSite(use.node, use.rule.code, use.scope.body_owner, source, run.facts.tree, bool(region)),
            origin_fix_plan(origin, run),
        ),
        function=use.scope.name,
    )
