"""Which transformers releases a run assumes (`lint_rules/target_range.py`): read from each source, in
their order of precedence, and used by the engine (a class's length over the releases of the range, a
method no cache of the range has ends the path), the same in the checker and the flake8 plugin."""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lint_rules.config import ConfigError, settings_from_args
from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, RELEASES, Releases, in_order, path_ending_names
from lint_rules.target_range import TargetRange, range_of, target_range
from tests.helpers_rewrite import cli_environment

STATIC_SLICE = textwrap.dedent(
    """\
    from transformers import StaticCache


    def tail(x, cache: StaticCache):
        n = cache.get_seq_length()
        return x[:, n:]
    """
)

MAX_LENGTH_AFTER = textwrap.dedent(
    """\
    def tail(x, cache):
        n = cache.get_seq_length()
        limit = cache.get_max_length()
        return x[:, n:limit]
    """
)


def rows(*names: str) -> tuple[str, ...]:
    return names


def names_of(found: TargetRange) -> tuple[str, ...]:
    return tuple(row.name for row in in_order(found.releases))


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def resolved(tmp_path: Path, flag: str | None = None, config: str | None = None) -> TargetRange:
    args = argparse.Namespace(target_transformers=flag, config=config)
    return settings_from_args(args, cwd=tmp_path).transformers


# ----- where the range is read -------------------------------------------------------------------


def test_no_source_means_every_release_and_no_description(tmp_path: Path) -> None:
    found = resolved(tmp_path)
    assert found == TargetRange()
    assert found.releases == ALL_RELEASES
    assert found.described == ""


