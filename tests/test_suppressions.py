"""Suppression comments: `# seqlen-guard: ignore[...]` read alike by the checker, the fixer and the
flake8 plugin; `# noqa` read as ruff does by the checker and the fixer and as flake8 does by the
plugin (each difference pinned below); `--disable-noqa`; `--add-noqa`."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fixers.add_noqa import with_suppressions
from lint_rules.checking import check_text
from lint_rules.noqa import split_silenced
from lint_rules.settings import Settings


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, check=False)


def codes_by(tool: str, folder: Path, name: str = "m.py") -> list[str]:
    """The codes each tool reports for `name`, in line order."""
    commands = {
        "flake8": ["-m", "flake8", "--select=SLG", name],
        "checker": ["-m", "lint_rules", name],
        "fixer": ["-m", "fixers.rewrite", "--check", name],
    }
    result = run(*commands[tool], cwd=folder)
    output = result.stderr if tool == "fixer" else result.stdout
    return [line.split(": ", 1)[1].split()[0] for line in output.splitlines() if ": SLG" in line]


def write(folder: Path, source: str, name: str = "m.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path


def checked_codes(source: str, **settings: object) -> list[str]:
    result = check_text("m.py", textwrap.dedent(source), Settings(**settings))  # type: ignore[arg-type]
    return [finding.code for finding in result.findings]


# ------------------------------------------------------------- # seqlen-guard: ignore[...]

OWN_COMMENT_CASES = {
    "on the line, the code named": """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # seqlen-guard: ignore[SLG002]
        """,
    "bare, every code": """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # seqlen-guard: ignore
        """,
    "on another line of the statement": """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[
                :n
            ]  # seqlen-guard: ignore[SLG002]
        """,
    "several codes, spaces and case": """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], [0] * n  #  SEQLEN-GUARD: ignore[ slg003,SLG002 ]
        """,
    "after another comment": """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # keep the tail  # seqlen-guard: ignore[SLG002]
        """,
}


@pytest.mark.parametrize("source", OWN_COMMENT_CASES.values(), ids=OWN_COMMENT_CASES.keys())
def test_own_comment_silences_in_every_tool(tmp_path: Path, source: str) -> None:
    write(tmp_path, source)
    assert codes_by("checker", tmp_path) == codes_by("fixer", tmp_path) == codes_by("flake8", tmp_path) == []


def test_own_comment_for_another_code_silences_nothing(tmp_path: Path) -> None:
    write(
        tmp_path,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # seqlen-guard: ignore[SLG004]
        """,
    )
    assert codes_by("checker", tmp_path) == codes_by("fixer", tmp_path) == codes_by("flake8", tmp_path) == ["SLG002"]


def test_the_own_comments_words_without_a_hash_silence_nothing() -> None:
    source = """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], "seqlen-guard: ignore[SLG002]"
        """
    assert checked_codes(source) == ["SLG002"], "no `#`: not a comment"


def test_the_fixer_leaves_a_suppressed_finding_alone(tmp_path: Path) -> None:
    path = write(tmp_path, OWN_COMMENT_CASES["on the line, the code named"])
    before = path.read_text()
    fixed = run("-m", "fixers.rewrite", "m.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert path.read_text() == before


def test_show_silenced_names_the_comment(tmp_path: Path) -> None:
    write(
        tmp_path,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            a = x[:n]  # seqlen-guard: ignore[SLG002]
            return x[n:]  # noqa: SLG002
        """,
    )
    shown = run("-m", "lint_rules", "--show-silenced", "m.py", cwd=tmp_path)
    assert shown.returncode == 0
    tails = [line.rsplit("  ", 1)[1] for line in shown.stdout.splitlines()]
    assert tails == ["(silenced by seqlen-guard: ignore)", "(silenced by noqa)"]


def test_split_silenced_without_noqa_reads_only_the_own_comment() -> None:
    """The flake8 plugin's reading: flake8 applies `# noqa`, the plugin only its own comment."""
    text = textwrap.dedent(
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            a = x[:n]  # noqa: SLG002
            return x[n:]  # seqlen-guard: ignore[SLG002]
        """
    )
    findings = check_text("m.py", text, Settings(disable_noqa=True)).findings
    reported, silenced = split_silenced(findings, text, noqa=False)
    assert [finding.line for finding in reported] == [3]
    assert [(finding.line, why) for finding, why in silenced.items()] == [(4, "seqlen-guard: ignore")]


# ------------------------------------------- noqa: ruff's reading (checker, fixer) vs flake8's

NOQA_DIFFERENCES = {
    # case: (source, checker and fixer, flake8)
    "noqa on another line of a multi-line statement": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[
                :n
            ]  # noqa: SLG002
        """,
        [],
        ["SLG002"],
    ),
    "flake8: noqa with a code: ruff silences that code in the file, flake8 skips the file": (
        """\
        # flake8: noqa: SLG004
        def f(cache, x):
            n = cache.get_seq_length()
            if n > 0:
                return x[:n]
        """,
        ["SLG002"],
        [],
    ),
    "ruff: noqa: read by the checker, unknown to flake8": (
        """\
        # ruff: noqa: SLG002
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]
        """,
        [],
        ["SLG002"],
    ),
}
NOQA_ALIKE = {
    "noqa on the reported line": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # noqa: SLG002
        """,
        [],
    ),
    "bare flake8: noqa": (
        """\
        # flake8: noqa
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]
        """,
        [],
    ),
    "noqa for another code": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # noqa: E501
        """,
        ["SLG002"],
    ),
}


