"""Which principals are big in a table, remembered for a while in this process.

Search counts a principal's candidate rows per table (contacts too), up to EXACT_SCAN_MAX + 1, to choose an
exact scan or an index walk, and text matched row by row or through the text indexes (reading/search.py). Under
row security each counted row is a heap read: a big principal's count read 3,001 rows on every turn (36 ms of
the bench's big org's turn, under load), and the answer changes slowly. A principal found big is remembered as
big for BIG_SECONDS and not counted again meanwhile; a small principal is counted every time (a small count is
cheap, and a principal that grows past the mark takes the big path on its next turn). One that shrinks below it
keeps the big path (an index walk and fewer full-text candidates, reading/search.py) at most BIG_SECONDS longer.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Hashable

BIG_SECONDS = 60.0
_MAX_ENTRIES = 10_000

_big: dict[Hashable, float] = {}
_lock = threading.Lock()


def known_big(key: Hashable, *, now: float | None = None) -> bool:
    """Whether this principal (and table, model, mark: the caller's key) was found big in the last BIG_SECONDS."""
    now = time.monotonic() if now is None else now
    with _lock:
        seen = _big.get(key)
        if seen is not None and now - seen >= BIG_SECONDS:
            del _big[key]
            seen = None
    return seen is not None


def remember_big(key: Hashable, *, now: float | None = None) -> None:
    now = time.monotonic() if now is None else now
    with _lock:
        if len(_big) >= _MAX_ENTRIES:
            _big.clear()  # a bound, not a policy: the next turns count again
        _big[key] = now


def forget() -> None:
    with _lock:
        _big.clear()
