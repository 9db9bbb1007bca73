"""`[tool.seqlen-guard]` in pyproject.toml and the command-line flags both CLIs share.

The file gives the project's defaults; a flag given on the command line replaces the
file's value for that key (the CLI wins). `settings_from_args` does both and returns
the `Settings` a run uses. Every problem is a `ConfigError` whose message names the
file (or flag) and the key.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from lint_rules.formats import FORMATS
from lint_rules.lines import line_of_offset
from lint_rules.pyproject import toml_document
from lint_rules.rules import ALL_CODES
from lint_rules.settings import DEFAULT_SOURCE_METHODS, Settings
from lint_rules.target_range import TargetError, TargetRange, target_range

TABLE = "seqlen-guard"
KEYS = (
    "select",
    "ignore",
    "exclude",
    "per-file-ignores",
    "source-methods",
    "unsafe-fixes",
    "baseline",
    "suppression-style",
    "target-transformers",
    "int-length-caches",
    "int-length-classes",
)
SUPPRESSION_STYLES = ("noqa", "seqlen-guard")

PerFileIgnores = tuple[tuple[str, tuple[str, ...]], ...]
T = TypeVar("T")


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file or flag and the key."""


class ConfigValues(NamedTuple):
    """What one source (the file or the command line) sets; None where it says nothing."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    per_file_ignores: PerFileIgnores | None = None
    source_methods: tuple[str, ...] | None = None
    """Extra method names, on top of `DEFAULT_SOURCE_METHODS`."""
    unsafe_fixes: bool | None = None
    disable_noqa: bool | None = None
    baseline: str | None = None
    """The baseline file, resolved against the folder of the pyproject.toml that names it."""
    suppression_style: str | None = None
    target_transformers: str | None = None
    """A PEP 440 specifier set: the transformers releases the project runs on (see `target_range`)."""
    int_length_caches: tuple[str, ...] | None = None
    """Globs of the files `int-length-caches` covers, absolute once read from a file (`("*",)` for `true`)."""
    int_length_classes: tuple[str, ...] | None = None
    no_declarations: bool | None = None

    def over(self, base: ConfigValues) -> ConfigValues:
        """These values, falling back to `base` for each key left unset here."""
        given = {name: value for name, value in self._asdict().items() if value is not None}
        return base._replace(**given)

    def to_settings(self) -> Settings:
        defaults = Settings()
        return Settings(
            select=_or_default(self.select, defaults.select),
            ignore=_or_default(self.ignore, defaults.ignore),
            exclude=_or_default(self.exclude, defaults.exclude),
            per_file_ignores=_or_default(self.per_file_ignores, defaults.per_file_ignores),
            source_methods=tuple(dict.fromkeys((*DEFAULT_SOURCE_METHODS, *(self.source_methods or ())))),
            unsafe_fixes=_or_default(self.unsafe_fixes, defaults.unsafe_fixes),
            disable_noqa=_or_default(self.disable_noqa, defaults.disable_noqa),
            suppression_style=_or_default(self.suppression_style, defaults.suppression_style),
            baseline=self.baseline,
            int_length_caches=_or_default(self.int_length_caches, defaults.int_length_caches),
            int_length_classes=_or_default(self.int_length_classes, defaults.int_length_classes),
            no_declarations=_or_default(self.no_declarations, defaults.no_declarations),
        )


def new_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of one of the two commands."""
    return argparse.ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized as argparse sizes it (`$COLUMNS`, else the terminal, else 80
    columns) without importing `shutil` and its compression modules: argparse builds a formatter
    for every argument it adds, so that import is paid by every run, not only by `--help`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width or terminal_columns() - 2)


def terminal_columns() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(1).columns or 80
    except (OSError, ValueError):
        return 80


def _or_default(value: T | None, default: T) -> T:
    return default if value is None else value


