"""Running one function over many files, in worker processes, results in input order.

Ctrl-C is taken between two files, never in the middle of one (LibCST turns an interrupt in its
code generator into a KeyError); workers ignore it, let the parent decide, and exit when the
parent is gone, even if it was killed.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


INTERRUPTED = threading.Event()


EXIT_INTERRUPTED = 130


def run_interruptible(run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None, message: str) -> int:
    """A command line's `run`, ending on Ctrl-C with status 130 and one line, no traceback."""
    defer_interrupts()
    try:
        return run(argv)
    except KeyboardInterrupt:
        print(message, file=sys.stderr)
        return EXIT_INTERRUPTED


def defer_interrupts() -> None:
    """From now on Ctrl-C raises KeyboardInterrupt in `ordered_map`, between two files."""
    signal.signal(signal.SIGINT, lambda signum, frame: INTERRUPTED.set())


def ordered_map(
    function: Callable[..., Result], items: Iterable[Item], jobs: int, *constants: object
) -> Iterator[Result]:
    if jobs <= 1:
        for item in items:
            stop_if_interrupted()
            yield function(item, *constants)
        return
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=follow_parent, initargs=(os.getpid(),))
    try:
        repeated = [itertools.repeat(constant) for constant in constants]
        for result in pool.map(function, items, *repeated, chunksize=4):
            stop_if_interrupted()
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def stop_if_interrupted() -> None:
    if INTERRUPTED.is_set():
        raise KeyboardInterrupt


def follow_parent(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_when_orphaned, args=(parent,), daemon=True).start()


def exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)
