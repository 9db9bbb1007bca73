"""What a class's own code may put in place of its objects: a `from_*` class method is read as
building the class it is called on only where it returns `cls(...)` or the class's own call
(`ClassFacts.builds_its_own_class`), a length method's body is read only where no decorator may put
another function, or another receiver, in its place (`class_builders.runs_its_own_body`), and `self` is
not read as the class in a method that a call runs on another object (`Sub.cut(other)`,
`ClassBodies.methods_run_on_others`)."""

from __future__ import annotations

import pytest

from tests.module_cases import COUNTER_CACHE, codes_with

TENSOR_CACHE = """
    class TensorCache:
        def get_seq_length(self, layer_idx=0):
            return torch.zeros(())

"""
BUILT = """
    class Sub(Cache):
        @classmethod
        def _from_parts(cls, parts):
            return cls()

        @classmethod
        def from_parts(cls, parts):
    {BODY}


    def rebuilt(ids, parts):
        cache = Sub.from_parts(parts)
        return ids[:, cache.get_seq_length():]
"""


def codes_built(body: str) -> list[str]:
    indented = "\n".join("            " + line for line in body.splitlines())
    return codes_with(COUNTER_CACHE, TENSOR_CACHE + BUILT.replace("    {BODY}", indented))


BUILDS_ITS_CLASS = {
    "cls(...)": "return cls()",
    "another builder of the class that does": "return cls._from_parts(parts)",
    "the class's own name": "return Sub()",
    "a local bound to cls(...)": "cache = cls()\nfor part in parts:\n    cache.update(part, 1)\nreturn cache",
    "None on another path, on which the call fails": "if parts:\n    return cls()",
}


@pytest.mark.parametrize("body", BUILDS_ITS_CLASS.values(), ids=BUILDS_ITS_CLASS.keys())
def test_a_builder_that_returns_its_class_counts_the_class_length(body: str) -> None:
    assert codes_built(body) == []


BUILDS_ANOTHER = {
    "another class": "return TensorCache()",
    "cls rebound in it": "cls = TensorCache\nreturn cls()",
    "the class's name shadowed in it": "Sub = TensorCache\nreturn Sub()",
    "a parameter": "return parts",
    "a local bound to another class on one path": "cache = cls()\nif not parts:\n    cache = TensorCache()\nreturn cache",
}


@pytest.mark.parametrize("body", BUILDS_ANOTHER.values(), ids=BUILDS_ANOTHER.keys())
def test_a_builder_that_may_return_another_object_is_reported(body: str) -> None:
    assert codes_built(body) == ["SLG002"]


def test_a_builder_under_another_decorator_is_not_read() -> None:
    module = TENSOR_CACHE + BUILT.replace("@classmethod", "@classmethod\n        @functools.cache")
    indented = module.replace("    {BODY}", "            return cls()")
    assert codes_with(COUNTER_CACHE, "\n    import functools\n" + indented) == ["SLG002"]


SWAPPED = """
    def swap(method):
        def run(self, *args):
            return method(TensorCache(), *args)

        return run


    class Sub(Cache):
        {DECORATOR}
        def get_seq_length(self, layer_idx=0):
            return self.n


    def cut(ids, cache: Sub):
        return ids[:, cache.get_seq_length():]
"""


def test_a_decorated_length_method_is_not_read() -> None:
    """`swap` runs the body on another object: `self.n` is no longer this object's counter. The base,
    which a `Sub` may stand for, is unknown too."""
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + SWAPPED.replace("{DECORATOR}", "@swap")) == ["SLG002", "SLG002"]


def test_without_the_decorator_the_counter_is_read() -> None:
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + SWAPPED.replace("{DECORATOR}", "")) == []


RUN_ON_ANOTHER = """
    class Sub(Cache):
        def cut(self, ids):
            return ids[:, self.get_seq_length():]


    def run(ids, other):
        return {CALL}
"""


def test_a_method_run_on_another_object_does_not_read_self_as_its_class() -> None:
    """`Sub.cut(other, ids)` runs `cut` with `self` bound to `other`, which may be any cache."""
    assert codes_with(
        COUNTER_CACHE, TENSOR_CACHE + RUN_ON_ANOTHER.replace("{CALL}", "Sub.cut(TensorCache(), ids)")
    ) == ["SLG002"]


def test_a_method_run_on_its_own_objects_reads_self_as_its_class() -> None:
    """Silent: `Sub(...).cut(ids)` and the old-style `Sub.cut(self, ids)` from a subclass's method both
    run `cut` on an object of `Sub`."""
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + RUN_ON_ANOTHER.replace("{CALL}", "Sub().cut(ids)")) == []
    old_style = "\n    class Again(Sub):\n        def cut_again(self, ids):\n            return Sub.cut(self, ids)\n"
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + RUN_ON_ANOTHER.replace("{CALL}", "ids") + old_style) == []


def test_a_method_run_on_an_attribute_of_self_is_run_on_another_object() -> None:
    """`Sub.cut(self.inner, ids)`: the first argument is not the caller's own receiver."""
    holder = "\n    class Holder:\n        def __init__(self):\n            self.inner = TensorCache()\n\n"
    call = "Sub.cut(Holder().inner, ids)"
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + holder + RUN_ON_ANOTHER.replace("{CALL}", call)) == ["SLG002"]


def test_a_method_of_the_same_name_in_another_class_run_on_another_object_changes_nothing() -> None:
    """Silent: `Text.cut(text, 3)` runs `Text`'s own `cut`; `Sub.cut` still runs on a `Sub`."""
    text = "\n    class Text:\n        @staticmethod\n        def cut(text, n):\n            return text[:n]\n\n"
    call = "Sub().cut(ids) + Text.cut(ids, 3)"
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + text + RUN_ON_ANOTHER.replace("{CALL}", call)) == []


def test_a_length_method_under_torch_no_grad_is_read() -> None:
    """Silent: `torch.no_grad()` calls the method with its own arguments and returns what it returns."""
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + SWAPPED.replace("{DECORATOR}", "@torch.no_grad()")) == []


def test_a_builder_a_base_defines_returning_the_base_builds_no_subclass() -> None:
    """`Base.from_parts` returns `Base()`: `Sub.from_parts(...)` is a `Base`, whose length is a tensor."""
    more = """
    class Base:
        def get_seq_length(self, layer_idx=0):
            return torch.zeros(())

        @classmethod
        def from_parts(cls, parts):
            return Base()


    class Sub(Base):
        def __init__(self):
            self.n = 0

        def get_seq_length(self, layer_idx=0):
            return self.n


    def rebuilt(ids, parts):
        return ids[:, Sub.from_parts(parts).get_seq_length():]
"""
    assert "SLG002" in codes_with(COUNTER_CACHE, more)


def test_a_builder_bound_other_than_by_a_def_is_not_read() -> None:
    more = """
    class Sub(Cache):
        from_parts = classmethod(lambda cls, parts: TensorCache())


    def rebuilt(ids, parts):
        return ids[:, Sub.from_parts(parts).get_seq_length():]
"""
    assert codes_with(COUNTER_CACHE, TENSOR_CACHE + more) == ["SLG002"]
