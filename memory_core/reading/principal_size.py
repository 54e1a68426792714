"""How many rows a principal has in a table, remembered for a while in this process.

Search counts a principal's candidate rows per table (contacts too), up to EXACT_SCAN_MAX + 1, to choose an
exact scan or an index walk, and text matched row by row or through the text indexes (reading/search.py). Under
row security each counted row is a heap read: a big principal's count read 3,001 rows on every turn (36 ms of
the bench's big org's turn, under load), and a typical principal's counts were the costliest statement of its
block after full text (2-3 ms of a 25 ms block and as much of its search, 200,000 memories, 2026-12-03). The
answer changes slowly, so a count is remembered and not made again meanwhile:

- over the mark (big): for BIG_SECONDS. One that shrinks below it keeps the big path (an index walk and fewer
  full-text candidates) at most that much longer;
- at most half the mark (small): for SMALL_SECONDS, ten minutes. To leave the small path early it would have to
  gain half the mark (1,500 rows) within that time; one that does (an import) is still searched exactly (an exact
  scan, text matched row by row), only slower, until it is counted again. A person's next turn often comes more
  than a minute later: with 30 s most turns counted again (2-3 ms of a typical principal's block at 1M);
- in between: counted on every turn, so a principal nearing the mark takes the big path on the turn after it
  passes it.

Either way the same rows are found: the count chooses how they are read, never which.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Hashable

BIG_SECONDS = 60.0
SMALL_SECONDS = 600.0
_MAX_ENTRIES = 10_000

_counts: dict[Hashable, tuple[int, float]] = {}  # key -> (rows counted, until when it is kept)
_lock = threading.Lock()


def known(key: Hashable, *, now: float | None = None) -> int | None:
    """The rows counted for this principal (and table, model, mark: the caller's key) if still kept, else None."""
    now = time.monotonic() if now is None else now
    with _lock:
        kept = _counts.get(key)
        if kept is not None and now >= kept[1]:
            del _counts[key]
            kept = None
    return None if kept is None else kept[0]


def remember(key: Hashable, n: int, mark: int, *, now: float | None = None) -> None:
    """Keep `n`, counted against `mark`, for as long as it is safe to (see the module's text)."""
    if n > mark:
        seconds = BIG_SECONDS
    elif n <= mark // 2:
        seconds = SMALL_SECONDS
    else:
        return
    now = time.monotonic() if now is None else now
    with _lock:
        if len(_counts) >= _MAX_ENTRIES:
            _counts.clear()  # a bound, not a policy: the next turns count again
        _counts[key] = (n, now + seconds)


def forget() -> None:
    with _lock:
        _counts.clear()
