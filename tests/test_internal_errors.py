"""An internal error is one file's problem: when the tool raises on a file (in the engine's analysis,
its fix planning, the noqa handling or the fixer's rewrite), the checker reports that file as an
error and checks the others, the fixer leaves it untouched and fixes the others (both exit 2), and
the flake8 plugin reports one SLG900 finding on line 1 instead of raising into flake8.

The failure is injected into the real commands (`python -m lint_rules`, `python -m fixers.rewrite`,
and flake8 loading the plugin from its installed entry point) by a `sitecustomize` module that
wraps one function of the project so that it raises on the file that carries a marker comment.
Ctrl-C (KeyboardInterrupt) and SystemExit are not internal errors: they still end the run.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers_rewrite import CHECKER, FIXER, Run, cli_environment

from lint_rules.checking import check_text, internal_error
from lint_rules.flake8_plugin import SeqlenGuardChecker
from lint_rules.rules import INTERNAL_ERROR_CODE
from lint_rules.settings import Settings

MARKER = "# injected: the tool fails on this file"
SOURCE = b"import torch\n\n\ndef f(cache, x):\n    n = cache.get_seq_length()\n    return x[:, n:]\n"
FIXED = SOURCE.replace(b"    return", b"    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n    return")
BAD_SOURCE = MARKER.encode() + b"\nimport os\n" + SOURCE.replace(b"def f", b"def g")
BAD, GOOD = "bad.py", "good.py"
INTERNAL_ERROR = re.compile(
    r"internal error: RuntimeError: injected failure \(at (?:lint_rules|fixers)/[\w/]+\.py:\d+\)"
    r"(?:; file left untouched)?"
)

SITECUSTOMIZE = f"""
import builtins
import importlib
import os

target = os.environ.get("SLG_INJECT", "")
if target:
    module_name, _, dotted = target.partition(":")
    owner = importlib.import_module(module_name)
    *parents, name = dotted.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    original = getattr(owner, name)
    kind = os.environ.get("SLG_INJECT_EXCEPTION", "RuntimeError")
    exception = getattr(builtins, kind, RuntimeError)

    def is_marked(argument):
        text = argument if isinstance(argument, str) else getattr(argument, "text", None)
        return isinstance(text, str) and {MARKER!r} in text

    def failing(*args, **kwargs):
        if any(is_marked(argument) for argument in args):
            if kind == "process death":  # a worker killed, or a crash below Python
                os._exit(70)
            raise exception("injected failure")
        return original(*args, **kwargs)

    setattr(owner, name, failing)
