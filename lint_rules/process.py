"""How a command's process is set up for a run over many files, and how it ends.

The garbage collector: `ast.parse` makes tens of thousands of objects per file at once. With the
default threshold (a young collection every 700 allocations not matched by a deallocation) each
parse runs hundreds of collections that scan the growing tree again and promote it, so that the
full collections that follow scan the trees (and the modules the command imported) over and over:
a quarter of a whole-tree check's time went there. The engine leaves no reference cycles behind a
checked module (`ModuleRun.release`): its tree and facts are freed when the file is done, by
reference counting, so the collector has little to find. A command (`seqlen-guard`,
`seqlen-guard-fix`) therefore moves the objects its imports made into the permanent generation
(they live as long as the process anyway) and collects the youngest generation every
`YOUNG_THRESHOLD` net allocations. Garbage in cycles is still collected; the peak memory stays the
same. The flake8 plugin leaves flake8's process as flake8 set it.

The end: a console script's process ends as soon as its output is flushed (`end_process`), without
freeing its objects one by one (the imported modules, what the run kept): a few milliseconds of a
one-file run (pre-commit). In-process callers (tests, `main(argv)`) get the exit status back instead.
"""

from __future__ import annotations

import gc
import os
import sys

YOUNG_THRESHOLD = 50_000


def collect_rarely() -> None:
    """The youngest generation collected every `YOUNG_THRESHOLD` net allocations; set before the
    command's modules are imported too (what imports make lives as long as the process: some thirty
    young collections of a one-file run went there)."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def settle_for_command() -> None:
    """Call once the command's modules are imported, before it reads any file."""
    gc.freeze()
    collect_rarely()


def end_process(status: int) -> int:
    """Ends the process with `status` once stdout and stderr are flushed; if they cannot be flushed
    (a reader that went away), returns `status` for the ordinary exit to deal with."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return status
    os._exit(status)
