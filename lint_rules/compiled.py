"""Whether a function runs inside a compiled region (Dynamo, TorchScript, export)."""

from __future__ import annotations

import ast

from lint_rules.expressions import dotted_name

COMPILING_DECORATORS = frozenset({"compile", "jit.script", "jit.trace", "jit.script_method", "_dynamo.optimize"})
NOT_COMPILING_DECORATORS = frozenset({"compiler.disable", "_dynamo.disable", "jit.ignore", "jit.unused"})


def compiled_region_of(
    function: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool, torch_aliases: frozenset[str]
) -> str:
    """Why `function` counts as compiled ("" when it runs on the host).

    A `forward` method is what `torch.compile(model)` and `torch.export` trace; a function decorated
    with `torch.compile`, `torch.compiler.*` (but `disable`) or `torch.jit.*` (but `ignore`/`unused`)
    is compiled by its decorator.
    """
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted_name(target)
        module, _, rest = name.partition(".")
        if module not in torch_aliases or rest in NOT_COMPILING_DECORATORS:
            continue
        if rest in COMPILING_DECORATORS or rest.startswith("compiler."):
            return f"@{name}"
    if in_class and function.name == "forward":
        return "forward method"
    return ""
