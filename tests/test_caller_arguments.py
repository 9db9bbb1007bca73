"""What the callers pass (`lint_rules/engine/flow/caller_arguments.py`, issue 25 pattern 5): a private
module-level function, a nested function or a private method whose every call in its module is
visible, and passes an int-length cache or None for a parameter, has an int length there. Each
silent shape has its must-report twin: one caller passing a `StaticCache` or a value of unknown
kind, a public function, the function used as a value, named in another module, called with
`*args`/`**kwargs`, and for a method a call on another receiver, through the class, from a subclass
or with a receiver that may be the class itself."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.rules import ONLY_OUTSIDE_CALLERS
from lint_rules.settings import Settings
from lint_rules.target_range import TargetRange
from tests import package_files
from tests.invariants import UNSAFE_TOO, check_invariants
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

TRIM = """\
    from typing import Any

    from transformers import DynamicCache, StaticCache


    def {name}(input_ids, cache):
        n = cache.get_seq_length()
        return input_ids[:, n:]


"""


def write_package(root: Path, modules: dict[str, str]) -> Path:
    return package_files.write_package(root, modules, "zoo")


PINNED_BELOW_5_25 = Settings(transformers=TargetRange("<5.25", "test", DYNAMIC_CACHE_COUNTS_INT))
"""A project whose every `DynamicCache` counts an int (see `tests.release_rows`)."""


def codes(package: Path, module: str = "gen", settings: Settings = Settings()) -> list[str]:
    checked = check_path(str(package / f"{module}.py"), settings)
    assert not checked.error, checked.error
    return [finding.code for finding in checked.findings]


def trim_module(callers: str, name: str = "_trim") -> str:
    return textwrap.dedent(TRIM.format(name=name)) + textwrap.dedent(callers)


# ----- a private function: what every call passes -------------------------------------------------

INT_CALLERS = {
    "local-constructor": """\
        def run(input_ids):
            cache = DynamicCache()
            return _trim(input_ids, cache)
    """,
    "constructor-argument": """\
        def run(input_ids, past):
            return _trim(input_ids, DynamicCache.from_legacy_cache(past))
    """,
    "keyword-and-none": """\
        def run(input_ids):
            first = _trim(input_ids, cache=None)
            return _trim(cache=DynamicCache(), input_ids=first)
    """,
    "default-none": """\
        def _trim_or_all(input_ids, cache=None):
            n = cache.get_seq_length()
            return input_ids[:, n:]


        def run(input_ids):
            return _trim_or_all(input_ids), _trim(input_ids, DynamicCache())
    """,
    "module-level-call": """\
        FIRST = _trim([[0]], DynamicCache())
    """,
    "private-caller-chain": """\
        def _step(input_ids, past):
            return _trim(input_ids, past)


        def run(input_ids):
            return _step(input_ids, DynamicCache())
    """,
    "annotated-caller": """\
        def run(input_ids, cache: DynamicCache):
            return _trim(input_ids, cache)
    """,
    "attribute-built-in-init": """\
        class Runner:
            def __init__(self):
                self.cache = DynamicCache()

            def run(self, input_ids):
                return _trim(input_ids, self.cache)
    """,
}

TENSOR_OR_UNKNOWN_CALLERS = {
    "one-static-cache": """\
        def run(input_ids, config):
            a = _trim(input_ids, DynamicCache())
            return _trim(a, StaticCache(config, max_cache_len=8))
    """,
    "public-callers-parameter": """\
        def run(input_ids, cache: Any):
            return _trim(input_ids, cache)
    """,
    "unannotated-public-parameter": """\
        def run(input_ids, cache):
            return _trim(input_ids, cache)
    """,
    "chain-through-a-public-function": """\
        def step(input_ids, past):
            return _trim(input_ids, past)


        def run(input_ids):
            return step(input_ids, DynamicCache())
    """,
    "caller-rebinds-its-parameter": """\
        def _step(input_ids, past, other):
            past = other
            return _trim(input_ids, past)


        def run(input_ids, other):
            return _step(input_ids, DynamicCache(), other)
    """,
    "global-stored-elsewhere": """\
        cache = None


        def run(input_ids):
            global cache
            out = _trim(input_ids, cache)
            cache = DynamicCache()
            return out


        def reset(config):
            global cache
            cache = StaticCache(config, max_cache_len=8)
    """,
    "nonlocal-stored-by-a-closure": """\
        def run(input_ids, config):
            cache = DynamicCache()

            def reset():
                nonlocal cache
                cache = StaticCache(config, max_cache_len=8)

            reset()
            return _trim(input_ids, cache)
    """,
    "unknown-attribute": """\
        class Runner:
            def run(self, input_ids):
                return _trim(input_ids, self.draft.past_kv)
    """,
    "star-arguments": """\
        def run(input_ids, *rest):
            return _trim(input_ids, *rest)
    """,
    "keyword-arguments": """\
        def run(input_ids, **kwargs):
            return _trim(input_ids, **kwargs)
    """,
    "no-default-left-out": """\
        def run(input_ids):
            return _trim(input_ids)
    """,
    "name-in-a-comprehension": """\
        def run(input_ids, cache):
            return [_trim(input_ids, cache) for cache in [DynamicCache(), cache]]
    """,
    "a-match-capture-rebinds-the-callers-parameter": """\
        def _loop(input_ids, past, other):
            match other:
                case StaticCache() as past:
                    pass
            return _trim(input_ids, past)


        def run(input_ids, other):
            return _loop(input_ids, DynamicCache(), other)
    """,
    "named-in-a-string-spelled-otherwise": """\
        import sys


        def run(input_ids, config):
            a = _trim(input_ids, DynamicCache())
            return getattr(sys.modules[__name__], "_t" "rim")(a, StaticCache(config, max_cache_len=8))
    """,
    "a-call-spelled-in-another-unicode-form": """\
        def run(input_ids, config):
            a = _trim(input_ids, DynamicCache())
            return _\uff54rim(a, StaticCache(config, max_cache_len=8))  # Python reads the fullwidth t as t
    """,
}


@pytest.mark.parametrize("shape", sorted(INT_CALLERS))
def test_a_private_function_whose_every_caller_passes_an_int_cache_is_silent(shape: str, tmp_path: Path) -> None:
    package = write_package(tmp_path, {"gen": trim_module(INT_CALLERS[shape])})
    assert codes(package, settings=PINNED_BELOW_5_25) == []
    if shape == "annotated-caller":  # the twin: from 5.25 on, a `DynamicCache` of some configs counts a tensor
        assert codes(package) == ["SLG002"]
    else:  # built here from no config (`DynamicCache()`): an int on every release
        assert codes(package) == []


@pytest.mark.parametrize("shape", sorted(TENSOR_OR_UNKNOWN_CALLERS))
def test_one_caller_passing_a_tensor_or_unknown_cache_is_reported(shape: str, tmp_path: Path) -> None:
    package = write_package(tmp_path, {"gen": trim_module(TENSOR_OR_UNKNOWN_CALLERS[shape])})
    assert codes(package) == ["SLG002"]


def test_a_public_function_is_reported_whatever_its_module_passes(tmp_path: Path) -> None:
    callers = INT_CALLERS["local-constructor"].replace("_trim(", "trim(")
    package = write_package(tmp_path, {"gen": trim_module(callers, name="trim")})
    assert codes(package) == ["SLG002"]


def messages(package: Path, module: str = "gen") -> list[str]:
    checked = check_path(str(package / f"{module}.py"), Settings())
    assert not checked.error, checked.error
    return [finding.message for finding in checked.findings]


def public_trim_module(callers: str) -> str:
    return trim_module(callers.replace("_trim(", "trim("), name="trim")


def test_a_public_functions_finding_says_its_package_callers_pass_int_caches(tmp_path: Path) -> None:
    """Issue 25 pattern 5: reported (a library's users call it), and the text says why."""
    package = write_package(tmp_path, {"gen": public_trim_module(INT_CALLERS["local-constructor"])})
    [message] = messages(package)
    assert message.endswith(f"[{ONLY_OUTSIDE_CALLERS}]")


TWINS_WITHOUT_THE_NOTE = {
    "one-caller-passes-a-static-cache": ({"gen": public_trim_module(TENSOR_OR_UNKNOWN_CALLERS["one-static-cache"])}),
    "never-called": {"gen": public_trim_module("")},
    "another-module-imports-it": {
        "gen": public_trim_module(INT_CALLERS["local-constructor"]),
        "other": "from .gen import trim\n",
    },
    "decorated": {"gen": public_trim_module(INT_CALLERS["local-constructor"]).replace("def trim", "@cache\ndef trim")},
    "a-lambda-parameter-of-that-name": {
        "gen": textwrap.dedent(
            """\
            from transformers import DynamicCache, StaticCache


            def trim(input_ids, cache, others):
                f = lambda cache: input_ids[:, cache.get_seq_length():]
                return [f(o) for o in others]


            def run(input_ids, caches):
                return trim(input_ids, DynamicCache(), caches)


            def run_static(input_ids, config):
                return run(input_ids, [StaticCache(config=config, max_cache_len=8)])
            """
        )
    },
    "parameter-rebound": {
        "gen": public_trim_module(INT_CALLERS["local-constructor"]).replace(
            "    n = cache.get_seq_length()", "    cache = cache.parent\n    n = cache.get_seq_length()"
        )
    },
}


@pytest.mark.parametrize("modules", TWINS_WITHOUT_THE_NOTE.values(), ids=TWINS_WITHOUT_THE_NOTE.keys())
def test_twin_no_note_where_the_package_may_pass_a_tensor_length_cache(modules: dict[str, str], tmp_path: Path) -> None:
    [message] = messages(write_package(tmp_path, modules))
    assert ONLY_OUTSIDE_CALLERS not in message


def test_a_function_never_called_is_reported(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"gen": trim_module("")})
    assert codes(package) == ["SLG002"]


