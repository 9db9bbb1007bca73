"""Facts read from a module's text and top-level statements: the prefilter, the lines that mention
a name, and the names bound to torch. Every adapter and the fixer use these, so each lives here once."""

from __future__ import annotations

import ast
import bisect
import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from typing import AnyStr, TypeGuard

from lint_rules.lines import lf_text, split_lines

DEFAULT_SOURCE_METHODS: tuple[str, ...] = ("get_seq_length", "get_query_offset")
"""`Cache.get_query_offset(layer_idx)` (transformers 5.2x) returns `get_seq_length(layer_idx)`: the same tensor."""


def mentions_any(text: str | bytes, names: Sequence[str]) -> bool:
    """The prefilter: False when none of `names` occurs in the text, so the file needs no parse."""
    if isinstance(text, bytes):
        return any(name.encode() in text for name in names)
    return any(name in text for name in names)


NESTED_CLASS = re.compile(r"\n[ \t\f]+class\s")
NESTED_CLASS_AFTER_CR = re.compile(r"\r[ \t\f]+class\s")


def may_nest_classes(text: str) -> bool:
    """False when no class statement of the module can be indented (in a function, a class, an `if`):
    one starts its own line. The search is for a literal line break, not a `^` in multiline mode,
    which is tried at every offset (four times slower); a text with `\r` line breaks looks again."""
    return NESTED_CLASS.search(text) is not None or ("\r" in text and NESTED_CLASS_AFTER_CR.search(text) is not None)


def walrus_lines(source: str | bytes) -> list[int]:
    """The lines where a walrus (`:=`, one token) may stand, sorted: the only lines where an expression
    binds a name."""
    if isinstance(source, bytes):
        if b":=" not in source:
            return []
        source = source.decode("utf-8", errors="replace")
    return lines_mentioning(source, [":="]) if ":=" in source else []


def may_declare_globals(source: str | bytes) -> bool:
    """The module's text may hold a `global` statement: the word, followed by a space, a tab, a form
    feed or a backslash, first on its line (after any line break) or after a `:` or `;` (each
    occurrence of the word is looked at: a regular expression tried at every offset costs ten times
    more)."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    start = data.find(b"global")
    while start >= 0:
        line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
        before = data[line_start:start].rstrip(b" \t\f")
        if data[start + 6 : start + 7] in (b" ", b"\t", b"\f", b"\\") and (not before or before[-1:] in (b":", b";")):
            return True
        start = data.find(b"global", start + 6)
    return False


# ----- spellings: PEP 8 writes `f(x)` and `def f(x)`; Python also takes `f (x)` and `def  f (x)`. A
# text search looks for the PEP 8 literal first and, where it is missing but a literal that every
# other spelling holds occurs, for any spaces or tabs before the parenthesis and after `def`.
# (Spaces around a dot, `a . f(x)`, are not looked for: docs/limits.md.)

CALL_PARENTHESIS = r"[ \t]*\("


def has_call(text: str, name: str) -> bool:
    """`name(` (a dotted `name` too: `m.f(`), however spaced before the parenthesis."""
    return spelled(text, f"{name}(", (f"{name} ", f"{name}\t"), call_of(name))


def defines(text: str | bytes, name: str) -> bool:
    """A `def name(` in the text (`async def` too), however spaced."""
    if isinstance(text, bytes):
        others = tuple(other.encode() for other in other_def_spellings(name))
        return spelled(text, f"def {name}(".encode(), others, def_of_in_bytes(name))
    return spelled(text, f"def {name}(", other_def_spellings(name), def_of(name))


def other_def_spellings(name: str) -> tuple[str, ...]:
    """Every `def name(` spelled otherwise holds one of these: more than one space or a tab after
    `def`, or a space or a tab before the parenthesis."""
    return ("def\t", "def  ", "def \t", f"def {name} ", f"def {name}\t")


def spelled(text: AnyStr, literal: AnyStr, others: tuple[AnyStr, ...], pattern: re.Pattern[AnyStr]) -> bool:
    """The PEP 8 `literal` is in the text, or (only then searched for) one of the literals that any
    other spelling holds is, and `pattern` (every spelling) matches."""
    return literal in text or (any(other in text for other in others) and pattern.search(text) is not None)


DEF_OF = r"def[ \t]+{}" + CALL_PARENTHESIS
"""Scanned for the literal `def`, then the rest checked: fast on a module's many `def`s."""


