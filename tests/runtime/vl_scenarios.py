"""Decode-loop scenario runner (Qwen2-VL and a text model) for the runtime tests (run in a subprocess).

``generate()`` never reaches ``Qwen2VLModel.compute_3d_position_ids`` inside the
compiled ``forward``: it always passes ``position_ids``, computed on the host by
``_prepare_position_ids_for_generation`` (5.5.3 and 5.24.0 alike). A decode loop
that calls the model itself does reach it: ``forward`` computes the 3D position
ids from ``cache.get_seq_length()``, a tensor once the ``StaticCache`` holds
tokens. These scenarios run such a loop with a tiny random Qwen2-VL model
against whichever ``transformers`` package comes first on ``sys.path``
(``--path`` entries go in front), with ``model.forward`` compiled by Inductor
and eagerly, and write a JSON document:

    {"transformers_version": ..., "transformers_file": ..., "modeling_file": ...,
     "scenarios": {NAME: {"compiled": RUN, "eager": RUN}}}

    RUN = {"tokens": [[...], ...],     # greedy tokens, one list per pass
           "forwards": int,            # model forward calls
           "position_id_calls": int,   # compute_3d_position_ids calls (eager only)
           "traced": [[co_name, co_filename], ...],  # compute_3d_position_ids code Dynamo traced (compiled only)
           "counters": {...},          # as scenarios.py records them (compiled only)
           "min_margin": float,        # smallest top1-top2 logit gap of the greedy steps
           "error": null | "Type: msg"}

Scenarios (each: a StaticCache, two passes of prefill + DECODE_STEPS decode steps,
``cache.reset()`` in between, so the second prefill already sees an initialized cache):

- ``text``: a text-only prompt; ``rope_deltas`` stays None, so the unmodified
  function never looks at the length: no graph break there;
- ``image``: a prompt with one image (``pixel_values``, ``image_grid_thw``,
  ``mm_token_type_ids``); the decode steps take the ``rope_deltas`` branch, which
  compares the length with 0 and passes it to ``torch.arange(cache_length,
  cache_length + seq_length)``. 5.5.3's shape-(1,) length makes that ``arange``
  raise a TypeError in the unmodified release; the fixer's device rewrite
  (``torch.arange(seq_length, device=inputs_embeds.device) + cache_length``) runs;
- ``positions``: a text model (tiny XGLM) whose ``forward`` computes its position
  ids as ``torch.arange(past, past + n, dtype=torch.long, device=...)`` when none
  are passed, in the same decode loop: the same crash on 5.5.3, a graph break on
  5.24.0, both gone with the rewrite.

Modes: ``compiled`` (Inductor), ``eager``, and ``reference``: eager, with the
cache's ``get_seq_length()`` turned into a Python int (what a host guard gives),
the tokens every other run must produce.

Usage::

    python tests/runtime/vl_scenarios.py --scenario text --scenario image [--path DIR ...] --out FILE
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import sys
import traceback


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="seqlen-guard decode-loop runtime scenarios")
    parser.add_argument("--scenario", action="append", required=True, choices=("text", "image", "positions"))
    parser.add_argument("--path", action="append", default=[], help="directory to put in front of sys.path")
    parser.add_argument("--modes", default="compiled,eager")
    parser.add_argument("--out", required=True, help="write JSON here")
    return parser.parse_args(argv)


if __name__ == "__main__":
    ARGS = _parse_args(None)
    # Must happen before torch / transformers are imported (also by scenarios.py).
    for _p in reversed(ARGS.path):
        sys.path.insert(0, os.path.abspath(_p))

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import transformers  # noqa: E402
from scenarios import SEED, VOCAB, announce, counters_snapshot, prompts  # noqa: E402
from torch._dynamo.utils import counters, get_traced_code  # noqa: E402
from transformers import (  # noqa: E402
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    StaticCache,
    XGLMConfig,
    XGLMForCausalLM,
)

FUNCTION = "compute_3d_position_ids"
DECODE_STEPS = 3
PASSES = 2
MAX_CACHE_LEN = 32
# special ids above the prompt ids of scenarios.prompts() (3 .. VOCAB-1)
IMAGE, VIDEO, VISION_START, VISION_END = VOCAB, VOCAB + 1, VOCAB + 2, VOCAB + 3
# one image of 1 x 4 x 4 patches: 16 patches, 4 tokens after the 2 x 2 merge
GRID_THW = (1, 4, 4)
PATCH, TEMPORAL_PATCH, MERGE, CHANNELS = 2, 2, 2, 3


def make_text_model() -> XGLMForCausalLM:
    """A tiny XGLM: its forward computes positions with torch.arange(past, past + n, ...)."""
    torch.manual_seed(SEED)
    config = XGLMConfig(
        vocab_size=VOCAB + 8,
        d_model=64,
        ffn_dim=128,
        num_layers=2,
        attention_heads=4,
        max_position_embeddings=64,
        dropout=0.0,
        attention_dropout=0.0,
        init_std=0.2,  # wide logit spread: greedy argmax far from ties
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    return XGLMForCausalLM(config).eval()


def make_model() -> Qwen2VLForConditionalGeneration:
    torch.manual_seed(SEED)
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": VOCAB + 8,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 128,
            # head_dim 16: the three M-RoPE sections add up to head_dim / 2
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
            "bos_token_id": 1,
            "eos_token_id": 2,
            "pad_token_id": 0,
            # wide logit spread, as in scenarios.py: greedy argmax far from ties
            "initializer_range": 0.2,
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 64,
            "num_heads": 2,
            "mlp_ratio": 2,
            "in_channels": CHANNELS,
            "patch_size": PATCH,
            "temporal_patch_size": TEMPORAL_PATCH,
            "spatial_merge_size": MERGE,
        },
        image_token_id=IMAGE,
        video_token_id=VIDEO,
        vision_start_token_id=VISION_START,
        vision_end_token_id=VISION_END,
    )
    return Qwen2VLForConditionalGeneration(config).eval()


def cache_kwarg(model) -> str:
    """``forward`` takes the cache as ``cache=`` in 5.2x, ``past_key_values=`` in 5.5."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def image_inputs() -> dict:
    """Two prompt tokens, <vision_start> 4 x <image> <vision_end>, the rest of a prompt."""
    (ids,) = prompts(1)
    t, h, w = GRID_THW
    image = [VISION_START] + [IMAGE] * (t * h * w // MERGE**2) + [VISION_END]
    ids = torch.cat([ids[:, :2], torch.tensor([image]), ids[:, 2:]], dim=-1)
    g = torch.Generator().manual_seed(SEED + 2)
    pixels = torch.randn(t * h * w, CHANNELS * TEMPORAL_PATCH * PATCH * PATCH, generator=g)
    return {
        "input_ids": ids,
        "pixel_values": pixels,
        "image_grid_thw": torch.tensor([GRID_THW]),
        "mm_token_type_ids": (ids == IMAGE).int(),  # text 0, image 1
    }


# --------------------------------------------------------------------------- recording


class TracedCode:
    """The Inductor backend, recording which code objects named like FUNCTION
    (resume functions included) Dynamo traced into the graphs it hands over.
    The graphs and Dynamo's decisions are those of ``backend="inductor"``."""

    def __init__(self) -> None:
        self.inductor = torch._dynamo.lookup_backend("inductor")
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, gm, example_inputs):
        for code in get_traced_code() or ():
            if FUNCTION in code.co_name:
                self.seen.add((code.co_name, os.path.realpath(code.co_filename)))
        return self.inductor(gm, example_inputs)


