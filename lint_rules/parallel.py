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
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

from lint_rules.interrupts import stop_if_interrupted

Item = TypeVar("Item")
Result = TypeVar("Result")


def ordered_map(
    function: Callable[..., Result],
    items: Iterable[Item],
    jobs: int,
    *constants: object,
    lost: Callable[[Item, str], Result],
) -> Iterator[Result]:
    """`function(item, *constants)` for each item, in order; with `jobs` > 1 in worker processes. When
    a worker dies (killed, or a crash below Python), the items not done are run again one process
    each, and the one whose process dies again comes back as `lost(item, reason)`."""
    if jobs <= 1:
        for item in items:
            stop_if_interrupted()
            yield function(item, *constants)
        return
    from concurrent.futures.process import BrokenProcessPool  # only for -j > 1: it costs start-up time

    pending = list(items)
    done = 0
    pool = worker_pool(jobs)
    try:
        repeated = [itertools.repeat(constant) for constant in constants]
        for result in pool.map(function, pending, *repeated, chunksize=4):
            stop_if_interrupted()
            done += 1
            yield result
        return
    except BrokenProcessPool:
        pass
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for item in pending[done:]:
        stop_if_interrupted()
        yield run_alone(function, item, constants, lost)


WORKER_DIED = "internal error: the worker process died on this file"


def run_alone(
    function: Callable[..., Result], item: Item, constants: tuple[object, ...], lost: Callable[[Item, str], Result]
) -> Result:
    from concurrent.futures.process import BrokenProcessPool

    pool = worker_pool(1)
    try:
        return pool.submit(function, item, *constants).result()
    except BrokenProcessPool:
        return lost(item, WORKER_DIED)
    finally:
        pool.shutdown(wait=True)


def worker_pool(jobs: int) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs, initializer=follow_parent, initargs=(os.getpid(),))


def follow_parent(parent: int) -> None:
    import threading  # in a worker only

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=exit_when_orphaned, args=(parent,), daemon=True).start()


def exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)
