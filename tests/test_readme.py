"""The README's rule table is made from the rules; its first screen gives exactly two commands."""

from __future__ import annotations

import re
from pathlib import Path

from lint_rules.rules import rule_table

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_rule_table_matches_the_rule_documentation() -> None:
    table = README.split("<!-- rules:start -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert table == rule_table(), (
        "regenerate with: python -c 'from lint_rules.rules import rule_table; print(rule_table())'"
    )


def test_first_screen_gives_exactly_two_commands() -> None:
    section = README.split("## Two commands", 1)[1].split("##", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    assert (Path(__file__).resolve().parents[1] / ".ci/run").read_text().strip().endswith("exec bash scripts/test.sh")