@pytest.mark.parametrize("case", NOQA_DIFFERENCES, ids=list(NOQA_DIFFERENCES))
def test_noqa_differences_between_flake8_and_the_checker(tmp_path: Path, case: str) -> None:
    source, ours, flake8s = NOQA_DIFFERENCES[case]
    write(tmp_path, source)
    assert codes_by("checker", tmp_path) == codes_by("fixer", tmp_path) == ours
    assert codes_by("flake8", tmp_path) == flake8s
    assert ours != flake8s


@pytest.mark.parametrize("case", NOQA_ALIKE, ids=list(NOQA_ALIKE))
def test_noqa_read_alike(tmp_path: Path, case: str) -> None:
    source, expected = NOQA_ALIKE[case]
    write(tmp_path, source)
    assert codes_by("checker", tmp_path) == codes_by("fixer", tmp_path) == codes_by("flake8", tmp_path) == expected


# ------------------------------------------------------------------------ --disable-noqa

SILENCED_TWICE = """\
    def f(cache, x):
        n = cache.get_seq_length()
        a = x[:n]  # noqa: SLG002
        return x[n:]  # seqlen-guard: ignore[SLG002]
    """


def test_disable_noqa_reports_everything_in_both_commands(tmp_path: Path) -> None:
    path = write(tmp_path, SILENCED_TWICE)
    assert run("-m", "lint_rules", "m.py", cwd=tmp_path).returncode == 0
    audit = run("-m", "lint_rules", "--disable-noqa", "m.py", cwd=tmp_path)
    assert audit.returncode == 1 and len(audit.stdout.splitlines()) == 2, audit.stdout
    assert run("-m", "fixers.rewrite", "--check", "m.py", cwd=tmp_path).returncode == 0
    fixer = run("-m", "fixers.rewrite", "--check", "--disable-noqa", "m.py", cwd=tmp_path)
    assert fixer.returncode == 1, "the guard would now be inserted"
    assert fixer.stderr.count("[fixable]") == 2
    assert path.read_text() == textwrap.dedent(SILENCED_TWICE)


# ----------------------------------------------------------------------------- --add-noqa

PLAIN_TWICE = """\
    def f(cache, x):
        n = cache.get_seq_length()
        a = x[:n]
        return x[n:]
    """

ADD_NOQA_CASES = {
    "end of the line": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]
        """,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # seqlen-guard: ignore[SLG002]
        """,
    ),
    "two codes on one line, one comment": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], [0] * n
        """,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], [0] * n  # seqlen-guard: ignore[SLG002, SLG003]
        """,
    ),
    "an existing comment of the style gets the code": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], [0] * n  # seqlen-guard: ignore[SLG003]
        """,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], [0] * n  # seqlen-guard: ignore[SLG002, SLG003]
        """,
    ),
    "another comment is kept, the new one follows": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # the tail
        """,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n]  # the tail  # seqlen-guard: ignore[SLG002]
        """,
    ),
    "a line inside a string: the statement's last line": (
        '''\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], """a
        string"""
        ''',
        '''\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n], """a
        string"""  # seqlen-guard: ignore[SLG002]
        ''',
    ),
    "a backslash-continued line: the statement's last line": (
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n] + \\
                x
        """,
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            return x[:n] + \\
                x  # seqlen-guard: ignore[SLG002]
        """,
    ),
}