# ----- callers that are not all visible ----------------------------------------------------------

USED_AS_A_VALUE = {
    "passed": "HANDLERS = list(map(_trim, [[0]], [DynamicCache()]))",
    "stored": "HANDLERS = {'trim': _trim}",
    "aliased": "trim = _trim",
    "exported": "__all__ = ['_trim']",
    "by-name": "TRIM = globals()['_trim']",
    "returned": "def handler():\n    return _trim",
}


@pytest.mark.parametrize("use", sorted(USED_AS_A_VALUE))
def test_a_private_function_used_as_a_value_is_reported(use: str, tmp_path: Path) -> None:
    callers = textwrap.dedent(INT_CALLERS["local-constructor"]) + "\n\n" + USED_AS_A_VALUE[use] + "\n"
    package = write_package(tmp_path, {"gen": trim_module(callers)})
    assert codes(package) == ["SLG002"]


def test_a_decorated_private_function_is_reported(tmp_path: Path) -> None:
    module = trim_module(INT_CALLERS["local-constructor"]).replace("def _trim", "@register\ndef _trim")
    package = write_package(tmp_path, {"gen": "from .registry import register\n" + module})
    assert codes(package) == ["SLG002"]


@pytest.mark.parametrize(
    "other",
    [
        "from .gen import _trim\n",
        "from .gen import (\n    run,\n    _trim as trim,\n)\n",
        "from . import gen\n\n\ndef f(x, c):\n    return gen._trim(x, c)\n",
        "import importlib\n\nTRIM = getattr(importlib.import_module('zoo.gen'), '_trim')\n",
    ],
    ids=["import", "import-as", "attribute", "string"],
)
def test_a_private_function_another_module_names_is_reported(other: str, tmp_path: Path) -> None:
    package = write_package(tmp_path, {"gen": trim_module(INT_CALLERS["local-constructor"]), "other": other})
    assert codes(package) == ["SLG002"]


