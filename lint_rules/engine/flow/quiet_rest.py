"""Where the rest of a function's body can no longer change what its walk finds.

A walk of a long `forward` spends most of its time after the last line that makes or reads a
length: building masks, running the layers, packing the outputs. Before each statement of the
function's own body the walk asks whether the rest of the body (from that statement's first line
to the function's last) can still matter, and stops when it cannot. It cannot when its text
names none of these, as whole words:

- a source method, or a function found to return a source's value (the run's `source_lines`);
- a function of the module whose lines mention one (a callee that may return a source's value:
  `Summaries.returns_source` asks no other), the module's names imported from the package whose
  calls are sources (`imported_sources`: the only calls into other modules followed without a
  tainted argument), `self.x` where the class builds `self.x` from a class whose `forward` or
  `__call__` is such a function (`CallGraph.submodule_call`), a module class where an `__init__`
  was found to return one (`C(...)` runs it), and `getattr` (its string need not spell the
  method: `getattr(cache, "get_seq_" "length")()`);
- a state key that holds a tainted value (for `self.past`, its last part: every expression whose
  key that is spells it), or a name bound to a source method (`n = cache.get_seq_length`).

Every finding, and every returned taint a summary records, needs a tainted value: made by one of
the first two, or read through one of the third. A rest that names none of them makes none and
reads none, so walking it adds nothing. The search is of the text, comments and strings included
(more names only keep the walk going); a function whose rest is not ASCII is walked to its end,
since Python reads a non-ASCII identifier in its NFKC form, which the text need not spell.
"""

from __future__ import annotations

import ast
import bisect
import functools
from collections.abc import Sequence

from lint_rules.engine.facts.definitions import Definition, caller_class, first_line_of
from lint_rules.engine.facts.module_text import last_line_mentioning
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.taint import SOURCE_GETTER, State

UNKNOWN_WORD = 1 << 30
"""A key without a word to look for keeps the whole rest walked."""


class QuietRest:
    """Answers, for one walk of one function, whether the rest of its body from a statement on is
    quiet. Only the lines after the function's last source line are searched, and only once the walk
    is past it (most of a function's statements come before it)."""

    def __init__(self, run: ModuleRun, definition: Definition, source_functions: frozenset[str]) -> None:
        function = definition.node
        self.run = run
        self.definition = definition
        self.source_functions = source_functions
        last = function.end_lineno or function.lineno
        before_end = bisect.bisect_right(run.source_lines, last)
        self.last_source_line = max(run.source_lines[before_end - 1] if before_end else 0, function.lineno)
        self.rest_lines = run.facts.source.lines[self.last_source_line : last]
        """The lines after the last source line, the first of them line `last_source_line + 1`."""
        self._rest_text: str | None = None
        self._last_blocking_line: int | None = None
        self._last_mentions: dict[str, int] = {}

    def from_statement(self, statement: ast.stmt, state: State) -> bool:
        """Nothing from `statement` to the function's end can make or read a tainted value."""
        start = first_line_of(statement)
        if start <= self.last_source_line or start <= self.last_blocking_line():
            return False
        getters = [key for key, kind in state.kinds.items() if kind == SOURCE_GETTER]
        live = [key_word(key) for key in [*state.taint, *getters]]
        return all(self.last_mention([word]) < start for word in live)

    def last_blocking_line(self) -> int:
        """The last line that names a callee that may return a source, an imported source or
        `getattr` (the function's whole rest when its text is not ASCII)."""
        if self._last_blocking_line is None:
            if not all(line.isascii() for line in self.rest_lines):
                self._last_blocking_line = UNKNOWN_WORD
            else:
                callees = self.run.callee_names_that_may_return_a_source(self.source_functions)
                words = blocking_words(callees, self.run.imported_sources)
                submodules = submodules_that_may_return_a_source(self.run, self.definition, self.source_functions)
                self._last_blocking_line = max(self.last_mention(words), self.last_mention(submodules))
        return self._last_blocking_line

    def last_mention(self, words: Sequence[str]) -> int:
        """The last line of the rest where one of `words` occurs as a whole word (0: none does)."""
        if not words:
            return 0
        key = words[0] if len(words) == 1 else "\n".join(words)
        if key not in self._last_mentions:
            if self._rest_text is None:
                self._rest_text = "\n".join(self.rest_lines)
            line = last_line_naming(self._rest_text, words)
            self._last_mentions[key] = self.last_source_line + line if line else 0
        return self._last_mentions[key]


def last_line_naming(text: str, words: Sequence[str]) -> int:
    """The last line of `text` where one of `words` occurs as a whole word (0: none does; a key
    without a word: `UNKNOWN_WORD`): a search back from the end for each word, which for the few
    words of a walk costs less than compiling one search for them all (a walk's words differ from
    module to module)."""
    if not all(words):
        return UNKNOWN_WORD
    return max((last_line_mentioning(text, word) for word in words), default=0)


def quiet_rest(scope: Scope, run: ModuleRun, source_functions: frozenset[str]) -> QuietRest | None:
    """The question for a function's walk; None for the module, a class body or a lambda."""
    function, definition = scope.body_owner, scope.definition
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or definition is None:
        return None
    return QuietRest(run, definition, source_functions)


@functools.lru_cache(maxsize=64)
def blocking_words(may_return: frozenset[str], imported_sources: frozenset[str]) -> tuple[str, ...]:
    """The callees that may return a source, the imported sources, and `getattr` (its string need
    not spell the method: `getattr(cache, "get_seq_" "length")()`), one tuple per run."""
    return tuple(sorted(may_return | imported_sources | {"getattr"}))


def submodules_that_may_return_a_source(
    run: ModuleRun, definition: Definition, source_functions: frozenset[str]
) -> list[str]:
    """`x` of `self.x(...)` where the class builds `self.x` from a module class whose `forward` or
    `__call__` may return a source's value (the call runs it without naming it)."""
    cls = caller_class(definition)
    if cls is None:
        return []
    calls = run.facts.calls
    return [
        attribute
        for attribute in calls.attribute_classes(cls)
        if any(run.may_return_a_source(callee, source_functions) for callee in calls.submodule_call(cls, attribute))
    ]


def key_word(key: str) -> str:
    """The word every expression whose state key is `key` spells: the last part of `self.past`, the
    object of `kwargs['cache']`."""
    return key.partition("[")[0].rpartition(".")[2]
