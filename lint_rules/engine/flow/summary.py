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
    shares_source: frozenset[str] = frozenset()
    """The names the function declares `nonlocal` or `global` and binds to a source's value: after a
    call of it they may hold one (`def f(): nonlocal n; n = c.get_seq_length()`)."""

    @property
    def signature(self) -> Signature:
        """What callers see of the summary."""
        return frozenset(self.parameter_uses), self.parameters_returned, self.returns_source, self.shares_source


EMPTY = Summary()

Signature = tuple[frozenset[str], frozenset[str], bool, frozenset[str]]


class SummaryTable(Protocol):
    """A module's summaries, computed on demand."""

    source_functions: frozenset[str]
    """Names of the module's functions known to return a source's value."""

    def of(self, definition: Definition, seeded: bool = False) -> Summary: ...

    def callees(self, call: ast.Call, caller: Scope) -> list[Definition]: ...

    def returns_source(self, callee: Definition) -> bool: ...

    def shares_source(self, callee: Definition) -> frozenset[str]: ...

    def bind_arguments(self, call: ast.Call, callee: Definition) -> list[tuple[ast.expr, str]]: ...
