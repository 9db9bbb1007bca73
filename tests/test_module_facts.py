"""What the engine learns from the whole module: compiled reach through calls, parameter and return
summaries, and what the receiver of `get_seq_length()` is. Each case is small; the silent ones say
why they must stay silent."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.engine.facts.module_text import statement_bindings
from lint_rules.engine.facts.receiver_classes import receiver_classes
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from lint_rules.findings import Finding, FixSafety
from lint_rules.settings import Settings
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT


def findings(code: str, path: str = "example.py", releases: Releases = ALL_RELEASES) -> list[Finding]:
    return analyze_source(textwrap.dedent(code).lstrip("\n"), path, releases=releases)


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in findings(code, releases=releases)]


# ----- compiled reach -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "region"),
    [
        pytest.param(
            """
            class Model(nn.Module):
                def positions(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, n:]

                def forward(self, cache, x):
                    return self.positions(cache, x)
            """,
            "called from Model.forward (line 7)",
            id="method-via-self",
        ),
        pytest.param(
            """
            def positions(cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            class Model(nn.Module):
                def forward(self, cache, x):
                    return positions(cache, x)
            """,
            "called from Model.forward (line 7)",
            id="module-function",
        ),
        pytest.param(
            """
            class Base(nn.Module):
                def positions(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, n:]

            class Model(Base):
                def positions(self, cache, x):
                    return super().positions(cache, x)

                def forward(self, cache, x):
                    return self.positions(cache, x)
            """,
            "called from Model.positions (line 8), which is called from Model.forward (line 11)",
            id="super-then-self",
        ),
        pytest.param(
            """
            class Rope:
                def index(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, n:]

            class Model(nn.Module):
                def __init__(self):
                    self.rope = Rope()

                def forward(self, cache, x):
                    return self.rope.index(cache, x)
            """,
            "called from Model.forward (line 11)",
            id="method-of-an-attribute-built-in-init",
        ),
        pytest.param(
            """
            class Helper:
                def index(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, n:]

            class Model(nn.Module):
                def forward(self, cache, x, helper):
                    return helper.index(cache, x)
            """,
            "called from Model.forward (line 8)",
            id="unknown-receiver-is-taken-as-a-call",
        ),
        pytest.param(
            """
            def step(cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            compiled_step = torch.compile(step)
            """,
            "`step` is compiled, or installed on an object, in this module",
            id="passed-to-torch-compile",
        ),
        pytest.param(
            """
            def fast_forward(module, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            Model.forward = fast_forward
            """,
            "`fast_forward` is compiled, or installed on an object, in this module",
            id="installed-as-forward",
        ),
        pytest.param(
            """
            def _update_causal_mask_patched(self, mask, cache):
                past_seen_tokens = cache.get_seq_length() if cache is not None else 0
                return mask[:, past_seen_tokens:]

            class Patcher:
                def __enter__(self):
                    self._model._update_causal_mask = types.MethodType(_update_causal_mask_patched, self._model)
            """,
            "`_update_causal_mask_patched` is compiled, or installed on an object, in this module",
            id="installed-as-a-method-the-forward-calls",
        ),
        pytest.param(
            """
            def rotary(module, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def patch(model):
                for layer in model.layers:
                    setattr(layer.attn, "rotary", functools.partial(rotary, layer.attn))
            """,
            "`rotary` is compiled, or installed on an object, in this module",
            id="installed-by-setattr",
        ),
        pytest.param(
            """
            class Patches:
                def patched(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, n:]

            def install(model, name):
                model.forward, model.extra = (Patches.patched, None)
                setattr(model, name, Patches().patched.__get__(model))
            """,
            "`patched` is compiled, or installed on an object, in this module",
            id="installed-through-a-tuple-a-class-attribute-or-a-computed-name",
        ),
        pytest.param(
            """
            ATTENTION_FUNCTIONS = {}

            def sdpa_attention(module, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            ATTENTION_FUNCTIONS["sdpa"] = sdpa_attention
            """,
            "`sdpa_attention` is compiled, or installed on an object, in this module",
            id="installed-in-a-table",
        ),
        pytest.param(
            """
            def sample(self, x, cache):
                n = cache.get_seq_length()
                return x[:, n:]

            model.forward = types.MethodType(sample, model)
            """,
            "`sample` is compiled, or installed on an object, in this module",
            id="named-like-a-generation-method-but-installed-as-forward",
        ),
        pytest.param(
            """
            def patched(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def install(model):
                fn = patched
                model.forward = types.MethodType(fn, model)
            """,
            "`patched` is compiled, or installed on an object, in this module",
            id="installed-through-a-local-alias",
        ),
        pytest.param(
            """
            def gaudi_llama_forward(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]
            """,
            "a replacement `forward` (a function taking `self`, named as a forward)",
            id="replacement-forward",
        ),
        pytest.param(
            """
            class ReferenceLayer(DynamicSlidingWindowLayer):
                def get_mask_sizes(self, query_length):
                    kv_length = self.extra.get_seq_length() + 1
                    return kv_length, 0
            """,
            "`get_mask_sizes` of a cache class, called by attention and mask code inside a model's forward",
            id="cache-protocol-method",
        ),
    ],
)
def test_what_a_compiled_region_reaches_is_compiled(code: str, region: str) -> None:
    found = findings(code)
    assert found, "the case must produce a finding"
    for finding in found:
        assert finding.compiled_region == region
        assert finding.fix.safety is FixSafety.UNSAFE
        assert region in finding.fix.reason


def test_host_code_that_no_compiled_region_calls_stays_safe() -> None:
    [finding] = findings(
        """
        class Model(nn.Module):
            def prepare_inputs_for_generation(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def forward(self, x):
                return self.layers(x)

        def generate(model, cache, x):
            return model.prepare_inputs_for_generation(cache, x)
        """
    )
    assert finding.compiled_region == ""
    assert finding.fix.safety is FixSafety.SAFE


def test_a_generation_hook_installed_on_a_model_stays_host_code() -> None:
    """peft and gptqmodel install their own `prepare_inputs_for_generation` on the model: the
    generation loop calls it between forwards, on the host, so its guard is safe."""
    [finding] = findings(
        """
        def prepare(self, input_ids, past_key_values=None):
            past = past_key_values.get_seq_length()
            return input_ids[:, past:]

        def wrap(model):
            model.prepare_inputs_for_generation = types.MethodType(prepare, model)
            model.callback = None
        """
    )
    assert finding.compiled_region == ""
    assert finding.fix.safety is FixSafety.SAFE


def test_a_generation_method_kept_under_another_name_stays_host_code() -> None:
    """peft: `self.base_model_prepare_inputs_for_generation = self.base_model.prepare_inputs_for_generation`
    keeps the base model's method to call it from its own, which the generation loop runs."""
    [finding] = findings(
        """
        class PeftModel:
            def __init__(self, base_model):
                self.base_model_prepare_inputs_for_generation = base_model.prepare_inputs_for_generation
                base_model.prepare_inputs_for_generation = self.prepare_inputs_for_generation

            def prepare_inputs_for_generation(self, input_ids, past_key_values=None):
                model_kwargs = self.base_model_prepare_inputs_for_generation(input_ids)
                if past_key_values.get_seq_length() >= input_ids.shape[1]:
                    model_kwargs["input_ids"] = input_ids[:, -1:]
                return model_kwargs
        """
    )
    assert finding.compiled_region == ""
    assert finding.fix.safety is FixSafety.SAFE


def test_a_function_bound_to_a_local_name_and_called_stays_host_code() -> None:
    """Must stay host code: `helper = host_helper` is called, never installed on an object."""
    [finding] = findings(
        """
        def host_helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        def run(cache, x):
            helper = host_helper
            return helper(cache, x)
        """
    )
    assert finding.compiled_region == ""


def test_a_generation_method_replaced_on_the_mixin_stays_host_code() -> None:
    """optimum-habana style: the upstream bug's own site, `_prefill`, replaced on `GenerationMixin`."""
    [finding] = findings(
        """
        def gaudi_prefill(self, input_ids, model_kwargs):
            past_length = model_kwargs["past_key_values"].get_seq_length()
            return input_ids[:, past_length:]

        GenerationMixin._prefill = gaudi_prefill
        """
    )
    assert finding.compiled_region == ""


def test_a_method_named_like_a_forward_is_host_code_unless_a_region_calls_it() -> None:
    """kvpress's pipeline: `Pipeline._forward` runs in the host loop; only a *function* outside a class
    named as a forward is taken as a patched-in replacement forward."""
    [finding] = findings(
        """
        class MyPipeline(Pipeline):
            def _forward(self, inputs, cache=None):
                n = cache.get_seq_length()
                return inputs[:, n:]
        """
    )
    assert finding.compiled_region == ""
    assert finding.fix.safety is FixSafety.SAFE


def test_a_call_cycle_reaches_nothing_new() -> None:
    found = findings(
        """
        def ping(cache, x, depth):
            n = cache.get_seq_length()
            return pong(cache, x[:, n:], depth - 1)

        def pong(cache, x, depth):
            return ping(cache, x, depth) if depth else x
        """
    )
    assert [(f.line, f.compiled_region) for f in found] == [(3, "")]


# ----- parameter summaries --------------------------------------------------------------------


def test_argument_used_as_an_int_by_the_callee_is_reported_at_the_call() -> None:
    arithmetic, finding = findings(
        """
        class Generator:
            def prepare_inputs_for_generation(self, input_ids, next_sequence_length=None):
                return input_ids[:, -next_sequence_length:]

            def prefill(self, cache, input_ids):
                n = input_ids.shape[1] - cache.get_seq_length()
                return self.prepare_inputs_for_generation(input_ids, next_sequence_length=n)
        """
    )
    assert (arithmetic.line, arithmetic.code) == (6, "SLG001")
    assert (finding.line, finding.code, finding.col) == (7, "SLG002", 82)
    assert finding.message.startswith(
        "passed as `next_sequence_length` to `prepare_inputs_for_generation()` (line 3), "
        "which uses it as slice bound `-next_sequence_length`:"
    )
    assert finding.fix.safety is FixSafety.SAFE
    assert finding.fix == arithmetic.fix, "one plan for both: hoist the call on line 6"


def test_parameter_uses_are_followed_through_further_calls() -> None:
    [finding] = findings(
        """
        def inner(x, n):
            return torch.zeros(n)

        def outer(x, n):
            return inner(x, n)

        def run(cache, x):
            return outer(x, cache.get_seq_length())
        """
    )
    assert finding.code == "SLG003"
    assert finding.message.startswith(
        "passed as `n` to `outer()` -> `inner()` (line 2), which uses it as size argument of `torch.zeros()`:"
    )


def test_submodule_forward_gets_the_argument() -> None:
    """`self.rotary_emb(value_states, seq_len=kv_seq_len)` with the rotary class in the same module."""
    arithmetic, finding = findings(
        """
        class Rotary(nn.Module):
            def forward(self, x, seq_len=None):
                if seq_len > self.max_seq_len_cached:
                    self.grow(seq_len)
                return x

        class Attention(nn.Module):
            def __init__(self):
                self.rotary_emb = Rotary()

            def forward(self, x, cache):
                kv_seq_len = x.shape[-2] + cache.get_seq_length()
                return self.rotary_emb(x, seq_len=kv_seq_len)
        """
    )
    assert (arithmetic.line, arithmetic.code) == (12, "SLG001")
    assert (finding.line, finding.code) == (13, "SLG004")
    assert "passed as `seq_len` to `forward()` (line 3), which uses it as Python truth test" in finding.message


def test_positional_arguments_skip_self_and_stop_at_a_starred_one() -> None:
    found = codes(
        """
        class C:
            def take(self, a, b):
                return b[:a]

            def run(self, cache, args):
                n = cache.get_seq_length()
                self.take(n, args)
                self.take(*args, n)
        """
    )
    assert found == [(7, "SLG002")]


@pytest.mark.parametrize(
    ("code", "why"),
    [
        (
            """
            def positions(length, n):
                return torch.arange(length) + n

            def run(cache, x):
                return positions(x.shape[1], cache.get_seq_length())
            """,
            "the callee only does tensor arithmetic with it: the compile-friendly pattern",
        ),
        (
            """
            def describe(n):
                return f"{n} tokens"

            def run(cache):
                return describe(cache.get_seq_length())
            """,
            "the callee does nothing int-like with it",
        ),
        (
            """
            def run(cache, x, helper):
                return helper.take(cache.get_seq_length())
            """,
            "the callee is unknown: nothing says it needs an int",
        ),
    ],
)
def test_passing_the_length_stays_silent(code: str, why: str) -> None:
    assert codes(code) == [], why


# ----- return summaries -----------------------------------------------------------------------


def test_a_function_returning_a_source_is_a_source_for_its_callers() -> None:
    [finding] = findings(
        """
        class Model:
            def past_length(self):
                return self.cache.get_seq_length() if self.cache is not None else 0

            def trim(self, x):
                return x[:, self.past_length():]
        """
    )
    assert (finding.line, finding.code) == (6, "SLG002")
    assert "from `past_length()` on line 6" in finding.message


def test_returned_sources_are_followed_through_several_functions() -> None:
    found = codes(
        """
        def offset(cache):
            return cache.get_seq_length()

        def past(cache):
            return offset(cache)

        def trim(cache, x):
            n = past(cache)
            return x[:, n:]
        """
    )
    assert found == [(9, "SLG002")]


def test_get_query_offset_is_a_source_by_default() -> None:
    assert codes(
        """
        def mask(cache, x, layer_idx):
            offset = cache.get_query_offset(layer_idx)
            return x[:, offset:]
        """
    ) == [(3, "SLG002")]


def test_a_parameter_returned_carries_the_argument_taint() -> None:
    assert codes(
        """
        def same(n):
            return n

        def trim(cache, x):
            return x[:, same(cache.get_seq_length()):]
        """
    ) == [(5, "SLG002")]


# ----- receivers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "why"),
    [
        (
            """
            from transformers import DynamicCache

            class MyCache:
                def get_seq_length(self):
                    n = self.keys.shape[-2] if self.keys is not None else 0
                    return n

                def crop(self, x):
                    return x[:, self.get_seq_length():]
            """,
            "the override returns an int through a local",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache: DynamicCache, x):
                return x[:, cache.get_seq_length():]
            """,
            "the parameter is annotated with an int-length cache class",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache: "DynamicCache | None", x):
                return x[:, cache.get_seq_length():]
            """,
            "a string annotation, Optional included",
        ),
        (
            """
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:
                from transformers.cache_utils import DynamicCache

            class Runner:
                _cache: DynamicCache | None

                def trim(self, x):
                    return x[:, self._cache.get_seq_length():]
            """,
            "a class attribute annotated with a class imported for type checking",
        ),
        (
            """
            from transformers import DynamicCache

            class Runner:
                def __init__(self):
                    self._cache: Optional[DynamicCache] = None

                def trim(self, x):
                    return x[:, self._cache.get_seq_length():]
            """,
            "an attribute annotated where it is first bound",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(past, x):
                cache = DynamicCache.from_legacy_cache(past)
                return x[:, cache.get_seq_length():]
            """,
            "bound from an int-length class's constructor",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache, x):
                if isinstance(cache, DynamicCache):
                    return x[:, cache.get_seq_length():]
                return x
            """,
            "narrowed by isinstance in an `if`",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache, x):
                if isinstance(cache, DynamicCache) and cache.get_seq_length() > 0:
                    return x
                return None
            """,
            "narrowed earlier in the same `and` chain",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache, x):
                assert isinstance(cache, DynamicCache)
                return x[:, cache.get_seq_length():]
            """,
            "narrowed by an assert",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache, x):
                if not isinstance(cache, DynamicCache):
                    raise TypeError("needs a DynamicCache")
                return x[:, cache.get_seq_length():]
            """,
            "narrowed by an early raise",
        ),
        (
            """
            from transformers import DynamicCache

            def trim(cache, x):
                if not isinstance(cache, DynamicCache):
                    cache = DynamicCache.from_legacy_cache(cache)
                return x[:, cache.get_seq_length():]
            """,
            "converted to an int-length cache on the other branch",
        ),
        (
            """
            from transformers.cache_utils import DynamicLayer

            class MyLayer(DynamicLayer):
                def crop(self, x):
                    return x[:, self.get_seq_length():]
            """,
            "a subclass of an int-length transformers class that does not override it",
        ),
        (
            """
            from transformers import DynamicCache

            class Counter:
                def __init__(self):
                    self._seen = torch.zeros(1, dtype=torch.long)

                def step(self, cache):
                    self._seen = self._seen + cache.get_seq_length()
            """,
            "the attribute is built as a tensor: tensor arithmetic",
        ),
        (
            """
            from transformers import DynamicCache

            class MtpCache(DynamicCache):
                def get_query_offset(self, layer_idx):
                    return super().get_query_offset(layer_idx) + self.mtp_offset
            """,
            "`super()` of an int-length class",
        ),
        (
            """
            from transformers.cache_utils import StaticSlidingWindowLayer

            class ReferenceLayer(StaticSlidingWindowLayer):
                def get_mask_sizes(self, query_length):
                    kv_length = max(self.window, self.kept + super().get_seq_length() + query_length)
                    return kv_length, 0
            """,
            "the static sliding-window layer keeps an int mirror of its length (transformers 5.24.0's "
            "UnlimitedOcrStaticReferenceSlidingWindowLayer)",
        ),
    ],
)
def test_receiver_with_an_int_length_stays_silent(code: str, why: str) -> None:
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == [], why
    if why in SHOWN_A_DYNAMIC_CACHE_OF_ANY_CONFIG:  # the twin: from 5.25 on, one may count a tensor
        lines = textwrap.dedent(code).lstrip("\n").splitlines()
        reported = [line for line, _ in codes(code)]
        assert reported and all("get_seq_length" in lines[line - 1] for line in reported), why
    else:
        assert codes(code) == [], why


SHOWN_A_DYNAMIC_CACHE_OF_ANY_CONFIG = {
    "the parameter is annotated with an int-length cache class",
    "a string annotation, Optional included",
    "a class attribute annotated with a class imported for type checking",
    "an attribute annotated where it is first bound",
    "narrowed by isinstance in an `if`",
    "narrowed earlier in the same `and` chain",
    "narrowed by an assert",
    "narrowed by an early raise",
    "converted to an int-length cache on the other branch",
}
"""Receivers shown to be a `DynamicCache`, not one built without a config (`DynamicCache()`)."""


@pytest.mark.parametrize(
    "code",
    [
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache: StaticCache, x):
            return x[:, cache.get_seq_length():]
        """,
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache: DynamicCache | StaticCache, x):
            return x[:, cache.get_seq_length():]
        """,
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache: Cache, x):
            return x[:, cache.get_seq_length():]
        """,
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache, x):
            if isinstance(cache, DynamicCache):
                pass
            else:
                return x[:, cache.get_seq_length():]
        """,
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache, x, flag):
            if isinstance(cache, DynamicCache) or flag:
                return x[:, cache.get_seq_length():]
        """,
        """
        from transformers import Cache, DynamicCache, StaticCache

        def trim(cache, x):
            cache = DynamicCache()
            cache = make_cache()
            return x[:, cache.get_seq_length():]
        """,
        """
        class Wrapper:
            def get_seq_length(self, layer_idx=0):
                return self.inner.get_seq_length()

        def trim(cache: Wrapper, x):
            return x[:, cache.get_seq_length():]
        """,
    ],
    ids=["static", "union-with-static", "abstract-cache", "else-branch", "or-chain", "rebound", "delegate-never-bound"],
)
def test_receiver_that_may_hold_a_tensor_length_is_still_reported(code: str) -> None:
    assert [code for _, code in codes(code)] == ["SLG002"]


def test_an_int_length_class_in_a_sibling_module_is_read_from_disk(tmp_path: Path) -> None:
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caches.py").write_text(
        textwrap.dedent(
            """
            class CountingCache:
                def __init__(self):
                    self.seen = 0

                def get_seq_length(self):
                    return self.seen
            """
        )
    )
    (package / "model.py").write_text(
        textwrap.dedent(
            """
            from .caches import CountingCache

            def trim(cache: CountingCache, x):
                return x[:, cache.get_seq_length():]

            def trim_any(cache, x):
                return x[:, cache.get_seq_length():]
            """
        )
    )
    result = check_path(str(package / "model.py"), Settings())
    assert [(finding.line, finding.function) for finding in result.findings] == [(8, "trim_any")]


# ----- single-function gaps -------------------------------------------------------------------


def test_adding_a_length_to_an_int_is_int_arithmetic() -> None:
    assert codes(
        """
        def total(cache, x):
            n = x.shape[-2]
            n += cache.get_seq_length()
            return n
        """
    ) == [(3, "SLG001")]


def test_a_tuple_compared_carries_the_taint_of_its_elements() -> None:
    assert codes(
        """
        def check(attn, cache, bsz, heads, q_len):
            kv_len = cache.get_seq_length()
            if attn.size() != (bsz, heads, q_len, kv_len):
                raise ValueError("bad shape")
        """
    ) == [(3, "SLG004")]


def test_a_function_bound_as_a_forward_is_compiled() -> None:
    [finding] = findings(
        """
        import types

        def patched(module, cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        def install(model):
            model.forward = types.MethodType(patched, model)
        """
    )
    assert finding.compiled_region == "`patched` is compiled, or installed on an object, in this module"


def test_a_guard_under_not_is_compiling_is_safe_in_a_forward() -> None:
    """The branch never runs while Dynamo traces, so the guard adds no graph break."""
    [finding] = findings(
        """
        class Model(nn.Module):
            def forward(self, cache, x):
                if not torch.compiler.is_compiling():
                    n = cache.get_seq_length()
                    x = x[:, n:]
                return x
        """
    )
    assert finding.compiled_region == "forward method"
    assert finding.fix.safety is FixSafety.SAFE


@pytest.mark.parametrize(
    ("code", "why"),
    [
        (
            """
            def bias(cache, q):
                context = torch.arange(q)[:, None] + cache.get_seq_length()
                return (context > 0).to(torch.long) * 16
            """,
            "an index of a torch call is a full tensor: tensor arithmetic (T5's compute_bias)",
        ),
        (
            """
            def positions(cache, q):
                current = cache.get_seq_length()
                return current - q + torch.arange(q)
            """,
            "the int arithmetic only feeds tensor arithmetic",
        ),
    ],
)
def test_tensor_arithmetic_found_on_real_code_stays_silent(code: str, why: str) -> None:
    assert findings(code) == [], why


def test_a_method_of_a_class_that_forward_builds_does_not_run_in_forward() -> None:
    """unsloth's `_ngram_tracking_cache_class`: `crop` runs in the generation loop, on the host."""
    [finding] = findings(
        """
        def make(base):
            class Tracking(base):
                def crop(self, x, cache):
                    return x[:, : cache.get_seq_length()]

            return Tracking

        class Model(nn.Module):
            def forward(self, cache):
                cache.__class__ = make(type(cache))
        """
    )
    assert finding.compiled_region == ""


def test_compiled_reach_does_not_depend_on_the_order_of_a_call_cycle() -> None:
    """`b` is called from `a`, which `forward` calls; `b` also calls `a` back (a cycle)."""
    found = findings(
        """
        def a(cache, x):
            n = cache.get_seq_length()
            b(cache, x)
            return x[:n]

        def b(cache, x):
            if x is None:
                return a(cache, x)
            m = cache.get_seq_length()
            return x[:m]

        class M(nn.Module):
            def forward(self, cache, x):
                return a(cache, x)
        """
    )
    assert [(f.function, f.fix.safety) for f in found] == [("a", FixSafety.UNSAFE), ("b", FixSafety.UNSAFE)]
    assert found[1].compiled_region == "called from a (line 3), which is called from M.forward (line 14)"


def test_a_call_chain_deeper_than_the_limit_is_taken_as_compiled() -> None:
    chain = "\n".join(f"def f{i}(cache, x):\n    return f{i + 1}(cache, x)\n" for i in range(14))
    code = f"{chain}\ndef f14(cache, x):\n    return x[: cache.get_seq_length()]\n\n"
    code += "class M(nn.Module):\n    def forward(self, cache, x):\n        return f0(cache, x)\n"
    [finding] = analyze_source(code, "example.py")
    assert finding.fix.safety is FixSafety.UNSAFE
    assert "taken as compiled" in finding.compiled_region


def test_parameter_summaries_do_not_depend_on_the_order_of_a_call_cycle() -> None:
    """`g` and `h` call each other; both callers pass a length that `g` slices with."""
    found = codes(
        """
        def caller1(cache, x):
            n = cache.get_seq_length()
            return g(x, n)

        def caller2(cache, x):
            n = cache.get_seq_length()
            return h(x, n)

        def g(x, n):
            if x is None:
                return h(x, n)
            return x[:n]

        def h(x, n):
            return g(x, n)
        """
    )
    assert found == [(3, "SLG002"), (7, "SLG002")]


def test_a_self_recursive_function_gets_its_summary() -> None:
    assert codes(
        """
        def trim(x, n, depth):
            if depth:
                return trim(x, n, depth - 1)
            return x[:n]

        def run(cache, x):
            return trim(x, cache.get_seq_length(), 3)
        """
    ) == [(7, "SLG002")]


def test_rebinding_a_name_forgets_what_its_attributes_held() -> None:
    assert codes(
        """
        from transformers import DynamicCache

        def f(a, b, x):
            a.cache = DynamicCache()
            a = b
            n = a.cache.get_seq_length()
            return x[:n]
        """
    ) == [(7, "SLG002")]


def test_finally_is_walked_when_every_path_exits() -> None:
    assert codes(
        """
        def f(cache, x):
            try:
                return x
            finally:
                n = cache.get_seq_length()
                print(x[:n])
        """
    ) == [(6, "SLG002")]


def test_taint_reaches_the_start_of_a_loop_through_a_chain_of_bindings() -> None:
    assert codes(
        """
        def f(cache, xs, a, b):
            for x in xs:
                print(x[:a])
                a = b
                b = cache.get_seq_length()
        """
    ) == [(3, "SLG002")]


def test_a_function_dynamo_is_told_to_skip_runs_eagerly_even_when_forward_calls_it() -> None:
    [finding] = findings(
        """
        class Model(nn.Module):
            @torch.compiler.disable
            def positions(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def forward(self, cache, x):
                return self.positions(cache, x)
        """
    )
    assert finding.compiled_region == ""
    assert finding.fix.safety is FixSafety.SAFE


# ----- what a statement binds: one answer for every binding form ---------------------------------

STATEMENT_BINDINGS = {
    "x = y = f()": {"x", "y"},
    "import a.b as c, d.e": {"c", "d"},
    "def f(p, q=(r := 1)):\n    s = 2": {"f", "r"},  # its parameters and body bind in its own scope
    "class C(B, metaclass=(M := Meta)):\n    x = 1": {"C", "M"},
    "handler = lambda p: p": {"handler"},
    "try:\n    pass\nexcept (E := Error) as e:\n    inner = 1": {"E", "e"},  # a block's statements count on their own
    "match s:\n    case [a, *b] | {'k': a, **b}:\n        pass": {"a", "b"},
    "with f() as (g, h):\n    pass": {"g", "h"},
    "for i, j in k:\n    pass": {"i", "j"},
    "if (w := f()):\n    inner = 1": {"w"},
    "del z": {"z"},
    "global q": {"q"},
    "total = [v for v in (u := items)]": {"total", "u", "v"},  # `v` is the comprehension's: counted too
}


@pytest.mark.parametrize(("statement", "bound"), STATEMENT_BINDINGS.items(), ids=STATEMENT_BINDINGS.keys())
def test_what_a_statement_binds_in_its_own_scope(statement: str, bound: set[str]) -> None:
    assert set(statement_bindings(ast.parse(statement).body[0])) == bound


LOCAL_REBINDINGS = [
    "def helper():\n    pass",
    "class helper:\n    pass",
    "import helper",
    "try:\n    pass\nexcept E as helper:\n    pass",
    "match x:\n    case {**helper}:\n        pass",
]


@pytest.mark.parametrize("rebinding", LOCAL_REBINDINGS)
def test_a_local_rebound_by_any_binding_form_shows_no_receiver_class(rebinding: str) -> None:
    """`helper = Helper()` shows the receiver's class only while no other binding of the function
    (one form of `module_text.declared_names`, the one answer every fact asks) may replace it."""
    assert "helper" in receivers_shown("")
    assert "helper" not in receivers_shown(rebinding)


def receivers_shown(rebinding: str) -> set[str]:
    source = "def run(x):\n    helper = Helper()\n" + textwrap.indent(rebinding, "    ") + "\n    return helper.m(x)\n"
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return set(receiver_classes(function)[0])
