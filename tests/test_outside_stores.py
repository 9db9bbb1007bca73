"""Stores to a class's length attribute made outside the class's own methods
(`lint_rules/engine/facts/outside_stores.py`); the forms crossed with every class shape are in the
class-fact matrix (`outside-*`). Here: what must stay silent, with the reason, and the store in a
function nested in the class's own method, whose receiver is not the method's own."""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import pytest

from lint_rules.engine import analyze_source
from tests.module_cases import COUNTER_CACHE, codes_with

codes = functools.partial(codes_with, COUNTER_CACHE)


SILENT = {
    "a method's own receiver is the class's own binding (a count)": "",
    "another class's own attribute of the same name is another object's": """
        class Other:
            def reset(self):
                self.n = torch.zeros(1)
    """,
    "an int stored from outside keeps an int": """
        def reset(cache):
            cache.n = 0
    """,
    "reading another object's attributes through vars() binds none (flash-linear-attention)": """
        def sizes(cache, state):
            return [len(value) for value in vars(state).values()] + [cache.n]
    """,
    "reading another object's dictionary through dict(), print() or ** binds nothing": """
        def show(cache, other):
            print(vars(other))
            return {**vars(other), "copy": dict(other.__dict__), "n": cache.n}
    """,
    "a copy from the same object, which the module shows to be of the class (turboquantdc's crop)": """
        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []

            def crop(self, m: int):
                for cache in self.caches:
                    if m < 0:
                        kept = cache.n + m
                    else:
                        kept = m
                    cache.n = kept
    """,
    "a parenthesized own receiver is the class's own binding": """
        class Sub(Cache):
            def grow(self, k: int):
                (self).n += k
    """,
    "prose that reads like a rebinding (`for self-attention`) rebinds nothing": """
        class Sub(Cache):
            def grow(self, k: int):
                \"\"\"Grows the cache for self-attention; as self is the cache, self = it.\"\"\"
                self.n += k
    """,
}


@pytest.mark.parametrize("more", SILENT.values(), ids=SILENT.keys())
def test_must_stay_silent(more: str) -> None:
    assert codes(more) == []


def test_a_count_from_a_method_of_the_class_on_the_own_receiver_stays_silent() -> None:
    """The class's own reader follows `self._length()`; a method's own receiver is no outside store
    (`peek` reads `cache.n`, so the module's stores are looked at)."""
    text = """\
        class Counter:
            def __init__(self):
                self.n = 0

            def update(self, keys):
                self.n = self._length(keys)

            def _length(self, keys):
                return keys.shape[-2]

            def get_seq_length(self):
                return self.n


        def peek(cache):
            return cache.n


        def trim(ids, cache: Counter):
            return ids[:, cache.get_seq_length():]
    """
    assert [finding.code for finding in analyze_source(textwrap.dedent(text), "m.py")] == []


def copy_after(nested: str) -> str:
    """A copy into the counter of a local that `nested` (code in the method, before the copy) rebinds."""
    return f"""
        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []

            def crop(self, cache, m: int):
                kept = 0
                for held in self.caches:
                    kept = held.n + m

{textwrap.indent(nested, " " * 16)}

                cache.n = kept
    """


