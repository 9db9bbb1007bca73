"""The user's documentation: README.md stays a short guide, docs/ stays in step with the rules and
the commands' --help, every snippet names the one canonical location, and no page speaks of this
project's internal history (issue numbers, commit ids, "this machine")."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
USER_PAGES = {
    path.relative_to(REPO).as_posix(): path.read_text()
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
}
CANONICAL = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Repository"]


def test_generated_pages_match_the_rules_and_the_help() -> None:
    result = subprocess.run(
        [sys.executable, "docs/generate.py", "--check"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_the_readme_is_a_short_guide() -> None:
    words = len(re.sub(r"<!-- rules:start -->.*?<!-- rules:end -->", "", README, flags=re.DOTALL).split())
    assert words <= 2000, f"README.md has {words} words outside the generated rule table; move depth to docs/"


def test_every_page_the_readme_links_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links, "the README points to docs/"
    assert [link for link in links if not (REPO / link).exists()] == []


@pytest.mark.parametrize("page", sorted(USER_PAGES))
def test_no_internal_history_in_user_docs(page: str) -> None:
    text = USER_PAGES[page]
    assert not re.search(r"\bissue \d+|\bthis (2-core )?machine\b", text, re.IGNORECASE), page
    assert not re.search(r"\b(at|engine of|engine at) [0-9a-f]{7,40}\b", text), page


@pytest.mark.parametrize("page", sorted(USER_PAGES))
def test_every_snippet_names_the_canonical_location(page: str) -> None:
    """One substitution makes every snippet pasteable: the only repository address is the canonical one."""
    text = USER_PAGES[page]
    assert not re.search(r"OWNER|<its URL>|<URL|@REV\b", text), page
    for address in re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", text):
        assert address == CANONICAL, (page, address)
    for action in re.findall(r"uses: ([\w.-]+/[\w.-]+)@", text):
        if not action.startswith(("actions/", "github/")):
            assert f"https://github.com/{action}" == CANONICAL, (page, action)
