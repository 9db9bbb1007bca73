"""A scope the walker goes through (the module body, a class body, a function), with what its header
tells before its first statement runs; shared by the state, the uses and the walk."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import NamedTuple

from lint_rules.engine.facts.definitions import Definition

EntryKinds = Callable[[str], str]
"""What a name not yet bound in the walk holds on entry (a parameter's annotation, a class's
attribute): asked lazily, since most names never need it."""


def nothing_known(key: str) -> str:
    return ""


class Scope(NamedTuple):
    """A function (or the module, or a class body) being walked, with what its header tells."""

    name: str
    body_owner: ast.AST
    body: Sequence[ast.stmt]
    region: Callable[[], str] = str
    """Why the scope runs compiled ("" on the host); asked only when a finding needs it."""
    returns_int: bool = False
    is_source_definition: bool = False
    installed_as_source_method: bool = False
    """The module installs the function itself as a source method and as nothing else, and no other
    module can call it by name (`function_entry.installed_as_source_method`: `Cache.get_seq_length =
    _patched`): like the method's own definition, returning its value is no use (the uses are its
    callers'); a call of it by its own name still gives a source."""
    int_typed_names: frozenset[str] = frozenset()
    entry_kinds: EntryKinds = nothing_known
    """What parameters and `self.attr` are known to hold on entry (an int-length cache, a tensor)."""
    entry_parameters: frozenset[str] = frozenset()
    """The parameters `entry_kinds` may know (a rebinding in the walk ends what they held on entry)."""
    entry_not_none: frozenset[str] = frozenset()
    """The parameters that are not None on entry (`generation_hook`: the hook's `cache_position`)."""
    parameters: tuple[str, ...] = ()
    definition: Definition | None = None

    @property
    def compiled_region(self) -> str:
        return self.region()
