"""A turn's column reads run on the session's connection (adapters/rows.py): they still see what the session
holds unflushed, as Session.execute's autoflush shows it, inside the same transaction."""
from __future__ import annotations

from sqlalchemy import select

from memory_core.adapters.db import SYSTEM
from memory_core.adapters.rows import rows
from memory_core.domain.models import Organization


def test_a_read_of_rows_sees_what_the_session_added_and_did_not_flush(database):
    with database.unit_of_work(SYSTEM) as uow:
        uow.session.add(Organization(name="added, not flushed"))
        names = rows(uow.session, select(Organization.name).where(Organization.name == "added, not flushed"))
        assert names.scalars().all() == ["added, not flushed"]
    with database.unit_of_work(SYSTEM) as uow:  # never committed: gone with its transaction
        assert rows(uow.session, select(Organization.id).where(Organization.name == "added, not flushed")).first() is None
