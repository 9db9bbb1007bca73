"""What a one-file run imports: the modules a check of an ordinary file never uses stay unimported
(start-up time is most of a pre-commit run). Each is imported where it is needed: `tokenize` for a
coding declaration or a suppression comment inside a statement, `textwrap` for a rule's docs,
`linecache` for a JSON run's source lines, the specifier parser for a transformers range, `shutil`
for the terminal's width of `--help`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NEVER_IMPORTED_BY_A_PLAIN_CHECK = ("tokenize", "textwrap", "linecache", "shutil", "lint_rules.specifiers", "tomllib")

CHILD = """
import json, sys
from lint_rules.cli import main
status = main(["--exit-zero", sys.argv[1]])
print(json.dumps(sorted(sys.modules)))
"""


def modules_after_a_check(folder: Path, source: str) -> set[str]:
    (folder / "gen.py").write_text(source)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, "gen.py"], cwd=folder, capture_output=True, text=True, check=True
    )
    return set(json.loads(run.stdout.splitlines()[-1]))


def test_a_plain_check_leaves_the_rarely_needed_modules_unimported(tmp_path: Path) -> None:
    source = "def trim(ids, cache):\n    return ids[:, cache.get_seq_length():]\n"
    imported = modules_after_a_check(tmp_path, source)
    assert "lint_rules.engine" in imported  # it did check the file
    assert imported & set(NEVER_IMPORTED_BY_A_PLAIN_CHECK) == set()


def test_a_coding_declaration_and_a_range_import_what_they_need(tmp_path: Path) -> None:
    """Must import them: the twin of the test above, so that it cannot pass by never looking."""
    (tmp_path / "pyproject.toml").write_text('[tool.seqlen-guard]\ntarget-transformers = ">=4.46"\n')
    source = "# -*- coding: utf-8 -*-\ndef trim(ids, cache):\n    return ids[:, cache.get_seq_length():]\n"
    imported = modules_after_a_check(tmp_path, source)
    assert {"tokenize", "tomllib", "lint_rules.specifiers"} <= imported