# ------------------------------------------------------------------------ pyproject.toml


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a `[tool.seqlen-guard]` table.

    A pyproject.toml without the table is passed over, as ruff does, so a sub-project's
    own pyproject.toml does not hide the repository's configuration.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and TABLE in _tool_tables(candidate):
            return candidate
    return None


def load_config(path: Path) -> ConfigValues:
    """The values of `[tool.seqlen-guard]` in `path`; all unset when it has no such table."""
    table = _tool_tables(path).get(TABLE, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table, got {_type_name(table)}")
    values = parse_table(table, origin=f"{path}: [tool.{TABLE}]")
    if values.int_length_caches:
        values = values._replace(int_length_caches=anchored_globs(values.int_length_caches, path.parent))
    if values.baseline is None:
        return values
    return values._replace(baseline=os.path.normpath(path.parent / values.baseline))


def anchored_globs(globs: Sequence[str], folder: Path) -> tuple[str, ...]:
    """The globs of `int-length-caches` as absolute ones, read from the pyproject.toml's `folder`: a
    declaration silences findings, so `app/*` covers that folder's `app`, not any folder of that name
    (unlike `exclude`); `*` (from `true`) stays every file checked."""
    base = os.path.realpath(folder)
    return tuple(glob if glob == "*" else os.path.normpath(os.path.join(base, glob)) for glob in globs)


def _tool_tables(path: Path) -> dict[str, object]:
    import tomllib  # only where a pyproject.toml is found: it costs start-up time

    try:
        document = toml_document(path)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        byte, line = error.object[error.start], line_of_offset(error.object, error.start)
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte 0x{byte:02x} on line {line})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    tool = document.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def parse_table(table: Mapping[str, object], origin: str) -> ConfigValues:
    """Check and convert one `[tool.seqlen-guard]` table; `origin` starts every error message."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{origin}: unknown key {unknown[0]!r} (known keys: {', '.join(KEYS)})")

    def read(key: str, parse: Callable[[object, str], T]) -> T | None:
        return parse(table[key], f"{origin} {key}") if key in table else None

    return ConfigValues(
        select=read("select", _codes),
        ignore=read("ignore", _codes),
        exclude=read("exclude", _strings),
        per_file_ignores=read("per-file-ignores", _per_file_ignores),
        source_methods=read("source-methods", _methods),
        unsafe_fixes=read("unsafe-fixes", _boolean),
        baseline=read("baseline", _string),
        suppression_style=read("suppression-style", _style),
        target_transformers=read("target-transformers", _specifier),
        int_length_caches=read("int-length-caches", _files_declared),
        int_length_classes=read("int-length-classes", _classes_declared),
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_type_name(value)}")
    return tuple(value)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: expected a file name, got {_type_name(value)}")
    return value


def _files_declared(value: object, where: str) -> tuple[str, ...]:
    """`true` (every file), `false` (none) or a list of globs (see `anchored_globs`)."""
    if isinstance(value, bool):
        return ("*",) if value else ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: expected true, false or a list of globs, got {_type_name(value)}")
    return tuple(value)


def _classes_declared(value: object, where: str) -> tuple[str, ...]:
    names = _strings(value, where)
    for name in names:
        parts = name.split(".")
        if len(parts) < 2 or not all(part.isidentifier() for part in parts):
            raise ConfigError(f"{where}: {name!r} is not a dotted class name such as 'pkg.module.Class'")
    return names


def _style(value: object, where: str) -> str:
    if value not in SUPPRESSION_STYLES:
        raise ConfigError(f"{where}: expected one of {', '.join(map(repr, SUPPRESSION_STYLES))}, got {value!r}")
    return str(value)


def _specifier(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f'{where}: expected a version specifier such as ">=4.46,<4.49", got {_type_name(value)}')
    return check_specifier(value, where)


def check_specifier(text: str, where: str) -> str:
    from lint_rules.specifiers import SpecifierError, SpecifierSet  # only for a run with a range: start-up time

    try:
        SpecifierSet.parse(text)
    except SpecifierError as error:
        raise ConfigError(f"{where}: {error}") from None
    return text.strip()


def _codes(value: object, where: str) -> tuple[str, ...]:
    return check_codes(_strings(value, where), where)


def _methods(value: object, where: str) -> tuple[str, ...]:
    return check_methods(_strings(value, where), where)


def _per_file_ignores(value: object, where: str) -> PerFileIgnores:
    if not isinstance(value, dict):
        raise ConfigError(f'{where}: expected a table of "glob" = [codes], got {_type_name(value)}')
    return tuple((glob, _codes(codes, f"{where} {glob!r}")) for glob, codes in value.items())


def _boolean(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {_type_name(value)}")
    return value


def _type_name(value: object) -> str:
    if isinstance(value, list):
        return "a list holding a non-string"
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def check_codes(codes: Sequence[str], where: str) -> tuple[str, ...]:
    """`codes`, each of which must be a known code or a prefix of one (`SLG`, `SLG00`)."""
    for code in codes:
        if not code or not any(known.startswith(code) for known in ALL_CODES):
            raise ConfigError(f"{where}: unknown rule code {code!r} (known: {', '.join(ALL_CODES)})")
    return tuple(codes)


def check_methods(methods: Sequence[str], where: str) -> tuple[str, ...]:
    for method in methods:
        if not method.isidentifier():
            raise ConfigError(f"{where}: {method!r} is not a method name")
    return tuple(methods)


# -------------------------------------------------------------------------- command line


def add_paths_argument(parser: argparse.ArgumentParser, verb: str) -> None:
    """The files and folders to work on; none given means the current folder, as in flake8 and ruff."""
    parser.add_argument(
        "paths",
        nargs="*",
        default=[os.curdir],
        metavar="PATH",
        help=f"files and folders to {verb} (default: the current folder, minus the configured exclude)",
    )


def add_common_arguments(parser: argparse.ArgumentParser, *, fixer: bool = False) -> None:
    """The flags the checker and the fixer share (`--unsafe-fixes` only on the fixer); read them
    back with `settings_from_args`."""
    rules = parser.add_argument_group("rules and configuration")
    rules.add_argument(
        "--select",
        metavar="CODES",
        type=_comma_separated,
        help="comma-separated codes or prefixes to report (default: all); replaces the configured list",
    )
    rules.add_argument(
        "--ignore",
        metavar="CODES",
        type=_comma_separated,
        help="comma-separated codes or prefixes not to report; replaces the configured list",
    )
    rules.add_argument(
        "--exclude",
        metavar="GLOBS",
        type=_comma_separated,
        action="extend",
        help="comma-separated globs of paths to skip, files named explicitly included; "
        "repeatable; replaces the configured list",
    )
    rules.add_argument(
        "--per-file-ignores",
        metavar="GLOB:CODES",
        type=_per_file_ignore_flag,
        action="extend",
        help="codes not to report in files matching GLOB, e.g. 'tests/*:SLG003,SLG004'; "
        "repeatable; replaces the configured table",
    )
    rules.add_argument(
        "--source-methods",
        metavar="NAMES",
        type=_comma_separated,
        action="extend",
        help="extra comma-separated method names whose result is treated like get_seq_length()'s",
    )
    rules.add_argument(
        "--target-transformers",
        metavar="SPEC",
        help="the transformers releases the code runs on, a PEP 440 specifier such as '>=4.46,<4.49' "
        "(default: the configured one, else the project's requirement on transformers, else every release)",
    )
    if fixer:
        rules.add_argument(
            "--unsafe-fixes",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="also apply fixes that change behaviour (inside compiled regions)",
        )
    rules.add_argument(
        "--disable-noqa",
        action="store_true",
        default=None,
        help="ignore `# noqa` and `# seqlen-guard: ignore` comments: report everything (for audits)",
    )
    rules.add_argument(
        "--no-declarations",
        action="store_true",
        default=None,
        help="ignore the configured int-length-caches and int-length-classes: report what they silence (for audits)",
    )
    rules.add_argument(
        "--config",
        metavar="PATH",
        help="the pyproject.toml to read (default: the nearest one with [tool.seqlen-guard])",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--format", choices=FORMATS, default="text", help="how findings are printed (default: text)")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument(
        "-j",
        "--jobs",
        metavar="N",
        type=_jobs,
        default=1,
        help="worker processes, or 'auto' for one per CPU (default: 1)",
    )


def _comma_separated(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _per_file_ignore_flag(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """`GLOB:CODES`, several separated by spaces as flake8 allows: 'a.py:SLG001 b/*:SLG002'."""
    pairs = []
    for entry in text.split():
        glob, colon, codes = entry.rpartition(":")
        if not colon or not glob or not codes:
            raise argparse.ArgumentTypeError(f"expected GLOB:CODES, got {entry!r}")
        pairs.append((glob, tuple(_comma_separated(codes))))
    return pairs


def _jobs(text: str) -> int:
    if text == "auto":
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'auto', got {text!r}")
    return int(text)


def values_from_args(args: argparse.Namespace) -> ConfigValues:
    """What the command line sets, checked like the file's values."""

    def given(name: str) -> tuple[str, ...] | None:
        value = getattr(args, name, None)
        return None if value is None else tuple(value)

    select, ignore, methods = given("select"), given("ignore"), given("source_methods")
    target: str | None = getattr(args, "target_transformers", None)
    per_file: list[tuple[str, tuple[str, ...]]] | None = getattr(args, "per_file_ignores", None)
    return ConfigValues(
        select=None if select is None else check_codes(select, "--select"),
        ignore=None if ignore is None else check_codes(ignore, "--ignore"),
        exclude=given("exclude"),
        per_file_ignores=None if per_file is None else _checked_flag_pairs(per_file),
        source_methods=None if methods is None else check_methods(methods, "--source-methods"),
        unsafe_fixes=getattr(args, "unsafe_fixes", None),
        disable_noqa=getattr(args, "disable_noqa", None),
        target_transformers=None if target is None else check_specifier(target, "--target-transformers"),
        no_declarations=getattr(args, "no_declarations", None),
    )