@pytest.mark.parametrize(
    "other",
    ["def _trim_all():\n    pass\n", "def _trim(ids, cache):\n    return ids\n\n\nX = _trim([0], None)\n"],
    ids=["longer-name", "its-own-copy"],
)
def test_another_module_naming_something_else_does_not_matter(other: str, tmp_path: Path) -> None:
    """A longer name, or another module's own function of the same name (copied code), is not this one."""
    package = write_package(tmp_path, {"gen": trim_module(INT_CALLERS["local-constructor"]), "other": other})
    assert codes(package) == []


def test_a_module_outside_a_package_is_reported(tmp_path: Path) -> None:
    """Any script beside it may import the function: its callers are not all known."""
    (tmp_path / "gen.py").write_text(trim_module(INT_CALLERS["local-constructor"]))
    checked = check_path(str(tmp_path / "gen.py"), Settings())
    assert [finding.code for finding in checked.findings] == ["SLG002"]


# ----- the parameter itself -------------------------------------------------------------------------


def test_a_parameter_rebound_before_its_length_is_asked_is_reported(tmp_path: Path) -> None:
    module = """\
        from transformers import DynamicCache


        def _trim(input_ids, cache, other):
            if other is not None:
                cache = other
            return input_ids[:, cache.get_seq_length():]


        def run(input_ids, other):
            return _trim(input_ids, DynamicCache(), other)
    """
    assert codes(write_package(tmp_path, {"gen": module})) == ["SLG002"]


