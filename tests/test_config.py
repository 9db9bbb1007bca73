"""`[tool.seqlen-guard]` in pyproject.toml, the shared flags, and which one wins."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest

from lint_rules.config import (
    ConfigError,
    ConfigValues,
    add_common_arguments,
    find_config,
    load_config,
    settings_from_args,
)
from lint_rules.rules import ALL_CODES
from lint_rules.settings import DEFAULT_SOURCE_METHODS, Settings

FULL_TABLE = """
[tool.seqlen-guard]
select = ["SLG00"]
ignore = ["SLG005"]
exclude = ["build/*", "*_pb2.py"]
source-methods = ["get_cache_length"]
unsafe-fixes = true

[tool.seqlen-guard.per-file-ignores]
"tests/*" = ["SLG003", "SLG004"]
"""


def write_pyproject(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_bytes(textwrap.dedent(body).encode("utf-8", "surrogateescape"))  # "\udcff": the byte 0xff
    return path


def parse_args(*argv: str) -> argparse.Namespace:
    """The fixer's flags: the checker's plus --unsafe-fixes."""
    parser = argparse.ArgumentParser()
    add_common_arguments(parser, fixer=True)
    return parser.parse_args(list(argv))


# ---------------------------------------------------------------------------- the file


def test_full_table(tmp_path: Path) -> None:
    path = write_pyproject(tmp_path, FULL_TABLE)
    assert load_config(path) == ConfigValues(
        select=("SLG00",),
        ignore=("SLG005",),
        exclude=("build/*", "*_pb2.py"),
        per_file_ignores=(("tests/*", ("SLG003", "SLG004")),),
        source_methods=("get_cache_length",),
        unsafe_fixes=True,
    )


def test_file_without_table_sets_nothing(tmp_path: Path) -> None:
    path = write_pyproject(tmp_path, '[project]\nname = "x"\n')
    assert load_config(path) == ConfigValues()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[tool.seqlen-guard]\nselcet = ['SLG001']\n", "unknown key 'selcet'"),
        ("[tool.seqlen-guard]\nselect = 'SLG001'\n", "select: expected a list of strings, got a string"),
        ("[tool.seqlen-guard]\nexclude = ['a', 1]\n", "exclude: expected a list of strings, got a list holding"),
        ("[tool.seqlen-guard]\nunsafe-fixes = 'yes'\n", "unsafe-fixes: expected true or false, got a string"),
        ("[tool.seqlen-guard]\nper-file-ignores = ['x']\n", "per-file-ignores: expected a table"),
        ("[tool.seqlen-guard.per-file-ignores]\n'a.py' = 'SLG001'\n", "per-file-ignores 'a.py': expected a list"),
        ("[tool.seqlen-guard]\nignore = ['E501']\n", "ignore: unknown rule code 'E501'"),
        ("[tool.seqlen-guard]\nselect = ['SLG009']\n", "select: unknown rule code 'SLG009'"),
        ("[tool.seqlen-guard]\nsource-methods = ['get length']\n", "source-methods: 'get length' is not a method name"),
        ("[tool]\nseqlen-guard = 3\n", "[tool.seqlen-guard] must be a table, got an integer"),
        ("[tool.seqlen-guard\n", "invalid TOML"),
        ("[tool.seqlen-guard]\nexclude = ['\udcff']\n", "invalid TOML: not UTF-8 (byte 0xff on line 2)"),
    ],
)
def test_bad_file_names_the_key(tmp_path: Path, body: str, message: str) -> None:
    path = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_nearest_configured_pyproject_is_found(tmp_path: Path) -> None:
    root = write_pyproject(tmp_path / "repo", FULL_TABLE)
    write_pyproject(tmp_path / "repo" / "subproject", '[project]\nname = "sub"\n')
    deep = tmp_path / "repo" / "subproject" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_config(deep) == root

    inner = write_pyproject(tmp_path / "repo" / "subproject", "[tool.seqlen-guard]\nignore = ['SLG001']\n")
    assert find_config(deep) == inner


def test_no_pyproject_found(tmp_path: Path) -> None:
    assert find_config(tmp_path) is None


# ----------------------------------------------------------------------- command line


def test_defaults_without_any_configuration(tmp_path: Path) -> None:
    args = parse_args()
    assert settings_from_args(args, cwd=tmp_path) == Settings()
    assert (args.format, args.exit_zero, args.jobs, args.config) == ("text", False, 1, None)


def test_file_values_become_settings(tmp_path: Path) -> None:
    write_pyproject(tmp_path, FULL_TABLE)
    assert settings_from_args(parse_args(), cwd=tmp_path) == Settings(
        select=("SLG00",),
        ignore=("SLG005",),
        exclude=("build/*", "*_pb2.py"),
        per_file_ignores=(("tests/*", ("SLG003", "SLG004")),),
        source_methods=(*DEFAULT_SOURCE_METHODS, "get_cache_length"),
        unsafe_fixes=True,
    )


def test_command_line_wins_over_file(tmp_path: Path) -> None:
    write_pyproject(tmp_path, FULL_TABLE)
    args = parse_args(
        "--select=SLG001,SLG002",
        "--ignore=",
        "--exclude=vendor/*",
        "--exclude",
        "gen/*,*.pyi",
        "--per-file-ignores",
        "a.py:SLG001 b/*:SLG002,SLG003",
        "--source-methods=seen_tokens",
        "--no-unsafe-fixes",
    )
    assert settings_from_args(args, cwd=tmp_path) == Settings(
        select=("SLG001", "SLG002"),
        ignore=(),
        exclude=("vendor/*", "gen/*", "*.pyi"),
        per_file_ignores=(("a.py", ("SLG001",)), ("b/*", ("SLG002", "SLG003"))),
        source_methods=(*DEFAULT_SOURCE_METHODS, "seen_tokens"),
        unsafe_fixes=False,
    )


def test_explicit_config_file(tmp_path: Path) -> None:
    other = write_pyproject(tmp_path / "elsewhere", "[tool.seqlen-guard]\nselect = ['SLG004']\n")
    write_pyproject(tmp_path / "here", FULL_TABLE)
    args = parse_args("--config", str(other))
    settings = settings_from_args(args, cwd=tmp_path / "here")
    assert settings.select == ("SLG004",)
    assert settings.exclude == ()


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config file not found"):
        settings_from_args(parse_args("--config", str(tmp_path / "nope.toml")), cwd=tmp_path)


def test_unknown_code_on_command_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--select: unknown rule code 'F401'"):
        settings_from_args(parse_args("--select", "F401"), cwd=tmp_path)


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["-j", "x"], ["--per-file-ignores", "nocolon"], ["--format", "xml"]])
def test_bad_flags_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        parse_args(*argv)
    assert raised.value.code == 2


def test_jobs_auto() -> None:
    assert parse_args("-j", "auto").jobs >= 1
    assert parse_args("-j", "3").jobs == 3


def test_prefixes_select_every_code(tmp_path: Path) -> None:
    settings = settings_from_args(parse_args("--select", "SLG"), cwd=tmp_path)
    assert all(settings.enabled(code) for code in ALL_CODES)


@pytest.mark.parametrize("columns", ["60", "120"])
def test_help_is_sized_by_columns_as_argparse_sizes_it(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' own formatter (no `shutil` at start-up) lays the help out as argparse's does."""
    import argparse

    from fixers.fix_command import build_parser as fix_parser
    from lint_rules.check_command import build_parser as check_parser

    monkeypatch.setenv("COLUMNS", columns)
    for parser in (check_parser(), fix_parser()):
        ours = parser.format_help()
        parser.formatter_class = argparse.HelpFormatter
        assert ours == parser.format_help()
        assert min(map(len, ours.splitlines())) < int(columns)