@functools.lru_cache(maxsize=256)
def call_of(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name) + CALL_PARENTHESIS)


@functools.lru_cache(maxsize=256)
def def_of(name: str) -> re.Pattern[str]:
    return re.compile(DEF_OF.format(re.escape(name)))


@functools.lru_cache(maxsize=256)
def def_of_in_bytes(name: str) -> re.Pattern[bytes]:
    return re.compile(DEF_OF.format(re.escape(name)).encode())


# ----- definitions at a line's start (a module-level `def`, a class header): the PEP 8 literal is
# looked for after a line break; where it is missing, a pattern that takes any spaces or tabs.

TOP_LEVEL_LINE = re.compile(rb"\n(?=[^\s#)\]}])")
"""The start of a line that begins in column 0 with code (not a comment or a closing bracket)."""


def line_starting_with(data: bytes, header: bytes, start: int = 0) -> int:
    """Where the first line at or after `start` that begins with `header` begins (-1 if none): a
    literal search, since a `^`-anchored regex over a whole module is ten times slower."""
    if start == 0 and data.startswith(header):
        return 0
    found = data.find(b"\n" + header, max(start - 1, 0))
    return found + 1 if found >= 0 else -1


def top_level_def_start(data: bytes, name: str) -> int:
    """Where the module-level `def name(` begins (-1 if none): PEP 8's spelling first, then any other
    (`def  name (`, `async def name(`)."""
    start = line_starting_with(data, f"def {name}(".encode())
    if start >= 0 or name.encode() not in data:
        return start
    found = at_line_start(top_level_def(name), data)
    return found[0] if found else -1


def class_header_end(data: bytes, name: str) -> int:
    """Where `class name` at the start of a line of `data` ends (-1 if none), PEP 8's single space
    first, then any spaces or tabs."""
    header = b"class " + name.encode()
    start = line_starting_with(data, header)
    while start >= 0:
        end = start + len(header)
        if not data[end : end + 1].isalnum() and data[end : end + 1] != b"_":
            return end
        start = line_starting_with(data, header, end)
    if name.encode() not in data:
        return -1
    found = at_line_start(class_header(name), data)
    return found[1] if found else -1


def at_line_start(pattern: re.Pattern[bytes], data: bytes) -> tuple[int, int] | None:
    """Where `pattern`, which begins with the line break before its line, first matches `data`,
    the line break left out; the module's first line, which has none before it, included."""
    line_end = data.find(b"\n")
    first = pattern.match(b"\n" + (data[:line_end] if line_end >= 0 else data))
    if first is not None:
        return 0, first.end() - 1
    found = pattern.search(data)
    return (found.start() + 1, found.end()) if found else None


@functools.lru_cache(maxsize=256)
def top_level_def(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"\n(?:async[ \t]+)?" + DEF_OF.format(re.escape(name)).encode())


@functools.lru_cache(maxsize=256)
def class_header(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"\nclass[ \t]+" + re.escape(name.encode()) + rb"(?![\w])")


def lines_mentioning(text: str, names: Sequence[str], whole_words: bool = False) -> list[int]:
    """The 1-based numbers of the lines where any of `names` occurs (with `whole_words`, not as part
    of a longer identifier), sorted."""
    if len(names) > 1 and all(name.isascii() and name.isidentifier() for name in names):
        matches = any_of(tuple(names)).finditer(text)
        return lines_of_offsets(
            text, [match.start() for match in matches if not whole_words or is_whole_word(text, *match.span())]
        )
    return lines_of_offsets(text, sorted(offset for name in names for offset in occurrences(text, name, whole_words)))


