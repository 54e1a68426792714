"""Rows a worker batch writes once, at its end, instead of one INSERT each: audit rows and notifications.

Nothing in the pipeline reads them back while the batch runs, so the outbox worker collects each message's
rows (`collecting`), keeps them only if the message's savepoint was released, and adds them all at once
(one multi-row INSERT a table) in the batch's transaction: they still commit with what they record, or not
at all. Outside `collecting` (a request, a single message) `add` adds the row to the session as usual.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

_KEY = "memoria.deferred_rows"


def add(session: Session, row, *, flush: bool = False) -> None:
    """Add `row` to the session (and flush it, if asked), or to the rows being collected."""
    collected = session.info.get(_KEY)
    if collected is not None:
        collected.append(row)
        return
    session.add(row)
    if flush:
        session.flush()


@contextmanager
def collecting(session: Session) -> Iterator[list]:
    """Rows `add`ed inside are collected in the yielded list, not added: the caller adds those it keeps."""
    previous = session.info.get(_KEY)
    rows: list = []
    session.info[_KEY] = rows
    try:
        yield rows
    finally:
        if previous is None:
            session.info.pop(_KEY, None)
        else:
            session.info[_KEY] = previous