def _checked_flag_pairs(pairs: Sequence[tuple[str, tuple[str, ...]]]) -> PerFileIgnores:
    return tuple((glob, check_codes(codes, f"--per-file-ignores {glob!r}")) for glob, codes in pairs)


def file_values(config: str | None, cwd: Path | None = None) -> ConfigValues:
    """The values of `--config PATH`, else of the nearest configured pyproject.toml, else none."""
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"{config}: --config file not found")
        return load_config(path)
    found = find_config(cwd or Path.cwd())
    return ConfigValues() if found is None else load_config(found)


def settings_from_args(args: argparse.Namespace, cwd: Path | None = None) -> Settings:
    """The run's settings: command-line flags over the configuration file over the defaults."""
    config = getattr(args, "config", None)
    flags = values_from_args(args)
    settings = flags.over(file_values(config, cwd)).to_settings()
    flag = flags.target_transformers
    return settings._replace(transformers=transformers_range(flag, "--target-transformers", config, cwd))


def transformers_range(flag: str | None, flag_origin: str, config: str | None, cwd: Path | None = None) -> TargetRange:
    """The releases of the run (`target_range`): `flag`, else the configured `target-transformers`,
    else the requirements of the configured project."""
    folder = cwd or Path.cwd()
    path = Path(config) if config is not None else find_config(folder)
    configured = load_config(path).target_transformers if path is not None else None
    explicit, origin = (flag, flag_origin) if flag is not None else (configured, f"{_shown(path)} [tool.{TABLE}]")
    try:
        return target_range(explicit, origin, path, folder)
    except TargetError as error:
        raise ConfigError(str(error)) from None


def _shown(path: Path | None) -> str:
    return "pyproject.toml" if path is None else path.name
