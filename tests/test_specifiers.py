"""The PEP 440 subset of `lint_rules/specifiers.py` (the checker does not depend on `packaging`): each
operator and form a transformers requirement uses, with the answer `packaging` gives."""

from __future__ import annotations

import pytest

from lint_rules.specifiers import SpecifierError, SpecifierSet, Version

CASES = [
    ("==4.46.3", "4.46.3", True),
    ("==4.46.3", "4.46.4", False),
    ("==4.46", "4.46.0", True),
    ("==4.46", "4.46.1", False),
    ("==4.46.*", "4.46.9", True),
    ("==4.46.*", "4.47.0", False),
    ("==4.*", "4.57.1", True),
    ("==4.*", "5.0.0", False),
    ("!=4.47.*", "4.47.1", False),
    ("!=4.47.*", "4.48.0", True),
    ("!=4.47.1", "4.47.1", False),
    (">=4.46,<4.49", "4.46.0", True),
    (">=4.46,<4.49", "4.48.3", True),
    (">=4.46,<4.49", "4.49.0", False),
    (">=4.46,<4.49", "4.45.2", False),
    ("<=4.46", "4.46.0", True),
    ("<=4.46", "4.46.1", False),
    (">4.46", "4.46.0", False),
    (">4.46", "4.46.1", True),
    ("<4.46", "4.45.9", True),
    ("~=4.46.0", "4.46.3", True),
    ("~=4.46.0", "4.47.0", False),
    ("~=4.46", "4.57.0", True),
    ("~=4.46", "5.0.0", False),
    ("~=4.46", "4.45.0", False),
    ("==5.0.0rc1", "5.0.0rc1", True),
    ("==5.0.0rc1", "5.0.0", False),
    ("<5.0", "5.0.0rc1", False),
    ("<5.0", "4.57.0rc1", True),
    (">4.46", "4.46.post1", False),
    (">4.46.post1", "4.46.post2", True),
    (">=4.46.3", "4.46.3.post1", True),
    ("==4.46.3", "4.46.3+cpu", True),
    (">= 4.46 , < 4.49", "4.47.0", True),
    ("", "4.30.0", True),
]


@pytest.mark.parametrize(("specifier", "version", "admitted"), CASES)
def test_a_specifier_admits_what_pep_440_says(specifier: str, version: str, admitted: bool) -> None:
    assert SpecifierSet.parse(specifier.replace(" ", "")).admits(Version.parse(version)) is admitted


@pytest.mark.parametrize(("specifier", "version", "admitted"), CASES)
def test_packaging_agrees(specifier: str, version: str, admitted: bool) -> None:
    """The cases' answers are packaging's (the test environment has it; the checker does not need it)."""
    from packaging.specifiers import SpecifierSet as Reference

    assert Reference(specifier.replace(" ", "")).contains(version, prereleases=True) is admitted


@pytest.mark.parametrize("text", ["==4.4*", "4.46", ">=", "=>4.46", ">=4.46.*", "~=4", "==four", ">=4.46;<4.49"])
def test_what_is_not_a_specifier_set_is_refused(text: str) -> None:
    with pytest.raises(SpecifierError):
        SpecifierSet.parse(text)
