"""Model outputs (issue 25, pattern 4; `lint_rules/engine/flow/model_outputs.py`): a model given
`past_key_values=cache` updates that cache in place and returns it as `outputs.past_key_values`, so
the length asked of the outputs' cache is `cache`'s. And a cache the code rebuilds from tensors
(`DynamicCache()` filled by `update`, `DynamicCache.from_legacy_cache(...)`) counts an int.

Each silent shape is reduced from real code (the package is named) and has its must-report twin: the
same shape given a `StaticCache`, a cache of unknown class, no cache (the model builds its own, which
is not followed), or a later store that replaces the outputs' cache."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from tests.release_rows import CACHE_RENAMED, DYNAMIC_CACHE_COUNTS_INT


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[tuple[int, str]]:
    text = textwrap.dedent(code).lstrip("\n")
    return [(finding.line, finding.code) for finding in analyze_source(text, "m.py", releases=releases)]


SPECULATIVE_DRAFT = """
    from transformers import DynamicCache, {cache}


    class Engine:
        def draft(self, input_ids, steps):
            past_key_values = {cache}()
            for _ in range(steps):
                out = self.model(input_ids=input_ids[:, -1:], past_key_values=past_key_values, use_cache=True)
                past_key_values = out.past_key_values
            kept = past_key_values.get_seq_length()
            return input_ids[:, kept:]
"""
"""csaq-quant 0.6.0 `CSAQInferenceEngine._generate_speculative` and kvboost 0.9.0's draft loop: the
cache is only ever `out.past_key_values` of the model given the loop's own cache."""

REBUILT_FROM_TUPLES = """
    from transformers import DynamicCache, {cache}


    class InferenceEngine:
        def decode(self, input_ids, past_kv):
            cache = {cache}()
            for layer_k, layer_v in past_kv:
                cache.update(layer_k, layer_v, len(cache))
            out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True)
            n = out.past_key_values.get_seq_length()
            return input_ids[:, n:]
"""
"""kvboost 0.9.0 `InferenceEngine._as_cache` (a `DynamicCache` filled by `update` from the stored
tuples), inlined into its caller `_decode_with_kv`."""

PREFIX_THEN_SUFFIX = """
    from transformers import DynamicCache, {cache}


    class Decoder:
        def prefix(self, hidden, prefix_frames):
            prefix_cache = {cache}(config=self.config)
            prefix_result = self.pre_transformer.forward(
                inputs_embeds=hidden[:, :prefix_frames, :], past_key_values=prefix_cache, use_cache=True
            )
            prefix_cache = prefix_result.past_key_values
            return hidden[:, prefix_cache.get_seq_length() :, :]
"""
"""vllm-omni 0.30.0 Qwen3-TTS tokenizer decoder (`modeling_qwen3_tts_tokenizer_v2.py` 1102-1106):
the prefix cache is `DynamicCache(config=...)`, then the outputs' cache of the decoder given it."""

FROM_LEGACY = """
    from transformers import DynamicCache, {cache}


    def step(model, input_ids, legacy):
        outputs = model(input_ids, past_key_values={cache}.from_legacy_cache(legacy), use_cache=True)
        return input_ids[:, outputs.past_key_values.get_seq_length() :]
"""
"""The 4.x form of the same: a cache rebuilt from legacy tuples (`DynamicCache.from_legacy_cache`)."""

SHAPES = [
    pytest.param(SPECULATIVE_DRAFT, 11, id="draft-loop-keeps-the-outputs-cache"),
    pytest.param(REBUILT_FROM_TUPLES, 11, id="cache-rebuilt-by-update-then-outputs"),
    pytest.param(PREFIX_THEN_SUFFIX, 11, id="forward-given-a-built-cache"),
    pytest.param(FROM_LEGACY, 6, id="outputs-of-a-from-legacy-cache"),
]