def test_a_parameter_given_a_default_cache_when_none_stays_int(tmp_path: Path) -> None:
    module = """\
        from transformers import DynamicCache


        def _trim(input_ids, cache=None):
            if cache is None:
                cache = DynamicCache()
            return input_ids[:, cache.get_seq_length():]


        def run(input_ids):
            return _trim(input_ids), _trim(input_ids, DynamicCache())
    """
    assert codes(write_package(tmp_path, {"gen": module})) == []


def test_a_default_is_read_where_the_function_is_defined(tmp_path: Path) -> None:
    """`cache=SHARED` is the module's `StaticCache`, whatever a caller's own `SHARED` holds."""
    module = """\
        from transformers import DynamicCache, StaticCache

        SHARED = StaticCache(None, max_cache_len=8)


        def _trim(input_ids, cache=SHARED):
            return input_ids[:, cache.get_seq_length():]


        def run(input_ids):
            SHARED = DynamicCache()
            return _trim(input_ids), SHARED
    """
    assert codes(write_package(tmp_path, {"gen": module})) == ["SLG002"]


# ----- a private method: what every `self._step(...)` in its class passes ----------------------------

RUNNER = """\
    import torch
    from transformers import DynamicCache, StaticCache


    class Runner:
        def __init__(self, model):
            self.model = model
            self.cache = DynamicCache()

        {decorator}def {name}(self, ids, cache):
            n = cache.get_seq_length()
            return ids[:, n:]

"""


def runner_module(methods: str, module_level: str = "", name: str = "_step", decorator: str = "") -> str:
    """The `Runner` class with `methods` added to its body, then `module_level`."""
    text = textwrap.dedent(RUNNER).format(name=name, decorator=decorator)
    text += textwrap.indent(textwrap.dedent(methods), "    ")
    return text + ("\n\n" + textwrap.dedent(module_level) if module_level else "")


INT_METHOD_CALLERS = {
    "local-constructor": """\
        def generate(self, ids):
            cache = DynamicCache()
            return self._step(ids, cache)
    """,
    "attribute-built-in-init": """\
        def generate(self, ids):
            return self._step(ids, self.cache)
    """,
    "keyword-and-none": """\
        def generate(self, ids):
            first = self._step(ids, cache=None)
            return self._step(cache=DynamicCache(), ids=first)
    """,
    "private-method-chain": """\
        def _loop(self, ids, past):
            return self._step(ids, past)

        def generate(self, ids):
            return self._loop(ids, DynamicCache())
    """,
    "receiver-not-named-self": """\
        def generate(this, ids):
            return this._step(ids, DynamicCache())
    """,
}

