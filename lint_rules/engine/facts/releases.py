"""What each transformers release does with a cache's length, from 4.36 to the newest 5.x: one row
per run of minor releases whose facts agree. The engine asks the rows of the releases a project runs
on (`lint_rules.target_range` finds them; every row when it finds none): a class's length is a tensor
if it is one in any of those releases, an int only if it is an int in every one that has the class.

Each row names the wheel it was read from (`checked`); tests/test_release_table.py reads the
`transformers/cache_utils.py` and `generation/utils.py` of those wheels with `ast` and checks every
entry, and tests/test_cache_table.py runs the classes of 5.5.3 and 5.24.0.
"""

from __future__ import annotations

from typing import NamedTuple

INT_LENGTH = "int"
TENSOR_LENGTH = "tensor"
NONE_LENGTH = "none"
"""4.42-4.44 `HybridCache.get_seq_length()` returns None: neither an int nor a tensor."""

SEEN_TOKENS_INT = "int"
"""`seen_tokens` is an int attribute of every cache (4.36-4.38: each counts the tokens it saw)."""
SEEN_TOKENS_NONE = "None"
"""A deprecated property: the caches with a `_seen_tokens` counter answer it, the others give None."""
SEEN_TOKENS_ABSENT = "absent"
"""No cache has it: reading it raises `AttributeError`."""

PATH_ENDING_METHODS = ("get_max_length", "get_usable_length")
"""`Cache` methods that some releases lack: calling one where no cache has it raises."""
SEEN_TOKENS = "seen_tokens"


class ReleaseFacts(NamedTuple):
    first: tuple[int, int]
    last: tuple[int, int]
    """The minor releases the row covers, both included. Later releases are assumed to keep the newest
    row's facts."""
    checked: str
    """The release whose wheel the row was read from (the newest patch of a minor it covers)."""
    lengths: tuple[tuple[str, str], ...]
    """(class, length kind) for the table's classes that the release has."""
    seen_tokens: str
    """What `c.seen_tokens` gives for a cache `c` whose length is a tensor (SEEN_TOKENS_*)."""
    methods: frozenset[str]
    """Which of `PATH_ENDING_METHODS` the release's `Cache` has."""
    generate_passes_cache_position: bool
    """transformers calls a model's `prepare_inputs_for_generation` only with a `cache_position` that is
    not None: `generate()` always sets one (4.41-4.42 set None when `use_cache=False`; 5.4 on create
    none), and no other caller omits it (through 4.45 the encoder-decoder wrappers call their
    decoder's hook without one)."""
    int_without_config: frozenset[str] = frozenset()
    """Classes of `lengths` whose length is a tensor only for some configs, and an int when built without
    one (5.25's `DynamicCache`: a config whose first layer is linear attention or a convolution gives
    it a first layer that counts in a tensor; built from no config or from legacy data, its layers all
    count ints)."""
    counters: tuple[tuple[str, str], ...] = ()
    """(class, attribute) for each attribute whose value (not its `.shape`) an int-length class returns
    as its length: a subclass that binds one to anything but an int may count a tensor."""
    cache_renamed: bool = False
    """Models take their cache as `cache=` and their outputs hold it as `.cache` (5.24 on;
    `past_key_values` stays a deprecated alias of both). Earlier releases have no `.cache` field, and
    their models take a `cache=` keyword into `**kwargs` and build a cache of their own."""

    @property
    def name(self) -> str:
        first, last = (f"{major}.{minor}" for major, minor in (self.first, self.last))
        return first if first == last else f"{first}-{last}"

    def length_kind(self, cls: str) -> str:
        """The class's length kind in this release; "" when it has no such class."""
        return kinds_by_class(self.lengths).get(cls, "")

    def counters_of(self, cls: str) -> frozenset[str]:
        return frozenset(attribute for owner, attribute in self.counters if owner == cls)


