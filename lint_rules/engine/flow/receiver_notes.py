"""What a finding's text adds about the cache its length came from, for the reader who decides what
to do with it (`rules.Rule.message` writes the notes):

- the package's own callers all pass int-length caches, and the finding stands for a caller outside
  the package (`only_outside_callers`);
- the receiver is a parameter annotated only with classes of the package whose length the engine
  cannot show to be an int (`own_classes_of_receiver`): a class chosen at import time, a counter
  that starts at a public constructor's argument. The note names each class as `int-length-classes`
  takes it. A parameter the function binds again, annotated with any class of transformers or of
  another package, or with a class shown to count a tensor, gets no note: the finding may stand for
  that value, or the class needs a fix, not a declaration.

Notes change no finding: they are read only once the finding is made.
"""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_receivers import annotated
from lint_rules.engine.facts.caches import is_transformers_module
from lint_rules.engine.facts.changers import rebound_parameters
from lint_rules.engine.facts.classes import ClassFacts
from lint_rules.engine.facts.imports import RE_EXPORT_HOPS, re_export_source
from lint_rules.engine.facts.releases import TENSOR_LENGTH
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


def own_classes_of_receiver(origin: Origin, run: ModuleRun) -> tuple[str, ...]:
    """The dotted names (`pkg.models.utils.Cache`) of the classes that annotate the parameter the
    source call asks, when every class the annotation admits is one the package defines; () otherwise
    (the function's body is looked at last: most parameters are annotated with transformers' `Cache`)."""
    receiver = receiver_name(origin)
    definition = origin.scope.definition
    function = definition.node if definition is not None else None
    if receiver is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    parameter = next((argument for argument in ex.arguments_of(function) if argument.arg == receiver), None)
    classes = run.facts.classes
    types = annotated(classes, parameter.annotation) if parameter is not None else None
    if not types:
        return ()
    paths = tuple(package_class_path(classes, name) for _, name in sorted(types, key=lambda typed: typed[1]))
    if not all(paths) or any(classes.length_kind_of_name(name) == TENSOR_LENGTH for _, name in types):
        return ()  # a class shown to count a tensor needs no declaration, but a fix
    if in_lambda_taking(receiver, origin.call, function) or receiver in rebound_parameters(function):
        return ()
    return paths


def package_class_path(facts: ClassFacts, name: str) -> str:
    """`module.Class` for the class that `name`, as the module of `facts` writes it, stands for, when
    every binding of it is a class statement of a module of the same top package (an import followed
    through the package's `__init__.py` files); "" for anything else (a transformers class, a name
    bound otherwise or in more than one way, a dotted name)."""
    module_name, root = facts.module
    if not module_name or "." in name or name in facts.alternatives():
        return ""
    if name in facts.classes:
        return f"{module_name}.{name}"
    imported = facts.imports().get(name)
    if imported is None:
        return ""
    module, original = re_export_source(imported, root, RE_EXPORT_HOPS)
    if module.partition(".")[0] != module_name.partition(".")[0] or is_transformers_module(module):
        return ""
    other = facts.other_module(module)
    if other is None or not binds_only_classes(other, original):
        return ""
    return f"{module}.{original}"


def binds_only_classes(facts: ClassFacts, name: str) -> bool:
    """Every binding of `name` that may hold in the module is one of its class statements."""
    alternatives = facts.alternatives().get(name)
    if alternatives is None:
        return name in facts.classes
    return all(isinstance(binding, ast.ClassDef) for binding in alternatives)


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
