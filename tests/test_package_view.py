"""The package view. Compiled reach across modules (`lint_rules/engine/facts/package.py`): a helper that no
compiled region of its own module calls is still compiled when a `forward` of another module of
the package calls it, so its guard would be a graph break; a helper only host code calls keeps its
safe guard. Calls across modules (`lint_rules/engine/flow/imported_calls.py`): a length passed to a
function of another module that uses it as an int is reported at the argument, and a function of
another module that returns a length is a source where it is called."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.engine import STAMPS
from lint_rules.engine.facts.callgraph import MAX_PACKAGE_SEARCHES
from lint_rules.findings import FixKind, FixSafety
from lint_rules.settings import Settings
from tests.package_files import write_package

ROPE = """\
    import torch


    def positions(cache, n):
        past = cache.get_seq_length()
        return torch.arange(past, past + n)


    def trim(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]
"""
MODELING = """\
    from torch import nn

    from .rope import positions


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            return positions(cache, ids.shape[1])
"""
GENERATION = """\
    from tiny.rope import trim


    def generate(ids, cache):
        return trim(cache, ids)
"""


def findings_by_function(path: Path) -> dict[str, list[FixSafety]]:
    found: dict[str, list[FixSafety]] = {}
    for finding in check_path(str(path), Settings()).findings:
        found.setdefault(finding.function, []).append(finding.fix.safety)
    return found


def test_a_helper_called_from_a_forward_in_another_module_is_compiled(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"rope": ROPE, "modeling": MODELING, "generation": GENERATION}, "tiny")
    findings = check_path(str(package / "rope.py"), Settings()).findings
    compiled = [finding for finding in findings if finding.function == "positions"]
    assert compiled
    for finding in compiled:
        assert not (finding.fix.kind is FixKind.GUARD_AFTER and finding.fix.safety is FixSafety.SAFE)
        assert "TinyModel.forward in modeling.py" in finding.compiled_region
    host = [finding for finding in findings if finding.function == "trim"]
    assert [finding.fix.safety for finding in host] == [FixSafety.SAFE]
    assert not host[0].compiled_region


def test_the_fixer_guards_the_host_helper_and_leaves_the_compiled_one(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"rope": ROPE, "modeling": MODELING, "generation": GENERATION}, "tiny")
    rope = package / "rope.py"
    fixed = fix_text(str(rope), rope.read_text(), Settings())
    positions, trim = fixed.split("def trim")
    assert "isinstance" not in positions and ".item()" not in positions
    assert "int(past.item())" in trim


def test_without_the_compiled_caller_the_helper_is_host_code(tmp_path: Path) -> None:
    """Must stay as it was: the same helper, called only from host code in another module."""
    package = write_package(tmp_path, {"rope": ROPE, "generation": GENERATION}, "tiny")
    assert findings_by_function(package / "rope.py") == {"positions": [FixSafety.SAFE] * 2, "trim": [FixSafety.SAFE]}


def test_a_module_added_between_two_analyses_is_seen(tmp_path: Path) -> None:
    """The package's files are listed again for each module analyzed (an editor's process, the fixer)."""
    package = write_package(tmp_path, {"rope": ROPE, "generation": GENERATION}, "tiny")
    assert findings_by_function(package / "rope.py")["positions"] == [FixSafety.SAFE] * 2
    (package / "modeling.py").write_text(textwrap.dedent(MODELING))
    assert FixSafety.SAFE not in findings_by_function(package / "rope.py")["positions"]


def test_a_checker_run_lists_the_package_once(tmp_path: Path) -> None:
    """Within one run of the checker (stamps kept), a module added meanwhile is not seen; the next run sees it."""
    package = write_package(tmp_path, {"rope": ROPE, "generation": GENERATION}, "tiny")
    with STAMPS.kept_for_the_run():
        assert findings_by_function(package / "rope.py")["positions"] == [FixSafety.SAFE] * 2
        (package / "modeling.py").write_text(textwrap.dedent(MODELING))
        assert findings_by_function(package / "rope.py")["positions"] == [FixSafety.SAFE] * 2
    assert FixSafety.SAFE not in findings_by_function(package / "rope.py")["positions"]


def test_a_call_of_another_function_with_the_same_name_does_not_count(tmp_path: Path) -> None:
    """Must stay silent about compilation: `positions` of another module is not rope's."""
    other = MODELING.replace("from .rope import positions", "from .other import positions")
    package = write_package(
        tmp_path, {"rope": ROPE, "modeling": other, "other": "def positions(c, n):\n    return n\n"}, "tiny"
    )
    assert all(
        safety is FixSafety.SAFE
        for safeties in findings_by_function(package / "rope.py").values()
        for safety in safeties
    )