def test_project_dependencies(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch", "transformers>=4.46,<4.49"]\n'})
    found = resolved(tmp_path)
    assert (found.specifier, found.origin) == (">=4.46,<4.49", "pyproject.toml [project].dependencies")
    assert names_of(found) == rows("4.46-4.48")
    assert found.described == (
        "transformers >=4.46,<4.49 (from pyproject.toml [project].dependencies; table rows 4.46-4.48)"
    )


def test_optional_dependencies_are_alternatives(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": """\
            [project]
            name = "p"
            dependencies = ["torch"]
            [project.optional-dependencies]
            old = ["transformers==4.38.2"]
            new = ["transformers[torch]~=5.5.0"]
            """
        },
    )
    found = resolved(tmp_path)
    assert found.origin == "pyproject.toml [project.optional-dependencies]"
    assert names_of(found) == rows("4.38", "5.5-5.10")


def test_requirements_files_next_to_the_project(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch"]\n',
            "requirements.txt": "-r base.txt\ntorch>=2\ntransformers==4.46.3 --hash=sha256:abc  # pinned\n",
            "requirements-dev.txt": "Transformers >= 4.57, < 5\n",
            "requirements-docs.txt": "sphinx\n",
        },
    )
    found = resolved(tmp_path)
    assert found.origin == "requirements-dev.txt, requirements.txt"
    assert names_of(found) == rows("4.46-4.48", "4.57")


def test_setup_cfg_install_requires(tmp_path: Path) -> None:
    write(tmp_path, {"setup.cfg": "[options]\ninstall_requires =\n    torch\n    transformers==4.38.*\n"})
    found = resolved(tmp_path)
    assert (found.origin, names_of(found)) == ("setup.cfg [options] install_requires", rows("4.38"))


def test_setup_cfg_extras(tmp_path: Path) -> None:
    write(tmp_path, {"setup.cfg": "[options.extras_require]\nhf =\n    transformers>=5.13\n"})
    found = resolved(tmp_path)
    assert (found.origin, names_of(found)) == ("setup.cfg [options.extras_require]", rows("5.13-5.23", "5.24", "5.25"))


def test_configured_key(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.seqlen-guard]\ntarget-transformers = "==4.46.3"\n'})
    found = resolved(tmp_path)
    assert (found.specifier, found.origin, names_of(found)) == (
        "==4.46.3",
        "pyproject.toml [tool.seqlen-guard]",
        rows("4.46-4.48"),
    )


def test_flag(tmp_path: Path) -> None:
    found = resolved(tmp_path, flag="==5.5.3")
    assert (found.specifier, found.origin, names_of(found)) == ("==5.5.3", "--target-transformers", rows("5.5-5.10"))


def test_precedence_flag_then_key_then_requirements(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": """\
            [project]
            name = "p"
            dependencies = ["transformers==4.38.2"]
            [project.optional-dependencies]
            new = ["transformers==5.5.3"]
            [tool.seqlen-guard]
            target-transformers = "==4.57.1"
            """,
            "requirements.txt": "transformers==4.39.3\n",
            "setup.cfg": "[options]\ninstall_requires = transformers==4.44.2\n",
        },
    )
    assert names_of(resolved(tmp_path, flag="==5.24.0")) == rows("5.24")
    assert names_of(resolved(tmp_path)) == rows("4.57")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["transformers==4.38.2"]\n'
        '[project.optional-dependencies]\nnew = ["transformers==5.5.3"]\n'
    )
    assert names_of(resolved(tmp_path)) == rows("4.38")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[project.optional-dependencies]\nn = ["transformers==5.5.3"]\n'
    )
    assert names_of(resolved(tmp_path)) == rows("5.5-5.10")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    assert names_of(resolved(tmp_path)) == rows("4.39-4.41")
    (tmp_path / "requirements.txt").unlink()
    assert names_of(resolved(tmp_path)) == rows("4.42-4.44")


def test_unmarked_entries_all_hold_and_marked_ones_are_alternatives(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.38", "transformers<4.39"]\n'},
    )
    assert names_of(resolved(tmp_path)) == rows("4.38")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = [\n'
        "  \"transformers==4.38.2; python_version < '3.9'\",\n"
        "  \"transformers==5.5.3; python_version >= '3.9'\",\n]\n"
    )
    assert names_of(resolved(tmp_path)) == rows("4.38", "5.5-5.10")


def test_a_requirement_without_a_version_admits_every_release(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers @ git+https://x/y"]\n'})
    found = resolved(tmp_path)
    assert (found.specifier, found.releases) == ("", ALL_RELEASES)
    assert found.described.startswith("transformers (any release) (from pyproject.toml [project].dependencies")


def test_a_range_the_table_does_not_know_means_every_release(tmp_path: Path) -> None:
    """4.30 has no row (no `Cache` class yet): nothing is assumed about it, every row is kept."""
    assert resolved(tmp_path, flag="==4.30.0").releases == ALL_RELEASES


def test_a_release_newer_than_the_table_takes_the_newest_row(tmp_path: Path) -> None:
    assert names_of(resolved(tmp_path, flag=">=5.30")) == rows("5.25")


def test_the_project_of_a_configured_run_is_read_beside_its_pyproject(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    write(
        project,
        {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers==4.38.2"]\n[tool.seqlen-guard]\n'},
    )
    assert names_of(resolved(project / "src")) == rows("4.38")
    assert names_of(resolved(tmp_path, config=str(project / "pyproject.toml"))) == rows("4.38")


@pytest.mark.parametrize("value", ['">=4.46;<4.49"', '"4.46"', "4.46", '""'])
def test_a_bad_configured_range_is_a_configuration_error(tmp_path: Path, value: str) -> None:
    write(tmp_path, {"pyproject.toml": f"[tool.seqlen-guard]\ntarget-transformers = {value}\n"})
    with pytest.raises(ConfigError, match="target-transformers"):
        resolved(tmp_path)


def test_a_bad_flag_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--target-transformers"):
        resolved(tmp_path, flag="4.46")


def test_target_range_alone(tmp_path: Path) -> None:
    assert names_of(target_range(">=5.4,<5.5", "x", None, tmp_path)) == rows("5.4")


@pytest.mark.parametrize(
    ("specifier", "names"),
    [
        ("==5.0.0", ("5.0-5.3",)),
        ("==5.0.0rc1", ("5.0-5.3",)),
        (">4.46.3,<4.47", ("4.46-4.48",)),
        ("==4.46.*", ("4.46-4.48",)),
        ("~=4.56", ("4.56", "4.57")),
        ("<4.39", ("4.36-4.37", "4.38")),
        ("<=4.38", ("4.36-4.37", "4.38")),
        ("<4.38", ("4.36-4.37",)),
        (">=5.13", ("5.13-5.23", "5.24", "5.25")),
        ("<5.24,>=5.22", ("5.13-5.23",)),
        ("!=4.38.*,<4.40", ("4.36-4.37", "4.39-4.41")),
        (">=4.38,<4.38", None),
    ],
)
def test_the_rows_a_specifier_admits(specifier: str, names: tuple[str, ...] | None) -> None:
    """None: no release of the table (an empty or unknown range keeps every row)."""
    if names is None:
        assert range_of([specifier], "x").releases == ALL_RELEASES
        return
    assert names_of(range_of([specifier], "x")) == names


# ----- what the engine does with it -------------------------------------------------------------


def releases_named(*names: str) -> Releases:
    return frozenset(row for row in RELEASES if row.name in names)


def test_a_4_38_pin_makes_a_static_cache_int_length() -> None:
    """In 4.38 `StaticCache.get_seq_length()` returns `self.seen_tokens`, an int: silent."""
    assert analyze_source(STATIC_SLICE, "m.py", releases=releases_named("4.38")) == []


@pytest.mark.parametrize("names", [("4.39-4.41",), ("4.38", "4.39-4.41"), tuple(row.name for row in RELEASES)])
def test_twin_a_range_with_a_tensor_release_reports_it(names: tuple[str, ...]) -> None:
    found = analyze_source(STATIC_SLICE, "m.py", releases=releases_named(*names))
    assert [(finding.line, finding.code) for finding in found] == [(6, "SLG002")]


def test_a_method_no_cache_of_the_range_has_ends_the_path() -> None:
    """5.5-5.12 caches have no `get_max_length()`: the call raises before the length is used."""
    assert path_ending_names(releases_named("5.5-5.10", "5.11-5.12")) == {
        "get_max_length",
        "get_usable_length",
        "seen_tokens",
    }
    assert analyze_source(MAX_LENGTH_AFTER, "m.py", releases=releases_named("5.5-5.10", "5.11-5.12")) == []


@pytest.mark.parametrize("names", [("5.13-5.23",), ("5.24",), ("4.46-4.48",), ("5.11-5.12", "5.13-5.23")])
def test_twin_where_some_release_has_the_method_the_length_is_reported(names: tuple[str, ...]) -> None:
    found = analyze_source(MAX_LENGTH_AFTER, "m.py", releases=releases_named(*names))
    assert [(finding.line, finding.code) for finding in found] == [(4, "SLG002")]


def test_twin_a_module_that_defines_the_method_keeps_the_length() -> None:
    """Its own caches may have what no transformers cache has."""
    source = MAX_LENGTH_AFTER + "\n\nclass Own:\n    def get_max_length(self):\n        return 8\n"
    found = analyze_source(source, "m.py", releases=releases_named("5.5-5.10"))
    assert [(finding.line, finding.code) for finding in found] == [(4, "SLG002")]


CAUGHT = textwrap.dedent(
    """\
    def tail(x, cache):
        n = cache.get_seq_length()
        try:
            limit = cache.get_max_length()
        except AttributeError:
            limit = None
        return x[:, n:limit]


    def tail_if_it_has(x, cache):
        n = cache.get_seq_length()
        limit = None
        if hasattr(cache, "get_max_length"):
            limit = cache.get_max_length()
        return x[:, n:limit]
    """
)


def test_twin_a_caught_or_avoided_call_does_not_end_the_path() -> None:
    """Code written for several releases catches the AttributeError or asks `hasattr` first: the path
    that goes on without the call still uses the length."""
    found = analyze_source(CAUGHT, "m.py", releases=releases_named("5.5-5.10"))
    assert [(finding.line, finding.code) for finding in found] == [(7, "SLG002"), (15, "SLG002")]


def test_seen_tokens_ends_the_path_on_every_release_as_before() -> None:
    """4.36-4.38 have no tensor length, 4.39-4.53 give None for a tensor-length cache, later ones raise."""
    for row in RELEASES:
        assert "seen_tokens" in path_ending_names(frozenset({row})), row.name


# ----- the checker and the plugin -----------------------------------------------------------------


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=cli_environment(), check=False
    )


def finding_lines(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if ": SLG" in line)


@pytest.mark.parametrize(("pin", "reported"), [("==4.38.2", False), (">=4.39", True)])
def test_the_checker_and_the_plugin_read_the_same_range(tmp_path: Path, pin: str, reported: bool) -> None:
    write(tmp_path, {"pyproject.toml": f'[project]\nname = "p"\ndependencies = ["transformers{pin}"]\n'})
    (tmp_path / "m.py").write_text(STATIC_SLICE)
    checker = run("-m", "lint_rules", "m.py", cwd=tmp_path)
    flake8 = run("-m", "flake8", "--select=SLG", "m.py", cwd=tmp_path)
    assert finding_lines(checker.stdout) == finding_lines(flake8.stdout)
    assert bool(finding_lines(checker.stdout)) is reported
    assert f"checking for transformers {pin} (from pyproject.toml [project].dependencies" in checker.stderr


def test_the_plugin_option_wins_over_the_project(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers>=4.39"]\n'})
    (tmp_path / "m.py").write_text(STATIC_SLICE)
    flake8 = run("-m", "flake8", "--select=SLG", "--slg-target-transformers", "==4.38.2", "m.py", cwd=tmp_path)
    checker = run("-m", "lint_rules", "--target-transformers", "==4.38.2", "m.py", cwd=tmp_path)
    assert finding_lines(flake8.stdout) == finding_lines(checker.stdout) == []
    assert (flake8.returncode, checker.returncode) == (0, 0)


def test_explain_names_the_range(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["transformers==4.46.3"]\n'})
    explained = run("-m", "lint_rules", "--explain", "SLG002", cwd=tmp_path)
    assert "Verdicts assume transformers ==4.46.3 (from pyproject.toml [project].dependencies" in explained.stdout
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "pyproject.toml").write_text('[project]\nname = "q"\n')
    plain = run("-m", "lint_rules", "--explain", "SLG002", cwd=tmp_path / "elsewhere")
    assert plain.returncode == 0
    assert "Verdicts assume" not in plain.stdout