@pytest.mark.parametrize(("code", "line"), SHAPES)
def test_the_outputs_of_a_model_given_an_int_length_cache_have_an_int_length(code: str, line: int) -> None:
    assert codes(code.format(cache="DynamicCache"), DYNAMIC_CACHE_COUNTS_INT) == []


def test_the_outputs_of_a_model_given_a_dynamic_cache_built_from_a_config_may_count_a_tensor() -> None:
    """From 5.25 on, `DynamicCache(config=...)` starts with a layer that counts in a tensor when the
    config's first layer is linear attention; the same cache built from no config counts ints."""
    assert codes(PREFIX_THEN_SUFFIX.format(cache="DynamicCache")) == [(11, "SLG002")]
    assert codes(PREFIX_THEN_SUFFIX.format(cache="DynamicCache").replace("(config=self.config)", "()")) == []


@pytest.mark.parametrize(("code", "line"), SHAPES)
def test_the_outputs_of_a_model_given_a_static_cache_are_reported(code: str, line: int) -> None:
    assert codes(code.format(cache="StaticCache")) == [(line, "SLG002")]


SILENT = [
    pytest.param(
        """
        from transformers import DynamicCache

        def trim(model, input_ids):
            return input_ids[:, model(input_ids, past_key_values=DynamicCache()).past_key_values.get_seq_length() :]
        """,
        id="inline-outputs",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def chained(model, input_ids):
            out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
            out = model(input_ids[:, -1:], past_key_values=out.past_key_values, use_cache=True)
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        id="outputs-of-outputs",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        class Runner:
            def step(self, input_ids):
                out = self.model(input_ids, past_key_values=DynamicCache(), use_cache=True)
                self.past = out.past_key_values
                return input_ids[:, self.past.get_seq_length() :]
        """,
        id="outputs-cache-kept-in-an-attribute",
    ),
    pytest.param(
        """
        from transformers import DynamicCache, StaticCache

        def replaced_then_restored(model, input_ids):
            out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
            out.past_key_values = StaticCache()
            out.past_key_values = DynamicCache()
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        id="outputs-cache-replaced-by-an-int-length-cache",
    ),
]


@pytest.mark.parametrize("code", SILENT)
def test_silent(code: str) -> None:
    assert codes(code) == []


REPORTED = [
    pytest.param(
        """
        def step(model, input_ids, cache):
            out = model(input_ids, past_key_values=cache, use_cache=True)
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        [(3, "SLG002")],
        id="given-a-cache-of-unknown-class",
    ),
    pytest.param(
        """
        def step(model, input_ids):
            out = model(input_ids, past_key_values=None, use_cache=True)
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        [(3, "SLG002")],
        # the model builds its own cache: a `DynamicCache` for most, a tensor-length one for some
        # (4.4x Gemma2's `HybridCache`); not followed
        id="given-no-cache",
    ),
    pytest.param(
        """
        from transformers import DynamicCache, StaticCache

        def replaced(model, input_ids):
            out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
            out.past_key_values = StaticCache()
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        [(6, "SLG002")],
        id="outputs-cache-replaced-by-an-attribute-store",
    ),
    pytest.param(
        """
        from transformers import DynamicCache, StaticCache

        def replaced(model, input_ids):
            out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
            out["past_key_values"] = StaticCache()
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        [(6, "SLG002")],
        id="outputs-cache-replaced-by-an-item-store",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def rebound(model, input_ids, other):
            out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
            if other is not None:
                out = other
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """,
        [(7, "SLG002")],
        id="outputs-rebound-on-one-path",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def positional(model, input_ids, cache):
            out = model(input_ids, cache, past_key_values=DynamicCache())
            return input_ids[:, out[1].get_seq_length() :]
        """,
        [(5, "SLG002")],
        # which item holds the cache depends on the model and on what else it returns: not followed
        id="outputs-cache-by-index",
    ),
]


@pytest.mark.parametrize(("code", "expected"), REPORTED)
def test_reported(code: str, expected: list[tuple[int, str]]) -> None:
    assert codes(code) == expected


