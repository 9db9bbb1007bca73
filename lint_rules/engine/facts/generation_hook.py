"""`generate()` hands a model's `prepare_inputs_for_generation` a `cache_position` that is not None in
the releases whose row says so (`ReleaseFacts.generate_passes_cache_position`: 4.39-4.40 and 4.43-5.3,
read in the wheels). Where every release a project runs on does, the hook's `cache_position`
parameter is not None on entry, so `cache_position[0] if cache_position is not None else
c.get_seq_length()` never asks the cache, and an `if cache_position is None:` branch is dead.

It holds only where nothing else calls the hook without one. So the package's own code is read: a
mention of the hook other than its `def` must be an override handing its own, never rebound
`cache_position` on (`super().prepare_inputs_for_generation(..., cache_position=cache_position)`);
any other call, alias or string naming it turns the fact off for the whole package. transformers'
own callers, read in the wheels: its generation loops; composite models handing their own
`cache_position` on (llama4, granite_speech, kosmos2_5); csm and janus from their loops with the
generation kwargs; and Whisper's no-speech detector, which calls the hook without one (with tensors
only, no cache): a package with a class deriving from a `Whisper...` class is not decided. A script
calling the hook itself is outside what `generate()` does, and outside this fact (docs/limits.md).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.imports import module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.package import package_files
from lint_rules.engine.facts.releases import Releases

HOOK = "prepare_inputs_for_generation"
POSITION = "cache_position"
WHISPER = "Whisper"


def parameters_never_none(definition: Definition, releases: Releases, path: str) -> frozenset[str]:
    """{"cache_position"} for the hook of a class of the module at `path` where `generate()` always
    passes one in `releases` and no other caller is in its package; empty otherwise."""
    node = definition.node
    if (
        not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        or node.name != HOOK
        or definition.enclosing_class is None
        or not releases
        or not all(row.generate_passes_cache_position for row in releases)
        or POSITION not in {argument.arg for argument in ex.arguments_of(node)}
    ):
        return frozenset()
    if not path:
        return frozenset()
    return frozenset({POSITION}) if only_generate_calls_the_hook(package_or_file(path)) else frozenset()


def package_or_file(path: str) -> Path:
    """The top package of the module at `path`, or the file itself where it is in none."""
    module_name, root = module_name_of(path)
    top = root / module_name.split(".")[0] if root is not None and module_name else None
    return top if top is not None and top.is_dir() else Path(path)


@functools.lru_cache(maxsize=64)
def only_generate_calls_the_hook(place: Path) -> bool:
    """No file of the package (or the lone file) `place` calls or names the hook except to define it
    or hand `cache_position` on, and none derives a class from a Whisper class (see the module's
    docstring)."""
    for file in package_files(place) if place.is_dir() else (place,):
        try:
            data = read_bytes(file)
        except OSError:
            return False
        names_hook = data.count(HOOK.encode()) > data.count(b"def " + HOOK.encode())
        if not names_hook and WHISPER.encode() not in data:
            continue
        tree = parsed_module(file)
        if tree is None or (names_hook and other_hook_mentions(tree)) or derives_from_whisper(tree):
            return False
    return True


def other_hook_mentions(tree: ast.Module) -> bool:
    """The module names the hook other than in a pass-through call of an override."""
    passing_on = {id(call.func) for call in pass_through_calls(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == HOOK and id(node) not in passing_on:
            return True
        if isinstance(node, ast.Name) and node.id == HOOK:
            return True
        if isinstance(node, ast.Constant) and node.value == HOOK:
            return True
    return False


def pass_through_calls(tree: ast.Module) -> list[ast.Call]:
    """`x.prepare_inputs_for_generation(..., cache_position=cache_position)` in an override of the
    hook that never rebinds `cache_position`."""
    calls: list[ast.Call] = []
    for hook in ast.walk(tree):
        if not isinstance(hook, (ast.FunctionDef, ast.AsyncFunctionDef)) or hook.name != HOOK:
            continue
        if any(isinstance(node, ast.Name) and node.id == POSITION and not isinstance(node.ctx, ast.Load)
               for node in ast.walk(hook)):  # fmt: skip
            continue
        calls.extend(
            node
            for node in ast.walk(hook)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == HOOK
            and any(
                keyword.arg == POSITION and isinstance(keyword.value, ast.Name) and keyword.value.id == POSITION
                for keyword in node.keywords
            )
        )
    return calls


def derives_from_whisper(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ClassDef) and any(WHISPER in ex.dotted_name(base) for base in node.bases)
        for node in ast.walk(tree)
    )
