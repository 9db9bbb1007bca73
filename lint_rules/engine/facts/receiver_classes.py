"""What a function shows of the class of a name it calls methods on: a parameter annotated with a
class (`h: Helper`, `h: Helper | None`), never rebound, or a local every binding of which constructs
one class (`h = Helper(...)`). Read by the calls into other modules' methods (`imported_methods`)
and by the compiled reach of methods across modules (`package_methods`)."""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.module_text import DECLARING_NODES, declared_names
from lint_rules.engine.facts.returned_values import annotated_classes

ReceiverClass = tuple[str, bool]
"""The class's name as the function writes it (`Helper`, `m.Helper`), and whether the receiver may
hold a subclass (annotated) rather than exactly that class (constructed, or the class itself)."""


def receiver_classes(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[dict[str, ReceiverClass], frozenset[str]]:
    """The function's names whose class it shows (an annotated parameter never rebound, or a local
    every binding of which is `SomeClass(...)` of one class), and every name it binds (one walk)."""
    constructed: dict[str, set[str]] = {}
    direct: set[int] = set()
    stored: list[ast.Name] = []
    declared: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    direct.add(id(target))
                    constructed.setdefault(target.id, set()).add(constructed_class(node.value))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored.append(node)
        elif isinstance(node, DECLARING_NODES):
            declared.update(declared_names(node))
    rebound = {node.id for node in stored if id(node) not in direct} | declared
    arguments = [argument for argument in ast.walk(function.args) if isinstance(argument, ast.arg)]
    parameters = {argument.arg for argument in arguments}
    known: dict[str, ReceiverClass] = {}
    for argument in arguments:
        annotated = annotated_classes(argument.annotation)
        if len(annotated) == 1 and argument.arg not in rebound and argument.arg not in constructed:
            known[argument.arg] = (annotated[0], True)
    for name, classes in constructed.items():
        if len(classes) == 1 and "" not in classes and name not in rebound and name not in parameters:
            known[name] = (classes.pop(), False)
    return known, frozenset({node.id for node in stored} | set(constructed) | declared | parameters)


def constructed_class(value: ast.expr) -> str:
    """`Helper(...)`, `m.Helper(...)`: the class's name as written ("" for anything else)."""
    if not isinstance(value, ast.Call):
        return ""
    name = ex.called_name(value)
    return name if name.rpartition(".")[2][:1].isupper() else ""


WINDOW = 80
"""How far from the name the spaces before a `(` or `|` after it, or a `:`, `|`, `[` or `"` before
it, may reach (`x:          Helper`, aligned)."""


def may_show_receivers(text: str, name: str) -> bool:
    """Cheaply, from the text: the class is constructed or annotated (`Name(`, `Name |`, `: Name`,
    `[Name`, `| Name`, `"Name`, however spaced), not only imported or subclassed."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before, after = text[max(start - WINDOW, 0) : start], text[end : end + WINDOW]
        whole_word = not (before[-1:].isalnum() or before[-1:] == "_" or after[:1].isalnum() or after[:1] == "_")
        shows = after.lstrip(" \t")[:1] in ("(", "|") or before.rstrip(" \t")[-1:] in (":", "|", "[", '"')
        if whole_word and shows:
            return True
        start = text.find(name, end)
    return False
