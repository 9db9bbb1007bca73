"""A function's summary, and what the walk asks of a module's summaries (`summaries.Summaries`
answers): the walk reads them through the run without importing the module that computes them."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import NamedTuple, Protocol

from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.uses import Use


class Summary(NamedTuple):
    uses: tuple[Use, ...] = ()
    """Every use the walk found (those of real sources are the function's findings)."""
    parameter_uses: Mapping[str, Use] = {}
    parameters_returned: frozenset[str] = frozenset()
    returns_source: bool = False

    @property
    def signature(self) -> tuple[frozenset[str], frozenset[str], bool]:
        """What callers see of the summary."""
        return frozenset(self.parameter_uses), self.parameters_returned, self.returns_source


EMPTY = Summary()


class SummaryTable(Protocol):
    """A module's summaries, computed on demand."""

    source_functions: frozenset[str]
    """Names of the module's functions known to return a source's value."""

    def of(self, definition: Definition, seeded: bool = False) -> Summary: ...

    def callees(self, call: ast.Call, caller: Scope) -> list[Definition]: ...

    def returns_source(self, callee: Definition) -> bool: ...

    def bind_arguments(self, call: ast.Call, callee: Definition) -> list[tuple[ast.expr, str]]: ...
