"""Every way a cache class binds the attribute its length comes from, crossed with the shapes of
class that read it and with an int or a tensor value.

A case is a module (or, for a base in a sibling module or a subclass in another one, a package) with a cache class `Cache` whose
length is `self.n`, a binding form of `n` put into it, and one harmful use of a receiver's length,
`ids[:, cache.get_seq_length():]`. It states what the engine must say: SLG002 when the length may
be a tensor, or silence with the reason (the length is provably an int). `tests/test_class_fact_matrix.py`
runs each through the checker, the flake8 plugin and the fixer.

A binding form gives the class's members (`{V}` is the value) and whether `__init__` starts the
counter with `self.n = 0`; a tensor value is one that is a tensor (`self.counts.max(dim=0)`'s
first element, `torch.zeros(1)`), an int value one that is a count.
"""

from __future__ import annotations

import dataclasses
import textwrap

PROVABLY_INT = "every binding of `n` is a count: the length is an int (README Rules)"
OTHER_OBJECTS = "`Child` inherits the length; an object of it is no `Sub`, whose bindings are another object's"
REPORTED = ("SLG002",)
REPLACED = "a length method bound other than by a `def` may return anything (its body is not read)"
PROPERTY_ELSEWHERE = "a property over the counter in a subclass of another module is not read"


@dataclasses.dataclass(frozen=True)
class BindingForm:
    name: str
    int_members: str
    """The class's members binding `n` to an int (indented as a class body)."""
    tensor_members: str
    """The same form binding `n` to a tensor."""
    int_followed: bool = True
    """The engine follows the int variant (False: it is reported, `not_followed` says why)."""
    not_followed: str = ""
    starts_at_zero: bool = True
    """`__init__` binds `self.n = 0` first."""
    subclass: bool = False
    """The members go into a subclass `Sub(Cache)` of the module that uses the length."""
    outside: tuple[str, str] = ("", "")
    """Code after `Cache` in its module that binds `n` on an object of it: to an int, to a tensor."""
    not_followed_elsewhere: str = ""
    """Why the int variant, in a subclass in another module, makes `Cache`'s length unknown
    (`kept_elsewhere.py` reads such a subclass conservatively); empty: it stays an int."""


def members(update: str) -> str:
    return f"    def update(self, keys, mask, name):\n{textwrap.indent(textwrap.dedent(update), ' ' * 8)}"


def getter(returned: str, decorator: str = "property") -> str:
    """A property `n` of the class (indented as a class body), then a blank line."""
    return f"    @{decorator}\n    def n(self):\n        return {returned}\n\n"


SETTER = "    @n.setter\n    def n(self, value):\n        pass\n"
COUNTER = members("self.n = keys.shape[-2]")


def outside(name: str, store: str, int_followed: bool = True, not_followed: str = "") -> BindingForm:
    """A class that counts `n` in ints, and a store `{V}` of `n` on another object in its module
    (`{V}` is `0` or `torch.zeros(1)`)."""
    code = (store.replace("{V}", "0"), store.replace("{V}", "torch.zeros(1)"))
    return BindingForm(name, COUNTER, COUNTER, int_followed, not_followed, outside=code)


