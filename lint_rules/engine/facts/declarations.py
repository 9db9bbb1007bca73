"""What a package may declare about its caches (`[tool.seqlen-guard]`), as facts the engine uses.

- `int-length-caches` (true, or globs of files): no cache whose length is a tensor reaches these
  files (an application, not a library users hand caches to). There, a `get_seq_length()` receiver
  of unknown class is an int-length cache; only a receiver the code shows to be tensor-length (a
  `StaticCache` built or annotated, an `isinstance` branch, a class inheriting a tensor length) is
  still a source. The declaration is *refused* (`DeclarationRefused`) for a file that shows
  otherwise: it builds a tensor-length cache, passes `cache_implementation="static"` (or another
  implementation that builds a `StaticCache`), or defines a tensor-length cache class. Limits: only
  the files the engine analyzes (those that mention a source method) are checked for refusal; a
  value given to `cache_implementation` must be a literal to count, and a package class built
  through its module (`caches.Mine()`) is not looked for.
- `int-length-classes` (dotted names): classes the engine cannot resolve whose length is an int; a
  receiver known to be of one (annotation, constructor, `isinstance`, a subclass) is an int-length
  cache, in every file.

The declarations enter the walk as facts about receivers (`ModuleFacts.int_length_receivers`,
`ClassFacts.declarations`), never as a filter on findings: where `int-length-caches` covers a file,
`receiver_has_int_length` (values) is true unless the receiver is shown tensor-length, which the walk
tracks there as the kind `TENSOR_LENGTH_CACHE` (taint).
"""

from __future__ import annotations

import ast
import fnmatch
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import (
    TENSOR_LENGTH,
    TENSOR_LENGTH_CACHE_IMPLEMENTATIONS,
    TENSOR_LENGTH_CLASSES,
    is_transformers_module,
)
from lint_rules.engine.facts.definitions import statements_at_lines
from lint_rules.engine.facts.module_text import defines, has_call, lines_mentioning, mentions_any

if TYPE_CHECKING:
    from lint_rules.engine.facts.module_facts import ModuleFacts

INT_LENGTH_CACHES = "int-length-caches"
INT_LENGTH_CLASSES = "int-length-classes"
"""The two declarations, by their key in `[tool.seqlen-guard]`."""
CACHE_IMPLEMENTATION = "cache_implementation"


class Declarations(NamedTuple):
    int_length_caches: tuple[str, ...] = ()
    """Globs of the files `int-length-caches` covers, each absolute (the configuration anchors them at
    its folder) or `*` (every file, for `true`)."""
    int_length_classes: frozenset[str] = frozenset()
    """Dotted names of the classes `int-length-classes` declares (`pkg.caches.Counted`)."""

    def __bool__(self) -> bool:
        return bool(self.int_length_caches or self.int_length_classes)

    def covers(self, path: str) -> bool:
        """Whether `int-length-caches` covers the file at `path`: a glob matches its real path or a
        folder it lies in (`/project/app` covers `/project/app/run.py`)."""
        if not self.int_length_caches or not path:
            return False
        if "*" in self.int_length_caches:
            return True
        real = os.path.realpath(path)
        candidates = [real]
        while os.path.dirname(candidates[-1]) != candidates[-1]:
            candidates.append(os.path.dirname(candidates[-1]))
        return any(fnmatch.fnmatchcase(candidate, glob) for glob in self.int_length_caches for candidate in candidates)

    def declares_class(self, module: str, name: str) -> bool:
        """Whether `module.name` is declared; a transformers class by its name in any transformers module
        (`transformers.HybridCache` is `transformers.cache_utils.HybridCache`)."""
        if not self.int_length_classes:
            return False
        if is_transformers_module(module):
            return any(
                declared.startswith("transformers.") and declared.rpartition(".")[2] == name
                for declared in self.int_length_classes
            )
        return f"{module}.{name}" in self.int_length_classes

    def only_classes(self) -> Declarations:
        return Declarations(int_length_classes=self.int_length_classes)


NO_DECLARATIONS = Declarations()


class DeclarationRefused(Exception):
    """A file `int-length-caches` covers shows a cache whose length is a tensor."""

    def __init__(self, line: int, shown: str) -> None:
        self.line = line
        self.shown = shown
        super().__init__(
            f"declaration refused: {INT_LENGTH_CACHES} covers this file, but line {line} {shown}; "
            f"take the file out of {INT_LENGTH_CACHES}, or fix the code"
        )


