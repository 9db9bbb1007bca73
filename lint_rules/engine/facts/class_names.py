"""What a name written in a module stands for where one of its classes is built or read: the
module's text in the form Python reads names in (`own_str`), a scope's own binding of a constructor's
name (`bound_in_a_scope`), a patch of the name as an attribute (`stored_as_an_attribute`), the
module's lines that name `layers`, and the names bound in scopes other than the module's.
`ClassBodies` builds on it."""

from __future__ import annotations

import ast
import functools
import unicodedata

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import names_bound_in_scopes, scope_bindings
from lint_rules.engine.facts.caches import is_transformers_module
from lint_rules.engine.facts.definitions import statements_at_lines
from lint_rules.engine.facts.imports import imported_names
from lint_rules.engine.facts.layer_changes import LayerChanges
from lint_rules.engine.facts.module_names import ModuleNames
from lint_rules.engine.facts.module_text import lines_mentioning, lines_of_offsets, lines_that_may_bind, occurrences


class ClassNames(ModuleNames):
    """The names of one module, as its classes' facts ask about them."""

    def own_str(self) -> str | None:
        """The module's text (`own_text`) as a string for searches of names, in the NFKC form Python
        reads identifiers in (`ｓelf` is `self`)."""
        return self._own_str

    @functools.cached_property
    def _own_str(self) -> str | None:
        text = self.own_text()
        text = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
        return text if text is None or text.isascii() else unicodedata.normalize("NFKC", text)

    def bound_in_a_scope(self, name: str, at: ast.AST) -> bool:
        """Whether a scope other than the module's own that holds `at` binds `name`: `DynamicCache =
        StaticCache` in a function, or a parameter of that name, makes the constructors of that name
        there build something else (any code of the scope's lines counts, its methods and header
        too). An import there of what the class facts take the name for (`imports`,
        `function_imports`) is that class itself."""
        return any(scope is None or spans(scope, at) for scope in self.scopes_binding(name))

    def scopes_binding(self, name: str) -> list[ast.AST | None]:
        """The scopes that bind `name` otherwise than as the module's names resolve it, found once
        per name on the lines where the text may bind it; None for a binding that may reach every
        scope (`global`, `nonlocal`, or the module's, from a walrus in a comprehension there)."""
        if name not in self._scopes_binding:
            text = self.own_str()
            lines = lines_that_may_bind(text, name) if text is not None else None
            self._scopes_binding[name] = [
                None if isinstance(node, (ast.Global, ast.Nonlocal)) or scope is self.tree else scope
                for bound, node, scope in (scope_bindings(self.tree, lines) if lines != [] else ())
                if bound == name and not self.imports_as_resolved(node, name)
            ]
        return self._scopes_binding[name]

    @functools.cached_property
    def _scopes_binding(self) -> dict[str, list[ast.AST | None]]:
        return {}

    def imports_as_resolved(self, node: ast.AST, name: str) -> bool:
        """`node` is an import binding `name` to what the module's names resolve it to."""
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            return False
        module, _ = self.module
        origin = imported_names(ast.Module(body=[node], type_ignores=[]), module, self.path.endswith("__init__.py"))
        resolved = self.imports().get(name) or self.function_imports().get(name)
        found = origin.get(name)
        if resolved is None or found is None:
            return False
        same_transformers_class = is_transformers_module(found[0]) and is_transformers_module(resolved[0])
        return found == resolved or (same_transformers_class and found[1] == resolved[1])  # `transformers.cache_utils`

    @functools.cached_property
    def layers_lines(self) -> list[int]:
        """The lines that name `layers` (`definitions.layers_changed_in` reads them)."""
        text = self.own_str()
        return lines_mentioning(text, [ex.LAYERS]) if text is not None and ex.LAYERS in text else []

    @functools.cached_property
    def layer_changes(self) -> LayerChanges:
        """Whose layers the module's code may change, through its own functions too."""
        return LayerChanges(self.tree, self.own_str(), self.layers_lines)

    def stored_as_an_attribute(self, name: str) -> bool:
        """Whether the module binds `name` as an attribute of some object (`transformers.DynamicCache =
        StaticCache`, `setattr(t, "DynamicCache", ...)`, in any scope): the class a later lookup or
        import of that name gives is then another. Read only on the lines where `name` follows a dot
        or stands in quotes."""
        if name not in self._stored_as_an_attribute:
            self._stored_as_an_attribute[name] = self.binds_as_an_attribute(name)
        return self._stored_as_an_attribute[name]

    @functools.cached_property
    def _stored_as_an_attribute(self) -> dict[str, bool]:
        return {}

    def binds_as_an_attribute(self, name: str) -> bool:
        text = self.own_str()
        if text is None:
            return True
        words = [word for word in ATTRIBUTE_STORE_WORDS if word in text]  # a literal search first: fast
        offsets = [offset for offset in occurrences(text, name, whole_words=True) if after_a_dot_or_quote(text, offset)]
        lines = sorted({*(lines_mentioning(text, words) if words else []), *lines_of_offsets(text, offsets)})
        return any(
            stores_attribute(node, name)
            for statements in statements_at_lines(self.tree.body, lines).values()
            for node in ex.statement_parts(statements)
        )

    @functools.cached_property
    def rebound_names(self) -> frozenset[str]:
        """Names bound in a scope other than the module's own (`attribute_stores.names_bound_in_scopes`):
        a constructor called by one of them may build another class there."""
        return names_bound_in_scopes(self.tree)