UTILS = """\
    import torch


    def build_positions(past, n, device):
        return torch.arange(past, past + n, device=device)


    def trim(ids, past):
        return ids[:, past:]


    def describe(past):
        return f"{past} tokens cached"
"""
HELPERS = """\
    def offset_of(cache):
        return cache.get_seq_length()
"""
MODELING_WITH_UTILS = """\
    from torch import nn

    from .utils import build_positions


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            past = cache.get_seq_length()
            return build_positions(past, ids.shape[1], ids.device)
"""
GENERATION_WITH_HELPERS = """\
    from tiny import offset_of
    from . import utils


    def generate(ids, cache):
        start = cache.get_seq_length()
        print(utils.describe(start))
        ids = utils.trim(ids, start)
        return ids[:, offset_of(cache):]
"""


def cross_module_package(root: Path) -> Path:
    package = write_package(
        root,
        {"utils": UTILS, "helpers": HELPERS, "modeling": MODELING_WITH_UTILS, "generation": GENERATION_WITH_HELPERS},
        "tiny",
    )
    (package / "__init__.py").write_text("from .helpers import offset_of\n")
    return package


def test_a_length_passed_into_another_module_is_reported_at_the_argument(tmp_path: Path) -> None:
    package = cross_module_package(tmp_path)
    [finding] = check_path(str(package / "modeling.py"), Settings()).findings
    assert (finding.line, finding.code) == (9, "SLG003")
    assert "passed as `past` to `build_positions()`" in finding.message
    assert "(line 5 of utils.py)" in finding.message
    assert finding.compiled_region == "forward method"


def test_a_host_helper_of_another_module_and_a_re_exported_source(tmp_path: Path) -> None:
    package = cross_module_package(tmp_path)
    findings = check_path(str(package / "generation.py"), Settings()).findings
    assert [(finding.line, finding.code) for finding in findings] == [(8, "SLG002"), (9, "SLG002")]
    passed, inline = findings
    assert "passed as `past` to `trim()`" in passed.message and "of utils.py" in passed.message
    assert "from `offset_of()`" in inline.message
    assert all(finding.fix.safety is FixSafety.SAFE for finding in findings)


def test_the_fixer_guards_where_a_caller_in_another_module_needs_an_int(tmp_path: Path) -> None:
    package = cross_module_package(tmp_path)
    generation = package / "generation.py"
    fixed = fix_text(str(generation), generation.read_text(), Settings())
    assert "start = int(start.item())" in fixed
    assert "offset_of_2 = offset_of(cache)\n" in fixed and "offset_of_2 = int(offset_of_2.item())" in fixed
    assert fixed.endswith("return ids[:, offset_of_2:]\n")


