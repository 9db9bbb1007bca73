"""Whether a function is itself a compiled region (Dynamo, TorchScript, export).

What a compiled region calls is compiled too: `callgraph.CallGraph.compiled_region` follows that.
"""

from __future__ import annotations

import ast

from lint_rules.engine.facts.caches import CACHE_BASE_CLASSES, CACHE_METHODS_CALLED_FROM_FORWARD
from lint_rules.engine.facts.expressions import dotted_name

COMPILING_DECORATORS = frozenset({"compile", "jit.script", "jit.trace", "jit.script_method", "_dynamo.optimize"})
NOT_COMPILING_DECORATORS = frozenset({"compiler.disable", "_dynamo.disable", "jit.ignore", "jit.unused"})


def compiled_region_of(
    function: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool, torch_aliases: frozenset[str]
) -> str:
    """Why `function` counts as compiled ("" when nothing in its own header says so).

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
    if not in_class and is_replacement_forward(function):
        return "a replacement `forward` (a function taking `self`, named as a forward)"
    return ""


def is_torchscript(region: str) -> bool:
    """The region (or the one it was reached from) is a `@torch.jit.*` function: TorchScript, where
    `torch.compiler.is_compiling()` is False."""
    return ".jit." in region


def is_replacement_forward(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def forward(self, ...)` or `def gaudi_llama_forward(self, ...)` outside a class body: patching
    code installs these as a module's `forward` (`Model.forward = fn`), so they run compiled. (A
    method named so, such as a pipeline's `_forward`, is compiled only when a compiled region calls it.)"""
    arguments = [*function.args.posonlyargs, *function.args.args]
    named_as_forward = function.name == "forward" or function.name.endswith("_forward")
    return named_as_forward and bool(arguments) and arguments[0].arg == "self"


def is_never_compiled(function: ast.FunctionDef | ast.AsyncFunctionDef, torch_aliases: frozenset[str]) -> bool:
    """`@torch.compiler.disable`, `@torch._dynamo.disable`, `@torch.jit.ignore`/`unused`: Dynamo runs
    the function eagerly even when a compiled region calls it."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        module, _, rest = dotted_name(target).partition(".")
        if module in torch_aliases and rest in NOT_COMPILING_DECORATORS:
            return True
    return False


def cache_protocol_region(function: ast.FunctionDef | ast.AsyncFunctionDef, lineage: list[ast.ClassDef]) -> str:
    """A cache method that attention and mask code call from a model's `forward` (`update`,
    `get_mask_sizes`, ...), in a class that is, or derives from, a transformers cache class."""
    if function.name not in CACHE_METHODS_CALLED_FROM_FORWARD or not is_cache_class(lineage):
        return ""
    return f"`{function.name}` of a cache class, called by attention and mask code inside a model's forward"


def is_cache_class(lineage: list[ast.ClassDef]) -> bool:
    names = {cls.name for cls in lineage}
    names |= {dotted_name(base).rpartition(".")[2] for cls in lineage for base in cls.bases}
    return bool(names & CACHE_BASE_CLASSES)
