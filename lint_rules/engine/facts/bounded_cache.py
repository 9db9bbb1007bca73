"""A dict that keeps only the entries used last: the caches of other modules' trees and facts.

A long process (flake8 over a monorepo, an editor's language server) reads many modules; an
unbounded cache would keep every one it ever read. Reading an entry makes it the newest; adding
one beyond `maxsize` drops the oldest.
"""

from __future__ import annotations

import collections
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(collections.OrderedDict[K, V]):
    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def __getitem__(self, key: K) -> V:
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)