"""

POINTS = {
    "analysis": "lint_rules.engine.facts.module_facts:ModuleFacts.__init__",
    "fix planning": "lint_rules.engine.fixes.fixplan:plan_fix",
    "noqa": "lint_rules.noqa:split_silenced",
    "fix application": "fixers.guards:apply_plans",
}
"""Where the failure is injected: `module:attribute`, patched before any of the project is imported."""
IN_THE_ENGINE = ("analysis", "fix planning")
"""What the flake8 plugin runs (flake8 applies `# noqa` itself; the plugin rewrites nothing)."""
CHECKED = (*IN_THE_ENGINE, "noqa")
"""What the checker runs (it does not rewrite)."""


def project(folder: Path) -> Path:
    folder.mkdir()
    (folder / BAD).write_bytes(BAD_SOURCE)
    (folder / GOOD).write_bytes(SOURCE)
    return folder


def run_injected(command: list[str], folder: Path, point: str | None, exception: str = "RuntimeError") -> Run:
    """`command` run in `folder` with the failure injected at `point` (None: nothing injected)."""
    injection = folder.parent / "injection"
    injection.mkdir(exist_ok=True)
    (injection / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE))
    env = cli_environment()
    env["PYTHONPATH"] = os.pathsep.join([str(injection), env["PYTHONPATH"]])
    env["SLG_INJECT"] = POINTS[point] if point else ""
    env["SLG_INJECT_EXCEPTION"] = exception
    completed = subprocess.run([sys.executable, *command], cwd=folder, env=env, capture_output=True, timeout=300)
    return Run(
        tuple(command),
        completed.returncode,
        completed.stdout.decode("utf-8", "surrogateescape"),
        completed.stderr.decode("utf-8", "surrogateescape"),
        completed.stdout,
    )


def finding_paths(output: str) -> set[str]:
    return {match[1] for match in re.finditer(r"(?m)^(?:\./)?(\S+?):\d+:\d+: SLG\d{3} ", output)}


def assert_no_crash(run: Run) -> None:
    assert "Traceback" not in run.stderr and "critical" not in run.stderr.lower(), run.describe()


def assert_bad_file_is_the_one_error(run: Run) -> None:
    """Exit 2 and one `bad.py: internal error: ...` line on stderr, no traceback."""
    assert_no_crash(run)
    assert run.returncode == 2, run.describe()
    assert list(run.errors()) == [BAD], run.describe()
    assert INTERNAL_ERROR.fullmatch(run.errors()[BAD]), run.describe()


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("point", sorted(POINTS))
def test_checker_reports_the_file_and_checks_the_others(tmp_path: Path, point: str, jobs: str) -> None:
    folder = project(tmp_path / "project")
    checked = run_injected(["-m", CHECKER, "-j", jobs, "."], folder, point)
    if point not in CHECKED:
        assert_no_crash(checked)
        assert checked.returncode == 1 and not checked.errors(), checked.describe()
        assert finding_paths(checked.stdout) == {BAD, GOOD}
        return
    assert_bad_file_is_the_one_error(checked)
    assert finding_paths(checked.stdout) == {GOOD}, checked.describe()


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("point", sorted(POINTS))
def test_fixer_leaves_the_file_untouched_and_fixes_the_others(tmp_path: Path, point: str, jobs: str) -> None:
    folder = project(tmp_path / "project")
    fixed = run_injected(["-m", FIXER, "-j", jobs, "."], folder, point)
    assert_bad_file_is_the_one_error(fixed)
    assert fixed.summary()["errors"] == 1 and fixed.summary()["changed_files"] == 1, fixed.describe()
    assert (folder / BAD).read_bytes() == BAD_SOURCE
    assert (folder / GOOD).read_bytes() == FIXED


@pytest.mark.parametrize("command", [CHECKER, FIXER])
def test_a_worker_process_that_dies_is_one_files_error(tmp_path: Path, command: str) -> None:
    """With `-j 2`, the process analyzing the marked file ends abruptly (`os._exit`, as a kill or a
    crash below Python would): no traceback, that file is the one error (exit 2), the other file is
    still checked or fixed."""
    folder = project(tmp_path / "project")
    run = run_injected(["-m", command, "-j", "2", "."], folder, "analysis", exception="process death")
    assert_no_crash(run)
    assert run.returncode == 2, run.describe()
    assert list(run.errors()) == [BAD], run.describe()
    assert "worker process died" in run.errors()[BAD], run.describe()
    if command == CHECKER:
        assert finding_paths(run.stdout) == {GOOD}, run.describe()
    else:
        assert (folder / BAD).read_bytes() == BAD_SOURCE
        assert (folder / GOOD).read_bytes() == FIXED


@pytest.mark.parametrize("point", IN_THE_ENGINE)
def test_flake8_reports_slg900_and_the_other_files(tmp_path: Path, point: str) -> None:
    """Through flake8's own loading of the plugin (its entry point), with another check (F401) on
    the failing file that must still be reported."""
    folder = project(tmp_path / "project")
    linted = run_injected(["-m", "flake8", "--select=SLG,F401", "."], folder, point)
    assert_no_crash(linted)
    assert linted.returncode == 1, linted.describe()
    lines = sorted(line for line in linted.stdout.splitlines() if line.startswith(f"./{BAD}:"))
    assert lines[0].startswith(f"./{BAD}:1:1: {INTERNAL_ERROR_CODE} "), linted.describe()
    assert INTERNAL_ERROR.fullmatch(lines[0].split(f" {INTERNAL_ERROR_CODE} ", 1)[1]), linted.describe()
    assert f"./{BAD}:2:1: F401 'os' imported but unused" in lines, linted.describe()
    assert finding_paths(linted.stdout) == {BAD, GOOD}
    assert f"./{GOOD}:6:17: SLG002 " in linted.stdout, linted.describe()


def test_flake8_select_slg_selects_the_internal_error_code(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    linted = run_injected(["-m", "flake8", "--select=SLG", "."], folder, "analysis")
    assert_no_crash(linted)
    assert linted.returncode == 1, linted.describe()
    assert f"./{BAD}:1:1: {INTERNAL_ERROR_CODE} internal error: RuntimeError: injected failure" in linted.stdout
    assert f"./{GOOD}:6:17: SLG002 " in linted.stdout, linted.describe()


@pytest.mark.parametrize("command", [CHECKER, FIXER])
def test_ctrl_c_inside_the_engine_still_interrupts(tmp_path: Path, command: str) -> None:
    folder = project(tmp_path / "project")
    interrupted = run_injected(["-m", command, "."], folder, "analysis", exception="KeyboardInterrupt")
    assert interrupted.returncode == 130, interrupted.describe()
    assert "interrupted" in interrupted.stderr and "internal error" not in interrupted.stderr
    assert (folder / GOOD).read_bytes() == SOURCE, "the run stops at the first file (bad.py)"


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_interrupts_and_exits_propagate_in_process(monkeypatch: pytest.MonkeyPatch, exception: type) -> None:
    def failing(*args: object, **kwargs: object) -> None:
        raise exception("stop")

    monkeypatch.setattr("lint_rules.checking.analyze_tree", failing)  # the checker's and the plugin's one call
    with pytest.raises(exception):
        check_text("m.py", SOURCE.decode(), Settings())
    plugin = SeqlenGuardChecker(ast.parse(SOURCE), SOURCE.decode().splitlines(keepends=True), "m.py")
    with pytest.raises(exception):
        list(plugin.run())


def test_internal_error_is_one_line_naming_the_exception_and_where() -> None:
    def deep() -> None:
        raise ValueError("first line\n   second line")

    try:
        deep()
    except ValueError as error:
        described = internal_error(error)
    where = f"test_internal_errors.py:{deep.__code__.co_firstlineno + 1}"
    assert described == f"internal error: ValueError: first line second line (at {where})"
    assert internal_error(AssertionError()) == "internal error: AssertionError", "no text, no traceback"
    assert len(internal_error(ValueError("x" * 10_000))) < 300

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert internal_error(Unprintable()) == "internal error: Unprintable: <no text>"


FIVE_LINES = b"""\
def past_length(cache):
    return cache.get_seq_length()


def step(cache, ids):
    return ids[:, past_length(cache):]
"""


def test_the_five_line_module_of_issue_14_crashes_nothing(tmp_path: Path) -> None:
    """A same-module helper returning a source, used inline: each command finishes, reports the
    other file, and gives this one a finding or (should the engine still fail on it) an error."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "five.py").write_bytes(FIVE_LINES)
    (folder / GOOD).write_bytes(SOURCE)
    for command in (["-m", CHECKER, "."], ["-m", "flake8", "--select=SLG", "."], ["-m", FIXER, "--diff", "."]):
        run = run_injected(command, folder, None)
        assert_no_crash(run)
        assert run.returncode in (1, 2), run.describe()
        reported = finding_paths(run.stdout + run.stderr)
        assert GOOD in reported, run.describe()
        assert "five.py" in reported or "five.py: internal error:" in run.stderr, run.describe()
    assert (folder / "five.py").read_bytes() == FIVE_LINES
