"""Which transformers releases the checked project runs on, and where that was read.

In order, the first that names `transformers` wins:

1. `--target-transformers SPEC` on the command line (`--slg-target-transformers` under flake8);
2. `target-transformers = "SPEC"` in `[tool.seqlen-guard]`;
3. the project's requirements, read next to the pyproject.toml that configures the run (else the
   nearest pyproject.toml, else the current folder): `[project].dependencies` of that pyproject.toml,
   else its `[project.optional-dependencies]`; else `requirements*.txt` beside it; else `setup.cfg`'s
   `install_requires` (else its `extras_require`).

With none of them, every release of the table (`engine.releases`) is assumed, as before. Requirements
that say nothing about the version (`transformers`, a URL) admit every release. Where one list names
transformers several times, the entries without an environment marker must all hold; entries with
markers are alternatives. Several requirements files are alternatives too (the project may be installed
from any of them), and so are the extras: the range is the union.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lint_rules.engine.facts.releases import ALL_RELEASES, RELEASES, ReleaseFacts, Releases, in_order
from lint_rules.pyproject import toml_document

if TYPE_CHECKING:
    from lint_rules.specifiers import SpecifierSet, Version

PACKAGE = "transformers"
REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<rest>.*)$")
FAR = 999
"""A patch or minor number past any release: the inside of an open range."""


class TargetError(Exception):
    """A `target-transformers` value or flag that is not a specifier set."""


class TargetRange(NamedTuple):
    specifier: str = ""
    """The specifier set as read ("" when nothing names transformers' version)."""
    origin: str = ""
    """Where it was read: `--target-transformers`, `pyproject.toml [tool.seqlen-guard]`, ..."""
    releases: Releases = ALL_RELEASES

    @property
    def described(self) -> str:
        """`transformers ==4.46.3 (from pyproject.toml [project].dependencies; releases 4.46)`, or ""."""
        if not self.origin:
            return ""
        rows = ", ".join(row.name for row in in_order(self.releases))
        version = self.specifier or "(any release)"
        return f"transformers {version} (from {self.origin}; table rows {rows})"


def target_range(explicit: str | None, explicit_origin: str, config: Path | None, cwd: Path) -> TargetRange:
    """The range of the run: the explicit specifier (flag or key) if given, else what the project's
    requirements next to `config` (or found from `cwd`) say."""
    if explicit is not None:
        return range_of([explicit], explicit_origin)
    folder = config.parent if config is not None else nearest_project_folder(cwd)
    for origin, alternatives in requirement_sources(folder, config):
        if alternatives is not None:
            return range_of(alternatives, origin)
    return TargetRange()


def range_of(alternatives: Sequence[str], origin: str) -> TargetRange:
    """Any of the specifier sets (each a conjunction) may hold: the rows of the releases they admit."""
    from lint_rules.specifiers import SpecifierError, SpecifierSet  # only for a run with a range: start-up time

    try:
        sets = [SpecifierSet.parse(text) for text in alternatives]
    except SpecifierError as error:
        raise TargetError(f"{origin}: {error}") from None
    admitted = frozenset(row for row in RELEASES if any(admits_a_release_of(row, spec) for spec in sets))
    shown = " | ".join(str(spec) or "(any release)" for spec in sets)
    return TargetRange(shown if shown != "(any release)" else "", origin, admitted or ALL_RELEASES)


def admits_a_release_of(row: ReleaseFacts, spec: SpecifierSet) -> bool:
    return any(spec.admits(version) for version in candidate_versions(row, spec))


def candidate_versions(row: ReleaseFacts, spec: SpecifierSet) -> Iterable[Version]:
    """Versions of the row's minors, enough to find one `spec` admits if any does: a conjunction of
    comparisons admits, within a minor, intervals bounded by its own versions, so each minor's first
    and a far patch, and each version the specifier names with its neighbours, are tried. The newest
    row also stands for every later release (assumed to keep its facts)."""
    from lint_rules.specifiers import Version

    mentioned = [Version.parse(specifier.version.removesuffix(".*")) for specifier in spec.specifiers]
    newest = row is RELEASES[-1]

    def in_row(version: Version) -> bool:
        minor = (*version.release, 0)[:2]
        return row.first <= minor <= row.last or (newest and minor > row.last)

    major = row.first[0]
    minors = range(row.first[1], row.last[1] + 1)
    yield from (final(major, minor) for minor in minors)
    yield from (final(major, minor, FAR) for minor in minors)
    if newest:
        yield from (final(major, FAR), final(major + 1), final(FAR))
    for version in filter(in_row, mentioned):
        numbers = (*version.release, 0, 0)[:3]
        yield version
        yield from (final(*numbers[:2], numbers[2] + step) for step in (-1, 1) if numbers[2] + step >= 0)


def final(*numbers: int) -> Version:
    from lint_rules.specifiers import Version

    return Version.parse(".".join(map(str, numbers)))


def nearest_project_folder(cwd: Path) -> Path:
    """The folder of the nearest pyproject.toml at or above `cwd`, else `cwd`."""
    start = cwd.resolve()
    return next((folder for folder in (start, *start.parents) if (folder / "pyproject.toml").is_file()), start)


def requirement_sources(folder: Path, config: Path | None) -> Iterable[tuple[str, list[str] | None]]:
    """(origin, the specifier sets transformers may satisfy, or None where the source does not name it)."""
    pyproject = config if config is not None else folder / "pyproject.toml"
    project = pyproject_project(pyproject)
    dependencies = project.get("dependencies", [])
    yield f"{pyproject.name} [project].dependencies", transformers_specifiers(strings(dependencies))
    extras = project.get("optional-dependencies", {})
    extra_lists = [strings(value) for value in extras.values()] if isinstance(extras, dict) else []
    yield f"{pyproject.name} [project.optional-dependencies]", union(map(transformers_specifiers, extra_lists))
    files = sorted(folder.glob("requirements*.txt"))
    found = [(file.name, transformers_specifiers(requirement_lines(file))) for file in files]
    named = [(name, specs) for name, specs in found if specs is not None]
    yield ", ".join(name for name, _ in named), union(specs for _, specs in named)
    install, extras_require = setup_cfg_requirements(folder / "setup.cfg")
    yield "setup.cfg [options] install_requires", transformers_specifiers(install)
    yield "setup.cfg [options.extras_require]", union(map(transformers_specifiers, extras_require))


def union(groups: Iterable[list[str] | None]) -> list[str] | None:
    found = [spec for group in groups if group is not None for spec in group]
    return found or None


def strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def pyproject_project(path: Path) -> dict[str, object]:
    """The `[project]` table ({} for a file that is missing or not TOML: no range from it)."""
    if not path.is_file():
        return {}
    import tomllib  # only for a project that has a pyproject.toml: it costs start-up time

    try:
        project = toml_document(path).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return project if isinstance(project, dict) else {}


def transformers_specifiers(requirements: Iterable[str]) -> list[str] | None:
    """The specifier sets that transformers' version may satisfy under `requirements` (None when they
    do not name it): the unmarked entries together, else any one of the marked ones."""
    unmarked: list[str] = []
    marked: list[str] = []
    for line in requirements:
        requirement, _, marker = line.partition(";")
        match = REQUIREMENT.match(requirement)
        if match is None or normalized(match["name"]) != PACKAGE:
            continue
        rest = match["rest"].strip()
        version = "" if rest.startswith("@") else rest.strip("()").replace(" ", "")
        (marked if marker.strip() else unmarked).append(version)
    if unmarked:
        return [",".join(spec for spec in unmarked if spec)]
    return marked or None


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(file: Path) -> list[str]:
    """The requirements of a pip requirements file: comments, options and continuations handled."""
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
        line = re.split(r"\s--?[a-z]", f" {line}", maxsplit=1)[0].strip()
        if line:
            lines.append(line)
    return lines


def setup_cfg_requirements(path: Path) -> tuple[list[str], list[list[str]]]:
    """`install_requires` of `[options]`, and each list of `[options.extras_require]`."""
    if not path.is_file():
        return [], []
    import configparser  # only for a project that has a setup.cfg: it costs start-up time

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return [], []
    install = cfg_list(parser.get("options", "install_requires", fallback=""))
    extras = (
        [cfg_list(value) for value in parser["options.extras_require"].values()]
        if parser.has_section("options.extras_require")
        else []
    )
    return install, extras


def cfg_list(value: str) -> list[str]:
    lines = (line.strip() for line in value.splitlines())
    return [line for line in lines if line and not line.startswith("#")]