@functools.lru_cache(maxsize=64)
def any_of(names: tuple[str, ...]) -> re.Pattern[str]:
    """One search for all the names (one pass over the text, not one per name), the longest first:
    where two start at one place, the other is its prefix and so not a whole word there; and an
    occurrence the search steps over starts inside another name, on the same line, after a letter,
    digit or `_` (the names are ASCII identifiers: `·` may continue an identifier but is no word
    character for `is_identifier_char`)."""
    return re.compile("|".join(re.escape(name) for name in sorted(set(names), key=len, reverse=True)))


def lines_of_offsets(text: str, offsets: list[int]) -> list[int]:
    """The 1-based numbers of the lines holding the sorted `offsets`, counted in one pass."""
    if "\r" in text:
        return sorted({line_of_offset(text, offset) for offset in offsets})
    lines: set[int] = set()
    line, counted_to = 1, 0
    for offset in offsets:
        line += text.count("\n", counted_to, offset)
        counted_to = offset
        lines.add(line)
    return sorted(lines)


def last_line_mentioning(text: str, name: str) -> int:
    """The 1-based number of the last line where `name` occurs as a whole word (0: none): a search
    back from the end, for one name (`lines_mentioning` finds every line, each set of names compiled)."""
    offset = text.rfind(name)
    while offset != -1:
        if is_whole_word(text, offset, offset + len(name)):
            return lines_of_offsets(text, [offset])[0]
        offset = text.rfind(name, 0, offset + len(name) - 1)
    return 0


def lines_that_may_bind(text: str, name: str) -> list[int]:
    """Cheaply, from the text: the lines where `name` occurs as a whole word other than as a call
    (`name(`) or an attribute (`.name`), and those of `def name(` and `class name(`: the only lines
    where a statement can bind it as spelled (comments and strings included, so more lines than
    that; a binding spelled in another Unicode form is found through `non_ascii_lines`)."""
    offsets = []
    for offset in occurrences(text, name, whole_words=True):
        if offset and text[offset - 1] == ".":
            continue
        end = offset + len(name)
        if text[end : end + 64].lstrip(" \t").startswith("(") and not after_def_or_class(text, offset):
            continue
        offsets.append(offset)
    return lines_of_offsets(text, offsets)


def non_ascii_lines(text: str) -> list[tuple[int, str]]:
    """Each line that holds a character outside ASCII, with its NFKC form: a name Python reads from
    another Unicode spelling (`ｆ` is `f`) is written out there. Kept for the text asked about last
    (the module being analyzed asks for it from several facts)."""
    if text.isascii():
        return []
    if _LAST_NON_ASCII and _LAST_NON_ASCII[0][0] is text:
        return _LAST_NON_ASCII[0][1]
    found = [
        (number, unicodedata.normalize("NFKC", line))
        for number, line in enumerate(split_lines(text), 1)
        if not line.isascii()
    ]
    _LAST_NON_ASCII[:] = [(text, found)]
    return found


_LAST_NON_ASCII: list[tuple[str, list[tuple[int, str]]]] = []
"""The last text `non_ascii_lines` read and what it found."""


def with_non_ascii(found: list[int], non_ascii: list[tuple[int, str]], *names: str) -> list[int]:
    """The lines a text search found for names, and the lines outside ASCII whose NFKC form holds one."""
    spelled_otherwise = [number for number, normalized in non_ascii if any(name in normalized for name in names)]
    return sorted({*found, *spelled_otherwise}) if spelled_otherwise else found


