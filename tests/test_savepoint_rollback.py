"""Rolling back to a savepoint (a worker's message that failed, or stepped aside for another worker) undoes only
what the savepoint held, and leaves the connection's prepared statements prepared (adapters/db.py)."""
from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from memory_core.adapters import planner
from memory_core.adapters.db import SYSTEM
from memory_core.domain.models import Organization

_PREPARED = text("select name, statement, generic_plans from pg_prepared_statements")


def _names_of(uow) -> dict[str, str]:
    return {statement: name for name, statement, _ in uow.session.execute(_PREPARED)}


def test_a_failed_savepoint_keeps_the_batch_before_it_and_the_statements_prepared(database):
    by_name = select(Organization.id).where(Organization.name == "Talleres García")
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        planner.planned_once(s)  # as a worker's batch: every statement prepared at its first run
        s.add(Organization(name="Talleres García"))
        s.flush()
        assert s.scalar(by_name) is not None
        before = _names_of(uow)
        with pytest.raises(IntegrityError), s.begin_nested():
            s.execute(text("insert into organizations (id, name) select id, name from organizations"))
        # The batch goes on: what was written before the savepoint is there...
        assert s.scalar(by_name) is not None
        after = _names_of(uow)
        # ...and the statements prepared before it are the same prepared statements (not deallocated and
        # prepared again under new names).
        read = next(statement for statement in before if statement.startswith("SELECT organizations.id"))
        assert after[read] == before[read]
        uow.commit()
    with database.unit_of_work(SYSTEM) as uow:
        assert uow.session.scalar(by_name) is not None


def test_what_a_rolled_back_savepoint_wrote_is_gone(database):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        with pytest.raises(ZeroDivisionError), s.begin_nested():
            s.add(Organization(name="only inside the savepoint"))
            s.flush()
            raise ZeroDivisionError
        s.add(Organization(name="after the savepoint"))
        uow.commit()
    with database.unit_of_work(SYSTEM) as uow:
        names = set(uow.session.scalars(select(Organization.name)))
    assert "after the savepoint" in names and "only inside the savepoint" not in names


def test_a_savepoint_the_server_does_not_know_is_an_error(database):
    with database.unit_of_work(SYSTEM) as uow:
        conn = uow.session.connection()
        conn.execute(text("select 1"))  # the transaction's first statement: the server's transaction begins
        with pytest.raises(DBAPIError, match="savepoint \"never_made\" does not exist"):
            conn.dialect.do_rollback_to_savepoint(conn, "never_made")
