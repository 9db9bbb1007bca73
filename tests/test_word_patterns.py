"""`module_text.whole_word`: the one way the engine writes a regex for a word of a module's text. It
is written literal first (a leading `\\b` made `re` try every position: ~30 times slower over a
module), and must find exactly what `\\bword\\b` finds."""

from __future__ import annotations

import re

import pytest

from lint_rules.engine.facts.module_text import whole_word

TEXT = """\
cache = past_cache or cache_2
x.cache.get(cache) + _cache + cache_
torch.arange(n); torch = None; import torch as th; ｃache = 1
"""


@pytest.mark.parametrize("words", [("cache",), ("torch",), ("cache", "torch"), ("get", "arange", "n"), ("th",)])
def test_it_finds_what_a_leading_and_trailing_word_boundary_finds(words: tuple[str, ...]) -> None:
    bounded = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")
    assert [m.span() for m in re.finditer(whole_word(*words), TEXT)] == [m.span() for m in bounded.finditer(TEXT)]
    data = TEXT.encode()
    in_bytes = re.compile(bounded.pattern.encode())
    assert [m.span() for m in re.finditer(whole_word(*words).encode(), data)] == [
        m.span() for m in in_bytes.finditer(data)
    ]


def test_other_characters_can_be_kept_from_coming_before() -> None:
    """`torch` as a name of its own, not `x.torch` (the torch-name check's candidates)."""
    pattern = whole_word("cache", not_after=r"[\w.]")
    assert [m.start() for m in re.finditer(pattern, TEXT)] == [0, TEXT.index("(cache") + 1]


def test_a_name_with_letters_outside_ascii_is_found_in_bytes() -> None:
    """A `\\b` in a bytes pattern knows only ASCII letters, so `rb"\\bñ\\b"` never matched `cache.ñ = t`
    (a store elsewhere on a counter so named went unseen); the word search finds it."""
    data = "cache.ñ = t\nmañana = 1\n".encode()
    assert [m.start() for m in re.finditer(whole_word("ñ").encode(), data)] == [len(b"cache.")]