def after_def_or_class(text: str, offset: int) -> bool:
    """The word before `offset` is `def` or `class` (blanks and line continuations between)."""
    before = text[max(0, offset - 64) : offset]
    word = before.rstrip(" \t\f")
    while word.endswith(LINE_CONTINUATIONS):
        word = word.removesuffix("\n").removesuffix("\r").removesuffix("\\").rstrip(" \t\f")
    if len(word) == len(before):
        return False
    if not word:
        return offset > 64  # blanks all the way back: the keyword may lie further (taken as there)
    for keyword in ("def", "class"):
        if word.endswith(keyword) and not follows_identifier(word, len(word) - len(keyword)):
            return True
    return False


LINE_CONTINUATIONS = ("\\\n", "\\\r\n", "\\\r")


def occurrences(text: str, name: str, whole_words: bool) -> Iterator[int]:
    offset = text.find(name)
    while offset != -1:
        end = offset + len(name)
        if not whole_words or is_whole_word(text, offset, end):
            yield offset
        offset = text.find(name, end)


def is_whole_word(text: str, start: int, end: int) -> bool:
    """`text[start:end]` is not part of a longer identifier."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (is_identifier_char(before) or is_identifier_char(after))


def follows_identifier(text: str, start: int) -> bool:
    """The character before `start` may end an identifier (a word starting there is part of it)."""
    return start > 0 and is_identifier_char(text[start - 1])


def is_identifier_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def line_of_offset(text: str, offset: int) -> int:
    """The line number of an offset as Python's tokenizer counts lines (\r\n, \r and \n end one)."""
    return len(split_lines(text[: offset + 1]))


def torch_bindings(tree: ast.Module) -> list[str]:
    """Module-level names bound to the torch package, in order (`import torch`, `import torch as th`,
    `import torch.nn` binds `torch`)."""
    found: list[str] = []
    for statement in top_level_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "torch":
                    found.append(alias.asname or "torch")
                elif alias.name.startswith("torch.") and alias.asname is None:
                    found.append("torch")
    return list(dict.fromkeys(found))


def torch_aliases(tree: ast.Module) -> frozenset[str]:
    """Names that mean torch in this module: `torch` itself, and every alias it is imported under."""
    return frozenset({"torch", *torch_bindings(tree)})


def top_level_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements that run, looking into top-level `if`/`try` (e.g. `if is_torch_available():`)
    but not under `if TYPE_CHECKING:`."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If) and not is_type_checking_test(statement.test):
            yield from top_level_statements([*statement.body, *statement.orelse])
        elif isinstance(statement, ast.Try):
            yield from top_level_statements([*statement.body, *statement.orelse, *statement.finalbody])
            for handler in statement.handlers:
                yield from top_level_statements(handler.body)