BINDING_FORMS = (
    BindingForm("assign", members("self.n = keys.shape[-2]"), members("self.n = mask.sum()")),
    BindingForm("annotated", members("self.n: int = keys.shape[-2]"), members("self.n: int = torch.zeros(1)")),
    BindingForm(
        "parallel-tuple", members("self.n, self.m = keys.shape[-2], 0"), members("self.n, self.m = mask.sum(), 0")
    ),
    BindingForm(
        "shape-unpacking", members("batch, self.n = mask.shape"), members("self.n, _ = self.counts.max(dim=0)")
    ),
    BindingForm(
        "call-unpacking",
        members("self.n, _ = divmod(keys.shape[-2], 2)"),
        members("self.n, _ = self.counts.max(dim=0)"),
        int_followed=False,
        not_followed="an element of an unpacked call is not followed",
    ),
    BindingForm("starred-rest", members("self.n, *_ = 0, 1, 2"), members("self.n, *_ = self.counts.max(dim=0)")),
    BindingForm(
        "starred-target",
        members("*self.n, = (0,)"),
        members("*self.n, = self.counts"),
        int_followed=False,
        not_followed="a starred target binds a list",
    ),
    BindingForm(
        "list-target", members("[self.n, self.m] = [keys.shape[-2], 1]"), members("[self.n, self.m] = self.counts")
    ),
    BindingForm("nested-tuple", members("(self.n, _), z = (1, 2), 3"), members("(self.n, _), z = self.counts, 3")),
    BindingForm("augmented-add", members("self.n += keys.shape[-2]"), members("self.n += mask.sum()")),
    BindingForm("augmented-multiply", members("self.n *= 2"), members("self.n *= mask.sum()")),
    BindingForm(
        "augmented-true-division",
        members("self.n //= 2"),
        members("self.n /= mask.sum()"),
    ),
    BindingForm(
        "for-range", members("for self.n in range(3):\n    pass"), members("for self.n in self.counts:\n    pass")
    ),
    BindingForm(
        "for-other",
        members("for self.n in [1, 2]:\n    pass"),
        members("for self.n in self.counts:\n    pass"),
        int_followed=False,
        not_followed="a loop target over anything but `range` is not followed",
    ),
    BindingForm(
        "with-as",
        members("with contextlib.nullcontext(1) as self.n:\n    pass"),
        members("with contextlib.nullcontext(mask.sum()) as self.n:\n    pass"),
        int_followed=False,
        not_followed="a `with ... as` target is not followed",
    ),
    BindingForm(
        "walrus-local",
        members("if (k := keys.shape[-2]) > 0:\n    self.n = k"),
        members("if (k := mask.sum()) > 0:\n    self.n = k"),
        int_followed=False,
        not_followed="a local bound by a walrus is not a count",
    ),
    BindingForm(
        "comprehension-target",
        members("[0 for self.n in range(2)]"),
        members("[0 for self.n in self.counts]"),
        int_followed=False,
        not_followed="a comprehension target is not followed",
    ),
    BindingForm(
        "nested-function",
        members("def grow():\n    self.n = 1\n\ngrow()"),
        members("def grow():\n    self.n = mask.sum()\n\ngrow()"),
    ),
    BindingForm(
        "other-receiver-name",
        "    def update(this, keys, mask, name):\n        this.n = 1\n",
        "    def update(this, keys, mask, name):\n        this.n = mask.sum()\n",
        int_followed=False,
        not_followed="a receiver not named `self` is not followed",
    ),
    BindingForm("setattr-literal", members('setattr(self, "n", 1)'), members('setattr(self, "n", mask.sum())')),
    BindingForm(
        "setattr-any-name",
        members("setattr(self, name, 1)"),
        members("setattr(self, name, mask.sum())"),
        int_followed=False,
        not_followed="`setattr` with a name that is not a literal may bind any attribute",
    ),
    BindingForm(
        "instance-dict",
        members('self.__dict__["n"] = 1'),
        members('self.__dict__["n"] = mask.sum()'),
        int_followed=False,
        not_followed="`self.__dict__` may bind any attribute",
    ),
    BindingForm(
        "delete",
        members("del self.n\nself.n = 1"),
        "    n = torch.zeros(1)\n\n" + members("del self.n"),
        int_followed=False,
        not_followed="`del` is not followed",
    ),
    BindingForm(
        "delattr",
        members('delattr(self, "n")\nself.n = 1'),
        "    n = torch.zeros(1)\n\n" + members('delattr(self, "n")'),
        int_followed=False,
        not_followed="`delattr` is not followed",
    ),
    BindingForm(
        "property",
        getter("1"),
        getter("self.counts.sum()"),
        starts_at_zero=False,
        not_followed_elsewhere=PROPERTY_ELSEWHERE,
    ),
    BindingForm(
        "property-over-a-counter",
        getter("self._n") + members("self._n = keys.shape[-2]"),
        getter("self._n") + members("self._n = mask.sum()"),
        starts_at_zero=False,
        not_followed_elsewhere=PROPERTY_ELSEWHERE,
    ),
    BindingForm(
        "property-with-setter",
        getter("1") + SETTER,
        getter("self.counts.sum()") + SETTER,
        int_followed=False,
        not_followed="a property with a setter is not followed",
        starts_at_zero=False,
    ),
    BindingForm(
        "cached-property",
        getter("1", "functools.cached_property"),
        getter("self.counts.sum()", "functools.cached_property"),
        int_followed=False,
        not_followed="only `@property` alone is followed",
        starts_at_zero=False,
    ),
    BindingForm(
        "class-default",
        "    n = 0\n\n" + members("self.n += 1"),
        "    n = torch.zeros(1)\n\n" + members("self.n += 1"),
        starts_at_zero=False,
    ),
    BindingForm(
        "class-default-then-assign",
        "    n = 0\n\n" + members("self.n = 2"),
        "    n = torch.zeros(1)\n\n" + members("self.n = 2"),
        starts_at_zero=False,
    ),
    BindingForm(
        "classmethod-binding",
        "    @classmethod\n    def reset(cls):\n        cls.n = 0\n",
        "    @classmethod\n    def reset(cls):\n        cls.n = torch.zeros(1)\n",
        int_followed=False,
        not_followed="a binding through a receiver not named `self` (`cls.n`) is not followed",
    ),
    BindingForm(
        "class-of-instance",
        members("type(self).n = 1"),
        members("type(self).n = mask.sum()"),
        int_followed=False,
        not_followed="a binding through `type(self)` is not followed",
    ),
    BindingForm(
        "class-by-name",
        members("Cache.n = 1"),
        members("Cache.n = mask.sum()"),
        int_followed=False,
        not_followed="a binding through the class's name is not followed",
    ),
    BindingForm(
        "declared-only",
        "    n: int\n\n" + members("self.n: int\nself.n = keys.shape[-2]"),
        "    n: int\n\n" + members("self.n: int\nself.n = mask.sum()"),
    ),
    BindingForm(
        "alias-of-self",
        members("cache = self\ncache.n = 1"),
        members("cache = self\ncache.n = mask.sum()"),
        int_followed=False,
        not_followed="a binding through an alias of `self` is not followed",
    ),
    outside("outside-function", "def reset(cache):\n    cache.n = {V}"),
    outside("outside-other-class", "class Runner:\n    def reset(self, cache):\n        cache.n = {V}"),
    outside("outside-augmented", "def grow(cache):\n    cache.n += {V}"),
    outside("outside-setattr", 'def reset(cache):\n    setattr(cache, "n", {V})'),
    outside("outside-setattr-any-name", "def reset(cache, name):\n    setattr(cache, name, {V})"),
    BindingForm(
        "outside-copy",
        members("copied = Cache()\ncopied.n = self.n"),
        members("copied = Cache()\ncopied.n = self.counts"),
        not_followed_elsewhere="a store on another object in a subclass of another module is not followed",
    ),
    BindingForm(
        "outside-int-parameter",
        COUNTER,
        COUNTER,
        outside=("def reset(cache, k: int):\n    cache.n = k", "def reset(cache, k: torch.Tensor):\n    cache.n = k"),
    ),
    BindingForm(
        "outside-copy-from-another-class",
        COUNTER,
        COUNTER,
        outside=(
            "class Other:\n    def __init__(self):\n        self.n = 1\n\n    def give(self, cache):\n        cache.n = self.n",
            "class Other:\n    def __init__(self):\n        self.n = torch.zeros(1)\n\n"
            "    def give(self, cache):\n        cache.n = self.n",
        ),
        int_followed=False,
        not_followed="a copy of another class's attribute is not followed",
    ),
    BindingForm(
        "outside-copy-from-a-held-object",
        COUNTER,
        COUNTER,
        outside=(
            "class Holder:\n    def __init__(self):\n        self.caches: list[Cache] = []\n\n"
            "    def crop(self, k: int):\n        for cache in self.caches:\n            cache.n = cache.n + k",
            "class Other:\n    def __init__(self):\n        self.n = torch.zeros(1)\n\n\n"
            "class Holder:\n    def __init__(self):\n        self.caches: list[Cache] = []\n"
            "        self.others: list[Other] = []\n\n"
            "    def give(self):\n        for other in self.others:\n            self.caches[0].n = other.n",
        ),
    ),
    outside(
        "outside-tuple-target",
        "def reset(cache):\n    cache.n, rest = {V}, 1",
        int_followed=False,
        not_followed="an element of a tuple target outside the class is not followed",
    ),
    outside(
        "outside-instance-dict",
        'def reset(cache):\n    cache.__dict__["n"] = {V}',
        int_followed=False,
        not_followed="a store into another object's `__dict__` may bind any attribute",
    ),
    outside(
        "outside-replaced-method",
        "Cache.get_seq_length = lambda self, layer_idx=0: {V}",
        int_followed=False,
        not_followed=REPLACED,
    ),
    outside(
        "outside-setattr-replaced-method",
        'setattr(Cache, "get_seq_length", lambda self, layer_idx=0: {V})',
        int_followed=False,
        not_followed=REPLACED,
    ),
    outside(
        "outside-instance-method",
        "def patch(cache):\n    cache.get_seq_length = lambda layer_idx=0: {V}",
        int_followed=False,
        not_followed=REPLACED,
    ),
    outside(
        "outside-method-run-on-the-cache",
        "class Patcher:\n    def patch(self):\n        self.n = {V}\n\n\ndef hack(cache):\n    Patcher.patch(cache)",
    ),
    outside(
        "outside-replaced-init",
        "class Other:\n    def __init__(self):\n        self.n = {V}\n\n\nCache.__init__ = Other.__init__",
        int_followed=False,
        not_followed="a method of the class replaced from outside is not read",
    ),
    outside(
        "outside-class-swap",
        "class Other:\n    def get_seq_length(self, layer_idx=0):\n        return {V}\n\n\n"
        "def swap(cache):\n    cache.__class__ = Other",
        int_followed=False,
        not_followed="an object whose class is replaced runs another class's methods",
    ),
    BindingForm(
        "own-instance-method",
        members("self.get_seq_length = lambda layer_idx=0: 1"),
        members("self.get_seq_length = lambda layer_idx=0: mask.sum()"),
        int_followed=False,
        not_followed=REPLACED,
    ),
    BindingForm(
        "init-subclass-replaces-the-method",
        "    def __init_subclass__(cls):\n        cls.get_seq_length = lambda self, layer_idx=0: 1\n",
        "    def __init_subclass__(cls):\n        cls.get_seq_length = lambda self, layer_idx=0: torch.zeros(1)\n",
        int_followed=False,
        not_followed=REPLACED,
    ),
    BindingForm(
        "subclass-rebinds",
        members("self.n = keys.shape[-2]"),
        members("self.n, _ = self.counts.max(dim=0)"),
        subclass=True,
    ),
    BindingForm(
        "subclass-property",
        getter("1"),
        getter("self.counts.sum()"),
        int_followed=False,
        not_followed="a subclass's property over an attribute its base binds is not followed",
        subclass=True,
    ),
)


