"""The fixer as a LibCST codemod command: the same plans, guards and safety net as
`seqlen-guard-fix`:

    python -m libcst.tool codemod -x --no-format fixers.codemod.InsertIntGuards path/
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from fixers.fixing import applicable_plans, carry_out
from fixers.guards import FixError
from lint_rules.checking import check_text
from lint_rules.settings import Settings


class InsertIntGuards(CodemodCommand):
    """The fixer as a LibCST codemod command."""

    DESCRIPTION = "Insert int guards after tensor-valued get_seq_length() bindings (seqlen-guard)."

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, source_methods: str = "") -> None:
        super().__init__(context)
        extra = tuple(name for name in source_methods.split(",") if name)
        defaults = Settings()
        self.settings = Settings(source_methods=(*defaults.source_methods, *extra), unsafe_fixes=unsafe_fixes)

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also fix inside compiled regions")
        arg_parser.add_argument("--source-methods", default="", help="extra comma-separated source method names")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        text = tree.code
        checked = check_text(self.context.filename or "<module>", text, self.settings)
        if checked.error:
            raise SkipFile(checked.error)
        plans = applicable_plans(checked.findings, self.settings.unsafe_fixes)
        if not plans:
            raise SkipFile("nothing to fix")
        try:
            return cst.parse_module(carry_out(text, plans, self.context.filename or "<module>", self.settings))
        except FixError as error:
            raise SkipFile(str(error)) from error
