"""What a transformers release's `cache_utils.py` says, read with `ast` from its wheel (no torch, no
import): the facts `lint_rules/engine/facts/releases.py` records per release, computed from the source so
that tests/test_release_table.py can compare them.

A class's length kind comes from the return expressions of the `get_seq_length` it defines or inherits:
a `.sum()` (the occupied slots of a static cache), an attribute assigned a `torch.tensor(...)`, or a
layer the cache builds whose length is a tensor make it "tensor"; a shape entry, an int constant, `int(...)`,
or an attribute only ever assigned such values (counters: `self._seen_tokens += key_states.shape[-2]`)
make it "int"; `return None` alone makes it "none".
"""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from lint_rules.engine.facts.releases import INT_LENGTH, NONE_LENGTH, TENSOR_LENGTH

TENSOR_FACTORIES = frozenset({"tensor", "zeros", "ones", "full", "empty", "as_tensor"})
INT_BUILTINS = frozenset({"int", "abs", "len", "min", "max"})
"""Builtins that give an int from ints (`self.cumulative_length_int -= abs(tokens_to_remove)`)."""


CACHE_FILES = ("cache_utils.py", "generation/utils.py")
NAMING_FILES = ("models/llama/modeling_llama.py", "modeling_outputs.py", "utils/generic.py")
"""Where a release names the keyword a model takes its cache by and the field its outputs hold it in."""


def wheel_sources(version: str, cache: Path, names: Iterable[str] = CACHE_FILES) -> dict[str, str]:
    """The modules `names` (paths under `transformers/`) of the release's wheel, downloaded into `cache` once."""
    with zipfile.ZipFile(wheel_path(version, cache)) as archive:
        return {name: archive.read(f"transformers/{name}").decode() for name in names}


def wheel_path(version: str, cache: Path) -> Path:
    wheel = next(cache.glob(f"transformers-{version}-*.whl"), None)
    if wheel is None:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache)]
        subprocess.run([*command, f"transformers=={version}"], check=True)
        wheel = next(cache.glob(f"transformers-{version}-*.whl"))
    return wheel


def wheel_modules(version: str, cache: Path) -> Iterator[tuple[str, bytes]]:
    """Every module of the release's wheel: (path in the wheel, bytes)."""
    with zipfile.ZipFile(wheel_path(version, cache)) as archive:
        for name in archive.namelist():
            if name.endswith(".py"):
                yield name, archive.read(name)


