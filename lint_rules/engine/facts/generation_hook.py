"""transformers calls a model's `prepare_inputs_for_generation` with a `cache_position` that is not
None in the releases whose row says so (`ReleaseFacts.generate_passes_cache_position`: 4.46-5.3, read
in the wheels: `generate()` always sets one, and no other caller omits it; through 4.45 the
encoder-decoder wrappers call their decoder's hook without one). Where every release a project runs
on does, the hook's `cache_position` parameter is not None on entry, so `cache_position[0] if
cache_position is not None else c.get_seq_length()` never asks the cache, and an `if cache_position
is None:` branch is dead.

It holds only for an undecorated method of that name whose `cache_position` can be passed by
keyword, in a regular package where nothing else calls the hook without one. So the package's
own code is read (once per package and process): a mention of the hook other than its `def` must
be an override handing its own, never rebound `cache_position` on (`super().prepare_inputs_for_generation(...,
cache_position=cache_position)`); any other call, import, alias or string naming it turns the fact
off for the whole package, as does a package too large to scan. transformers' other callers, read in
the wheels: composite models handing their own `cache_position` on (llama4, granite_speech,
kosmos2_5); csm and janus from their loops with the generation kwargs; Whisper's no-speech detector,
which calls the hook without one (with tensors only, no cache): a package with a module that imports
a `Whisper...` name and defines a class with a base, or derives one from such a name, is not decided.
A script calling the hook itself, or a name computed at run time, is outside this fact (docs/limits.md).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_files import parsed_module, read_bytes
from lint_rules.engine.facts.package import package_files, package_top
from lint_rules.engine.facts.releases import Releases

HOOK = "prepare_inputs_for_generation"
POSITION = "cache_position"
WHISPER = "Whisper"
WHISPER_GENERATION = frozenset({"WhisperGenerationMixin", "WhisperForConditionalGeneration"})
"""The classes whose `generate` runs the no-speech detector (`generation_whisper.py`, 4.38-5.25)."""


def parameters_never_none(definition: Definition, releases: Releases, path: str) -> frozenset[str]:
    """{"cache_position"} for the hook of a class of the module at `path` where transformers always
    passes one in `releases` and nothing else in its package calls the hook; empty otherwise."""
    node = definition.node
    if (
        not is_hook_method(definition)
        or not releases
        or not all(row.generate_passes_cache_position for row in releases)
        or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        or node.decorator_list
    ):
        return frozenset()
    top = package_top(path)
    return frozenset({POSITION}) if top is not None and only_generate_calls_the_hook(top) else frozenset()


def is_hook_method(definition: Definition) -> bool:
    """A method named like the hook, directly in a class body, with a `cache_position` parameter that a
    keyword can fill."""
    node = definition.node
    parent = definition.parent
    return (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == HOOK
        and parent is not None
        and isinstance(parent.node, ast.ClassDef)
        and POSITION in {argument.arg for argument in (*node.args.args, *node.args.kwonlyargs)}
    )


@functools.lru_cache(maxsize=64)
def only_generate_calls_the_hook(top: Path) -> bool:
    """No file of the package `top` calls or names the hook except to define it or hand
    `cache_position` on, and none derives a class from a Whisper class (see the module's docstring).
    False for a package too large to scan."""
    files = package_files(top)
    if not files:
        return False
    for file in files:
        try:
            data = read_bytes(file)
        except OSError:
            return False
        names_hook = data.count(HOOK.encode()) > data.count(b"def " + HOOK.encode())
        if not names_hook and WHISPER.encode() not in data:
            continue
        tree = parsed_module(file)
        if tree is None or (names_hook and other_hook_mentions(tree)) or may_derive_from_whisper(tree):
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
        if isinstance(node, ast.alias) and HOOK in (node.name.rpartition(".")[2], node.asname):
            return True
    return False


def pass_through_calls(tree: ast.Module) -> list[ast.Call]:
    """`x.prepare_inputs_for_generation(..., cache_position=cache_position)` in an override (a method
    of a class, its `cache_position` a parameter that nothing in it rebinds or shadows)."""
    calls: list[ast.Call] = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for hook in cls.body:
            if isinstance(hook, (ast.FunctionDef, ast.AsyncFunctionDef)) and hands_position_on_unchanged(hook):
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


def hands_position_on_unchanged(hook: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An undecorated override of the hook whose `cache_position` is its own parameter (a keyword can
    fill it), bound nowhere else in it."""
    own = [*hook.args.args, *hook.args.kwonlyargs]
    if hook.name != HOOK or hook.decorator_list or POSITION not in {argument.arg for argument in own}:
        return False
    own_ids = {id(argument) for argument in ex.arguments_of(hook)}
    return not any(binds_position(node) and id(node) not in own_ids for node in ast.walk(hook))


def binds_position(node: ast.AST) -> bool:
    """The node binds or declares the name `cache_position` (a store, a parameter of a nested
    function or lambda, `global`/`nonlocal`, `except ... as`, a `match` capture, an import)."""
    if isinstance(node, ast.Name):
        return node.id == POSITION and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.arg):
        return node.arg == POSITION
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return POSITION in node.names
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == POSITION
    if isinstance(node, ast.MatchMapping):
        return node.rest == POSITION
    if isinstance(node, ast.alias):
        return (node.asname or node.name) == POSITION
    return False


def may_derive_from_whisper(tree: ast.Module) -> bool:
    """A class derives from a Whisper class that runs the no-speech detector (`WHISPER_GENERATION`),
    or from a base reached through a module named like Whisper's (`modeling_whisper.X`); or the module
    imports one of those classes or such a module (it may alias it) and defines a class with a base.
    Other Whisper classes (`WhisperPreTrainedModel`, `WhisperModel`) never run the detector."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.bases]
    if any(names_whisper_generation(ex.dotted_name(base)) for cls in classes for base in cls.bases):
        return True
    imports_whisper = any(
        isinstance(node, ast.alias) and names_whisper_generation(node.name) for node in ast.walk(tree)
    )
    return imports_whisper and bool(classes)


def names_whisper_generation(written: str) -> bool:
    """A name holding `WhisperForConditionalGeneration` or `WhisperGenerationMixin` (a subclass named
    after it, `GaudiWhisperForConditionalGeneration`), or a name through (or of) a module whose name
    says whisper (`transformers.models.whisper`, `modeling_whisper.X`)."""
    *modules, name = written.split(".")
    if any(generating in name for generating in WHISPER_GENERATION):
        return True  # `GaudiWhisperForConditionalGeneration` derives from it too
    if any(WHISPER.lower() in module.lower() for module in modules):
        return True
    return name.islower() and WHISPER.lower() in name
