"""The part of PEP 440 a transformers requirement needs: versions (`4.46.3`, `5.0.0rc1`, `4.46.3.post1`,
`4.46.3+cpu`) and specifier sets (`>=4.46,<4.49`, `==4.4*`, `~=4.46.0`, `!=4.47.*`), so that the
checker does not depend on `packaging` (which flake8 and libcst do not bring).

Only what decides membership is kept: the release numbers, and pre-, post- and dev-release tags for
ordering. Pre-releases satisfy a specifier like final releases do (a pin on one selects its minor).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

VERSION = re.compile(
    r"""^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)
        (?:[-_.]?(?P<pre>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d*))?
        (?:(?:-(?P<post_implicit>\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post_n>\d*)))?
        (?:[-_.]?dev[-_.]?(?P<dev_n>\d*))?
        (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
PRE_ORDER = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
OPERATORS = ("~=", "===", "==", "!=", "<=", ">=", "<", ">")


class SpecifierError(ValueError):
    """Text that is not a version or a specifier set."""


class Version(NamedTuple):
    release: tuple[int, ...]
    """Without trailing zeros: 4.46.0 and 4.46 are one version."""
    tag: tuple[int, int]
    """For ordering within a release: (0, n) dev, (1, pre) pre-release, (2, 0) final, (3, n) post."""

    @staticmethod
    def parse(text: str) -> Version:
        return parsed_version(text)

    @classmethod
    def read(cls, text: str) -> Version:
        match = VERSION.match(text)
        if match is None:
            raise SpecifierError(f"not a version: {text!r}")
        release = tuple(int(part) for part in match["release"].split("."))
        while len(release) > 1 and release[-1] == 0:
            release = release[:-1]
        if match["pre"]:
            tag = (1, PRE_ORDER[match["pre"].lower()] * 10_000 + int(match["pre_n"] or 0))
        elif match["post_implicit"] or match["post_n"] is not None:
            tag = (3, int(match["post_implicit"] or match["post_n"] or 0))
        elif match["dev_n"] is not None:
            tag = (0, int(match["dev_n"] or 0))
        else:
            tag = (2, 0)
        return cls(release, tag)

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, int]]:
        return self.release, self.tag


@functools.lru_cache(maxsize=256)
def parsed_version(text: str) -> Version:
    """A specifier's version is compared with thousands of candidates: it is parsed once."""
    return Version.read(text)


class Specifier(NamedTuple):
    operator: str
    version: str
    """As written, `.*` included."""

    def admits(self, candidate: Version) -> bool:
        if self.version.endswith(".*"):
            return self.prefix_match(candidate) == (self.operator == "==")
        wanted = Version.parse(self.version)
        if self.operator == "~=":
            return candidate.key >= wanted.key and self.compatible_prefix(candidate)
        compare = {
            "==": candidate.key == wanted.key,
            "===": candidate.key == wanted.key,
            "!=": candidate.key != wanted.key,
            "<=": candidate.key <= wanted.key,
            ">=": candidate.key >= wanted.key,
            "<": candidate.key < wanted.key and not self.same_release_tagged(candidate, wanted, 1),
            ">": candidate.key > wanted.key and not self.same_release_tagged(candidate, wanted, 3),
        }
        return compare[self.operator]

    @staticmethod
    def same_release_tagged(candidate: Version, wanted: Version, tag: int) -> bool:
        """PEP 440: `<5.0` admits no pre-release of 5.0, `>4.46` no post-release of 4.46 (unless the
        specifier's own version is one)."""
        return candidate.release == wanted.release and candidate.tag[0] == tag and wanted.tag[0] != tag

    def prefix_match(self, candidate: Version) -> bool:
        """`==4.46.*`: the release starts 4.46 (trailing zeros padded back)."""
        prefix = Version.parse(self.version[:-2]).release
        padded = candidate.release + (0,) * max(0, len(prefix) - len(candidate.release))
        return padded[: len(prefix)] == prefix

    def compatible_prefix(self, candidate: Version) -> bool:
        """`~=4.46.0` also means `==4.46.*`, `~=4.46` also `==4.*`."""
        written = self.version.split("+")[0]
        parts = re.match(r"\d+(?:\.\d+)*", written)
        numbers = tuple(int(part) for part in parts.group().split(".")) if parts else ()
        prefix = numbers[:-1] if len(numbers) > 1 else numbers
        padded = candidate.release + (0,) * max(0, len(prefix) - len(candidate.release))
        return padded[: len(prefix)] == prefix


class SpecifierSet(NamedTuple):
    """Comma-separated specifiers, all of which must hold (none: every version)."""

    specifiers: tuple[Specifier, ...]

    @classmethod
    def parse(cls, text: str) -> SpecifierSet:
        parts = [part.strip() for part in text.split(",")]
        if parts == [""]:
            return cls(())
        return cls(tuple(map(parse_specifier, parts)))

    def admits(self, candidate: Version) -> bool:
        return all(specifier.admits(candidate) for specifier in self.specifiers)

    def __str__(self) -> str:
        return ",".join(f"{specifier.operator}{specifier.version}" for specifier in self.specifiers)


def parse_specifier(text: str) -> Specifier:
    operator = next((op for op in OPERATORS if text.startswith(op)), "")
    version = text[len(operator) :].strip()
    if not operator or not version:
        raise SpecifierError(f"not a version specifier: {text!r} (expected e.g. '>=4.46,<4.49' or '==4.46.3')")
    if version.endswith(".*"):
        if operator not in ("==", "!="):
            raise SpecifierError(f"a wildcard needs == or !=: {text!r}")
        Version.parse(version[:-2])
    elif operator == "~=" and "." not in version:
        raise SpecifierError(f"~= needs at least two release numbers: {text!r}")
    else:
        Version.parse(version)
    return Specifier(operator, version)
