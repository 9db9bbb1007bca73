"""What a call may change of what the walk knows, beside its result: the attributes and entries of
the objects it runs on or is handed.

- `self.step(ids)` (or `super().step(ids)`) may rebind any attribute of `self`: what the walk bound
  to `self.cache` or `self.out`, or knows of an entry it indexes (`cache.layers[self.layer_idx]`),
  is forgotten (`State.forget_parts_of`). Calling an object an attribute holds (`self.model(...)`)
  runs that object's code, not a method of `self` (`holds_an_object`).
- An object handed to a call (`reset(self)`, `fill(out)`) may have its attributes rebound or its
  model outputs stored into; `*args`/`**kwargs` may hand on any container an entry is of.
"""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import defines_in_body
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.taint import State, key_of


def hand_on_arguments(node: ast.Call, state: State) -> None:
    """A model's outputs passed to a call may be stored into there (`fill(out)`, `setattr(out, ...)`);
    so may anything into the attributes of an object passed (`reset(self)`)."""
    if not state.kinds:
        return
    for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
        handed = argument.value if isinstance(argument, ast.Starred) else argument
        state.let_go(handed)
        key = key_of(handed)
        if key and state.knows_parts_of(key):
            state.forget_parts_of(key)
    if any(isinstance(argument, ast.Starred) for argument in node.args) or any(
        keyword.arg is None for keyword in node.keywords
    ):
        state.forget_entries()  # `model(**model_kwargs)` may hand on any container an entry is of


def run_on_object(func: ast.Attribute, state: State, module: ModuleFacts, scope: Scope) -> None:
    """`self.step(ids)` (or `super().step(ids)`) may rebind the attributes of `self`
    (`state.forget_parts_of`); calling an object an attribute holds (`self.model(...)`,
    `holds_an_object`) runs that object's code, which may rebind only its own."""
    root = "self" if ex.is_super_call(func.value) else key_of(func.value)
    if not root or not state.knows_parts_of(root):
        return
    if holds_an_object(func, module, scope):
        root = key_of(func)
    state.forget_parts_of(root)


def holds_an_object(func: ast.Attribute, module: ModuleFacts, scope: Scope) -> bool:
    """`self.model(...)` in a method of a class whose family in the module defines no method `model`
    and where every store of a `model` attribute in the module (the class body's, another object's)
    is an object a class builds without being handed `self` (`LlamaModel(config)`) or a parameter
    of the storing method (`self.model = model`): not `self.step = self._step`, nor
    `torch.compile(self._step)` or `Stepper(self)`, which may run the object's own methods."""
    cls = scope.definition.enclosing_class if scope.definition is not None else None
    if cls is None or ex.dotted_name(func.value) != "self":
        return False
    classes = module.classes
    family = [*classes.lineage(cls), *classes.subclasses(cls)]
    if any(
        defines_in_body(member, func.attr) or func.attr in classes.bindings(member).class_level for member in family
    ):
        return False
    stored = classes.attribute_stores.values.get(func.attr, [])
    return bool(stored) and all(builds_an_object_apart(store.value, store.function) for store in stored)


def builds_an_object_apart(value: ast.expr | None, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """A class's constructor not handed `self` (`LlamaModel(config)`), or a parameter of the storing
    method other than its first (`self.model = model`; not a local: `fn = self._step`)."""
    if isinstance(value, ast.Name):
        parameters = [argument.arg for argument in ex.arguments_of(function)] if function is not None else []
        return value.id in parameters[1:]
    if not isinstance(value, ast.Call) or not ex.called_name(value).rpartition(".")[2][:1].isupper():
        return False
    return not any(
        isinstance(node, ast.Name) and node.id == "self"
        for argument in [*value.args, *(keyword.value for keyword in value.keywords)]
        for node in ast.walk(argument)
    )
