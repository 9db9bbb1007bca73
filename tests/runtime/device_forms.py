"""Candidate device-preserving rewrites of a use of a tensor-valued length, measured.

Each candidate pairs the form the code has (`torch.arange(p, p + n)`, `x[:, p:p + n]`, ...)
with a form that keeps the length on the device. Both run eagerly and under
`torch.compile(backend="inductor")` (CPU, `fullgraph=False`, then `fullgraph=True`) with the
length `p` as a Python int, a 0-dim tensor and a shape-(1,) tensor, the three types
`get_seq_length()` returns across transformers 5.x. Per run: the values (or the error) and the
Dynamo graph breaks. The fixer adopts a candidate only where the rewritten form gives the
original's int values for all three types (and its own values where the original raises) and
compiles without a break; see README "Fix safety" and tests/runtime/test_device_forms.py.

    python tests/runtime/device_forms.py --out forms.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo
from seqlen_runtime import PROGRESS_PREFIX
from torch._dynamo.utils import counters

N = 3
"""New tokens: the length of the window after the cached ones."""
ROWS = 2
WIDTH = 8
PASTS = (2, 6)
"""A window that fits in `WIDTH` columns (2 + 3) and one that runs past the end (6 + 3 > 8)."""
LENGTH_TYPES = ("int", "0-dim", "shape-(1,)")


def length(value: int, kind: str) -> int | torch.Tensor:
    if kind == "int":
        return value
    if kind == "0-dim":
        return torch.tensor(value)
    return torch.tensor([value])


def arange_two_bounds(x: torch.Tensor, p: Any) -> torch.Tensor:
    return torch.arange(p, p + N, dtype=torch.long)


def arange_span_plus_start(x: torch.Tensor, p: Any) -> torch.Tensor:
    return torch.arange(N, dtype=torch.long) + p


def arange_moved(x: torch.Tensor, p: Any) -> torch.Tensor:
    """compute_3d_position_ids (transformers 5.5-5.24): no device=, moved on the next line."""
    positions = torch.arange(p, p + N)
    return positions.view(1, 1, -1).expand(3, ROWS, -1).to(x.device)


def arange_moved_rewritten(x: torch.Tensor, p: Any) -> torch.Tensor:
    positions = torch.arange(N, device=x.device) + p
    return positions.view(1, 1, -1).expand(3, ROWS, -1).to(x.device)


def window_slice(x: torch.Tensor, p: Any) -> torch.Tensor:
    return x[:, p : p + N]


def window_index_select(x: torch.Tensor, p: Any) -> torch.Tensor:
    return x.index_select(1, torch.arange(N, device=x.device) + p)


def window_narrow(x: torch.Tensor, p: Any) -> torch.Tensor:
    return x.narrow(1, p, N)


def tail_slice(x: torch.Tensor, p: Any) -> torch.Tensor:
    return x[:, p:]


def tail_mask(x: torch.Tensor, p: Any) -> torch.Tensor:
    """The only device form of `x[:, p:]`: a static width plus a mask (a different shape)."""
    keep = torch.arange(x.shape[1], device=x.device) >= p
    return x * keep


def size_zeros(x: torch.Tensor, p: Any) -> torch.Tensor:
    return torch.zeros(p + N)


def size_zeros_bounded(x: torch.Tensor, p: Any) -> torch.Tensor:
    """A size has no value-independent form: the best is a static maximum plus a mask."""
    return (torch.arange(WIDTH + N, device=x.device) < p + N).to(torch.float32) * 0


Form = Callable[[torch.Tensor, Any], torch.Tensor]
CANDIDATES: dict[str, tuple[Form, Form]] = {
    "arange(p, p + n) -> arange(n) + p": (arange_two_bounds, arange_span_plus_start),
    "arange(p, p + n) moved by .to(d) -> arange(n, device=d) + p": (arange_moved, arange_moved_rewritten),
    "x[:, p:p + n] -> index_select(arange(n) + p)": (window_slice, window_index_select),
    "x[:, p:p + n] -> narrow(1, p, n)": (window_slice, window_narrow),
    "x[:, p:] -> mask": (tail_slice, tail_mask),
    "zeros(p + n) -> bounded mask": (size_zeros, size_zeros_bounded),
}


def run_once(form: Form, x: torch.Tensor, p: Any, mode: str) -> dict[str, Any]:
    """Values or error, and the graph breaks Dynamo counted for this call."""
    torch._dynamo.reset()
    counters.clear()
    if mode == "eager":
        fn: Callable[..., Any] = form
    else:
        fn = torch.compile(form, backend="inductor", fullgraph=mode == "fullgraph")
    try:
        value = fn(x, p)
        result: dict[str, Any] = {"shape": list(value.shape), "values": value.tolist(), "dtype": str(value.dtype)}
    except Exception as error:  # the error is the measurement
        result = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
    result["graph_breaks"] = sum(counters["graph_break"].values())
    result["graphs"] = counters["stats"]["unique_graphs"]
    result["break_reasons"] = sorted({reason.splitlines()[0][:160] for reason in counters["graph_break"]})
    return result


def measure(original: Form, rewritten: Form) -> dict[str, Any]:
    x = torch.arange(ROWS * WIDTH, dtype=torch.float32).view(ROWS, WIDTH)
    runs: dict[str, Any] = {}
    for past in PASTS:
        for kind in LENGTH_TYPES:
            for mode in ("eager", "compiled", "fullgraph"):
                for side, form in (("original", original), ("rewritten", rewritten)):
                    runs[f"{past}/{kind}/{mode}/{side}"] = run_once(form, x, length(past, kind), mode)
    return runs


def verdict(runs: dict[str, Any]) -> dict[str, Any]:
    """Adopt when, for every length type, the rewritten form compiles without a break and gives
    the int original's values eagerly and compiled."""
    problems = []
    for past in PASTS:
        reference = runs[f"{past}/int/eager/original"]
        for kind in LENGTH_TYPES:
            for mode in ("eager", "compiled", "fullgraph"):
                run = runs[f"{past}/{kind}/{mode}/rewritten"]
                if "error" in run:
                    problems.append(f"{kind} {mode} past={past}: {run['error']}")
                elif "error" not in reference and (run["values"], run["shape"]) != (
                    reference["values"],
                    reference["shape"],
                ):
                    problems.append(f"{kind} {mode} past={past}: values differ from the int original")
                if mode == "compiled" and run["graph_breaks"]:
                    problems.append(f"{kind} compiled past={past}: {run['graph_breaks']} graph break(s)")
    return {"adopt": not problems, "problems": problems}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", action="append", default=[], help="candidate names to run (default: all)")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    doc: dict[str, Any] = {"torch": torch.__version__}
    for name, (original, rewritten) in CANDIDATES.items():
        if args.only and name not in args.only:
            continue
        print(f"{PROGRESS_PREFIX}{name}", file=sys.stderr, flush=True)
        runs = measure(original, rewritten)
        doc[name] = {"runs": runs, **verdict(runs)}
    with open(args.out, "w") as stream:
        json.dump(doc, stream, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