CACHE = """\
    from transformers.cache_utils import Cache


    class CounterLayer:
        def __init__(self):
            self._seen_tokens = 0

        def update(self, keys, values):
            self._seen_tokens += keys.shape[-2]
            return keys, values

        def get_seq_length(self):
            return self._seen_tokens


    class LayeredCache(Cache):
        def __init__(self, num_layers):
            self.layers = [CounterLayer() for _ in range(num_layers)]

        def get_seq_length(self, layer_idx=0):
            return self.layers[layer_idx].get_seq_length()


    class CacheHandle:
        def __init__(self, num_layers):
            self._cache = LayeredCache(num_layers)

        def get_seq_length(self):
            return self._cache.get_seq_length()
"""
SERVE = """\
    from transformers import StaticCache

    from .cache import CacheHandle, LayeredCache


    class Session:
        def __init__(self):
            self.handle = CacheHandle(2)


    class Request:
        def __init__(self):
            self._session = Session()

        def get_seq_length(self):
            return self._session.handle.get_seq_length()


    class StaticHandle:
        def __init__(self, config):
            self._cache = StaticCache(config=config, max_cache_len=8)

        def get_seq_length(self):
            return self._cache.get_seq_length()


    def step_layered(ids, cache: LayeredCache):
        past = cache.get_seq_length()
        return ids[:, past:]


    def step_handle(ids, handle: CacheHandle):
        return ids[:, handle.get_seq_length():]


    def step_request(ids, request: Request):
        return ids[:, request.get_seq_length():]


    def step_isinstance(ids, cache):
        if isinstance(cache, LayeredCache):
            return ids[:, cache.get_seq_length():]
        return ids


    def step_static(ids, handle: StaticHandle):
        return ids[:, handle.get_seq_length():]
"""


def test_a_package_cache_that_delegates_its_length_to_int_counters_is_silent(tmp_path: Path) -> None:
    """The layered cache asks its layers (`self.layers[i]`, built from an int-counter class), the
    handle asks the cache it builds, the request asks through two attributes, across modules; only
    the handle around a transformers StaticCache may give a tensor."""
    package = write_package(tmp_path, {"cache": CACHE, "serve": SERVE}, "tiny")
    findings = check_path(str(package / "serve.py"), Settings()).findings
    assert [(finding.function, finding.code) for finding in findings] == [("step_static", "SLG002")]


COUNTERS = """\
    from transformers import DynamicCache


    class CompressCache(DynamicCache):
        def __init__(self):
            super().__init__()
            self.real_length = 0

        def update_seen(self, layer_idx, q_len):
            if layer_idx == 0:
                self.real_length += q_len

        def update(self, keys, values, layer_idx):
            batch, heads, seq_len, dim = keys.shape
            self.real_length += seq_len
            return keys, values

        def get_seq_length(self, layer_idx=0):
            return self.real_length


    class MaskCountCache(DynamicCache):
        def __init__(self):
            super().__init__()
            self.seen = 0

        def update(self, keys, values, mask):
            self.seen += mask.sum()
            return keys, values

        def get_seq_length(self, layer_idx=0):
            return self.seen


    class ComputedCountCache(DynamicCache):
        def __init__(self):
            super().__init__()
            self.seen = 0

        def update(self, keys, values):
            added = count_new(keys)
            self.seen += added
            return keys, values

        def get_seq_length(self, layer_idx=0):
            return self.seen
"""
COUNTER_USERS = """\
    from pkg_counters.kv import CompressCache, ComputedCountCache, MaskCountCache


    def counted(ids, cache):
        if isinstance(cache, CompressCache):
            past = cache.get_seq_length()
        else:
            past = cache[0][0].shape[2]
        return ids[:, past:]


    def masked(ids, cache):
        if isinstance(cache, MaskCountCache):
            return ids[:, cache.get_seq_length():]
        return ids


    def computed(ids, cache):
        if isinstance(cache, ComputedCountCache):
            return ids[:, cache.get_seq_length():]
        return ids
"""