ATTRIBUTE_STORE_WORDS = ("setattr", "__dict__", "vars")
"""Where an attribute may be bound without its name written after a dot."""


def after_a_dot_or_quote(text: str, offset: int) -> bool:
    """The word at `offset` follows a dot (past blanks and line continuations: `obj.\\` then `name`)
    or a quote (a `setattr` name)."""
    index = offset - 1
    while index >= 0 and text[index] in " \t\f\\\r\n":
        index -= 1
    return index >= 0 and text[index] in ".'\""


def stores_attribute(node: ast.AST, name: str) -> bool:
    """`obj.name = v` (any store or `del`), or a store whose name may be `name`: `setattr(obj, n, v)`
    (`__setattr__`, `delattr`) with that name or one computed, and any store into `obj.__dict__` or
    `vars(obj)` (`[k] = v`, `.update(...)`)."""
    if isinstance(node, ast.Attribute):
        return node.attr == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Subscript):
        return is_attribute_table(node.value) and not isinstance(node.ctx, ast.Load)
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("update", "__setitem__", "setdefault"):
        return is_attribute_table(func.value)
    if ex.dotted_name(func).rpartition(".")[2] not in ("setattr", "delattr", "__setattr__", "__delattr__"):
        return False
    target = node.args[0] if node.args else None
    named = node.args[1] if len(node.args) >= 2 else None
    if isinstance(named, ast.Constant):
        return named.value == name
    value = node.args[2] if len(node.args) >= 3 else None
    if isinstance(value, ast.Constant):
        return False  # a literal is no class: `setattr(cache, name, 0)`
    return not is_own_object(target)  # `setattr(self, key, value)` binds its own object's attributes


def is_attribute_table(node: ast.expr) -> bool:
    """`obj.__dict__` or `vars(obj)`, of an object other than a method's own."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" and not is_own_object(node.value)
    return (
        isinstance(node, ast.Call)
        and ex.dotted_name(node.func) == "vars"
        and not is_own_object(next(iter(node.args), None))
    )


def is_own_object(node: ast.expr | None) -> bool:
    """`self`: a method's object, not a module or class whose names a constructor is looked up in."""
    return isinstance(node, ast.Name) and node.id == "self"


def spans(outer: ast.AST, inner: ast.AST) -> bool:
    """`inner` lies within `outer`'s source span."""
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    end = (getattr(outer, "end_lineno", None) or start[0], getattr(outer, "end_col_offset", None) or 0)
    at = (getattr(inner, "lineno", 0), getattr(inner, "col_offset", 0))
    return start <= at <= end