def count_calls(model) -> list[int]:
    """Counts compute_3d_position_ids calls (used eagerly only: a wrapper frame
    would change what Dynamo compiles)."""
    calls = [0]
    inner = model.model
    original = inner.compute_3d_position_ids

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    inner.compute_3d_position_ids = wrapper
    return calls


# --------------------------------------------------------------------------- scenarios


class Loop:
    """Greedy decoding by calling the model: prefill, then DECODE_STEPS single tokens.
    No attention mask (none is needed without padding): with one, 5.24.0's
    compute_3d_position_ids returns positions for the whole mask in a decode step
    and the cache update fails, eagerly too."""

    def __init__(self, model):
        self.model = model
        self.key = cache_kwarg(model)
        self.forwards = 0
        self.margins: list[float] = []

    def step(self, cache, **inputs) -> torch.Tensor:
        self.forwards += 1
        logits = self.model(**inputs, **{self.key: cache}, use_cache=True).logits[:, -1]
        top2 = logits.float().topk(2, dim=-1).values
        self.margins.append(float((top2[:, 0] - top2[:, 1]).min()))
        return logits.argmax(-1, keepdim=True)

    def run(self, cache, inputs: dict) -> list[int]:
        token = self.step(cache, **inputs)
        tokens = [int(token)]
        for _ in range(DECODE_STEPS):
            token = self.step(cache, input_ids=token)
            tokens.append(int(token))
        return tokens


def with_int_length(cache: StaticCache) -> StaticCache:
    """The cache's length as a Python int, as a host-side guard makes it: the reference run."""
    for method in ("get_seq_length", "get_query_offset"):
        original = getattr(cache, method, None)
        if original is not None:
            setattr(cache, method, functools.wraps(original)(lambda *a, _f=original, **k: int(_f(*a, **k))))
    return cache


def scenario(model, name: str, int_length: bool = False) -> tuple[list[list[int]], Loop]:
    inputs = image_inputs() if name == "image" else {"input_ids": prompts(1)[0]}
    loop = Loop(model)
    cache = StaticCache(config=model.config, max_cache_len=MAX_CACHE_LEN)
    if int_length:
        cache = with_int_length(cache)
    passes = []
    for i in range(PASSES):
        if i:
            cache.reset()  # stays initialized: get_seq_length() is a tensor from now on
        passes.append(loop.run(cache, inputs))
    return passes, loop


def run(name: str, mode: str) -> dict:
    announce(name, mode)
    torch._dynamo.reset()
    counters.clear()
    vl = name != "positions"
    model = make_model() if vl else make_text_model()
    traced = calls = None
    if mode == "compiled":
        traced = TracedCode()
        model.forward = torch.compile(model.forward, backend=traced)
    elif vl:
        calls = count_calls(model)
    result: dict = {"error": None}
    try:
        with torch.no_grad():
            tokens, loop = scenario(model, name, int_length=mode == "reference")
        result.update(tokens=tokens, forwards=loop.forwards, min_margin=min(loop.margins))
    except Exception as exc:  # reported, the test decides
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    if calls is not None:
        result["position_id_calls"] = calls[0]
    if traced is not None:
        result["traced"] = sorted(traced.seen)
        result["counters"] = counters_snapshot()
    return result


def main() -> int:
    transformers.logging.set_verbosity_error()
    doc = {
        "transformers_version": transformers.__version__,
        "transformers_file": os.path.realpath(transformers.__file__),
        "modeling_file": os.path.realpath(inspect.getfile(Qwen2VLForConditionalGeneration)),
        "text_modeling_file": os.path.realpath(inspect.getfile(XGLMForCausalLM)),
        "scenarios": {},
    }
    modes = [m for m in ARGS.modes.split(",") if m]
    for name in ARGS.scenario:
        doc["scenarios"][name] = {mode: run(name, mode) for mode in modes}
    with open(ARGS.out, "w") as fh:
        fh.write(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