@dataclasses.dataclass(frozen=True)
class ClassShape:
    name: str
    getter: str
    """`Cache`'s length method (indented as a class body)."""
    receiver: str
    """The class the use's receiver is annotated with."""
    children: str = ""
    """Classes after `Cache`."""
    sibling: bool = False
    """`Cache` lives in `pkg/base.py`, the rest in `pkg/module.py`."""
    not_followed: str = ""
    """Why even an int length is reported (empty: an int one is silent)."""
    subclass_elsewhere: bool = False
    """`Cache` counts `n` in ints in `pkg/module.py`, with the use; the form binds `n` in a subclass
    `Sub(Cache)` of `pkg/sub.py`, an object of which may be the receiver."""


DIRECT = "    def get_seq_length(self, layer_idx=0):\n        return self.n\n"
CHILD = "class Child(Cache):\n    pass\n"
CLASS_SHAPES = (
    ClassShape("direct", DIRECT, "Cache"),
    ClassShape(
        "through-local",
        "    def get_seq_length(self, layer_idx=0):\n        length = self.n\n        return length\n",
        "Cache",
    ),
    ClassShape(
        "through-helper",
        "    def get_seq_length(self, layer_idx=0):\n        return self._length()\n\n"
        "    def _length(self):\n        return self.n\n",
        "Cache",
        not_followed="a helper method's return is not followed for the length",
    ),
    ClassShape("arithmetic", "    def get_seq_length(self, layer_idx=0):\n        return self.n + 1\n", "Cache"),
    ClassShape("subclass", DIRECT, "Child", children=CHILD),
    ClassShape("sibling-subclass", DIRECT, "Child", children=CHILD, sibling=True),
    ClassShape("subclass-elsewhere", DIRECT, "Cache", subclass_elsewhere=True),
)