# 5.24 renames the keyword and the field to `cache`; `past_key_values` stays a deprecated alias of
# both. A release before 5.24 has no `.cache` field (reading it raises), and its model passes a
# `cache=` keyword into `**kwargs` and builds a cache of its own.
GIVEN_AS_CACHE_READ_AS_CACHE = """
    from transformers import DynamicCache, StaticCache

    def step(model, input_ids, config):
        out = model(input_ids, cache={cache}, use_cache=True)
        return input_ids[:, out.cache.get_seq_length() :]
    """
GIVEN_AS_CACHE_READ_AS_PAST = """
    from transformers import DynamicCache, StaticCache

    def step(model, input_ids, config):
        out = model(input_ids, cache={cache}, use_cache=True)
        return input_ids[:, out.past_key_values.get_seq_length() :]
    """
GIVEN_AS_PAST_READ_AS_CACHE = """
    from transformers import DynamicCache, StaticCache

    def step(model, input_ids, config):
        out = model(input_ids, past_key_values={cache}, use_cache=True)
        return input_ids[:, out.cache.get_seq_length() :]
    """
RENAMED_SHAPES = [
    pytest.param(GIVEN_AS_CACHE_READ_AS_CACHE, id="given-as-cache-read-as-cache"),
    pytest.param(GIVEN_AS_PAST_READ_AS_CACHE, id="given-as-past_key_values-read-as-cache"),
]


@pytest.mark.parametrize("code", RENAMED_SHAPES)
@pytest.mark.parametrize("releases", [ALL_RELEASES, CACHE_RENAMED], ids=["every-release", "5.24-on"])
def test_the_renamed_field_holds_the_int_length_cache_given(code: str, releases: Releases) -> None:
    assert codes(code.format(cache="DynamicCache()"), releases) == []


@pytest.mark.parametrize("code", [*RENAMED_SHAPES, GIVEN_AS_CACHE_READ_AS_PAST])
@pytest.mark.parametrize("releases", [ALL_RELEASES, CACHE_RENAMED], ids=["every-release", "5.24-on"])
def test_the_renamed_field_holds_the_static_cache_given(code: str, releases: Releases) -> None:
    assert codes(code.format(cache="StaticCache(config, 64)"), releases) == [(5, "SLG002")]


def test_the_old_field_holds_a_cache_given_by_the_new_keyword_only_from_5_24_on() -> None:
    """Before 5.24 the model ignores `cache=` and builds its own cache, which is not followed."""
    code = GIVEN_AS_CACHE_READ_AS_PAST.format(cache="DynamicCache()")
    assert codes(code, CACHE_RENAMED) == []
    assert codes(code) == [(5, "SLG002")]


@pytest.mark.parametrize(
    "store", ["out.cache = StaticCache(config, 64)", 'out["cache"] = StaticCache(config, 64)'], ids=["attr", "item"]
)
def test_a_store_into_the_renamed_field_replaces_the_cache(store: str) -> None:
    code = f"""
        from transformers import DynamicCache, StaticCache

        def replaced(model, input_ids, config):
            out = model(input_ids, cache=DynamicCache(), use_cache=True)
            {store}
            return input_ids[:, out.cache.get_seq_length() :]
        """
    assert codes(code, CACHE_RENAMED) == [(6, "SLG002")]


def test_inline_outputs_read_by_the_renamed_field() -> None:
    code = """
        from transformers import DynamicCache

        def trim(model, input_ids):
            return input_ids[:, model(input_ids, cache=DynamicCache()).cache.get_seq_length() :]
        """
    assert codes(code) == []