def is_type_checking_test(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def import_statements(body: Sequence[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every top-level import, also under `if TYPE_CHECKING:` (imports that only name types count)."""
    for statement in body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
        elif isinstance(statement, ast.If):
            yield from import_statements([*statement.body, *statement.orelse])
        elif isinstance(statement, ast.Try):
            yield from import_statements([*statement.body, *statement.orelse, *statement.finalbody])
            for handler in statement.handlers:
                yield from import_statements(handler.body)


def is_truth_literal(node: ast.expr | None) -> TypeGuard[ast.Constant]:
    """A literal whose truth is known: a bool, an int or None (`if 0:`, `DEBUG = False`)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, type(None)))


def module_constants(tree: ast.Module, text: str) -> dict[str, object]:
    """UPPER_CASE module names bound exactly once, at the top level, to a bool, int or None literal
    (`DEBUG = False`), and in no other form in the module's own scope (an import that overrides it,
    a loop or `with` target, a `def`, `del`), in a module that does not reach its namespace by hand
    (`NAMESPACE_BY_HAND`): their value is known everywhere, unless a function declares them `global`
    (`ModuleFacts.constants` drops those)."""
    bindings: dict[str, list[ast.expr | None]] = {}
    for statement in top_level_statements(tree.body):
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            value = None if isinstance(statement, ast.AugAssign) else statement.value
            for target in targets:
                for bound in [target] if isinstance(target, ast.Name) else list(ast.walk(target)):
                    if isinstance(bound, ast.Name):
                        bindings.setdefault(bound.id, []).append(value if bound is target else None)
    candidates = {
        name: value.value
        for name, [value, *others] in bindings.items()
        if not others and name.lstrip("_").isupper() and is_truth_literal(value)
    }
    if not candidates or any(pattern.search(text) for pattern in NAMESPACE_BY_HAND):
        return {}
    return {name: value for name, value in candidates.items() if module_scope_bindings(tree, text, name) == 1}


NAMESPACE_BY_HAND = tuple(
    re.compile(pattern)
    for pattern in (
        r"import[ \t]*\*",
        r"globals[ \t]*\(",
        r"vars[ \t]*\([ \t]*\)",
        r"exec[ \t]*\(",
        r"modules[ \t]*\[[ \t]*__name__",
        r"import_module[ \t]*\([ \t]*__name__",
    )
)
"""Ways a module may bind its own names that no statement of it shows: a star import, `globals()`,
`vars()`, `exec(...)`, `sys.modules[__name__]`, `import_module(__name__)` (each pattern starts with its
literal, which `re` searches for first)."""


def module_scope_bindings(tree: ast.Module, text: str, name: str, lines: Sequence[int] | None = None) -> int:
    """How many times the module's own scope binds `name`, in every form (its statements, and the
    headers of its functions and classes), read only on the lines where a binding may be written
    (`lines`, when the caller has found them)."""
    if lines is None:
        lines = with_non_ascii(lines_that_may_bind(text, name), non_ascii_lines(text), name)
    return sum(bound_names(node).count(name) for node in own_scope_nodes(tree, lines))


def whole_word(*words: str, not_after: str = r"\w") -> str:
    """A regex for any of `words` (identifiers) where no character of `not_after` comes before it and
    no word character after it, written literal first: for a pattern that starts with a literal, `re`
    finds the literal before it tries the rest, and a leading `\b` would make it try every position
    of the text (some 30 times slower over a module)."""
    alternatives = [rf"{re.escape(word)}(?<!{not_after}{re.escape(word)})" for word in words]
    return (alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")") + r"(?!\w)"


BOOL_BINDING_LINE = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*(?:True|False)[ \t]*(?:#.*)?")
BOOL_VALUE = re.compile(r"= (?:True|False)")
"""Searched for first: it starts with a rare character (a leading space would make it 2.5x slower)."""


def bool_bindings(text: str) -> list[tuple[int, str]]:
    """(line, name) for each line that binds a name to True or False alone (`flag = False`, spaced as
    PEP 8 writes it), in line order; the value is searched first (one pass for both values), then its
    line matched (a regex anchored at every line start is ten times slower)."""
    text = lf_text(text)
    found = []
    for value in BOOL_VALUE.finditer(text):
        position = value.start() - 1
        if position < 0 or text[position] != " ":
            continue
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        line = BOOL_BINDING_LINE.fullmatch(text, start, end if end >= 0 else len(text))
        if line is not None:
            found.append((start, line.group(1)))
    found.sort()
    lines, counted_to, line_number = [], 0, 1
    for start, name in found:
        line_number += text.count("\n", counted_to, start)
        counted_to = start
        lines.append((line_number, name))
    return lines


NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


def function_constants(function: ScopeNode, module_constants: dict[str, object]) -> dict[str, object]:
    """The names whose value is known everywhere in a function: the module constants it does not
    bind, and the names it binds exactly once, to True or False, with no other binding
    in it (parameter, assignment, loop or `with` target, import, `del`, `global`/`nonlocal`; nested
    scopes' bindings counted too): every read of such a name that does not raise sees that value
    (`ignore_cache_position = True` ... `if ignore_cache_position is False:`)."""
    bindings: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, BINDING_NODES):
            for name in bound_names(node):
                bindings[name] = bindings.get(name, 0) + 1
    literals = {
        node.targets[0].id: node.value.value
        for node in own_scope_nodes(function)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, bool)
    }
    own = {name: value for name, value in literals.items() if bindings.get(name) == 1}
    return {**{name: value for name, value in module_constants.items() if name not in bindings}, **own}


