"""Whether the builtins a guard calls (`if isinstance(n, torch.Tensor): n = int(n.item())`) are still
the builtins where the guard would go. A parameter, local or module-level binding of `int` or
`isinstance` (`def f(c, int=float)`, `isinstance = ...`, `from numpy import int`, a `global int` in a
function) would make the guard call something else, for ints too: no automatic fix is offered there.
Only the lines where a binding of the name may be written are read (`LocalNames`)."""

from __future__ import annotations

from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.taint import Origin

GUARD_BUILTINS = ("isinstance", "int")


def guard_builtins_refusal(origin: Origin, run: ModuleRun) -> str:
    """Why a guard after the origin's statement cannot call the builtins ("" if it can)."""
    for name in GUARD_BUILTINS:
        if is_rebound(name, origin, run):
            return f"`{name}` is bound here to something other than the builtin; the guard would call it"
    return ""


def is_rebound(name: str, origin: Origin, run: ModuleRun) -> bool:
    """A function around the guard binds the name (a parameter, a local, an import, `global` or
    `nonlocal` too), or the code the guard is written in, or the module."""
    local_names = run.facts.calls.local_names
    own = scope = origin.scope.definition
    while scope is not None:
        if (scope is own or scope.is_function) and local_names.binding_in(scope, name).kind:
            return True
        scope = scope.parent
    return local_names.binds_at_module_level(name, run.facts.tree)