@pytest.mark.parametrize(
    ("past", "cache", "read_as_past", "read_as_cache"),
    [
        ("DynamicCache()", "DynamicCache()", [], []),
        ("DynamicCache()", "StaticCache(config, 64)", [(5, "SLG002")], [(5, "SLG002")]),
        ("StaticCache(config, 64)", "DynamicCache()", [(5, "SLG002")], []),
    ],
    ids=["both-int-length", "the-new-keyword-static", "the-old-keyword-static"],
)
def test_given_both_keywords_each_field_holds_the_cache_its_releases_keep(
    past: str, cache: str, read_as_past: list[tuple[int, str]], read_as_cache: list[tuple[int, str]]
) -> None:
    """A release before 5.24 keeps `past_key_values=` (`cache=` goes into `**kwargs`) and has no
    `.cache`; a later one keeps `cache=`, drops the deprecated name and answers both fields with it."""
    code = f"""
        from transformers import DynamicCache, StaticCache

        def step(model, input_ids, config):
            out = model(input_ids, past_key_values={past}, cache={cache}, use_cache=True)
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """
    assert codes(code) == read_as_past
    assert codes(code.replace("out.past_key_values", "out.cache")) == read_as_cache


def test_given_both_keywords_a_range_before_5_24_reads_the_old_one() -> None:
    code = """
        from transformers import DynamicCache, StaticCache

        def step(model, input_ids, config):
            out = model(input_ids, past_key_values=DynamicCache(), cache=StaticCache(config, 64))
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT - CACHE_RENAMED) == []
    assert codes(code, CACHE_RENAMED) == [(5, "SLG002")]


@pytest.mark.parametrize("releases", [ALL_RELEASES, CACHE_RENAMED], ids=["every-release", "5.24-on"])
def test_a_mapping_passed_too_may_hold_the_new_keyword(releases: Releases) -> None:
    """From 5.24 on, `model(**inputs, past_key_values=c)` uses a `cache` that `inputs` holds (5.24's
    `prepare_inputs_for_generation` returns one), not `c`."""
    code = """
        from transformers import DynamicCache

        def step(model, input_ids, inputs):
            out = model(**inputs, past_key_values=DynamicCache())
            return input_ids[:, out.past_key_values.get_seq_length() :]
        """
    assert codes(code, releases) == [(5, "SLG002")]
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT - CACHE_RENAMED) == []


def test_a_class_given_the_new_keyword_is_not_taken_for_a_model() -> None:
    """`Runner(cache=c).cache` is as often the object's own attribute, built otherwise."""
    code = """
        from transformers import DynamicCache

        def step(input_ids):
            runner = Runner(cache=DynamicCache())
            return input_ids[:, runner.cache.get_seq_length() :]
        """
    assert codes(code) == [(5, "SLG002")]
    assert codes(code.replace("Runner(", "runner_of(")) == []


@pytest.mark.parametrize(
    "hand_on",
    [
        "other = out\n    other.cache = StaticCache(config, 64)",
        'setattr(out, "cache", StaticCache(config, 64))',
        "fill(out)",
        "fill(outputs=out)",
        'out.__setitem__("cache", StaticCache(config, 64))',
    ],
    ids=["alias-store", "setattr", "passed", "passed-by-keyword", "setitem-method"],
)
def test_outputs_handed_on_may_be_stored_into(hand_on: str) -> None:
    """What a store through another name, `setattr` or a callee puts into the outputs is not seen:
    after the outputs are handed on, their cache is unknown."""
    code = f"""
from transformers import DynamicCache, StaticCache

def step(model, input_ids, config, fill):
    out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
    {hand_on}
    return input_ids[:, out.past_key_values.get_seq_length() :]
"""
    assert [code for _, code in codes(code)] == ["SLG002"]


@pytest.mark.parametrize("read", ["print(out)", "len(out)", "isinstance(out, tuple)", "keep(out.logits)"])
def test_outputs_read_but_not_handed_on_keep_their_cache(read: str) -> None:
    code = f"""
from transformers import DynamicCache

def step(model, input_ids, keep):
    out = model(input_ids, past_key_values=DynamicCache(), use_cache=True)
    {read}
    return input_ids[:, out.past_key_values.get_seq_length() :]
"""
    assert codes(code) == []