def own_scope_nodes(function: ScopeNode | ast.Module, lines: Sequence[int] | None = None) -> Iterator[ast.AST]:
    """The nodes of a function's (or a class body's) own scope: its body, and of the functions,
    lambdas and classes nested in it only their headers (decorators, defaults, annotations, bases),
    which run in this scope; its own header runs in the scope around it. With `lines` (sorted), only
    the nodes whose lines hold one of them, and those without lines of their own."""
    pending: list[ast.AST] = list(function.body) if isinstance(function.body, list) else [function.body]
    while pending:
        node = pending.pop()
        if lines is not None and not spans_one_of(node, lines):
            continue
        yield node
        pending.extend(header_of(node) if isinstance(node, NESTED_SCOPES) else ast.iter_child_nodes(node))


DECLARING_NODES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom,
    ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
)  # fmt: skip
"""The nodes `declared_names` reads: a cheap test before the call."""


def declared_names(node: ast.AST) -> list[str]:
    """The names a node binds other than by a store to a name or as a parameter: a definition's name,
    an import statement's names, `global`/`nonlocal`, an `except ... as` or a `match` capture."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [imported_as(alias) for alias in node.names]
    return [] if isinstance(node, (ast.Name, ast.arg, ast.alias)) else bound_names(node)


def imported_as(alias: ast.alias) -> str:
    """The name an import binds: `import a.b` binds `a`."""
    return (alias.asname or alias.name).partition(".")[0]


def statement_bindings(statement: ast.stmt) -> list[str]:
    """The names a statement binds in the scope it runs in (`bound_names` of its nodes), without the
    statements of its blocks, which count on their own (`definitions.simple_statements`): its
    targets, imports, a definition's name and its header's walruses, an `except ... as` or `match`
    capture; not the parameters of a definition or lambda in it."""
    found: list[str] = []
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, BINDING_NODES):
            found += bound_names(node)
        if isinstance(node, NESTED_SCOPES):
            pending += header_of(node)
        else:
            pending += [child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt)]
    return found


def spans_one_of(node: ast.AST, lines: Sequence[int]) -> bool:
    """`node`'s lines (a decorated definition's from its first decorator) hold one of `lines`."""
    start: int | None = getattr(node, "lineno", None)
    if start is None:
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
        start = min(start, *(decorator.lineno for decorator in node.decorator_list))
    end: int = getattr(node, "end_lineno", None) or start
    index = bisect.bisect_left(lines, start)
    return index < len(lines) and lines[index] <= end


def header_of(node: ScopeNode) -> list[ast.expr]:
    """What a nested function, lambda or class evaluates where it is defined."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(keyword.value for keyword in node.keywords)]
    arguments = node.args
    defaults = [*arguments.defaults, *(default for default in arguments.kw_defaults if default is not None)]
    if isinstance(node, ast.Lambda):
        return defaults
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    annotations = [argument.annotation for argument in every if argument is not None and argument.annotation]
    return [*node.decorator_list, *defaults, *annotations, *([node.returns] if node.returns else [])]


BINDING_NODES = (
    ast.Name, ast.Global, ast.Nonlocal, ast.alias, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
    ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
)  # fmt: skip


def bound_names(node: ast.AST) -> list[str]:
    """The names one node binds (or declares shared with another scope, which counts as a binding)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return [*node.names, *node.names]
    if isinstance(node, ast.alias):
        return [imported_as(node)]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    name = getattr(node, "name", None) if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) else None
    rest = getattr(node, "rest", None) if isinstance(node, ast.MatchMapping) else None
    return [bound for bound in (name, rest) if isinstance(bound, str)]