def check_refusal(facts: ModuleFacts) -> None:
    """Raises `DeclarationRefused` at the first line of a file under `int-length-caches` that builds a
    tensor-length cache, asks generate() for one, or defines such a class. From the module's facts
    (its tree, its class facts): no parse of its own."""
    causes = [*tensor_length_classes(facts), *tensor_length_constructions(facts)]
    if causes:
        line, shown = min(causes)
        raise DeclarationRefused(line, shown)


def tensor_length_classes(facts: ModuleFacts) -> Iterator[tuple[int, str]]:
    """The module's classes whose length is a tensor: inherited, or returned by their own source method
    (`returned_values.returns_a_tensor`), so only where the text names a class of the table or defines a source
    method, or a class inherits from another module of the package."""
    classes = facts.classes
    text = facts.source.text
    if not (
        mentions_any(text, sorted(TENSOR_LENGTH_CLASSES))
        or any(defines(text, method) for method in sorted(facts.source_methods))
        or classes.in_transformers_table_module()
        or any(map(classes.has_package_base, classes.classes.values()))
    ):
        return
    for name, cls in classes.classes.items():
        if classes.length_kind(cls) == TENSOR_LENGTH:
            yield cls.lineno, f"defines class {name}, a cache whose length is a tensor"


def tensor_length_constructions(facts: ModuleFacts) -> Iterator[tuple[int, str]]:
    """`StaticCache(...)` (any class whose length is a tensor) and `cache_implementation="static"` as a
    keyword, an attribute assigned or a dict entry. Only the statements on the lines that name such a
    class or `cache_implementation` are walked, found from the text."""
    text = facts.source.text
    words = [*TENSOR_LENGTH_CLASSES, *imported_tensor_length_classes(facts)]
    if CACHE_IMPLEMENTATION in text:
        words.append(CACHE_IMPLEMENTATION)
    lines = lines_mentioning(text, words, whole_words=True) if words else []
    statements = {id(s): s for found in statements_at_lines(facts.tree.body, lines).values() for s in found}
    for statement in statements.values():
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                if facts.classes.constructed_kind(node) == TENSOR_LENGTH:
                    yield node.lineno, f"builds {ex.called_name(node)}(...), a cache whose length is a tensor"
                yield from implementation_keywords(node)
            elif isinstance(node, (ast.Assign, ast.Dict)):
                yield from implementation_bindings(node)


def imported_tensor_length_classes(facts: ModuleFacts) -> list[str]:
    """The names the module imports (at its top level in any of the ways a name may be bound, or in a
    function) and calls (`Name(`, `Name.from_...`) whose class has a tensor length: an alias of a
    transformers class (`StaticCache as SC`) too. A class the module defines refuses by itself."""
    text = facts.source.text
    classes = facts.classes
    names = {*classes.imports(), *classes.alternatives(), *classes.function_imports()}
    return [
        name
        for name in sorted(names)
        if (has_call(text, name) or f"{name}.from_" in text) and classes.length_kind_of_name(name) == TENSOR_LENGTH
    ]


def implementation_keywords(call: ast.Call) -> Iterator[tuple[int, str]]:
    for keyword in call.keywords:
        if keyword.arg == CACHE_IMPLEMENTATION and builds_tensor_length_cache(keyword.value):
            yield keyword.value.lineno, implementation_shown(keyword.value)


def implementation_bindings(node: ast.Assign | ast.Dict) -> Iterator[tuple[int, str]]:
    """`config.cache_implementation = "static"` and `{"cache_implementation": "static"}`."""
    if isinstance(node, ast.Assign):
        names = [ex.dotted_name(target).rpartition(".")[2] for target in node.targets]
        if CACHE_IMPLEMENTATION in names and builds_tensor_length_cache(node.value):
            yield node.value.lineno, implementation_shown(node.value)
        return
    for key, value in zip(node.keys, node.values, strict=True):
        is_key = isinstance(key, ast.Constant) and key.value == CACHE_IMPLEMENTATION
        if is_key and builds_tensor_length_cache(value):
            yield value.lineno, implementation_shown(value)


def builds_tensor_length_cache(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in TENSOR_LENGTH_CACHE_IMPLEMENTATIONS


def implementation_shown(value: ast.expr) -> str:
    assert isinstance(value, ast.Constant)
    return f"asks for {CACHE_IMPLEMENTATION}={value.value!r}, a StaticCache, whose length is a tensor"