def kinds_by_class(lengths: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """`dict(lengths)`, made once for each row's table (the engine asks rows tens of thousands of times
    in a run); kept with the table itself, so that an id is never read for another table."""
    kept = _KINDS_BY_CLASS.get(id(lengths))
    if kept is None or kept[0] is not lengths:
        kept = _KINDS_BY_CLASS[id(lengths)] = (lengths, dict(lengths))
    return kept[1]


_KINDS_BY_CLASS: dict[int, tuple[tuple[tuple[str, str], ...], dict[str, str]]] = {}
"""`kinds_by_class`'s dicts by the id of the table each was made from, kept beside that table (the rows
are module constants, so this holds one entry per row)."""


def _lengths(**kinds: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(kinds.items()))


def _counters(attribute: str, *classes: str) -> tuple[tuple[str, str], ...]:
    return tuple((cls, attribute) for cls in classes)


INT, TENSOR, NONE = INT_LENGTH, TENSOR_LENGTH, NONE_LENGTH
BOTH_METHODS = frozenset(PATH_ENDING_METHODS)
USABLE_ONLY = frozenset({"get_usable_length"})
MAX_ONLY = frozenset({"get_max_length"})
NO_METHODS: frozenset[str] = frozenset()

LAYERS_4_54 = {"DynamicLayer": INT, "StaticLayer": TENSOR}
OLD_STATIC_CACHES = {"StaticCache": TENSOR, "SlidingWindowCache": TENSOR, "HybridCache": TENSOR}
"""4.45-4.53; 4.54-4.57 make them (and OffloadedStaticCache) caches of `StaticLayer`s."""
QUANTIZED_CACHES = {"QuantizedCache": INT, "QuantoQuantizedCache": INT, "HQQQuantizedCache": INT, "OffloadedCache": INT}
"""4.42-4.57: the KIVI caches count an int (`_seen_tokens`, then their layers' `cumulative_length`);
`OffloadedCache` (from 4.44) is a `DynamicCache`. 5.x keeps only `QuantizedCache`."""
CHUNKED_CACHES = {"HybridChunkedCache": TENSOR, "OffloadedHybridCache": TENSOR}
"""4.51-4.57 (`OffloadedHybridCache` from 4.52): they sum a tensor of occupied slots."""
QUANTIZED_LAYERS = {"QuantizedLayer": INT, "QuantoQuantizedLayer": INT, "HQQQuantizedLayer": INT}
"""4.56 on: a `cumulative_length` int counter."""
INDEXED_LAYERS = {"DynamicIndexedLayer": INT, "StaticIndexedLayer": TENSOR}
"""5.11 on."""
LAYERS_5_13 = {"BaseQuantizedLayer": INT, "Fp8QuantizedLayer": INT, **INDEXED_LAYERS}
"""In the 5.13-5.23 and 5.24 rows' wheels: the base and fp8 quantized layers exist from 5.21 (read in
each minor's wheel). A range the rows give without the class falls back to every row
(`length_kind_in`), where its kind is the same."""
KIVI_COUNTERS = _counters("_seen_tokens", "QuantizedCache", "QuantoQuantizedCache", "HQQQuantizedCache")
LAYER_COUNTERS = _counters(
    "cumulative_length", "DynamicSlidingWindowLayer", "QuantizedLayer", "QuantoQuantizedLayer", "HQQQuantizedLayer"
)
LAYER_COUNTERS_5_4 = LAYER_COUNTERS + _counters("cumulative_length_int", "StaticSlidingWindowLayer")
"""5.4 on, `StaticSlidingWindowLayer` keeps an int mirror of its tensor `cumulative_length`."""
CACHES_5_5 = {
    "StaticCache": TENSOR,
    "SlidingWindowCache": TENSOR,
    "DynamicSlidingWindowLayer": INT,
    "StaticSlidingWindowLayer": INT,
    "QuantizedCache": INT,
    **QUANTIZED_LAYERS,
    **LAYERS_4_54,
}
"""5.5 on, besides `DynamicCache` (`SlidingWindowCache` is an alias of `StaticCache` again)."""

ROW_5_13 = ReleaseFacts(
    (5, 13),
    (5, 23),
    "5.23.0",
    _lengths(DynamicCache=INT, **CACHES_5_5, **LAYERS_5_13),
    SEEN_TOKENS_ABSENT,
    MAX_ONLY,
    False,
    counters=LAYER_COUNTERS_5_4 + _counters("cumulative_length", "BaseQuantizedLayer", "Fp8QuantizedLayer"),
)
"""5.24 keeps these facts and renames the cache's keyword and field (`cache_renamed`)."""

RELEASES = (
    ReleaseFacts((4, 36), (4, 37), "4.36.2", _lengths(DynamicCache=INT), SEEN_TOKENS_INT, BOTH_METHODS, False),
    ReleaseFacts(
        (4, 38),
        (4, 38),
        "4.38.2",
        _lengths(DynamicCache=INT, StaticCache=INT),
        SEEN_TOKENS_INT,
        BOTH_METHODS,
        False,
        counters=_counters("seen_tokens", "StaticCache"),
    ),
    ReleaseFacts(
        (4, 39),
        (4, 41),
        "4.39.3",
        _lengths(DynamicCache=INT, StaticCache=TENSOR),
        SEEN_TOKENS_NONE,
        BOTH_METHODS,
        False,
    ),
    ReleaseFacts(
        (4, 42),
        (4, 44),
        "4.44.2",
        _lengths(DynamicCache=INT, StaticCache=TENSOR, SlidingWindowCache=TENSOR, HybridCache=NONE, **QUANTIZED_CACHES),
        SEEN_TOKENS_NONE,
        BOTH_METHODS,
        False,
        counters=KIVI_COUNTERS,
    ),
    ReleaseFacts(
        (4, 45),
        (4, 45),
        "4.45.2",
        _lengths(DynamicCache=INT, OffloadedStaticCache=INT, **OLD_STATIC_CACHES, **QUANTIZED_CACHES),
        SEEN_TOKENS_NONE,
        BOTH_METHODS,
        False,
        counters=KIVI_COUNTERS + _counters("_seen_tokens", "OffloadedStaticCache"),
    ),
    ReleaseFacts(
        (4, 46),
        (4, 48),
        "4.48.3",
        _lengths(DynamicCache=INT, OffloadedStaticCache=INT, **OLD_STATIC_CACHES, **QUANTIZED_CACHES),
        SEEN_TOKENS_NONE,
        BOTH_METHODS,
        True,
        counters=KIVI_COUNTERS + _counters("_seen_tokens", "OffloadedStaticCache"),
    ),
    ReleaseFacts(
        (4, 49),
        (4, 53),
        "4.53.3",
        _lengths(DynamicCache=INT, OffloadedStaticCache=INT, **OLD_STATIC_CACHES, **QUANTIZED_CACHES, **CHUNKED_CACHES),
        SEEN_TOKENS_NONE,
        USABLE_ONLY,
        True,
        counters=KIVI_COUNTERS + _counters("_seen_tokens", "OffloadedStaticCache"),
    ),
    ReleaseFacts(
        (4, 54),
        (4, 55),
        "4.55.4",
        _lengths(
            DynamicCache=INT,
            OffloadedStaticCache=TENSOR,
            **OLD_STATIC_CACHES,
            **LAYERS_4_54,
            **QUANTIZED_CACHES,
            **CHUNKED_CACHES,
        ),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        True,
        counters=_counters(
            "cache_processor",
            "DynamicCache",
            "OffloadedCache",
            "QuantizedCache",
            "QuantoQuantizedCache",
            "HQQQuantizedCache",
        ),
    ),
    ReleaseFacts(
        (4, 56),
        (4, 56),
        "4.56.2",
        _lengths(
            DynamicCache=INT,
            OffloadedStaticCache=TENSOR,
            DynamicSlidingWindowLayer=INT,
            **OLD_STATIC_CACHES,
            **LAYERS_4_54,
            **QUANTIZED_CACHES,
            **CHUNKED_CACHES,
            **QUANTIZED_LAYERS,
        ),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        True,
        counters=LAYER_COUNTERS,
    ),
    ReleaseFacts(
        (4, 57),
        (4, 57),
        "4.57.1",
        _lengths(
            DynamicCache=INT,
            OffloadedStaticCache=TENSOR,
            DynamicSlidingWindowLayer=INT,
            StaticSlidingWindowLayer=INT,
            **OLD_STATIC_CACHES,
            **LAYERS_4_54,
            **QUANTIZED_CACHES,
            **CHUNKED_CACHES,
            **QUANTIZED_LAYERS,
        ),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        True,
        counters=LAYER_COUNTERS + _counters("cumulative_length", "StaticSlidingWindowLayer"),
    ),
    ReleaseFacts(
        (5, 0),
        (5, 3),
        "5.3.0",
        _lengths(
            DynamicCache=INT,
            StaticCache=TENSOR,
            DynamicSlidingWindowLayer=INT,
            StaticSlidingWindowLayer=INT,
            QuantizedCache=INT,
            **LAYERS_4_54,
            **QUANTIZED_LAYERS,
        ),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        True,
        counters=LAYER_COUNTERS + _counters("cumulative_length", "StaticSlidingWindowLayer"),
    ),
    ReleaseFacts(
        (5, 4),
        (5, 4),
        "5.4.0",
        _lengths(
            DynamicCache=INT,
            StaticCache=TENSOR,
            DynamicSlidingWindowLayer=INT,
            StaticSlidingWindowLayer=INT,
            QuantizedCache=INT,
            **LAYERS_4_54,
            **QUANTIZED_LAYERS,
        ),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        False,
        counters=LAYER_COUNTERS_5_4,
    ),
    ReleaseFacts(
        (5, 5),
        (5, 10),
        "5.5.3",
        _lengths(DynamicCache=INT, **CACHES_5_5),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        False,
        counters=LAYER_COUNTERS_5_4,
    ),
    ReleaseFacts(
        (5, 11),
        (5, 12),
        "5.12.1",
        _lengths(DynamicCache=INT, **CACHES_5_5, **INDEXED_LAYERS),
        SEEN_TOKENS_ABSENT,
        NO_METHODS,
        False,
        counters=LAYER_COUNTERS_5_4,
    ),
    ROW_5_13,
    ROW_5_13._replace(first=(5, 24), last=(5, 24), checked="5.24.0", cache_renamed=True),
    ReleaseFacts(
        (5, 25),
        (5, 25),
        "5.25.0",
        _lengths(DynamicCache=TENSOR, **CACHES_5_5, **LAYERS_5_13),
        SEEN_TOKENS_ABSENT,
        MAX_ONLY,
        False,
        frozenset({"DynamicCache"}),
        counters=LAYER_COUNTERS_5_4 + _counters("cumulative_length", "BaseQuantizedLayer", "Fp8QuantizedLayer"),
        cache_renamed=True,
    ),
)
"""Every row, oldest first."""

Releases = frozenset[ReleaseFacts]
"""Any selection of the rows: a frozenset, whose hash Python keeps, since the engine's caches of other
modules' facts are keyed by it (a tuple of rows is hashed anew at each look-up)."""
ALL_RELEASES: Releases = frozenset(RELEASES)


def in_order(releases: Releases) -> list[ReleaseFacts]:
    return sorted(releases, key=lambda row: row.first)


TABLE_CLASSES = frozenset(cls for row in RELEASES for cls, _ in row.lengths)


def length_kind_in(cls: str, releases: Releases, built_without_config: bool = False) -> str:
    """ "tensor" if the class's length is a tensor in any of the releases, "int" if it is an int in
    every one that has the class; "" otherwise (a None length, or a class of none of them).
    `built_without_config`: for an object built with no config (see `ReleaseFacts.int_without_config`)."""

    def kind_in(row: ReleaseFacts) -> str:
        return INT_LENGTH if built_without_config and cls in row.int_without_config else row.length_kind(cls)

    kinds = {kind for kind in map(kind_in, releases) if kind}
    if not kinds:
        kinds = {kind for kind in map(kind_in, RELEASES) if kind}  # a class the range lacks
    if TENSOR_LENGTH in kinds:
        return TENSOR_LENGTH
    return INT_LENGTH if kinds == {INT_LENGTH} else ""


def length_state(cls: str, releases: Releases) -> frozenset[str]:
    """The attributes whose value the class returns as its length in any of the releases (every row
    when none of them has the class), as `length_kind_in` reads a class the range lacks."""
    rows = [row for row in releases if row.length_kind(cls)] or RELEASES
    return frozenset().union(*(row.counters_of(cls) for row in rows))


def seen_tokens_ends_lengths(row: ReleaseFacts) -> bool:
    """In this release, `c.seen_tokens` of a cache whose length is a tensor raises or gives None (which
    the code of that era fails on before it uses a length): no tensor length is used after it."""
    has_tensor_lengths = any(kind == TENSOR_LENGTH for _, kind in row.lengths)
    return not has_tensor_lengths or row.seen_tokens in (SEEN_TOKENS_NONE, SEEN_TOKENS_ABSENT)


def path_ending_names(releases: Releases) -> frozenset[str]:
    """The attributes and methods whose use on a transformers cache ends the path in every release of
    `releases` (AttributeError, or None where a tensor length would follow)."""
    ending = {name for name in PATH_ENDING_METHODS if not any(name in row.methods for row in releases)}
    if all(map(seen_tokens_ends_lengths, releases)):
        ending.add(SEEN_TOKENS)
    return frozenset(ending)
