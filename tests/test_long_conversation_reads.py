"""A turn in a long conversation reads only the conversation's last messages: read backwards from the
conversation's index with sorting priced out, not all of its messages fetched and sorted (17,000 in the
scale bench's: 70-200 ms a turn)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import text

from memory_core.domain.access import load_access
from memory_core.reading.context import RECENT_MESSAGES, assemble_context
from tests.support.statements import plan_of, sent_statements, settings_seen

NOW = dt.datetime(2026, 11, 29, 12, tzinfo=dt.timezone.utc)


def test_a_long_conversations_recent_messages_are_its_last_ones_read_backwards_from_its_index(
        database, system_session, factory):
    org = factory.org("Larga")
    ana = factory.member(org, role="member")
    conversation = factory.conversation(org, ana)
    for i in range(300):
        factory.message(conversation, f"mensaje número {i}", created_at=NOW - dt.timedelta(minutes=300 - i))
    access = load_access(system_session, org.id, user_id=ana.id)
    conversations = lambda s: "FROM conversations" in s  # noqa: E731
    with sent_statements(database.engine, conversations) as sent, \
            settings_seen(database.engine, ("enable_sort",), conversations) as seen:
        with database.unit_of_work(access.scope()) as uow:
            block = assemble_context(uow.session, access, conversation.id, "hola", now=NOW)
            (statement, parameters), = sent
            recent = uow.session.connection().exec_driver_sql(statement, parameters).one().recent
            assert uow.session.scalar(text("select current_setting('enable_sort')")) == "on"  # put back after
    assert block.trace_id is not None
    assert seen[0][1] == {"enable_sort": "off"}  # the block ran it with sorting priced out (then the test, above)
    assert recent == [f"mensaje número {i}" for i in range(299, 299 - RECENT_MESSAGES, -1)]
    with database.unit_of_work(access.scope()) as uow:
        uow.session.execute(text("set local enable_sort = off"))  # as assemble_context runs it
        plan = plan_of(uow.session.connection(), statement, parameters)
    assert "Index Scan Backward using ix_messages_conversation on messages" in plan, plan
    assert "Bitmap Heap Scan on messages" not in plan, plan


def test_what_the_last_two_turns_sent_is_read_trace_by_trace_not_by_hashing_every_trace(
        database, system_session, factory, owner_engine):
    """trace_items' row security asks for each item whether its trace is visible. Read for both traces at once, the
    planner expected ~100 items and hashed every visible trace for the check: a scan of all of memory_traces each
    turn, growing with every turn anyone takes."""
    org = factory.org("Muchas trazas")
    ana = factory.member(org, role="member")
    conversation = factory.conversation(org, ana)
    elsewhere = factory.conversation(org, ana)
    factory.message(conversation, "hola", created_at=NOW)
    with owner_engine.begin() as c:  # 10,000 turns elsewhere; 40 memories shown in each of the last 100
        c.execute(text("""
            insert into memory_traces (id, org_id, conversation_id, user_id, block_text, tokens, created_at)
            select gen_random_uuid(), :org, :conv, :user, 'bloque', 10, :now - make_interval(mins => g)
            from generate_series(1, 10000) g"""), {"org": org.id, "conv": elsewhere.id, "user": ana.id, "now": NOW})
        c.execute(text("""
            insert into trace_items (trace_id, memory_id, block, rank, score, chars)
            select t.id, gen_random_uuid(), 'profile', g, 1.0, 10
            from (select id from memory_traces order by created_at desc limit 100) t, generate_series(1, 40) g"""))
        c.execute(text("analyze memory_traces, trace_items"))
    access = load_access(system_session, org.id, user_id=ana.id)
    for _ in range(2):  # two turns here: what they sent is what the next turn leaves out
        with database.unit_of_work(access.scope()) as uow:
            assemble_context(uow.session, access, conversation.id, "hola", now=NOW)
            uow.commit()
    conversations = lambda s: "FROM conversations" in s  # noqa: E731
    with sent_statements(database.engine, conversations) as sent:
        with database.unit_of_work(access.scope()) as uow:
            assemble_context(uow.session, access, conversation.id, "hola", now=NOW)
    (statement, parameters), = sent
    with database.unit_of_work(access.scope()) as uow:
        uow.session.execute(text("set local enable_sort = off"))  # as assemble_context runs it
        plan = plan_of(uow.session.connection(), statement, parameters)
    assert "Index Scan using memory_traces_pkey on memory_traces" in plan, plan
    assert "Seq Scan on memory_traces" not in plan, plan