TENSOR_OR_UNKNOWN_METHOD_CALLERS = {
    "one-static-cache": (
        """\
        def reset(self, ids):
            return self._step(ids, StaticCache(self.model.config, max_cache_len=8))
        """,
        "",
    ),
    "public-callers-parameter": (
        """\
        def step(self, ids, cache):
            return self._step(ids, cache)
        """,
        "",
    ),
    "called-on-another-receiver": (
        "",
        """\
        def run(runner, ids, cache):
            return runner._step(ids, cache)
        """,
    ),
    "called-through-the-class": (
        """\
        def reset(self, ids, config):
            return Runner._step(self, ids, StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "a-subclass-calls-it": (
        "",
        """\
        class Fast(Runner):
            def go(self, ids, cache):
                return self._step(ids, cache)
        """,
    ),
    "a-subclass-calls-it-through-super": (
        "",
        """\
        class Fast(Runner):
            def _step(self, ids, cache):
                return super()._step(ids, cache)
        """,
    ),
    "read-as-a-value": (
        """\
        def reset(self, ids, config):
            step = self._step
            return step(ids, StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "named-in-a-string": (
        """\
        def reset(self, ids, config):
            return getattr(self, "_step")(ids, StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "caller-rebinds-its-receiver": (  # read as bound, `ids` would get the runner and `cache` the DynamicCache
        """\
        def reset(self, config):
            runner = self
            self = Runner
            return self._step(runner, DynamicCache(), StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "a-class-method-calls-it-through-cls": (  # as above: `cls._step` is the plain function
        """\
        @classmethod
        def reset(cls, config):
            return cls._step(cls(None), DynamicCache(), StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "receiver-rebound-by-a-walrus-in-a-comprehension": (
        """\
        def reset(self, config):
            runner = self
            [(self := Runner) for _ in range(1)]
            return self._step(runner, DynamicCache(), StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "a-lambda-taking-its-own-self": (  # the lambda's `self` is the class: the plain function again
        """\
        def reset(self, config):
            step = lambda self: self._step(self, DynamicCache(), StaticCache(config, max_cache_len=8))
            return step(Runner)
        """,
        "",
    ),
    "a-class-body-in-the-caller-binds-the-argument": (
        """\
        def reset(self, ids, config):
            cache = DynamicCache()

            class Holder:
                cache = StaticCache(config, max_cache_len=8)
                out = self._step(ids, cache)

            return Holder.out
        """,
        "",
    ),
    "init-subclass-calls-it-through-cls": (  # an implicit class method: `cls._step` is the plain function
        """\
        def __init_subclass__(cls, **kwargs):
            cls._step(cls, DynamicCache(), StaticCache(None, max_cache_len=8))
        """,
        "",
    ),
    "a-class-method-through-an-alias": (
        """\
        @as_class
        def build(cls, model, cache):
            cls._step(cls(model), DynamicCache(), cache)
        """,
        "as_class = classmethod",
    ),
    "a-match-capture-rebinds-the-callers-parameter": (
        """\
        def _loop(self, ids, past, other):
            match other:
                case StaticCache() as past:
                    pass
            return self._step(ids, past)

        def reset(self, ids, other):
            return self._loop(ids, DynamicCache(), other)
        """,
        "",
    ),
    "a-match-capture-rebinds-the-callers-local": (
        """\
        def reset(self, ids, other):
            cache = DynamicCache()
            match other:
                case StaticCache() as cache:
                    pass
            return self._step(ids, cache)
        """,
        "",
    ),
    "an-import-rebinds-the-callers-parameter": (
        """\
        def _loop(self, ids, past):
            from zoo.other import STATIC as past

            return self._step(ids, past)

        def reset(self, ids):
            return self._loop(ids, DynamicCache())
        """,
        "",
    ),
    "named-in-a-string-spelled-otherwise": (
        """\
        def reset(self, ids, config):
            return getattr(self, "_s" "tep")(ids, StaticCache(config, max_cache_len=8))
        """,
        "",
    ),
    "a-nested-function-calls-it": (
        """\
        def reset(self, ids, config):
            def inner():
                return self._step(ids, StaticCache(config, max_cache_len=8))

            return inner()
        """,
        "",
    ),
}
"""Each is added to a class whose `generate` passes its own `DynamicCache` (`local-constructor`)."""


@pytest.mark.parametrize("shape", sorted(INT_METHOD_CALLERS))
def test_a_private_method_whose_every_call_in_its_class_passes_an_int_cache_is_silent(
    shape: str, tmp_path: Path
) -> None:
    """Issue 25 pattern 5, "a method only the package's own loop calls": its module calls it only
    as `self._step(...)` in the class's own methods, and no other module of the package names it."""
    package = write_package(tmp_path, {"gen": runner_module(INT_METHOD_CALLERS[shape])})
    assert codes(package) == []


@pytest.mark.parametrize("shape", sorted(TENSOR_OR_UNKNOWN_METHOD_CALLERS))
def test_a_private_method_with_a_call_that_may_pass_another_cache_is_reported(shape: str, tmp_path: Path) -> None:
    methods, module_level = TENSOR_OR_UNKNOWN_METHOD_CALLERS[shape]
    methods = textwrap.dedent(INT_METHOD_CALLERS["local-constructor"]) + "\n" + textwrap.dedent(methods)
    package = write_package(tmp_path, {"gen": runner_module(methods, module_level)})
    assert codes(package) == ["SLG002"]


NOT_PRIVATE_METHODS = {
    "public": {"name": "step"},
    "name-mangled": {"name": "__step"},  # `runner._Runner__step(...)` anywhere calls it
    "decorated": {"decorator": "@torch.no_grad()\n    "},
}


@pytest.mark.parametrize("variant", sorted(NOT_PRIVATE_METHODS))
def test_a_method_that_is_not_plainly_private_is_reported_whatever_its_class_passes(
    variant: str, tmp_path: Path
) -> None:
    name = NOT_PRIVATE_METHODS[variant].get("name", "_step")
    methods = INT_METHOD_CALLERS["local-constructor"].replace("_step", name)
    package = write_package(tmp_path, {"gen": runner_module(methods, **NOT_PRIVATE_METHODS[variant])})
    assert codes(package) == ["SLG002"]


def test_a_private_method_of_a_decorated_class_is_reported(tmp_path: Path) -> None:
    """A class decorator may call the class's methods itself."""
    text = runner_module(INT_METHOD_CALLERS["local-constructor"]).replace("class Runner:", "@register\nclass Runner:")
    package = write_package(tmp_path, {"gen": "from zoo.registry import register\n" + text, "registry": ""})
    assert codes(package) == ["SLG002"]


CLASSES_THAT_MAY_REACH_THE_METHOD_OTHERWISE = {
    "a-base-outside-the-package": (  # transformers' beam search calls `self._reorder_cache(...)`
        "class Runner:",
        "class Runner(GenerationMixin):",
        "from transformers import GenerationMixin",
    ),
    "a-metaclass": ("class Runner:", "class Runner(metaclass=Wrapping):", "from zoo.registry import Wrapping"),
    "a-base-whose-init-subclass-may-wrap-it": (
        "class Runner:",
        "class Base:\n    def __init_subclass__(cls, **kwargs):\n        wrap(cls)\n\n\nclass Runner(Base):",
        "from zoo.registry import wrap",
    ),
    "getattribute": (
        "    def __init__(self, model):",
        "    def __getattribute__(self, name):\n        return wrap(object.__getattribute__(self, name))\n\n"
        "    def __init__(self, model):",
        "from zoo.registry import wrap",
    ),
    "the-class-rewritten-after-its-statement": ("", "", "from zoo.registry import wrap"),
}


@pytest.mark.parametrize("shape", sorted(CLASSES_THAT_MAY_REACH_THE_METHOD_OTHERWISE))
def test_a_private_method_whose_class_may_be_reached_otherwise_is_reported(shape: str, tmp_path: Path) -> None:
    """Code outside the module (a base's, a metaclass's, a wrapper's) may call the method or replace
    its callers without naming it: `wrap` may pass a `StaticCache`."""
    old, new, imports = CLASSES_THAT_MAY_REACH_THE_METHOD_OTHERWISE[shape]
    text = runner_module(INT_METHOD_CALLERS["local-constructor"]).replace(old, new, 1)
    if shape == "the-class-rewritten-after-its-statement":
        text += "\n\nRunner = wrap(Runner)\n"
    package = write_package(tmp_path, {"gen": imports + "\n" + text, "registry": ""})
    assert codes(package) == ["SLG002"]
    plain = write_package(
        tmp_path / "plain",
        {"gen": imports + "\n" + runner_module(INT_METHOD_CALLERS["local-constructor"]), "registry": ""},
    )
    assert codes(plain) == []  # the twin: the same module without that line


def test_a_name_python_mangles_is_not_taken_for_a_private_method(tmp_path: Path) -> None:
    """In `Runner`, `self.__step(...)` calls the method written `_Runner__step`."""
    methods = """\
        def generate(self, ids):
            return self._Runner__step(ids, DynamicCache())

        def reset(self, ids, config):
            return self.__step(ids, StaticCache(config, max_cache_len=8))
    """
    package = write_package(tmp_path, {"gen": runner_module(methods, name="_Runner__step")})
    assert codes(package) == ["SLG002"]


def test_a_private_method_another_module_calls_is_reported(tmp_path: Path) -> None:
    """A subclass in another module of the package (or any code there) may pass another cache."""
    other = """\
        from zoo.gen import Runner


        class Fast(Runner):
            def go(self, ids, cache):
                return self._step(ids, cache)
    """
    modules = {"gen": runner_module(INT_METHOD_CALLERS["local-constructor"]), "fast": textwrap.dedent(other)}
    assert codes(write_package(tmp_path, modules)) == ["SLG002"]


def test_a_private_method_in_a_module_outside_a_package_is_reported(tmp_path: Path) -> None:
    """Any script beside it may subclass the class: its callers are not all known."""
    script = tmp_path / "gen.py"
    script.write_text(runner_module(INT_METHOD_CALLERS["local-constructor"]))
    assert [finding.code for finding in check_path(str(script), Settings()).findings] == ["SLG002"]


# ----- reduced from real code: vllm-omni 0.30.0 -------------------------------------------------------

SENSENOVA = """\
    import torch
    from transformers import DynamicCache


    class Pipeline:
        def __init__(self, language_model):
            self.language_model = language_model

        def _append_text_tokens_to_cache(self, cache, t_idx, input_ids):
            seq_len = input_ids.shape[1]
            past_len = cache.get_seq_length()
            mask = torch.zeros(1, 1, seq_len, past_len + seq_len)
            self.language_model(input_ids=input_ids, attention_mask=mask, past_key_values=cache, use_cache=True)
            return t_idx + seq_len

        def _generate_think(self, prefix_outputs, past_key_values, t_idx, append_ids):
            for _ in range(4):
                outputs = self.language_model(input_ids=append_ids, past_key_values=past_key_values, use_cache=True)
                past_key_values = outputs.past_key_values
            return self._append_text_tokens_to_cache({cache}, t_idx, append_ids)

        def forward(self, input_ids, append_ids):
            outputs = self.language_model(input_ids=input_ids, use_cache=True)
            return self._generate_think(outputs, outputs.past_key_values, 0, append_ids)
"""


def test_sensenova_a_cache_the_pipeline_builds_reaches_its_private_helper_silently(tmp_path: Path) -> None:
    """The helper's one caller, itself private, hands on a `DynamicCache` built there."""
    package = write_package(tmp_path, {"gen": SENSENOVA.format(cache="DynamicCache()")})
    assert codes(package) == []


def test_sensenova_the_language_models_own_cache_is_still_reported(tmp_path: Path) -> None:
    """As in vllm-omni 0.30.0 (`pipeline_sensenova_u1.py` 856-860, labelled false): the caller passes
    the cache its loop rebinds to the model's outputs, and the first one is the cache the language
    model builds when it is given none, which the engine does not follow (limits.md)."""
    package = write_package(tmp_path, {"gen": SENSENOVA.format(cache="past_key_values")})
    assert codes(package) == ["SLG003"]


# ----- nested functions ---------------------------------------------------------------------------

NESTED = """\
    from transformers import DynamicCache, StaticCache


    def generate(input_ids, config):
        def step(ids, cache):
            return ids[:, cache.get_seq_length():]

        {calls}
"""


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ("return step(input_ids, DynamicCache())", []),
        ("cache = DynamicCache()\n        return step(input_ids, cache=cache)", []),
        ("return step(input_ids, StaticCache(config, max_cache_len=8))", ["SLG002"]),
        ("return step", ["SLG002"]),
        ("return [step(input_ids, c) for c in (DynamicCache(),)]", ["SLG002"]),
        ("return (lambda c: step(input_ids, c))(DynamicCache())", ["SLG002"]),
    ],
    ids=["constructor", "keyword-local", "static-cache", "returned", "comprehension-name", "lambda"],
)
def test_a_nested_function_passes_on_what_its_enclosing_function_passes(
    calls: str, expected: list[str], tmp_path: Path
) -> None:
    module = NESTED.format(calls=calls)
    assert codes(write_package(tmp_path, {"gen": module})) == expected


def test_a_nested_function_shadowed_in_another_function_is_told_apart(tmp_path: Path) -> None:
    """`step` of `other` is another function: its call does not count for `generate`'s."""
    module = textwrap.dedent(NESTED.format(calls="return step(input_ids, DynamicCache())")) + textwrap.dedent(
        """\


        def other(input_ids, cache):
            def step(ids, cache):
                return ids
            return step(input_ids, cache)
        """
    )
    assert codes(write_package(tmp_path, {"gen": module})) == []


# ----- reduced from real code: kvboost 0.9.0 --------------------------------------------------------

KVBOOST = """\
    from typing import Any

    from transformers import DynamicCache


    def _kv_length(past_kv: Any) -> int:
        \"\"\"Get seq length of either DynamicCache or tuple-of-tuples KV.\"\"\"
        if past_kv is None:
            return 0
        if hasattr(past_kv, "get_seq_length"):
            return past_kv.get_seq_length()
        return len(past_kv[0][0])


    class SpeculativeEngine:
        def __init__(self, draft):
            self.draft = draft
            self.verifier_cache = DynamicCache()

        def step(self, input_ids, new_kv_length):
            cur_len = _kv_length({argument})
            if new_kv_length < cur_len:
                return input_ids[:, :new_kv_length]
            return input_ids
"""


def test_kvboost_kv_length_of_a_cache_its_engine_builds_is_silent(tmp_path: Path) -> None:
    """`_kv_length` is module-private; its one caller passes the engine's own `DynamicCache`."""
    package = write_package(tmp_path, {"gen": KVBOOST.format(argument="self.verifier_cache")})
    assert codes(package) == []


def test_kvboost_kv_length_of_the_draft_models_cache_is_reported(tmp_path: Path) -> None:
    """As in kvboost 0.9.0 (`speculative/engine.py`): the caller passes `self.draft.past_kv`, a
    cache the draft model's outputs hold, which the engine does not type (labelled false, cause 5+4)."""
    package = write_package(tmp_path, {"gen": KVBOOST.format(argument="self.draft.past_kv")})
    assert codes(package) == ["SLG005", "SLG004"]


def test_a_cycle_of_private_callers_is_not_followed(tmp_path: Path) -> None:
    """`_b` passes on what `_a` was given and `_a` what `_b` was: no answer is taken from the cycle."""
    module = """\
        from transformers import DynamicCache


        def _a(ids, cache, n):
            if n:
                return _b(ids, cache, n - 1)
            return ids[:, cache.get_seq_length():]


        def _b(ids, cache, n):
            return _a(ids, cache, n)


        def run(ids):
            return _a(ids, DynamicCache(), 2)
    """
    assert codes(write_package(tmp_path, {"gen": module})) == ["SLG002"]


# ----- the same fact for the flake8 plugin and the fixer ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (trim_module(INT_CALLERS["local-constructor"]), []),
        (trim_module(TENSOR_OR_UNKNOWN_CALLERS["one-static-cache"]), ["SLG002"]),
        (runner_module(INT_METHOD_CALLERS["local-constructor"]), []),
        (runner_module(TENSOR_OR_UNKNOWN_METHOD_CALLERS["one-static-cache"][0]), ["SLG002"]),
    ],
    ids=["int-callers", "one-static-cache", "private-method-int-callers", "private-method-one-static-cache"],
)
def test_the_plugin_and_the_fixer_see_what_the_callers_pass(
    text: str, expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checker, the plugin and the fixer agree: a silent module is left alone, its twin guarded."""
    package = write_package(tmp_path, {"module": text})
    monkeypatch.chdir(package)  # the invariants check `module.py`, a module of the package
    found = check_invariants(text, "callers")
    assert [finding.code for finding in found] == expected
    fixed = fix_text("module.py", text, UNSAFE_TOO)
    assert (fixed != text) == bool(expected), fixed
