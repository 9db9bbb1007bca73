"""What a finding's text adds about the cache its length came from, for the reader who decides what
to do with it (`rules.Rule.message` writes the note): the package's own callers all pass
int-length caches, and the finding stands for a caller outside the package (`only_outside_callers`).
Notes change no finding: they are read only once the finding is made.
"""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.taint import Origin


def only_outside_callers(origin: Origin, run: ModuleRun) -> bool:
    """The source call asks a parameter of a public function whose callers in the package all pass
    int-length caches (`CallerArguments.only_package_callers_pass_int_length`)."""
    receiver = receiver_name(origin)
    definition = origin.scope.definition
    return (
        receiver is not None
        and definition is not None
        and run.caller_arguments.only_package_callers_pass_int_length(definition, receiver)
        and not in_lambda_taking(receiver, origin.call, definition.node)
    )


def receiver_name(origin: Origin) -> str | None:
    receiver = origin.call.func.value if isinstance(origin.call.func, ast.Attribute) else None
    return receiver.id if isinstance(receiver, ast.Name) else None


def in_lambda_taking(name: str, call: ast.Call, function: ast.AST) -> bool:
    """The call sits in a lambda of `function` with a parameter `name` (it asks that, not the function's)."""
    return any(
        isinstance(node, ast.Lambda)
        and name in {argument.arg for argument in ex.arguments_of(node)}
        and any(inner is call for inner in ast.walk(node.body))
        for node in ast.walk(function)
    )
