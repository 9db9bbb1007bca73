"""The guard's text, in one place: `fixers.guards` writes it, `fixers.verify` recognizes it.

    if isinstance(past_length, torch.Tensor):
        past_length = int(past_length.item())

The engine's narrowing (`lint_rules/engine/flow/narrowing.py`) reads any `isinstance(n, torch.Tensor)`
test, the guard's among them, on its own terms. tests/helpers_rewrite.py keeps an independent copy
of the pattern on purpose: it is the tests' oracle, not a user of this one.
"""

from __future__ import annotations

import ast


def guard_source(target: str, torch_name: str, indent: str = "    ") -> str:
    """The guard of `target` as source, `torch_name` being the module's name for torch."""
    return f"if isinstance({target}, {torch_name}.Tensor):\n{indent}{target} = int({target}.item())\n"


def guarded_name(statement: ast.stmt) -> str | None:
    """The name `statement` guards when it is exactly the guard (any name for torch), else None."""
    if not (isinstance(statement, ast.If) and isinstance(statement.test, ast.Call) and len(statement.test.args) == 2):
        return None
    target, tensor_class = statement.test.args
    if not isinstance(tensor_class, ast.Attribute):
        return None
    name = ast.unparse(target)
    expected = ast.parse(guard_source(name, ast.unparse(tensor_class.value))).body[0]
    return name if ast.dump(expected) == ast.dump(statement) else None