def test_a_counter_incremented_by_a_parameter_or_a_shape_element_is_an_int(tmp_path: Path) -> None:
    """ipex-llm's compressing cache (reduced): `self.real_length = 0`, then only `+=` of a parameter
    or of an element unpacked from `keys.shape`, in a module the user imports by its absolute name.
    A counter that adds `mask.sum()` (a tensor) or a value of an unknown call is not an int."""
    package = tmp_path / "pkg_counters"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kv.py").write_text(textwrap.dedent(COUNTERS))
    (package / "models.py").write_text(textwrap.dedent(COUNTER_USERS))
    findings = check_path(str(package / "models.py"), Settings()).findings
    assert [(finding.function, finding.code) for finding in findings] == [
        ("masked", "SLG002"),
        ("computed", "SLG002"),
    ]


REPLICATED_CACHE = """\
    import torch
    from transformers.cache_utils import Cache as HFCache
    from transformers.cache_utils import CacheLayerMixin


    class StateLayer(CacheLayerMixin):
        def __init__(self):
            super().__init__()
            self._seen_tokens = 0

        def update(self, attn_state=None, offset: int = 1):
            input_length = attn_state[0].shape[1] if attn_state is not None else 0
            self._seen_tokens += input_length if attn_state is not None else offset

        def _validate_crop(self, max_length: int) -> int:
            if max_length < 0:
                max_length = max(0, self._seen_tokens + max_length)
            return min(max_length, self._seen_tokens)

        def crop(self, max_length: int) -> None:
            max_length = self._validate_crop(max_length)
            self._seen_tokens = max_length

        def get_seq_length(self) -> int:
            return self._seen_tokens


    class MaskLayer(CacheLayerMixin):
        def __init__(self):
            super().__init__()
            self.seen = 0

        def update(self, mask):
            self.seen = self.seen + mask.sum()

        def get_seq_length(self):
            return self.seen


    class StateCache(HFCache):
        def __init__(self, **kwargs):
            super().__init__(layer_class_to_replicate=StateLayer, **kwargs)

        def update(self, layer_idx, **state):
            while len(self.layers) <= layer_idx:
                self.layers.append(self.layer_class_to_replicate())
            return self.layers[layer_idx].update(**state)

        def get_seq_length(self, layer_idx=0) -> int:
            if len(self.layers) <= layer_idx:
                return 0
            return self.layers[layer_idx].get_seq_length()


    class Cache(StateCache):
        pass


    class MaskCache(HFCache):
        def __init__(self):
            super().__init__(layer_class_to_replicate=MaskLayer)

        def get_seq_length(self, layer_idx=0):
            return self.layers[layer_idx].get_seq_length()


    class MixedCache(StateCache):
        def add(self, layer):
            self.layers.append(layer)
"""
REPLICATED_USERS = """\
    from __future__ import annotations

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from nsfla.models.cache_utils import Cache, MaskCache, MixedCache


    def attend(q, past_key_values: Cache | None = None):
        offset, max_len = 0, q.shape[1]
        if past_key_values is not None:
            offset = past_key_values.get_seq_length(0)
            max_len = q.shape[1] + offset
        return max_len


    def masked(q, past_key_values: MaskCache):
        return q[:, past_key_values.get_seq_length():]


    def mixed(q, past_key_values: MixedCache):
        return q[:, past_key_values.get_seq_length():]
"""


