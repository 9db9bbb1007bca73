"""The walk of a function stops where the rest of its body can no longer make or read a length
(`lint_rules/engine/flow/quiet_rest.py`). Each module below has code that neither makes nor reads
one (`pad = ...`) before a use that the rest's text reaches only in a way the stop must see: a
submodule whose `forward` returns a length, a function found to return one in an earlier round, an
attribute that holds one, a name spelled in another Unicode form, a `getattr` string that does not
spell the method, a class whose `__init__` returns one. Every one must be reported, as it
is when the walk goes to the end (the padded matrix crosses the other forms: `tests/test_matrix.py`)."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.module_text import last_line_mentioning, lines_mentioning
from lint_rules.engine.flow import walker

REPORTED_AFTER_UNRELATED_CODE = [
    pytest.param(
        """
        import torch.nn as nn


        class Length(nn.Module):
            def forward(self, cache):
                return cache.get_seq_length()


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.length = Length()

            def forward(self, ids, cache):
                pad = ids.shape[0]
                n = self.length(cache)
                return ids[:, n:]
        """,
        [(17, "SLG002")],
        id="submodule-whose-forward-returns-a-length",  # `self.length(...)` runs `Length.forward`
    ),
    pytest.param(
        """
        def helper(cache):
            return cache.get_seq_length()


        def middle(cache, ids):
            pad = ids.shape[0]
            return helper(cache)


        def top(ids, cache):
            return ids[:, middle(cache, ids):]
        """,
        [(11, "SLG002")],
        id="function-found-to-return-a-length-a-round-before",  # `middle` is found in the second round
    ),
    pytest.param(
        """
        class Runner:
            def step(self, ids, cache):
                self.past = cache.get_seq_length()
                pad = ids.shape[0]
                for _ in range(2):
                    pad = pad + 1
                return ids[:, self.past:]
        """,
        [(7, "SLG002")],
        id="attribute-holding-a-length",  # the key `self.past` is read through its last part
    ),
    pytest.param(
        """
        def step(ids, cache):
            n = cache.get_seq_length()
            pad = ids.shape[0]
            return ids[:, \uff4e:]
        """,
        [(4, "SLG002")],
        id="name-spelled-in-another-unicode-form",  # Python reads the fullwidth letter as `n`
    ),
    pytest.param(
        """
        def step(ids, cache):
            n = cache.get_seq_length()
            pad = ids.shape[0]
            window = lambda: ids[:, n:]
            return window()
        """,
        [(4, "SLG002")],
        id="lambda-reading-the-length",
    ),
    pytest.param(
        """
        def step(cache, x):
            \"\"\"Reads get_seq_length.\"\"\"
            pad = x.shape[0]
            n = getattr(cache, "get_seq_" "length")()
            return x[:, n:]
        """,
        [(5, "SLG002")],
        id="getattr-whose-string-does-not-spell-the-method",  # the docstring gets the function walked
    ),
    pytest.param(
        """
        def helper(cache):
            return cache.get_seq_length()


        class Wrapped:
            def __init__(self, cache):
                return helper(cache)


        def made(cache):
            # runs __init__
            return Wrapped(cache)


        def step(cache, x):
            return x[:, made(cache):]
        """,
        [(16, "SLG002")],
        id="class-call-running-an-init-found-to-return-a-length",  # `made` is found in the third round
    ),
]


def findings(code: str) -> list[tuple[int, str]]:
    text = textwrap.dedent(code).lstrip("\n")
    return sorted((finding.line, finding.code) for finding in analyze_source(text, "module.py"))


@pytest.mark.parametrize(("code", "expected"), REPORTED_AFTER_UNRELATED_CODE)
def test_reported_after_unrelated_code(code: str, expected: list[tuple[int, str]]) -> None:
    assert findings(code) == expected


@pytest.mark.parametrize(("code", "expected"), REPORTED_AFTER_UNRELATED_CODE)
def test_the_same_as_a_walk_to_the_end(
    code: str, expected: list[tuple[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walker, "quiet_rest", lambda *arguments: None)
    assert findings(code) == expected


def test_the_walk_stops_after_the_last_use() -> None:
    """The stop is taken: a statement after the last use is not walked (a use there is out of sight
    only because nothing in the rest's text reaches the length)."""
    walked: list[int] = []
    original = walker.FunctionWalker.walk_statement

    def recording(self: walker.FunctionWalker, node, state, following):  # type: ignore[no-untyped-def]
        walked.append(node.lineno)
        return original(self, node, state, following)

    code = """
        def step(ids, cache):
            n = cache.get_seq_length()
            head = ids[:, n:]
            pad = ids.shape[0]
            return head
        """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walker.FunctionWalker, "walk_statement", recording)
        assert findings(code) == [(3, "SLG002")]
    assert walked == [2, 3]


LAST_WHOLE_WORD_TEXTS = [
    ("n = 1\nm = n_old\nk = nn", "n", 1),  # `n_old` and `nn` are longer words
    ("x = n\n\nnn = n_\n", "n", 1),
    ("nnn\nnn\nnnn", "nn", 2),  # overlapping occurrences in `nnn`, none a whole word
    ("a.n\r\nb = n\rc\r\n", "n", 2),  # `\r\n` and `\r` end lines as Python counts them
    ("x\ry = n", "n", 2),
    ("", "n", 0),
    ("n", "n", 1),
    ("x\n(n)", "n", 2),
]


@pytest.mark.parametrize(("text", "word", "line"), LAST_WHOLE_WORD_TEXTS)
def test_the_last_line_of_one_word_is_the_last_of_every_line_naming_it(text: str, word: str, line: int) -> None:
    """The search back from the end for one word finds the line that the search of every line does."""
    every_line = lines_mentioning(text, [word], whole_words=True)
    assert last_line_mentioning(text, word) == (every_line[-1] if every_line else 0) == line