class CacheModule:
    def __init__(self, text: str) -> None:
        self.tree = ast.parse(text)
        self.classes = {node.name: node for node in self.tree.body if isinstance(node, ast.ClassDef)}
        self.aliases = {
            node.targets[0].id: node.value.id
            for node in self.tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.classes
        }
        self.mappings = {
            node.targets[0].id: node.value
            for node in self.tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Dict)
        }

    def has_class(self, name: str) -> bool:
        return name in self.classes or name in self.aliases

    def chain(self, name: str) -> list[ast.ClassDef]:
        """The class and its bases defined in the module, nearest first (depth first, as the MRO of
        these single-inheritance hierarchies)."""
        name = self.aliases.get(name, name)
        cls = self.classes.get(name)
        if cls is None:
            return []
        found = [cls]
        for base in cls.bases:
            if isinstance(base, ast.Name):
                found += [c for c in self.chain(base.id) if c not in found]
        return found

    def method(self, name: str, method: str) -> ast.FunctionDef | None:
        for cls in self.chain(name):
            for node in cls.body:
                if isinstance(node, ast.FunctionDef) and node.name == method:
                    return node
        return None

    def defines_anywhere(self, method: str) -> bool:
        return any(
            isinstance(node, ast.FunctionDef) and node.name == method
            for cls in self.classes.values()
            for node in cls.body
        )

    def self_assignments(self, classes: list[ast.ClassDef], attribute: str) -> list[ast.expr]:
        """What `self.attribute = ...` / `+=` bind in the methods of `classes`."""
        values: list[ast.expr] = []
        for cls in classes:
            for node in ast.walk(cls):
                targets: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    targets, value = [node.target], node.value
                values += [value for target in targets if is_self_attribute(target, attribute)]
        return values

    # ----- length kinds -----------------------------------------------------------------------

    def length_kind(self, name: str, seen: frozenset[str] = frozenset()) -> str:
        function = self.method(name, "get_seq_length")
        if function is None or name in seen:
            return ""
        returns = [node.value for node in ast.walk(function) if isinstance(node, ast.Return)]
        kinds = {self.expression_kind(value, name, function, seen | {name}) for value in returns}
        return combined(kinds)

    def expression_kind(
        self, node: ast.expr | None, owner: str, function: ast.FunctionDef, seen: frozenset[str]
    ) -> str:
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return NONE_LENGTH
        if isinstance(node, ast.Constant):
            return INT_LENGTH if isinstance(node.value, int) else ""
        if isinstance(node, ast.Call):
            return self.call_kind(node, owner, function, seen)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return INT_LENGTH
        if isinstance(node, ast.IfExp):
            return combined({self.expression_kind(arm, owner, function, seen) for arm in (node.body, node.orelse)})
        if isinstance(node, ast.BinOp):
            return combined({self.expression_kind(side, owner, function, seen) for side in (node.left, node.right)})
        if isinstance(node, ast.Name):
            return combined(
                {self.expression_kind(value, owner, function, seen) for value in local_values(function, node.id)}
            )
        if isinstance(node, ast.Attribute):
            return self.attribute_kind(node, owner, seen)
        return ""

    def call_kind(self, node: ast.Call, owner: str, function: ast.FunctionDef, seen: frozenset[str]) -> str:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "int":
            return INT_LENGTH
        if not isinstance(func, ast.Attribute):
            return ""
        if func.attr in ("sum", *TENSOR_FACTORIES):
            return TENSOR_LENGTH
        if func.attr == "get_seq_length" and "layers" in ast.unparse(func.value):
            return self.built_layers_kind(owner, seen)
        if func.attr == "to":
            return self.expression_kind(func.value, owner, function, seen)
        return ""

    def attribute_kind(self, node: ast.Attribute, owner: str, seen: frozenset[str]) -> str:
        """`self.counter`: what the class binds it to; `other.counter`: what any class binds it to. A
        `torch.tensor(...)` makes it a tensor; values that are no call (constants, shape entries, sums
        of them, an int parameter, `int(...)`, `abs(...)`) an int; any other call leaves it unknown."""
        own = isinstance(node.value, ast.Name) and node.value.id == "self"
        classes = self.chain(owner) if own else list(self.classes.values())
        kinds = set()
        for value in self.self_assignments(classes, node.attr):
            if isinstance(value, ast.Attribute) and value.attr == node.attr:
                continue  # copied from the same counter of another cache
            if isinstance(value, ast.Call):
                factory = isinstance(value.func, ast.Attribute) and value.func.attr in TENSOR_FACTORIES
                coerced = isinstance(value.func, ast.Name) and value.func.id in INT_BUILTINS
                kinds.add(TENSOR_LENGTH if factory else INT_LENGTH if coerced else "")
            else:
                kinds.add(INT_LENGTH)
        return combined(kinds)

    def built_layers_kind(self, owner: str, seen: frozenset[str]) -> str:
        """A cache that asks its layers: the kinds of the layer classes it names (directly or through a
        module-level mapping it names) that have a length."""
        names: set[str] = set()
        for cls in self.chain(owner):
            for node in ast.walk(cls):
                if isinstance(node, ast.Name) and node.id in self.mappings:
                    names |= {v.id for v in self.mappings[node.id].values if isinstance(v, ast.Name)}
                elif isinstance(node, ast.Name) and node.id.endswith("Layer"):
                    names.add(node.id)
        kinds = {self.length_kind(name, seen) for name in names if self.has_class(name)}
        kinds.discard("")
        return combined(kinds)

    def attributes_returned_by_value(self, name: str) -> set[str]:
        """The `self.x` the class's `get_seq_length` returns by value: every `self.x` in its return
        expressions (and the values of the locals they name) but those read through `.shape` and the
        `layers` it delegates to."""
        function = self.method(name, "get_seq_length")
        if function is None:
            return set()
        returned = [node.value for node in ast.walk(function) if isinstance(node, ast.Return) and node.value]
        returned += [
            value for node in returned if isinstance(node, ast.Name) for value in local_values(function, node.id)
        ]
        found: set[str] = set()
        for expression in returned:
            through_shape = {
                id(inner)
                for node in ast.walk(expression)
                if isinstance(node, ast.Attribute) and node.attr == "shape"
                for inner in ast.walk(node.value)
            }
            found |= {
                node.attr
                for node in ast.walk(expression)
                if is_self_attribute(node, getattr(node, "attr", "")) and id(node) not in through_shape
            }
        return found - {"layers"}

    def layers_built_without_config_kind(self, name: str) -> str:
        """The combined length kind of the layer classes the class's `__init__` can build when its
        `config` is None: those it names outside the body of an `if config is not None:`."""
        init = self.method(name, "__init__")
        if init is None:
            return ""
        names = {node.id for node in walk_outside_config_branches(init) if isinstance(node, ast.Name)}
        kinds = {self.length_kind(layer) for layer in names if layer.endswith("Layer") and self.has_class(layer)}
        return combined(kinds)