def test_layers_replicated_by_transformers_cache_from_an_int_counter_class(tmp_path: Path) -> None:
    """flash-linear-attention (reduced): a namespace package (no top `__init__.py`) whose cache gives
    transformers' `Cache` `layer_class_to_replicate=StateLayer` and only appends more of those; the
    layer's counter grows by a shape element or an offset parameter and is cropped to an `-> int`
    method's result. Layers counting `mask.sum()`, or a list that takes any object, may hold a tensor."""
    top = tmp_path / "nsfla"
    for folder in ("models", "layers"):
        (top / folder).mkdir(parents=True)
        (top / folder / "__init__.py").write_text("")
    (top / "models" / "cache_utils.py").write_text(textwrap.dedent(REPLICATED_CACHE))
    (top / "layers" / "attn.py").write_text(textwrap.dedent(REPLICATED_USERS))
    findings = check_path(str(top / "layers" / "attn.py"), Settings()).findings
    assert [(finding.function, finding.code) for finding in findings] == [("masked", "SLG002"), ("mixed", "SLG002")]


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import tiny.rope as r", "r.positions"),
        ("import tiny.rope", "tiny.rope.positions"),
        ("from . import rope", "rope.positions"),
    ],
)
def test_a_helper_called_through_its_module_from_a_forward_is_compiled(tmp_path: Path, imports: str, call: str) -> None:
    modeling = MODELING.replace("from .rope import positions", imports).replace("positions(cache", f"{call}(cache")
    package = write_package(tmp_path, {"rope": ROPE, "modeling": modeling, "generation": GENERATION}, "tiny")
    findings = check_path(str(package / "rope.py"), Settings()).findings
    compiled = [finding for finding in findings if finding.function == "positions"]
    assert compiled and all("TinyModel.forward in modeling.py" in finding.compiled_region for finding in compiled)
    fixed = fix_text(str(package / "rope.py"), (package / "rope.py").read_text(), Settings())
    assert ".item()" not in fixed.split("def trim")[0]


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from tiny import positions", "positions"),
        ("from . import positions", "positions"),
        ("import tiny", "tiny.positions"),
    ],
)
def test_a_helper_re_exported_by_the_package_and_called_from_a_forward_is_compiled(
    tmp_path: Path, imports: str, call: str
) -> None:
    modeling = MODELING.replace("from .rope import positions", imports).replace("positions(cache", f"{call}(cache")
    package = write_package(tmp_path, {"rope": ROPE, "modeling": modeling, "generation": GENERATION}, "tiny")
    (package / "__init__.py").write_text("from .rope import positions, trim\n")
    findings = check_path(str(package / "rope.py"), Settings()).findings
    compiled = [finding for finding in findings if finding.function == "positions"]
    assert compiled and all("TinyModel.forward in modeling.py" in finding.compiled_region for finding in compiled)
    assert all(not finding.compiled_region for finding in findings if finding.function == "trim")


def test_a_method_of_an_object_that_is_not_the_module_does_not_count(tmp_path: Path) -> None:
    """Must stay host code: `self.rope.positions(...)` is not rope.py's function (the module is
    imported, but the receiver is an attribute, not the module's name)."""
    modeling = MODELING.replace("from .rope import positions", "from . import rope").replace(
        "positions(cache", "self.rope.positions(cache"
    )
    package = write_package(tmp_path, {"rope": ROPE, "modeling": modeling}, "tiny")
    assert findings_by_function(package / "rope.py") == {"positions": [FixSafety.SAFE] * 2, "trim": [FixSafety.SAFE]}


MODELING_THROUGH_MODULES = """\
    from torch import nn

    import tiny.utils as u


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            past = cache.get_seq_length()
            return u.build_positions(past, ids.shape[1], ids.device)
"""
GENERATION_THROUGH_MODULES = """\
    import tiny.helpers as h
    import tiny.utils


    def generate(ids, cache):
        start = cache.get_seq_length()
        print(tiny.utils.describe(start))
        ids = tiny.utils.trim(ids, start)
        return ids[:, h.offset_of(cache):]
"""


