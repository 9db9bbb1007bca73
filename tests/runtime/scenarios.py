"""Standalone scenario runner for the runtime tests (run in a subprocess).

Runs generation scenarios with a tiny random model against whichever
``transformers`` package comes first on ``sys.path`` (``--path`` entries are
inserted in front, so a copied / rewritten package shadows the venv's), once
with ``model.forward = torch.compile(model.forward, backend="inductor")`` and
once eagerly, and prints (or writes) a JSON document:

    {"transformers_version": ..., "transformers_file": ..., "torch_version": ...,
     "scenarios": {NAME: {"compiled": RUN, "eager": RUN}}}

    RUN = {"calls": [CALL, ...],        # one per completed generate() call
           "counters": {...},           # torch._dynamo.utils.counters (compiled only)
           "error": null | "Type: msg",
           "guarded_values": [GUARD, ...]}  # eager, with --guards only: each guard reached
    GUARD = {"relpath", "line", "function", "name",
             "before": {TYPE: count}, "after": {TYPE: count}}  # TYPE: "int", "Tensor[]", "Tensor[1]", ...
    CALL = {"next_sequence_length": [REC, ...],  # one per prepare_inputs_for_generation call
            "tokens": [[...], ...],               # generated token ids (new tokens only)
            "min_margin": float,                  # smallest top1-top2 logit gap of greedy steps
            "cache": "StaticCache", "cache_layers": ["StaticLayer"]}  # the cache generate() returned

    REC = {"type": "int" | "NoneType" | "Tensor" | ..., "passed": bool,
           "value": int | null, "shape": [...] | null}

``passed`` is False when ``prepare_inputs_for_generation`` was called without a
``next_sequence_length`` keyword (chunked prefill does that); the value that
reaches the function is then its default, ``None``.

Usage::

    python tests/runtime/scenarios.py --model gpt2 --scenario report \
        --scenario inputs_embeds [--path DIR ...] [--out FILE] [--modes compiled,eager]
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import sys
import time
import traceback


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="seqlen-guard runtime scenarios")
    parser.add_argument("--model", choices=("gpt2", "llama"), required=True)
    parser.add_argument(
        "--scenario",
        action="append",
        required=True,
        choices=(
            "report", "chunked_prefill", "continue_cache", "inputs_embeds", "beam_search", "assisted",
            "assisted_static_assistant", "position_ids",
        ),
    )  # fmt: skip
    parser.add_argument(
        "--guards", default=None, help="JSON list of int guard sites whose values the eager runs record"
    )
    parser.add_argument(
        "--path", action="append", default=[], help="directory to put in front of sys.path (repeatable)"
    )
    parser.add_argument("--modes", default="compiled,eager")
    parser.add_argument("--out", default=None, help="write JSON here instead of stdout")
    return parser.parse_args(argv)


if __name__ == "__main__":
    ARGS = _parse_args(None)
    # Must happen before torch / transformers are imported.
    for _p in reversed(ARGS.path):
        sys.path.insert(0, os.path.abspath(_p))

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import transformers  # noqa: E402
from seqlen_runtime import PROGRESS_PREFIX  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from transformers import StaticCache  # noqa: E402

transformers.logging.set_verbosity_error()

SEED = 0
MAX_NEW_TOKENS = 4
PROMPT_LEN = 8
VOCAB = 128


# --------------------------------------------------------------------------- models


def make_model(kind: str, layers: int = 2):
    torch.manual_seed(SEED)
    if kind == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(
            vocab_size=VOCAB,
            n_positions=128,
            n_embd=64,
            n_layer=layers,
            n_head=4,
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=0,
            # wide logit spread: keeps greedy argmax far from ties, so that
            # compiled-vs-eager rounding differences cannot flip a token
            initializer_range=0.2,
        )
        model = GPT2LMHeadModel(config)
    else:
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=layers,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=128,
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=0,
            initializer_range=0.2,
        )
        model = LlamaForCausalLM(config)
    model.eval()
    gc = model.generation_config
    gc.do_sample = False
    # never stop early: every call generates exactly MAX_NEW_TOKENS tokens
    gc.eos_token_id = None
    gc.pad_token_id = 0
    return model


def prompts(n: int, length: int = PROMPT_LEN, batch: int = 1) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(SEED + 1)
    # ids >= 3 keep clear of the pad / bos / eos ids
    return [torch.randint(3, VOCAB, (batch, length), generator=g) for _ in range(n)]


# --------------------------------------------------------------------------- recording


def _describe(value, passed: bool) -> dict:
    rec = {"type": type(value).__name__, "passed": passed, "value": None, "shape": None}
    if isinstance(value, torch.Tensor):
        rec["shape"] = list(value.shape)
        if value.numel() == 1:
            rec["value"] = int(value.reshape(()).item())
    elif isinstance(value, int):
        rec["value"] = value
    return rec


class Recorder:
    """Wraps ``model.prepare_inputs_for_generation`` to record ``next_sequence_length``."""

    def __init__(self, model):
        self.records: list[dict] = []
        original = model.prepare_inputs_for_generation

        # functools.wraps keeps the signature visible (generate() inspects it, e.g. for
        # `inputs_embeds` support)
        @functools.wraps(original)
        def prepare_inputs_for_generation(*args, **kwargs):
            passed = "next_sequence_length" in kwargs
            # described before the call: the value is the live cache tensor and would
            # change after the next forward
            self.records.append(_describe(kwargs.get("next_sequence_length"), passed))
            return original(*args, **kwargs)

        model.prepare_inputs_for_generation = prepare_inputs_for_generation

    def take(self) -> list[dict]:
        out, self.records = self.records, []
        return out


def _type_key(value) -> str:
    """``int``, ``NoneType``, ``Tensor[1]`` (shape (1,)), ``Tensor[]`` (0-dim), ..."""
    if isinstance(value, torch.Tensor):
        return f"Tensor{list(value.shape)}".replace(" ", "")
    return type(value).__name__


class GuardProbe:
    """Records the type of each guarded value when its guard is reached (the value the
    unmodified code would use) and at the first line after the guard (what the code uses).

    A ``sys.settrace`` hook, local tracing only in the frames of files holding a guard; used
    in the eager runs only, so that no trace function is active while Dynamo compiles."""

    def __init__(self, sites: list[dict]):
        self._by_file: dict[str, dict[int, dict]] = {}
        for site in sites:
            self._by_file.setdefault(os.path.realpath(site["file"]), {})[site["line"]] = site
        self._lookup: dict[str, dict[int, dict] | None] = {}
        self._seen: dict[tuple[str, int], dict] = {}
        self._previous = None

    def __enter__(self) -> GuardProbe:
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._previous)

    def _guards_in(self, filename: str) -> dict[int, dict] | None:
        if filename not in self._lookup:
            self._lookup[filename] = self._by_file.get(os.path.realpath(filename))
        return self._lookup[filename]

    def _record(self, site: dict, when: str, frame) -> None:
        key = (site["relpath"], site["line"])
        entry = self._seen.setdefault(key, {**{k: site[k] for k in ("relpath", "line", "function", "name")},
                                            "before": {}, "after": {}})  # fmt: skip
        type_key = _type_key(frame.f_locals.get(site["name"]))
        entry[when][type_key] = entry[when].get(type_key, 0) + 1

    def _on_call(self, frame, event, arg):
        guards = self._guards_in(frame.f_code.co_filename)
        if guards is None:
            return None
        pending = None

        def on_event(frame, event, arg):
            nonlocal pending
            if pending is not None and (
                event == "return" or (event == "line" and not pending["line"] <= frame.f_lineno <= pending["end_line"])
            ):
                self._record(pending, "after", frame)
                pending = None
            if event == "line" and (site := guards.get(frame.f_lineno)) is not None:
                self._record(site, "before", frame)
                pending = site
            return on_event

        return on_event

    def results(self) -> list[dict]:
        return [self._seen[key] for key in sorted(self._seen)]


# --------------------------------------------------------------------------- helpers


def cache_kwarg(model) -> str:
    """``generate()`` takes the cache as ``cache=`` from 5.2x on (``past_key_values=`` deprecated)."""
    params = inspect.signature(model.prepare_inputs_for_generation).parameters
    return "cache" if "cache" in params else "past_key_values"


def output_cache(out):
    return getattr(out, "cache", None) if hasattr(out, "cache") else out.past_key_values


def generate_from(model, recorder: Recorder, ids, **kwargs) -> dict:
    """`generate()` on a prompt with its full attention mask, keeping only the new tokens."""
    call, _ = generate(
        model, recorder, new_tokens_offset(ids), input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs
    )
    return call


def generate(model, recorder: Recorder, new_token_offset: int | None = None, **kwargs) -> dict:
    kwargs.setdefault("max_new_tokens", MAX_NEW_TOKENS)
    kwargs.setdefault("min_new_tokens", MAX_NEW_TOKENS)
    out = model.generate(**kwargs, return_dict_in_generate=True, output_scores=True)
    seqs = out.sequences
    if new_token_offset is not None:
        seqs = seqs[:, new_token_offset:]
    margins = []
    for step_scores in out.scores:
        top2 = step_scores.float().topk(2, dim=-1).values
        margins.append(float((top2[:, 0] - top2[:, 1]).min()))
    cache = output_cache(out)
    call = {
        "next_sequence_length": recorder.take(),
        "tokens": seqs.tolist(),
        "min_margin": min(margins) if margins else None,
        # the cache generate() used: a release may replace the requested static cache
        "cache": type(cache).__name__,
        "cache_layers": sorted({type(layer).__name__ for layer in getattr(cache, "layers", ())}),
    }
    return call, out


def new_tokens_offset(input_ids: torch.Tensor) -> int:
    return input_ids.shape[1]


def continued(sequences: torch.Tensor) -> torch.Tensor:
    """A generated sequence with three more prompt tokens: the next turn of a conversation."""
    extra = torch.tensor([[5, 6, 7]], dtype=sequences.dtype)
    return torch.cat([sequences, extra], dim=-1)


def hide_attention_mask_parameter(model) -> None:
    """Make ``model.forward`` (compiled or not) look like a forward without an
    ``attention_mask`` parameter: generate() then builds no mask and derives the position
    ids from the cache length instead."""
    inner = model.forward
    signature = inspect.signature(inner)

    @functools.wraps(inner)
    def forward(*args, **kwargs):
        return inner(*args, **kwargs)

    forward.__signature__ = signature.replace(
        parameters=[p for name, p in signature.parameters.items() if name != "attention_mask"]
    )
    model.forward = forward


# --------------------------------------------------------------------------- scenarios


def scenario_report(model, recorder):
    """The report: static cache set on the generation config, compiled forward, three
    generate() calls with no dynamo reset in between (the cache is reused and reset)."""
    model.generation_config.cache_implementation = "static"
    for ids in prompts(3):
        yield generate_from(model, recorder, ids)


def scenario_chunked_prefill(model, recorder):
    """Chunked prefill (prefill_chunk_size) with a static cache, twice."""
    model.generation_config.cache_implementation = "static"
    for ids in prompts(2, length=12):
        yield generate_from(model, recorder, ids, prefill_chunk_size=4)


def scenario_continue_cache(model, recorder):
    """Generate with a user StaticCache, append tokens, generate again from the returned cache."""
    (ids,) = prompts(1)
    cache = StaticCache(config=model.config, max_cache_len=64)
    key = cache_kwarg(model)
    first, out = generate(
        model, recorder, new_tokens_offset(ids), input_ids=ids, attention_mask=torch.ones_like(ids), **{key: cache}
    )
    yield first
    returned = output_cache(out)
    assert returned is cache, "generate() did not return the passed cache"
    ids2 = continued(out.sequences)
    second, _ = generate(
        model,
        recorder,
        new_tokens_offset(ids2),
        input_ids=ids2,
        attention_mask=torch.ones_like(ids2),
        **{key: returned},
    )
    yield second


def scenario_inputs_embeds(model, recorder):
    """Prompts passed as inputs_embeds, static cache on the generation config, twice."""
    model.generation_config.cache_implementation = "static"
    embed = model.get_input_embeddings()
    for ids in prompts(2):
        with torch.no_grad():
            emb = embed(ids)
        # with inputs_embeds, generate() returns only the new tokens
        call, _ = generate(model, recorder, None, inputs_embeds=emb, attention_mask=torch.ones_like(ids))
        yield call


def scenario_beam_search(model, recorder):
    """Beam search (num_beams=2) with a static cache on the generation config, twice: each
    step reorders the cache (``Cache.reorder_cache`` -> each layer's ``reorder_cache``)."""
    model.generation_config.cache_implementation = "static"
    for ids in prompts(2):
        yield generate_from(model, recorder, ids, num_beams=2)


def scenario_assisted(model, recorder, assistant_cache: str | None = None):
    """Assisted decoding with a one-layer assistant built from a config, a static cache set on
    the main model's generation config, twice: each round crops the assistant's cache
    (``_update_past_and_masks``). The assistant keeps its default (dynamic) cache unless
    ``assistant_cache`` names a cache implementation for it."""
    model.generation_config.cache_implementation = "static"
    assistant = make_model(model.config.model_type, layers=1)
    if assistant_cache is not None:
        assistant.generation_config.cache_implementation = assistant_cache
    for ids in prompts(2):
        yield generate_from(model, recorder, ids, assistant_model=assistant)


def scenario_assisted_static_assistant(model, recorder):
    """Assisted decoding as above with a static cache for the assistant as well: the
    assistant's cache length reaching ``_update_past_and_masks`` is then a tensor."""
    return scenario_assisted(model, recorder, assistant_cache="static")


def scenario_position_ids(model, recorder):
    """generate() builds position ids from the cache length (``_prepare_position_ids_for_generation``)
    when the model's forward takes no ``attention_mask``: generate with a user StaticCache,
    then continue from the returned cache, no attention mask either time."""
    hide_attention_mask_parameter(model)
    (ids,) = prompts(1)
    cache = StaticCache(config=model.config, max_cache_len=64)
    key = cache_kwarg(model)
    first, out = generate(model, recorder, new_tokens_offset(ids), input_ids=ids, **{key: cache})
    yield first
    ids2 = continued(out.sequences)
    second, _ = generate(model, recorder, new_tokens_offset(ids2), input_ids=ids2, **{key: output_cache(out)})
    yield second


SCENARIOS = {
    "report": scenario_report,
    "chunked_prefill": scenario_chunked_prefill,
    "continue_cache": scenario_continue_cache,
    "inputs_embeds": scenario_inputs_embeds,
    "beam_search": scenario_beam_search,
    "assisted": scenario_assisted,
    "assisted_static_assistant": scenario_assisted_static_assistant,
    "position_ids": scenario_position_ids,
}


def counters_snapshot() -> dict:
    """Dynamo's counters as JSON, with the reason of every recompile (also for vl_scenarios.py)."""
    snap = {k: {str(kk): vv for kk, vv in v.items()} for k, v in counters.items()}
    # why each recompile happened (guard failures), keyed by the compiled code's name
    failures = getattr(torch._dynamo.utils, "guard_failures", {})
    snap["guard_failures"] = {
        f"{code.co_name}@{os.path.basename(code.co_filename)}": [str(r) for r in reasons]
        for code, reasons in failures.items()
    }
    return snap


def announce(name: str, mode: str) -> None:
    """Tell the parent which run starts: a timeout names it (seqlen_runtime.run_scenario_script)."""
    print(f"{PROGRESS_PREFIX}{name} ({mode})", file=sys.stderr, flush=True)


def run(model_kind: str, name: str, mode: str, guard_sites: list[dict]) -> dict:
    announce(name, mode)
    torch._dynamo.reset()  # between scenarios only, never between generate() calls
    counters.clear()
    model = make_model(model_kind)
    if mode == "compiled":
        model.forward = torch.compile(model.forward, backend="inductor")
    else:
        model.generation_config.disable_compile = True
    recorder = Recorder(model)
    result = {"calls": [], "counters": {}, "error": None, "seconds": None}
    probe = GuardProbe(guard_sites if mode == "eager" else [])
    start = time.perf_counter()
    try:
        with torch.no_grad(), probe:
            for call in SCENARIOS[name](model, recorder):
                result["calls"].append(call)
    except Exception as exc:  # reported, the test decides
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        result["partial_records"] = recorder.take()
    result["seconds"] = round(time.perf_counter() - start, 2)
    if mode == "eager" and guard_sites:
        result["guarded_values"] = probe.results()
    if mode == "compiled":
        result["counters"] = counters_snapshot()
    return result


def main() -> int:
    doc = {
        "transformers_version": transformers.__version__,
        "transformers_file": transformers.__file__,
        "torch_version": torch.__version__,
        "model": ARGS.model,
        "scenarios": {},
    }
    modes = [m for m in ARGS.modes.split(",") if m]
    guard_sites = []
    if ARGS.guards:
        with open(ARGS.guards) as fh:
            guard_sites = json.load(fh)
    for name in ARGS.scenario:
        doc["scenarios"][name] = {mode: run(ARGS.model, name, mode, guard_sites) for mode in modes}
    text = json.dumps(doc, indent=1)
    if ARGS.out:
        with open(ARGS.out, "w") as fh:
            fh.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
