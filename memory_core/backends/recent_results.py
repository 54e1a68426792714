"""The results of the last few inputs a local model computed, reused when the same input comes again.

A local model scores each input on its own, so an input seen a moment ago ("gracias", "ok", a fact said twice)
gets the same answer, bit for bit, as when it was computed; the embedder and the gate keep their last few
thousand this way. Safe to share between threads.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class RecentResults(Generic[K, V]):
    """At most `size` results by input, the least recently used dropped first."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[K], compute: Callable[[list[K]], Sequence[V]]) -> list[V]:
        """The result of each key, in order: those kept from before, the rest computed in one call of
        `compute` (each distinct missing key once) and kept."""
        with self._lock:
            known = {k: self._items[k] for k in keys if k in self._items}
            for k in known:
                self._items.move_to_end(k)
        missing = [k for k in dict.fromkeys(keys) if k not in known]
        if missing:
            computed = compute(missing)
            with self._lock:
                for k, v in zip(missing, computed):
                    known[k] = self._items[k] = v
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return [known[k] for k in keys]
