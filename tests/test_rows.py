"""A turn's column reads run on the session's connection (adapters/rows.py): they still see what the session
holds unflushed, as Session.execute's autoflush shows it, inside the same transaction; `records` gives their
columns by name and by position."""
from __future__ import annotations

import pytest
from sqlalchemy import literal, select

from memory_core.adapters.db import SYSTEM
from memory_core.adapters.rows import records, rows
from memory_core.domain.models import Organization


def test_a_read_of_rows_sees_what_the_session_added_and_did_not_flush(database):
    with database.unit_of_work(SYSTEM) as uow:
        uow.session.add(Organization(name="added, not flushed"))
        names = rows(uow.session, select(Organization.name).where(Organization.name == "added, not flushed"))
        assert names.scalars().all() == ["added, not flushed"]
    with database.unit_of_work(SYSTEM) as uow:  # never committed: gone with its transaction
        assert rows(uow.session, select(Organization.id).where(Organization.name == "added, not flushed")).first() is None


def test_records_give_each_rows_columns_by_name_and_by_position(database):
    with database.unit_of_work(SYSTEM) as uow:
        for name in ("Talleres García", "Hierros Olano"):
            uow.session.add(Organization(name=name))
        got = records(rows(uow.session, select(Organization.name, Organization.id, literal(60).label("days"))
                           .where(Organization.name.in_(["Talleres García", "Hierros Olano"]))
                           .order_by(Organization.name)))
        assert [(r.name, r.days) for r in got] == [("Hierros Olano", 60), ("Talleres García", 60)]
        assert [r[0] for r in got] == ["Hierros Olano", "Talleres García"]
        assert all(r.id is not None and r[1] == r.id for r in got)
        # A column whose key is not a field name is refused, never renamed behind its reader's back.
        with pytest.raises(ValueError):
            records(rows(uow.session, select(Organization.name, literal(1).label("_hidden")).limit(1)))
