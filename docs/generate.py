"""Write the generated pages of docs/: one page per rule, from `lint_rules/rules.py`, and the two
commands' `--help`.

    python docs/generate.py           # rewrite the pages
    python docs/generate.py --check   # exit 1 and name the stale pages (tests/test_docs.py runs this)

The rule pages hold what `--explain` prints plus the rule's own valid and invalid examples, the
ones tests/test_rules.py runs, so the documentation and the tests read from one place.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))

from lint_rules.formats import rule_help_markdown  # noqa: E402
from lint_rules.rules import RULES, Example, Rule  # noqa: E402

COMMANDS = (("seqlen-guard", "lint_rules"), ("seqlen-guard-fix", "fixers.rewrite"))
HELP_WIDTH = "100"


def rule_page(rule: Rule) -> str:
    parts = [rule_help_markdown(rule).rstrip("\n")]
    parts.append("## Reported (invalid examples)\n\nEach reported line ends with a comment naming its codes.")
    parts.extend(example_block(example) for example in rule.invalid)
    parts.append("## Must stay silent (valid examples)")
    parts.extend(example_block(example) for example in rule.valid)
    return "\n\n".join(parts) + "\n"


def example_block(example: Example) -> str:
    block = f"```python\n{example.source.rstrip()}\n```"
    return f"{block}\n\nWhy silent: {example.why}" if example.why else block


def rules_index() -> str:
    lines = ["# Rules", "", "Generated from `lint_rules/rules.py` by `python docs/generate.py`.", ""]
    lines += [f"- [{rule.code}: `{rule.name}`]({rule.code}.md): {rule.summary}" for rule in RULES.values()]
    return "\n".join(lines) + "\n"


def command_help(module: str) -> str:
    environment = {**os.environ, "COLUMNS": HELP_WIDTH}
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=DOCS.parent,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def cli_page() -> str:
    parts = ["# Command-line reference", "", "Generated from each command's `--help` by `python docs/generate.py`."]
    for command, module in COMMANDS:
        parts += ["", f"## `{command}` (`python -m {module}`)", "", "```text", command_help(module).rstrip(), "```"]
    return "\n".join(parts) + "\n"


def pages() -> dict[Path, str]:
    generated = {DOCS / "rules" / f"{rule.code}.md": rule_page(rule) for rule in RULES.values()}
    generated[DOCS / "rules" / "README.md"] = rules_index()
    generated[DOCS / "cli.md"] = cli_page()
    return generated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    args = parser.parse_args(argv)
    wanted = pages()
    stale = [path for path, text in wanted.items() if not path.is_file() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(DOCS.parent)} is stale: run python docs/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
