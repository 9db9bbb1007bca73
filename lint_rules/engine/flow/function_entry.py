"""A function's scope: what its header and class tell before its first statement runs (which
scopes are walked is the run's: `module_run`)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts import generation_hook
from lint_rules.engine.facts.attribute_stores import unless_shadowed
from lint_rules.engine.facts.caches import INT_LENGTH
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_text import bound_names
from lint_rules.engine.facts.package import named_elsewhere, package_top
from lint_rules.engine.flow.scope import EntryKinds, Scope
from lint_rules.engine.flow.taint import INT_LENGTH_CACHE, TENSOR, TENSOR_LENGTH_CACHE

AttributeKinds = Callable[[ast.ClassDef], dict[str, str]]
"""What `self.attr` holds in a class (see `class_attribute_kinds`), computed once per class by the run."""
CallerKinds = Callable[[Definition, str], str]
"""What every caller of a function passes for a parameter (see `caller_arguments`), asked by the run."""


def nothing_from_callers(definition: Definition, parameter: str) -> str:
    return ""


def function_scope(
    definition: Definition,
    module: ModuleFacts,
    attribute_kinds: AttributeKinds,
    from_callers: CallerKinds = nothing_from_callers,
) -> Scope:
    node = definition.node
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    arguments = ex.arguments_of(node)
    int_names = {argument.arg for argument in arguments if ex.is_int_annotation(argument.annotation)}
    cls = definition.enclosing_class
    if cls is not None:
        int_names |= {f"self.{name}" for name in int_annotated_attributes(cls)}
    return Scope(
        name=definition.qualname,
        body_owner=node,
        body=node.body,
        region=functools.partial(module.calls.compiled_region, definition),
        returns_int=ex.is_int_annotation(node.returns),
        is_source_definition=node.name.lstrip("_") in module.source_methods,
        installed_as_source_method=ex.is_int_annotation(node.returns)
        and installed_as_source_method(definition, module),
        int_typed_names=frozenset(int_names),
        entry_kinds=entry_kinds(
            arguments,
            cls,
            module,
            attribute_kinds,
            functools.partial(from_callers, definition),
            functools.partial(module.names_around, definition),
        ),
        entry_parameters=frozenset(argument.arg for argument in arguments),
        entry_not_none=generation_hook.parameters_never_none(definition, module.releases, module.path),
        parameters=tuple(argument.arg for argument in arguments if argument.arg not in ("self", "cls")),
        definition=definition,
    )


def installed_as_source_method(definition: Definition, module: ModuleFacts) -> bool:
    """The module installs the function itself as a source method and as nothing else, nothing else in
    the module binds its name (the name installed is then surely this function), and no other module
    can call it by its name, trusting its `-> int`."""
    installed = module.calls.installed_as(definition.name)
    if not installed or not installed <= module.source_methods or not called_only_here(definition, module):
        return False
    bindings = (name for node in ast.walk(module.tree) for name in bound_names(node))
    return sum(name == definition.name for name in bindings) == 1


def called_only_here(definition: Definition, module: ModuleFacts) -> bool:
    """Only the module can call the function by its name: it is nested in a function, or a private
    module-level function of a package that no other module of the package names."""
    if definition.parent is not None:
        return definition.parent.is_function
    path = module.path
    return definition.name.startswith("_") and package_top(path) is not None and not named_elsewhere(path, definition)


def entry_kinds(
    arguments: list[ast.arg],
    cls: ast.ClassDef | None,
    module: ModuleFacts,
    attribute_kinds: AttributeKinds,
    from_callers: Callable[[str], str],
    shadowing: Callable[[], frozenset[str]] = frozenset,
) -> EntryKinds:
    """A parameter annotated with an int-length cache class (where `int-length-caches` is declared, also
    one annotated with a tensor-length class), or one every caller of a private or nested function
    passes an int-length cache for (`from_callers`); `self.attr` as the class builds or annotates it
    (longer chains, `self._parent._cache`, are typed by `attribute_receivers` from the module's stores).
    An annotation naming what `shadowing` gives (the names around the function) says nothing."""
    annotations = {argument.arg: argument.annotation for argument in arguments if argument.annotation is not None}
    parameters = {argument.arg for argument in arguments}
    known: dict[str, str] = {}

    def kind(key: str) -> str:
        if key not in known:
            known[key] = ""
            if key in annotations:
                known[key] = annotated_cache_kind(annotations[key], module)
                if known[key] and unless_shadowed(annotations[key], shadowing()) is None:
                    known[key] = ""
            elif cls is not None and key.startswith("self.") and key.count(".") == 1:
                known[key] = attribute_kinds(cls).get(key, "")
            if not known[key] and key in parameters and not module.int_length_receivers:
                known[key] = from_callers(key)
        return known[key]

    return kind


def class_attribute_kinds(cls: ast.ClassDef, module: ModuleFacts) -> dict[str, str]:
    kinds = {f"self.{attribute}": TENSOR for attribute in module.classes.tensor_attributes(cls)}
    for attribute, annotation in module.classes.attribute_annotations(cls).items():
        kind = annotated_cache_kind(annotation, module)
        if kind:
            kinds[f"self.{attribute}"] = kind
    return kinds


def annotated_cache_kind(annotation: ast.expr, module: ModuleFacts) -> str:
    """INT_LENGTH_CACHE for an annotation that admits only int-length classes; where `int-length-caches`
    is declared, TENSOR_LENGTH_CACHE for one that admits a tensor-length class (`StaticCache | None`)."""
    if module.classes.annotation_kind(annotation) == INT_LENGTH:
        return INT_LENGTH_CACHE
    if module.int_length_receivers and module.classes.admits_tensor_length(annotation):
        return TENSOR_LENGTH_CACHE
    return ""


def int_annotated_attributes(node: ast.ClassDef) -> Iterator[str]:
    for statement in node.body:
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and ex.is_int_annotation(statement.annotation)
        ):
            yield statement.target.id
