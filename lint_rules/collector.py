"""Python's cyclic garbage collector, set for a command-line run over many files.

`ast.parse` makes tens of thousands of objects per file at once. With the default threshold (a
young collection every 700 allocations not matched by a deallocation) each parse runs hundreds of
collections that scan the growing tree again and promote it, so that the full collections that
follow scan the trees (and the modules the command imported) over and over: a quarter of a
whole-tree check's time went there.

The engine leaves no reference cycles behind a checked module (`ModuleRun.release`): its tree and
facts are freed when the file is done, by reference counting, so the collector has little to find.
A command (`seqlen-guard`, `seqlen-guard-fix`) therefore moves the objects its imports made into
the permanent generation (they live as long as the process anyway) and collects the youngest
generation every `YOUNG_THRESHOLD` net allocations. Garbage in cycles is still collected; the peak
memory stays the same. The flake8 plugin leaves flake8's process as flake8 set it.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000


def settle_for_command() -> None:
    """Call once the command's modules are imported, before it reads any file."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