def test_calls_through_a_module_name_are_followed_like_imported_functions(tmp_path: Path) -> None:
    """`import pkg.mod as m` ... `m.f(length)` and `import pkg.mod` ... `pkg.mod.f(length)`: the length
    is reported at the argument; `m.f()` returning a length is a source; `describe` (an f-string)
    stays silent."""
    package = write_package(
        tmp_path,
        {
            "utils": UTILS,
            "helpers": HELPERS,
            "modeling": MODELING_THROUGH_MODULES,
            "generation": GENERATION_THROUGH_MODULES,
        },
        "tiny",
    )
    [passed] = check_path(str(package / "modeling.py"), Settings()).findings
    assert (passed.line, passed.code) == (9, "SLG003")
    assert "passed as `past` to `build_positions()` (line 5 of utils.py)" in passed.message
    assert passed.compiled_region == "forward method"
    findings = check_path(str(package / "generation.py"), Settings()).findings
    assert [(finding.line, finding.code) for finding in findings] == [(8, "SLG002"), (9, "SLG002")]
    trimmed, inline = findings
    assert "passed as `past` to `trim()` (line 9 of utils.py)" in trimmed.message
    assert "from `offset_of()` on line 9" in inline.message
    fixed = fix_text(str(package / "generation.py"), (package / "generation.py").read_text(), Settings())
    assert "start = int(start.item())" in fixed
    assert "offset_of = h.offset_of(cache)\n" in fixed and fixed.endswith("return ids[:, offset_of:]\n")


CHAIN_A = """\
    from .b import prepare


    def generate(ids, cache):
        past = cache.get_seq_length()
        return prepare(ids, past)
"""
CHAIN_B = """\
    from . import c


    def prepare(ids, start):
        return c.cut(ids, start)
"""
CHAIN_C = """\
    def cut(ids, begin):
        return ids[:, begin:]
"""


def test_a_length_passed_on_two_modules_away_is_reported_at_the_first_argument(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"a": CHAIN_A, "b": CHAIN_B, "c": CHAIN_C}, "tiny")
    [finding] = check_path(str(package / "a.py"), Settings()).findings
    assert (finding.line, finding.code) == (6, "SLG002")
    assert (
        "passed as `start` to `prepare()` -> `cut()` (line 2 of c.py), which uses it as slice bound `begin`"
        in finding.message
    )
    fixed = fix_text(str(package / "a.py"), (package / "a.py").read_text(), Settings())
    assert "past = int(past.item())" in fixed


def test_calls_are_not_followed_past_the_module_depth(tmp_path: Path) -> None:
    """Must stay silent: three modules away (a -> b -> c -> d) is past the bound."""
    chain_c = "from .d import cut as inner\n\n\ndef cut(ids, begin):\n    return inner(ids, begin)\n"
    package = write_package(tmp_path, {"a": CHAIN_A, "b": CHAIN_B, "c": chain_c, "d": CHAIN_C}, "tiny")
    assert not check_path(str(package / "a.py"), Settings()).findings


POSITIONS = """\
    import torch


    class PositionHelper:
        def __init__(self, device):
            self.device = device

        def build_positions(self, past, n):
            return torch.arange(past, past + n, device=self.device)

        def offset_of(self, cache):
            return cache.get_seq_length()

        @staticmethod
        def trim(ids, past):
            return ids[:, past:]

        def describe(self, past):
            return f"{past} tokens cached"
"""
MODELING_WITH_METHODS = """\
    from torch import nn

    from .positions import PositionHelper


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            helper = PositionHelper(ids.device)
            past = cache.get_seq_length()
            print(helper.describe(past))
            return helper.build_positions(past, ids.shape[1])


    def generate(ids, cache, helper: PositionHelper):
        print(cache.get_seq_length())
        return ids[:, helper.offset_of(cache):]


    def prefill(ids, cache):
        return PositionHelper.trim(ids, cache.get_seq_length())
"""


def test_methods_of_a_class_of_another_module_are_followed_on_a_known_receiver(tmp_path: Path) -> None:
    """The receiver's class is shown by its constructor, its annotation, or it is the class itself:
    the method's summary comes from its module's run; `describe` (an f-string) stays silent."""
    package = write_package(tmp_path, {"positions": POSITIONS, "modeling": MODELING_WITH_METHODS}, "tiny")
    findings = check_path(str(package / "modeling.py"), Settings()).findings
    assert [(finding.line, finding.code, finding.function) for finding in findings] == [
        (11, "SLG003", "TinyModel.forward"),
        (16, "SLG002", "generate"),
        (20, "SLG002", "prefill"),
    ]
    passed, inline, trimmed = findings
    assert "passed as `past` to `build_positions()` (line 9 of positions.py)" in passed.message
    assert passed.compiled_region == "forward method"
    assert "from `offset_of()` on line 16" in inline.message
    assert "passed as `past` to `trim()` (line 16 of positions.py)" in trimmed.message
    fixed = fix_text(str(package / "modeling.py"), (package / "modeling.py").read_text(), Settings())
    assert "offset_of = helper.offset_of(cache)\n" in fixed and "return ids[:, offset_of:]\n" in fixed