@pytest.mark.parametrize("case", ADD_NOQA_CASES, ids=list(ADD_NOQA_CASES))
def test_add_noqa_writes_the_own_comment(case: str) -> None:
    before, after = (textwrap.dedent(text) for text in ADD_NOQA_CASES[case])
    findings = check_text("m.py", before, Settings()).findings
    assert with_suppressions(before, findings, "seqlen-guard") == after
    assert check_text("m.py", after, Settings()).findings == ()


def test_add_noqa_in_noqa_style_merges_into_an_existing_noqa() -> None:
    before = textwrap.dedent(
        """\
        def f(cache, x):
            n = cache.get_seq_length()
            a = x[:n]  # noqa: E501
            return x[n:]
        """
    )
    after = with_suppressions(before, check_text("m.py", before, Settings()).findings, "noqa")
    assert after.splitlines()[2:] == ["    a = x[:n]  # noqa: E501, SLG002", "    return x[n:]  # noqa: SLG002"]


def test_add_noqa_command_touches_only_comments_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.seqlen-guard]\nsuppression-style = "seqlen-guard"\n')
    crlf = write(tmp_path, "def f(cache, x):\r\n    n = cache.get_seq_length()\r\n    return x[:n]\r\n", "crlf.py")
    write(tmp_path, PLAIN_TWICE)
    first = run("-m", "lint_rules", "--add-noqa", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "added suppressions for 3 findings in 2 files" in first.stderr
    assert (
        crlf.read_bytes()
        == b"def f(cache, x):\r\n    n = cache.get_seq_length()\r\n    return x[:n]  # seqlen-guard: ignore[SLG002]\r\n"
    )
    assert run("-m", "lint_rules", cwd=tmp_path).returncode == 0
    assert codes_by("flake8", tmp_path) == codes_by("flake8", tmp_path, "crlf.py") == []
    snapshot = {path: path.read_bytes() for path in tmp_path.glob("*.py")}
    second = run("-m", "lint_rules", "--add-noqa", cwd=tmp_path)
    assert second.returncode == 0 and "for 0 findings in 0 files" in second.stderr
    assert {path: path.read_bytes() for path in tmp_path.glob("*.py")} == snapshot


def test_add_noqa_default_style_is_noqa_which_flake8_honours(tmp_path: Path) -> None:
    path = write(tmp_path, OWN_COMMENT_CASES["bare, every code"].replace("  # seqlen-guard: ignore", ""))
    added = run("-m", "lint_rules", "--add-noqa", "m.py", cwd=tmp_path)
    assert added.returncode == 0
    assert added.stderr == "seqlen-guard: added suppressions for 1 finding in 1 file\n", (
        "one, not 1 findings in 1 files"
    )
    assert path.read_text().splitlines()[-1] == "    return x[:n]  # noqa: SLG002"
    assert codes_by("flake8", tmp_path) == codes_by("checker", tmp_path) == []


def test_lint_rules_imports_fixers_only_in_the_command_over_both() -> None:
    """fixers imports lint_rules; the one way back is `lint_rules.program`, which hands `--add-noqa` (it
    writes files) to `fixers.add_noqa`. Any other import of fixers under lint_rules/ fails here."""
    package = Path(__file__).resolve().parent.parent / "lint_rules"
    importers = set()
    for module in package.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name == "fixers" or name.startswith("fixers.") for name in names):
                importers.add(module.relative_to(package).as_posix())
    assert importers == {"program.py"}


def test_python_m_lint_rules_runs_add_noqa(tmp_path: Path) -> None:
    """The flag still works through `python -m lint_rules` (the console script runs the same `main`)."""
    path = write(tmp_path, "def f(cache, x):\n    n = cache.get_seq_length()\n    return x[:n], x[n:]\n")
    added = run("-m", "lint_rules", "--add-noqa", cwd=tmp_path)
    assert added.returncode == 0 and "added suppressions for 2 findings in 1 file" in added.stderr
    assert path.read_text().splitlines()[-1] == "    return x[:n], x[n:]  # noqa: SLG002"
