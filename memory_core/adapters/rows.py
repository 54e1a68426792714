"""Plain rows from a session's connection, without the ORM's execution layer.

A turn's reads select columns, never entities. Through `Session.execute` each statement also passes the ORM's
execution layer and its row loading: at 1M memories that was a quarter to a third of a block's Python CPU (27 vs
17-21 ms a block, the same 200 blocks with and without it, 2026-12-02). `rows` runs such a read on the session's
connection, in the same transaction and scope, after flushing what the session holds unflushed, as Session.execute's
autoflush would. Statements that select ORM entities keep `Session.execute` (here they would come back as columns).

`records` turns such a result into named tuples, for rows whose columns are read many times (a block's hundreds of
candidates, each read a dozen times while ranked, fitted and rendered). A column of an SQLAlchemy Row is reached
through `__getattr__`, after a failed lookup through the class's bases: ~1 us here, against ~0.03 us for a named
tuple's field (300 rows read 15 times: 4.3 ms against 0.2 ms, the conversion included).
"""
from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session


def rows(session: Session, statement, params: dict | None = None) -> CursorResult:
    """The result of a read of columns, run on the session's connection."""
    if session.new or session.dirty or session.deleted:
        session.flush()
    return session.connection().execute(statement, params)


@lru_cache(maxsize=256)
def _record(keys: tuple[str, ...]) -> type:
    return namedtuple("Record", keys)


def records(result: CursorResult) -> list[tuple]:
    """The result's rows as named tuples of its columns (each key must be a field name: ValueError if not)."""
    return list(map(_record(tuple(result.keys()))._make, result.all()))