def walk_outside_config_branches(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk`, skipping the body (not the `else`) of every `if config is not None:`."""
    yield node
    if isinstance(node, ast.If) and ast.unparse(node.test) == "config is not None":
        children: list[ast.AST] = [node.test, *node.orelse]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from walk_outside_config_branches(child)


def is_self_attribute(target: ast.expr, attribute: str) -> bool:
    return (
        isinstance(target, ast.Attribute)
        and target.attr == attribute
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    )


def combined(kinds: set[str]) -> str:
    """A tensor if any may be one; an int or None only if all are."""
    if TENSOR_LENGTH in kinds:
        return TENSOR_LENGTH
    return kinds.pop() if len(kinds) == 1 else ""


def local_values(function: ast.FunctionDef, name: str) -> list[ast.expr]:
    return [
        node.value
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]


def passes_cache_position(generation_utils: str) -> bool:
    """`generate()` sets `model_kwargs["cache_position"]` for the model's inputs, and never to None."""
    values = [
        node.value
        for node in ast.walk(ast.parse(generation_utils))
        if isinstance(node, ast.Assign) and any(map(is_cache_position_entry, node.targets))
    ]
    return bool(values) and not any(isinstance(value, ast.Constant) and value.value is None for value in values)


HOOK = "prepare_inputs_for_generation"
NOT_TORCH = ("_tf_", "_flax_", "tf_utils.py", "flax_utils.py")
"""TensorFlow and Flax modules: their hooks never see a torch cache."""


def hook_calls_without_position(modules: Iterable[tuple[str, bytes]]) -> list[str]:
    """The calls `x.prepare_inputs_for_generation(...)` of torch modules that name no `cache_position`
    and spread no `**kwargs` (a spread hands on the generation loop's kwargs, which hold one; Whisper's
    no-speech detector, which spreads only tensors, is the engine's own exception)."""
    found = []
    for name, data in modules:
        if HOOK.encode() not in data or any(part in name for part in NOT_TORCH):
            continue
        for node in ast.walk(ast.parse(data)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == HOOK
                and not any(keyword.arg in (None, "cache_position") for keyword in node.keywords)
            ):
                found.append(f"{name}:{node.lineno}")
    return found


def is_cache_position_entry(target: ast.expr) -> bool:
    """`model_kwargs["cache_position"]`."""
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id == "model_kwargs"
        and isinstance(target.slice, ast.Constant)
        and target.slice.value == "cache_position"
    )


def cache_names(sources: dict[str, str]) -> dict[str, bool]:
    """Which names of the cache a release's `NAMING_FILES` use: `LlamaModel.forward`'s parameter
    (`past_key_values` or `cache`), whether it renames `past_key_values=` to `cache=`, the fields of
    `BaseModelOutputWithPast`, and whether every `ModelOutput` answers `.past_key_values`."""
    llama = _class_of(sources["models/llama/modeling_llama.py"], "LlamaModel")
    forward = next(node for node in llama.body if isinstance(node, ast.FunctionDef) and node.name == "forward")
    parameters = {argument.arg for argument in forward.args.args}
    renames = any(
        isinstance(decorator, ast.Call)
        and ast.unparse(decorator.func) == "deprecate_kwarg"
        and [ast.literal_eval(argument) for argument in decorator.args[:1]] == ["past_key_values"]
        and any(
            keyword.arg == "new_name" and ast.literal_eval(keyword.value) == "cache" for keyword in decorator.keywords
        )
        for decorator in forward.decorator_list
    )
    outputs = _class_of(sources["modeling_outputs.py"], "BaseModelOutputWithPast")
    fields = {
        node.target.id for node in outputs.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    model_output = _class_of(sources["utils/generic.py"], "ModelOutput")
    properties = {node.name for node in model_output.body if isinstance(node, ast.FunctionDef)}
    return {
        "parameter past_key_values": "past_key_values" in parameters,
        "parameter cache": "cache" in parameters,
        "renames the keyword": renames,
        "field past_key_values": "past_key_values" in fields,
        "field cache": "cache" in fields,
        "property past_key_values": "past_key_values" in properties,
    }


def _class_of(text: str, name: str) -> ast.ClassDef:
    return next(node for node in ast.parse(text).body if isinstance(node, ast.ClassDef) and node.name == name)