REPORTED = {
    "a function nested in another class's method": """
        class Runner:
            def run(self, cache):
                def clear(other):
                    other.n = torch.zeros(1)
                clear(cache)
    """,
    "a lambda's setattr": """
        clear = lambda cache: setattr(cache, "n", torch.zeros(1))
    """,
    "a default argument evaluated at definition": """
        def reset(cache=setattr(Cache(), "n", torch.zeros(1))):
            pass
    """,
    "a copy from an object of another class that binds the name to a tensor": """
        class Other:
            def __init__(self):
                self.n = torch.zeros(1)


        def give(cache, other):
            cache.n = other.n
    """,
    "a copy from any other object (a dataclass field or a namedtuple may hold the name)": """
        def give(cache, other):
            cache.n = other.n
    """,
    "a copy from an object of a list the module shows to hold another class": """
        class Other:
            def __init__(self):
                self.n = torch.zeros(1)


        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []
                self.others: list[Other] = []

            def give(self):
                for other in self.others:
                    self.caches[0].n = other.n
    """,
    "a function inside the method whose parameter is named like the loop over the class's objects": """
        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []

            def give(self, other):
                kept = 0

                def take(cache):
                    nonlocal kept
                    kept = cache.n

                take(other)
                for cache in self.caches:
                    cache.n = kept
    """,
    "a copy through a held object in a method that another call runs on another object": """
        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []

            def crop(self, cache, m: int):
                for held in self.caches:
                    cache.n = held.n + m


        def go(cache, fake):
            Holder.crop(fake, cache, 1)
    """,
    "a local that only a function nested in the method binds (the method reads a global)": """
        kept = torch.zeros(1)


        class Holder:
            def __init__(self):
                self.caches: list[Cache] = []

            def crop(self, cache, m: int):
                def unused():
                    for held in self.caches:
                        kept = held.n + m

                cache.n = kept
    """,
    "a local that a walrus in the default of a function nested in the method binds too": copy_after(
        "def later(x=(kept := torch.zeros(1))):\n    return x"
    ),
    "a local that a walrus in a class body nested in the method binds (its bases run in the method)": copy_after(
        "class Later(object if (kept := torch.zeros(1)) is None else object):\n    pass"
    ),
    "the same, copied from the method's own receiver": """
        kept = torch.zeros(1)


        class Sub(Cache):
            def copy_into(self, cache, m: int):
                def unused():
                    kept = self.n + m

                cache.n = kept
    """,
    "a true division": """
        def halve(cache):
            cache.n /= 2
    """,
    "a static method of another class": """
        class Resetter:
            @staticmethod
            def reset(self):
                self.n = torch.zeros(1)
    """,
    "a function whose parameter is named self": """
        def reset(self):
            self.n = torch.zeros(1)
    """,
    "an alias of setattr": """
        def reset(cache):
            store = setattr
            store(cache, "n", torch.zeros(1))
    """,
    "an alias of another object's __dict__": """
        def reset(cache):
            fields = cache.__dict__
            fields["n"] = torch.zeros(1)
    """,
    "a line continuation after the dot": """
        def reset(cache):
            cache.\\
                n = torch.zeros(1)
    """,
    "self rebound in another class's method": """
        class Runner:
            def run(self, cache):
                self = cache
                self.n = torch.zeros(1)
    """,
    "self rebound by a tuple target in another class's method": """
        class Runner:
            def run(self, cache):
                self, cache = cache, self
                self.n = torch.zeros(1)
    """,
    "self rebound by except ... as in another class's method": """
        class Runner:
            def run(self, error):
                try:
                    raise error
                except Exception as self:
                    self.n = torch.zeros(1)
    """,
    "a function's local named self": """
        def reset(cache):
            for self in [cache]:
                self.n = torch.zeros(1)
    """,
    "a method whose instance goes by another name, with a local named self": """
        class Runner:
            def run(this, cache):
                self = cache
                self.n = torch.zeros(1)
    """,
    "a default of another class's method, evaluated outside it": """
        SHARED = Cache()


        class Runner:
            def run(self, x=[0 for self in [SHARED] for self.n in [torch.zeros(1)]]):
                pass
    """,
    "an annotation of another class's method, evaluated outside it": """
        SHARED = Cache()


        class Runner:
            def run(self) -> [0 for self in [SHARED] for self.n in [torch.zeros(1)]]:
                pass
    """,
    "a class body's own name self": """
        class Holder:
            self = Cache()
            self.n = torch.zeros(1)
    """,
    "a name spelled in characters Python reads as the same (NFKC)": """
        def reset(cache):
            cache.\uff4e = torch.zeros(1)
    """,
    "a store at module level": """
        SHARED = Cache()
        SHARED.n = torch.zeros(1)
    """,
    "vars() of another object": """
        def reset(cache):
            vars(cache).update(n=torch.zeros(1))
    """,
}


@pytest.mark.parametrize("more", REPORTED.values(), ids=REPORTED.keys())
def test_must_report(more: str) -> None:
    assert codes(more) == ["SLG002"]


def test_a_banner_of_hashes_after_a_dot_is_read_in_linear_time() -> None:
    """`.` at a line's end, then a comment line of many `#`: the search for `.name` split the run of
    `#` every possible way (2**n tries; a license banner of pip's vendored chardet took minutes). The
    search runs in a child process so that a regression fails on the timeout instead of hanging."""
    program = textwrap.dedent(
        """
        from lint_rules.engine.facts.outside_stores import attribute_mentions
        banner = "x = 1.\\n" + "#" * 64 + " BEGIN " + "#" * 64 + "\\n(cache.  # a comment\\n  n) = 2\\n"
        print([match.group(0).split()[-1] for match in attribute_mentions(banner, "n")])
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['n']"
