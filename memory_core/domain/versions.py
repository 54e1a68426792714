"""Versions of a fact: a new row replaces the active one, which is kept (closed, linked to its successor).

The one home of "supersede, never overwrite": the write ladder, an approved proposal and the console's
edit and restore all call `supersede`. The unique index allows one active row per fact, so the old row
is closed (and flushed) before the new one becomes active.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from memory_core.domain.models import Memory


def supersede(session: Session, current: Memory | None, new: Memory, *, at: dt.datetime) -> None:
    """Make `new` the active version, closing `current` (None: nothing to replace) at `at`.

    `new` may be a row not yet flushed or a proposal being approved. Does not commit."""
    if current is not None:
        current.status, current.valid_to = "superseded", at
        session.flush()  # one active row per fact: close the current one before the new one is active
    new.status = "active"
    if new not in session:
        session.add(new)
    session.flush()
    if current is not None:
        current.superseded_by = new.id