SELF_COUNTING = """\
    class Counter:
        def __init__(self):
            self._seen = 0

        def get_seq_length(self):
            return self._seen

        def offset(self):
            return self.get_seq_length()
"""


def test_receivers_whose_class_is_not_shown_are_not_followed(tmp_path: Path) -> None:
    """Must stay silent: a receiver bound to something else too (no class is shown), and a method
    whose length is an int counter's (`self.get_seq_length()` of an int-length class)."""
    modeling = """\
        from .positions import PositionHelper
        from .counter import Counter


        def rebound(ids, cache, other):
            helper = PositionHelper(ids.device)
            if other is not None:
                helper = other
            return ids[:, helper.offset_of(cache):]


        def counted(ids, cache, counter: Counter):
            print(cache.get_seq_length())
            return ids[:, counter.offset():]
    """
    package = write_package(tmp_path, {"positions": POSITIONS, "counter": SELF_COUNTING, "modeling": modeling}, "tiny")
    assert not check_path(str(package / "modeling.py"), Settings()).findings


def test_a_class_named_through_its_module_and_an_optional_annotation(tmp_path: Path) -> None:
    """`p.PositionHelper(...)` (the module imported as `p`) and `helper: PositionHelper | None`."""
    modeling = """\
        import tiny.positions as p
        from .positions import PositionHelper


        def step(ids, cache):
            helper = p.PositionHelper(ids.device)
            return helper.build_positions(cache.get_seq_length(), ids.shape[1])


        def maybe(ids, cache, helper: PositionHelper | None = None):
            if helper is None:
                return ids
            return ids[:, helper.offset_of(cache):]
    """
    package = write_package(tmp_path, {"positions": POSITIONS, "modeling": modeling}, "tiny")
    findings = check_path(str(package / "modeling.py"), Settings()).findings
    assert [(finding.line, finding.code, finding.function) for finding in findings] == [
        (7, "SLG003", "step"),
        (13, "SLG002", "maybe"),
    ]


def test_the_fixer_guards_host_calls_of_another_modules_methods_and_leaves_the_forward(tmp_path: Path) -> None:
    """Before/after: the compiled forward is left as it was (a guard there would be a graph break);
    the host functions get the guard, the inline method call is hoisted first."""
    package = write_package(tmp_path, {"positions": POSITIONS, "modeling": MODELING_WITH_METHODS}, "tiny")
    modeling = package / "modeling.py"
    fixed = fix_text(str(modeling), modeling.read_text(), Settings())
    forward, _, _ = textwrap.dedent(MODELING_WITH_METHODS).partition("def generate")
    assert fixed == "import torch\n" + forward + textwrap.dedent(
        """\
        def generate(ids, cache, helper: PositionHelper):
            print(cache.get_seq_length())
            offset_of = helper.offset_of(cache)
            if isinstance(offset_of, torch.Tensor):
                offset_of = int(offset_of.item())
            return ids[:, offset_of:]


        def prefill(ids, cache):
            seq_length = cache.get_seq_length()
            if isinstance(seq_length, torch.Tensor):
                seq_length = int(seq_length.item())
            return PositionHelper.trim(ids, seq_length)
        """
    )
    assert fix_text(str(modeling), fixed, Settings()) == fixed  # idempotent


