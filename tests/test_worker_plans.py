"""The outbox worker's batches plan each statement once per connection (`planner.planned_once`): what
PostgreSQL keeps for them, and that the claim's kept plan still reads the outbox's partial index."""
from __future__ import annotations

from sqlalchemy import event, func, select, text

from jobs.outbox import drain_batch
from memory_core.adapters import planner
from memory_core.adapters.db import SYSTEM
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from tests.support.statements import generic_plan_of, sent_statements


def say(session, org, user, text_, conversation):
    ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-{text_}",
                   org_id=org.id, user_id=user.id, phone=None, role="user", text=text_)
    session.commit()


def test_a_worker_batch_prepares_its_statements_at_their_first_run_and_never_plans_them_per_value(
        factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    factory.contact(org, "Talleres López S.L.")
    for i, days in enumerate((30, 45, 60, 75)):
        say(system_session, org, ana, f"Talleres García paga a {days} días", f"garcia-{i}")
        say(system_session, org, ana, f"Talleres López prefiere las facturas por email {i}", f"lopez-{i}")
    system_session.close()
    database.dispose()  # the batches get connections of their own, as a drain job's new horse does
    connections = []

    def remember(conn, *args):
        connections.append(conn.connection.driver_connection)

    event.listen(database.system_engine, "before_cursor_execute", remember)
    try:
        while drain_batch(database, backend, limit=2) is not None:
            pass
    finally:
        event.remove(database.system_engine, "before_cursor_execute", remember)

    for raw in set(connections):
        plans = raw.execute(text("select statement, generic_plans, custom_plans from pg_prepared_statements")
                            .text).fetchall()
        raw.commit()
        # Every statement of the batches was kept prepared and run on one plan for all values (but the settings
        # each transaction starts with, run before the batch asks for that: they name no table)...
        assert plans and all(custom == 0 for statement, _, custom in plans if "set_config(" not in statement), [
            p for p in plans if p[2]]
        # ...including those that ran once per batch or per fact, prepared at their first run.
        assert any(statement.startswith("INSERT INTO memories ") and generic >= 1
                   for statement, generic, _ in plans), plans
        # Back in its pool, the connection prepares at psycopg's usual run again (for whatever it serves next);
        # what the batches prepared stays prepared, as the plans above show.
        assert raw.prepare_threshold == planner.PREPARE_THRESHOLD
    # What was learnt is what the ladder always learns: the latest payment term, the preference.
    values = set(system_session.scalars(select(Memory.value).where(Memory.status == "active")))
    assert "75 días" in values and len(values) >= 2


def test_the_claims_kept_plan_reads_the_first_try_index(factory, system_session, database, backend, owner_engine):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, org, ana, "Talleres García paga a 60 días", "garcia")
    with sent_statements(database.system_engine, lambda s: "FOR UPDATE SKIP LOCKED" in s
                         and "DISTINCT ON" in s) as sent:
        assert drain_batch(database, backend)["done"] == 1
    [(statement, _)] = sent
    # The plan is chosen from the outbox's statistics, so give it those of a worker's outbox (and not what an
    # earlier test's table left behind): a long drained history, and a few messages waiting in 50 conversations.
    message_id, conversation_id = system_session.execute(text("select message_id, conversation_id from outbox")).one()
    system_session.execute(text(
        "insert into outbox (message_id, conversation_id, processed_at, attempts) "
        "select :m, :c, now(), 1 from generate_series(1, 20000)"), {"m": message_id, "c": conversation_id})
    for i in range(50):
        say(system_session, org, ana, f"Talleres López paga a {i} días", f"lopez-{i}")
    system_session.commit()
    system_session.close()
    with owner_engine.begin() as owner:  # only the table's owner may analyze it (the worker's role is skipped)
        owner.execute(text("analyze outbox"))
        assert owner.scalar(text("select last_analyze from pg_stat_user_tables where relname = 'outbox'"))
    database.dispose()  # a connection that prepares at the first run would prepare the EXPLAIN too
    with database.unit_of_work(SYSTEM) as uow:
        assert "ix_outbox_first_try" in generic_plan_of(uow.session.connection(), statement)


def test_a_context_read_outside_a_batch_puts_the_planner_back(factory, system_session, database):
    """The extraction context's read plans generically for itself only when its transaction does not already."""
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        with planner.generic_plan_window(s):
            assert s.scalar(text("select current_setting('plan_cache_mode')")) == "force_generic_plan"
        assert s.scalar(text("select current_setting('plan_cache_mode')")) == "auto"
        planner.planned_once(s)
        with planner.generic_plan_window(s):
            pass
        assert s.scalar(text("select current_setting('plan_cache_mode')")) == "force_generic_plan"
        assert s.scalar(select(func.count()).select_from(Memory)) == 0
