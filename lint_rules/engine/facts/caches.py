"""Which transformers cache classes return an int from `get_seq_length()`, and which may return a tensor.

The facts per release are the rows of `releases.py` (4.36 to the newest 5.x); the sets below are those
of the releases in `CHECKED_RELEASES`, whose real classes tests/test_cache_table.py builds and updates
once, looking at the type. A class in no row, such as the abstract `Cache`, is treated as possibly
returning a tensor; `EncoderDecoderCache` has the length of the cache it wraps (`WRAPPER_CLASSES`).
"""

from __future__ import annotations

from collections.abc import Iterable

from lint_rules.engine.facts.releases import ALL_RELEASES, RELEASES, Releases, length_kind_in
from lint_rules.engine.facts.releases import INT_LENGTH as INT_LENGTH  # a class's *length kind* ("" when unknown)
from lint_rules.engine.facts.releases import TENSOR_LENGTH as TENSOR_LENGTH

CHECKED_RELEASES = ("5.5.3", "5.24.0")

_CHECKED_ROWS = [row for row in RELEASES if row.checked in CHECKED_RELEASES]

INT_LENGTH_CLASSES = frozenset(cls for row in _CHECKED_ROWS for cls, kind in row.lengths if kind == INT_LENGTH)
"""In 5.x: their length is computed from the stored keys' shape or kept as a Python int counter (the
static sliding-window layer keeps an int mirror, `cumulative_length_int`, beside its parent's tensor)."""

TENSOR_LENGTH_CLASSES = frozenset(cls for row in _CHECKED_ROWS for cls, kind in row.lengths if kind == TENSOR_LENGTH)
"""In 5.x: they keep `cumulative_length` as a tensor (shape (1,) in 5.5-5.12, 0-dim from 5.13) and return it."""

WRAPPER_CLASSES = frozenset({"EncoderDecoderCache"})
"""Their length is that of the cache given as the first of two arguments (`EncoderDecoderCache(
DynamicCache(), DynamicCache())` is an int); from one argument (legacy data) they build a
`DynamicCache`."""

CACHE_BASE_CLASSES = (
    frozenset(
        {
            "Cache", "CacheLayerMixin", "QuantizedLayer", "QuantizedCache",
            "EncoderDecoderCache", "HybridCache", "HybridChunkedCache", "OffloadedCache", "OffloadedStaticCache",
        }
    )
    | INT_LENGTH_CLASSES
    | TENSOR_LENGTH_CLASSES
)  # fmt: skip
"""Classes whose subclasses are caches: model code calls their protocol methods from `forward`."""

CACHE_METHODS_CALLED_FROM_FORWARD = frozenset(
    {"update", "get_seq_length", "get_query_offset", "get_mask_sizes", "lazy_initialization", "get_max_cache_shape"}
)
"""Cache methods that attention and mask code run inside a model's `forward` (so inside its graph)."""

GENERATION_HOOKS_5X = frozenset(
    {
        "_assisted_decoding",
        "_beam_search",
        "_beam_search_has_unfinished_sequences",
        "_check_early_stop_heuristic",
        "_expand_inputs_for_generation",
        "_expand_multimodal_outputs",
        "_extract_generation_mode_kwargs",
        "_flatten_beam_dim",
        "_gather_beams",
        "_get_candidate_generator",
        "_get_deprecated_gen_repo",
        "_get_logits_processor",
        "_get_running_beams_for_next_iteration",
        "_get_static_cache_init_shape",
        "_get_stopping_criteria",
        "_get_top_k_continuations",
        "_has_unfinished_sequences",
        "_maybe_initialize_input_ids_for_generation",
        "_maybe_prepare_encoder_kwargs_for_generation",
        "_merge_criteria_processor_list",
        "_optimize_model_for_decode",
        "_prefill",
        "_prepare_attention_mask_for_generation",
        "_prepare_cache_for_generation",
        "_prepare_decoder_input_ids_for_generation",
        "_prepare_encoder_decoder_kwargs_for_generation",
        "_prepare_generated_length",
        "_prepare_generation_config",
        "_prepare_model_inputs",
        "_prepare_multimodal_encoder_kwargs_for_generation",
        "_prepare_position_ids_for_generation",
        "_prepare_special_tokens",
        "_prepare_static_cache",
        "_prepare_text_encoder_decoder_kwargs_for_generation",
        "_sample",
        "_supports_default_dynamic_cache",
        "_supports_logits_to_keep",
        "_supports_mm_encoder_outputs",
        "_unflatten_beam_dim",
        "_update_finished_beams",
        "_update_model_kwargs_for_generation",
        "_valid_auto_compile_criteria",
        "_validate_generated_length",
        "_validate_generation_mode",
        "_validate_model_kwargs",
        "adjust_generation_fn",
        "compute_transition_scores",
        "generate",
        "heal_tokens",
        "load_custom_generate",
        "prepare_inputs_for_generation",
    }
)
"""The methods transformers 5.x's `GenerationMixin` defines (5.5.3 and 5.24.0, checked against each release
by `tests/test_cache_table.py`): the generation loop runs them on the host, between forwards."""

GENERATION_HOOKS = GENERATION_HOOKS_5X | frozenset(
    {
        "_constrained_beam_search",
        "_contrastive_search",
        "_dola_decoding",
        "_get_cache",
        "_get_initial_cache_position",
        "_group_beam_search",
        "_reorder_cache",
        "_temporary_reorder_cache",
        "beam_search",
        "greedy_search",
        "sample",
    }
)
"""Generation methods a package may replace on a model (`model.prepare_inputs_for_generation = fn`,
`GenerationMixin._prefill = gaudi_prefill`), 4.x ones included: installed under these names, a function
runs on the host."""

TRANSFORMERS_MODULES = ("transformers", "transformers.cache_utils")
"""Where the table's names mean transformers' own classes."""


def joined_kind(kinds: Iterable[str]) -> str:
    """The kind of something that may be any of several classes: TENSOR_LENGTH if one of them may
    count a tensor, INT_LENGTH if there are some and all count ints, else "" (unknown)."""
    found = set(kinds)
    if TENSOR_LENGTH in found:
        return TENSOR_LENGTH
    return INT_LENGTH if found == {INT_LENGTH} else ""


def is_transformers_module(module: str) -> bool:
    """transformers' own classes are known by the table alone: its modules are never read."""
    return module == "transformers" or module.startswith("transformers.")


def length_kind_of_transformers_class(name: str, releases: Releases = ALL_RELEASES) -> str:
    """ "int" or "tensor" for a transformers cache class of the release table, over `releases` (see
    `releases.length_kind_in`); "" for any other name."""
    return length_kind_in(name, releases)


TENSOR_LENGTH_CACHE_IMPLEMENTATIONS = frozenset(
    {
        "static",
        "offloaded_static",
        "sliding_window",
        "hybrid",
        "hybrid_chunked",
        "offloaded_hybrid",
        "offloaded_hybrid_chunked",
    }
)
"""The `cache_implementation` values for which 5.x's `generate()` builds a `StaticCache` (its
`ALL_STATIC_CACHE_IMPLEMENTATIONS`, the deprecated names included): a cache whose length is a tensor."""
