"""Whether the builtins a guard calls (`if isinstance(n, torch.Tensor): n = int(n.item())`) are still
the builtins where the guard would go. A parameter, local or module-level binding of `int` or
`isinstance` (`def f(c, int=float)`, `isinstance = ...`, `from numpy import int`, a `global int` in a
function) would make the guard call something else, for ints too: no automatic fix is offered there.
A module with a star import, `globals()` or `builtins.` anywhere gets no guard either. Only the lines
where a binding of the name may be written are read (`LocalNames`)."""

from __future__ import annotations

import functools
import re

from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.taint import Origin

GUARD_BUILTINS = ("isinstance", "int")

BINDS_BY_HAND = (re.compile(r"import[ \t]*\*"), re.compile(r"globals[ \t]*\("), re.compile(r"builtins\."))
"""A star import, `globals()` or the `builtins` module may bind any name: no guard in such a module.
(Each pattern starts with its literal, which `re` searches for first.)"""


def guard_builtins_refusal(origin: Origin, run: ModuleRun) -> str:
    """Why a guard after the origin's statement cannot call the builtins ("" if it can)."""
    for name in GUARD_BUILTINS:
        if is_rebound(name, origin, run):
            return f"`{name}` is bound here to something other than the builtin; the guard would call it"
    return ""


@functools.lru_cache(maxsize=8)
def binds_by_hand(text: str) -> bool:
    return any(pattern.search(text) for pattern in BINDS_BY_HAND)


def is_rebound(name: str, origin: Origin, run: ModuleRun) -> bool:
    """A function around the guard binds the name (a parameter, a local, an import, `global` or
    `nonlocal` too), or the code the guard is written in, or the module."""
    if binds_by_hand(run.facts.source.text):
        return True
    local_names = run.facts.calls.local_names
    own = scope = origin.scope.definition or run.facts.definitions.of(origin.scope.body_owner)
    while scope is not None:
        if (scope is own or scope.is_function) and local_names.binding_in(scope, name).kind:
            return True
        scope = scope.parent
    return local_names.binds_at_module_level(name, run.facts.tree)
