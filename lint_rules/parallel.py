"""Running one function over many files, in worker processes, results in input order.

Ctrl-C is taken between two files (`lint_rules.interrupts`); workers ignore it, let the parent
decide, and exit when the parent is gone, even if it was killed.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from lint_rules.interrupts import stop_if_interrupted

Item = TypeVar("Item")
Result = TypeVar("Result")


def ordered_map(
    function: Callable[..., Result], items: Iterable[Item], jobs: int, *constants: object
) -> Iterator[Result]:
    if jobs <= 1:
        for item in items:
            stop_if_interrupted()
            yield function(item, *constants)
        return
    from concurrent.futures import ProcessPoolExecutor  # only for -j > 1: it costs start-up time

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=follow_parent, initargs=(os.getpid(),))
    try:
        repeated = [itertools.repeat(constant) for constant in constants]
        for result in pool.map(function, items, *repeated, chunksize=4):
            stop_if_interrupted()
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def follow_parent(parent: int) -> None:
    import threading  # in a worker only

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_when_orphaned, args=(parent,), daemon=True).start()


def exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)
