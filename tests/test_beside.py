"""Reads run beside a session (adapters.beside): on another connection, in the session's scope, reading only what
is committed; in turn where no connection can be spared; failures reach the caller."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from memory_core.adapters.beside import beside
from memory_core.adapters.db import Database, Scope, resolve_urls

_WHO = text("select pg_backend_pid(), current_setting('memoria.mode'), current_setting('memoria.user_id')")


@pytest.fixture
def scope(factory):
    org = factory.org()
    return Scope(mode="principal", org_id=org.id, user_id=factory.member(org).id)


def _who(session):
    return tuple(session.execute(_WHO).one())


def test_work_beside_runs_on_another_connection_in_the_sessions_scope(database, scope):
    with database.unit_of_work(scope) as uow:
        here = _who(uow.session)
        there = beside(uow.session, _who)()
    assert there[0] != here[0]
    assert there[1:] == here[1:] == ("principal", str(scope.user_id))


def test_work_beside_reads_what_is_committed_only(database, scope):
    with database.unit_of_work(scope) as uow:
        uow.session.execute(text("create temp table seen (n int)"))
        uow.session.execute(text("insert into seen values (1)"))
        here = uow.session.scalar(text("select to_regclass('pg_temp.seen') is not null"))
        there = beside(uow.session, lambda s: s.scalar(text("select to_regclass('pg_temp.seen') is not null")))()
    assert here is True and there is False


def test_work_beside_work_and_a_pool_of_one_run_in_turn_on_the_sessions_connection(database, servers, scope):
    urls = resolve_urls(servers)
    one = Database(urls.app, system_url=urls.system, pool_size=1, max_overflow=0, pool_timeout=2)
    try:
        with one.unit_of_work(scope) as uow:
            here = _who(uow.session)
            assert beside(uow.session, _who)() == here  # a pool of one: no connection to spare, no wait
    finally:
        one.dispose()
    with database.unit_of_work(scope) as uow:
        outer, inner = beside(uow.session, lambda s: (_who(s), beside(s, _who)()))()
        assert inner == outer and outer[0] != _who(uow.session)[0]


def test_a_failure_beside_is_raised_to_the_caller(database, scope):
    with database.unit_of_work(scope) as uow:
        result = beside(uow.session, lambda s: s.execute(text("select 1/0")))
        with pytest.raises(Exception, match="division by zero"):
            result()
        assert uow.session.scalar(text("select 2")) == 2  # the session's own transaction is untouched
