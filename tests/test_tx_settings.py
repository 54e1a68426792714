"""A transaction's settings (its row-security scope, the planner's windows, the search's knobs) go to PostgreSQL
with the statement that first needs them, in one round trip, and never outlive their window or their transaction
(memory_core.adapters.tx_settings)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import text
from sqlalchemy.orm import Session

from memory_core.adapters import planner
from memory_core.adapters.db import SYSTEM, Scope
from memory_core.domain.access import load_access
from memory_core.reading.context import assemble_context
from tests.support.statements import round_trips

NOW = dt.datetime(2026, 12, 4, 12, tzinfo=dt.timezone.utc)
_READ = text("select current_setting('memoria.mode'), current_setting('enable_sort'), "
             "current_setting('plan_cache_mode')")


def _trips_of_settings(trips: list[list[str]]) -> list[list[str]]:
    """The round trips that ran a statement only setting settings."""
    return [t for t in trips if any(a.startswith("run select ") and "set_config(" in a and " from " not in a.lower()
                                    for a in t)]


def test_the_scope_and_every_window_open_go_in_one_round_trip_before_the_first_statement(database):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        with round_trips(s.connection()) as trips:
            planner.planned_once(s)
            with planner.sorting_disabled(s):
                assert s.execute(_READ).one() == ("system", "off", "force_generic_plan")
            assert s.execute(_READ).one() == ("system", "on", "force_generic_plan")
    # The scope, generic plans and the window's start went before the first read, the window's end before the
    # second: one round trip each (it was four: the scope, plan_cache_mode, enable_sort and putting it back).
    assert len(_trips_of_settings(trips)) == 2, trips


def test_a_window_with_no_statement_inside_costs_no_round_trip(database):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        s.execute(text("select 1"))
        with round_trips(s.connection()) as trips:
            for _ in range(3):
                with planner.sorting_disabled(s), planner.custom_plans(s):
                    pass
            assert s.execute(_READ).one() == ("system", "on", "auto")
    assert trips and not _trips_of_settings(trips), trips


def test_nested_windows_put_back_what_the_transaction_had(database):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        planner.planned_once(s)
        with planner.custom_plans(s):
            with planner.custom_plans(s), planner.sorting_disabled(s):
                assert s.execute(_READ).one() == ("system", "off", "force_custom_plan")
            assert s.execute(_READ).one() == ("system", "on", "force_custom_plan")
        assert s.execute(_READ).one() == ("system", "on", "force_generic_plan")


def test_a_savepoint_rolled_back_undoes_its_settings_and_the_next_statement_gets_the_transactions_own(database):
    """PostgreSQL undoes what was set inside a savepoint when it is rolled back: a window that opened before the
    savepoint and closed inside it would otherwise stay open on the server."""
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        with planner.sorting_disabled(s):
            assert s.execute(_READ).one() == ("system", "off", "auto")
            savepoint = s.begin_nested()
            assert s.execute(_READ).one() == ("system", "off", "auto")  # (the SAVEPOINT is sent with this read)
        # The window's end is sent inside the savepoint...
        assert s.execute(_READ).one() == ("system", "on", "auto")
        with planner.custom_plans(s):
            assert s.execute(_READ).one() == ("system", "on", "force_custom_plan")
        savepoint.rollback()  # ...and undone with it: sorting would be off again, and plans custom
        assert s.execute(_READ).one() == ("system", "on", "auto")


def test_a_savepoint_rolled_back_sends_again_only_what_changed_inside_it(database):
    """A worker's message that fails or steps aside rolls back its savepoint: the scope set before it stands, and
    is not sent again."""
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        planner.planned_once(s)
        assert s.execute(_READ).one() == ("system", "on", "force_generic_plan")
        with round_trips(s.connection()) as trips:
            savepoint = s.begin_nested()
            assert s.execute(_READ).one() == ("system", "on", "force_generic_plan")
            savepoint.rollback()
            assert s.execute(_READ).one() == ("system", "on", "force_generic_plan")
    assert not _trips_of_settings(trips), trips


def test_each_transaction_on_a_pooled_connection_runs_in_its_own_scope(database, factory):
    """The settings are the transaction's: the next one on the same connection sends its own scope, whatever the
    last one had sent (a stale record of what the server holds would let the next person's reads run in the
    previous person's scope)."""
    org = factory.org()
    ana, bea = factory.member(org), factory.member(org)
    read = text("select current_setting('memoria.user_id'), current_setting('enable_sort')")
    seen, connections = [], set()
    for user in (ana, bea, ana):
        scope = Scope(mode="principal", org_id=org.id, user_id=user.id)
        with database.unit_of_work(scope) as uow:
            connections.add(id(uow.session.connection().connection.dbapi_connection))
            with planner.sorting_disabled(uow.session):
                seen.append(uow.session.execute(read).one())
            uow.commit()
    assert seen == [(str(ana.id), "off"), (str(bea.id), "off"), (str(ana.id), "off")]
    assert len(connections) == 1  # one pooled connection served all three


def test_a_memory_block_sends_its_settings_with_its_reads(database, system_session, factory):
    """A block's settings go in at most four round trips, each right before a read: its scope with generic plans
    and sorting off; sorting back on with the search's knobs; full text planned for its words (with the knobs when
    no read comes between); generic plans again. They were seven: each setting, and each window's end, on its
    own. (The session is bound to one connection, so the block's related search runs on it too, in turn.)"""
    org = factory.org()
    ana = factory.member(org)
    conversation = factory.conversation(org, ana)
    factory.memory(org, subject="Talleres García", attribute="plazo de pago", value="paga a 60 días")
    access = load_access(system_session, org.id, user_id=ana.id)
    with database.engine.connect() as connection, Session(bind=connection, info={"scope": access.scope()}) as s:
        with round_trips(s.connection()) as trips:
            block = assemble_context(s, access, conversation.id, "¿A cuántos días paga Talleres García?", now=NOW)
    assert "60 días" in block.text
    settings = _trips_of_settings(trips)
    assert 3 <= len(settings) <= 4, "\n".join(" | ".join(a[:200] for a in t) for t in trips)
    assert "memoria.mode" in settings[0][0] and "enable_sort" in settings[0][0]
    assert "enable_sort" in settings[1][0] and "hnsw.ef_search" in settings[1][0]
