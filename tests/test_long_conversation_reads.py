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