BASE = """\
import contextlib
import functools

import torch


class Cache:
{MEMBERS}
    def __init__(self):
        self.counts = torch.zeros(2, 3)
{START}
{GETTER}
"""
SUBCLASS_MODULE = """\
import contextlib
import functools

import torch

from .module import Cache


class Sub(Cache):
{MEMBERS}
"""
USE = """\
def use(ids, cache: {RECEIVER}):
    return ids[:, cache.get_seq_length():]
"""


@dataclasses.dataclass(frozen=True)
class Case:
    form: BindingForm
    shape: ClassShape
    tensor: bool

    @property
    def id(self) -> str:
        return f"{self.shape.name}-{self.form.name}-{'tensor' if self.tensor else 'int'}"

    @property
    def silent_because(self) -> str:
        if self.shape.subclass_elsewhere and not self.tensor and self.form.not_followed_elsewhere:
            return ""
        if self.form.subclass and self.shape.children and not self.shape.sibling:
            return OTHER_OBJECTS  # in another module, `Cache` is read over every subclass this one defines
        if self.tensor or not self.form.int_followed or self.shape.not_followed:
            return ""
        return PROVABLY_INT

    @property
    def expected_codes(self) -> tuple[str, ...]:
        return () if self.silent_because else REPORTED

    @property
    def base(self) -> str:
        """The module with `Cache` (and, in one module, everything else)."""
        form_members = self.form.tensor_members if self.tensor else self.form.int_members
        start = "        self.n = 0\n" if self.form.starts_at_zero or self.shape.subclass_elsewhere else ""
        own = COUNTER if self.shape.subclass_elsewhere else "" if self.form.subclass else form_members
        text = BASE.format(MEMBERS=own, START=start, GETTER=self.shape.getter)
        stored_outside = self.form.outside[self.tensor]
        text += f"\n\n{stored_outside}\n" if stored_outside else ""
        return text if self.shape.sibling else text + self.module_rest(form_members)

    def module_rest(self, form_members: str) -> str:
        sub = (
            f"class Sub(Cache):\n{form_members}\n\n" if self.form.subclass and not self.shape.subclass_elsewhere else ""
        )
        children = f"{self.shape.children}\n\n" if self.shape.children else ""
        return f"\n\n{sub}{children}{USE.format(RECEIVER=self.shape.receiver)}"

    @property
    def module(self) -> str:
        """`pkg/module.py` for a sibling shape (`base` is `pkg/base.py`), else the whole case."""
        if not self.shape.sibling:
            return self.base
        form_members = self.form.tensor_members if self.tensor else self.form.int_members
        return "import torch\n\nfrom .base import Cache" + self.module_rest(form_members)

    @property
    def package(self) -> dict[str, str]:
        """The files of `pkg/` for a shape of two modules (`module.py` is the one checked); empty for one."""
        if self.shape.sibling:
            return {"base.py": self.base, "module.py": self.module}
        if self.shape.subclass_elsewhere:
            form_members = self.form.tensor_members if self.tensor else self.form.int_members
            return {"module.py": self.module, "sub.py": SUBCLASS_MODULE.format(MEMBERS=form_members)}
        return {}


def cases() -> list[Case]:
    return [Case(form, shape, tensor) for shape in CLASS_SHAPES for form in BINDING_FORMS for tensor in (False, True)]