INT_CACHE_MODULE = """\
    class KV:
        def __init__(self):
            self.seen = 0

        def get_seq_length(self, layer_idx=0):
            return self.seen
"""
USES_KV = """\
    from .other import KV


    def trim(ids):
        cache = KV()
        n = cache.get_seq_length()
        return ids[:, n:]
"""


@pytest.mark.parametrize("with_a_package_folder", [True, False])
def test_a_package_folder_is_imported_before_a_module_file_of_its_name(
    tmp_path: Path, with_a_package_folder: bool
) -> None:
    """`pkg/other/__init__.py` is what `from .other import KV` runs when `pkg/other.py` sits beside it, as
    Python's import system looks for a package folder first: its `KV` is a `StaticCache` here. Without
    the folder, `other.py`'s `KV` counts an int."""
    package = write_package(tmp_path, {"other": INT_CACHE_MODULE, "uses": USES_KV})
    if with_a_package_folder:
        (package / "other").mkdir()
        (package / "other" / "__init__.py").write_text("from transformers import StaticCache as KV\n")
    lines = [finding.line for finding in check_path(str(package / "uses.py"), Settings()).findings]
    assert lines == ([7] if with_a_package_folder else [])


@pytest.mark.parametrize(
    "imports",
    [
        "import torch; from .rope import positions",
        "if True: from .rope import positions",
        "from .rope import (  # the helpers (rope)\n        positions,\n    )",
        "from .rope import \\\n        positions",
        '"""Example:\n\n    from the docs import nothing\n    """\n    from .rope import positions',
        "from . rope import positions",
        "\ufefffrom .rope import positions",
    ],
    ids=["after-a-statement", "after-a-colon", "parenthesis-in-a-comment", "backslash", "docstring", "spaced", "bom"],
)
def test_the_import_of_a_compiled_caller_is_read_however_it_is_written(tmp_path: Path, imports: str) -> None:
    """Before it parses a file that names the helper, the search reads the file's import lines alone
    (`package.may_import`); a form those lines cannot show sends the file to the parser."""
    bom = imports.startswith("\ufeff")
    modeling = MODELING.replace("from .rope import positions", imports.lstrip("\ufeff"))
    package = write_package(tmp_path, {"rope": ROPE, "modeling": modeling, "generation": GENERATION}, "tiny")
    if bom:  # the import opens the file, after a byte order mark
        text = (package / "modeling.py").read_text()
        (package / "modeling.py").write_text(
            "\ufeff" + text[text.index("from .rope") :] + text[: text.index("from .rope")]
        )
    findings = check_path(str(package / "rope.py"), Settings()).findings
    compiled = [finding for finding in findings if finding.function == "positions"]
    assert compiled and all("TinyModel.forward in modeling.py" in finding.compiled_region for finding in compiled)


def test_past_the_searches_of_one_module_a_function_is_taken_as_compiled(tmp_path: Path) -> None:
    """Each module-level function's callers in the package's other modules cost a search of the
    package; past `MAX_PACKAGE_SEARCHES` in one module, a function is taken as compiled, as one too
    many calls away is: its guard is not offered as safe."""
    count = MAX_PACKAGE_SEARCHES + 3
    helpers = "".join(
        f"\n\ndef trim_{index}(cache, ids):\n    return ids[:, cache.get_seq_length() :]\n" for index in range(count)
    )
    package = write_package(tmp_path, {"helpers": helpers}, "tiny")
    findings = check_path(str(package / "helpers.py"), Settings()).findings
    assert len(findings) == count
    searched = [finding for finding in findings if not finding.compiled_region]
    assert len(searched) == MAX_PACKAGE_SEARCHES
    assert all(finding.fix.safety is FixSafety.SAFE for finding in searched)
    for finding in findings[MAX_PACKAGE_SEARCHES:]:
        assert "taken as compiled" in finding.compiled_region
        assert finding.fix.safety is not FixSafety.SAFE
