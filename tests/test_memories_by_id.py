"""The block reads the memories it has ids for (related hits, their neighbours) one primary key lookup an id,
and of those ids only the active memories the principal may see."""
from __future__ import annotations

from sqlalchemy import select, text

from memory_core.domain.access import load_access
from memory_core.reading.context import memories_by_id
from tests.support.statements import generic_plan_of, plan_of, sent_statements


def test_memories_read_by_id_are_only_the_visible_active_ones_and_come_by_primary_key(
        database, factory, system_session, owner_engine):
    org, other = factory.org(), factory.org()
    ana = factory.member(org, role="member")  # reads general only
    bea = factory.member(org, role="member")
    visible = [factory.memory(org, attribute="plazo", value="60 días"),
               factory.memory(org, level="private", owner=ana, attribute="mi_nota", value="llamar"),
               factory.memory(None, level="personal", owner=ana, subject="self", attribute="tono", value="tú")]
    hidden = [factory.memory(org, area="contacts", category="customer", attribute="deuda", value="300 €"),
              factory.memory(org, level="private", owner=bea, attribute="su_nota", value="secreto"),
              factory.memory(org, attribute="plazo", value="30 días", status="superseded"),
              factory.memory(other, attribute="plazo", value="90 días")]
    for i in range(200):  # her own rows and the org's, so the planner has ranges it could scan instead
        factory.memory(None, level="personal", owner=ana, subject="self", attribute=f"n{i}", value="x")
    with owner_engine.begin() as c:
        c.execute(text("analyze memories"))
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()

    with sent_statements(database.engine, lambda s: "any(" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            rows = memories_by_id(uow.session, access, [m.id for m in visible + hidden])
    assert {r.id for r in rows} == {m.id for m in visible}

    statement, parameters = statements[-1]
    with database.unit_of_work(access.scope()) as uow:
        plan = plan_of(uow.session.connection(), statement, parameters)
    assert "memories_pkey" in plan and "ix_memories_profile_own_user" not in plan, plan


def test_the_memories_told_near_a_related_one_are_read_from_its_messages_not_from_every_visible_memory(
        database, factory, system_session, owner_engine):
    import datetime as dt

    from memory_core.domain.models import MemorySource
    from memory_core.reading.context import _neighbours

    org = factory.org()
    ana = factory.member(org, role="member")
    conv, elsewhere = factory.conversation(org, ana), factory.conversation(org, ana)
    start = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.timezone.utc)

    def told(conversation, minutes, value):
        message = factory.message(conversation, value, created_at=start + dt.timedelta(minutes=minutes))
        memory = factory.memory(None, level="personal", owner=ana, subject="self", attribute=value, value=value)
        system_session.add(MemorySource(memory_id=memory.id, message_id=message.id, conversation_id=conversation.id))
        system_session.commit()
        return memory

    seed = told(conv, 0, "fui a la cascada de Oregón")
    next_to_it = told(conv, 1, "me sentí en un cuento de hadas")
    told(elsewhere, 1, "compré sellos de Noruega")
    for i in range(200):  # her own rows and the org's, so the planner has ranges it could start from instead
        factory.memory(None, level="personal", owner=ana, subject="self", attribute=f"n{i}", value="x")
        factory.memory(org, attribute=f"o{i}", value="x")
    with owner_engine.begin() as c:
        c.execute(text("analyze memories"))
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()

    with sent_statements(database.engine, lambda s: "memory_sources" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            found = _neighbours(uow.session, access, [(seed.id, 1.0)], set(), {})
    assert [i for i, _ in found] == [next_to_it.id]

    statement, parameters = statements[-1]
    with database.unit_of_work(access.scope()) as uow:
        connection = uow.session.connection()
        connection.execute(text("set local enable_seqscan = off"))  # the tables are small; a big one's plan
        # The plan kept once the statement is prepared, and the one made for these values.
        plans = [generic_plan_of(connection, statement), plan_of(connection, statement, parameters)]
    for plan in plans:
        assert "ix_memories_owner_user" not in plan and "ix_memories_shared_area" not in plan, plan
        # The conversation's index is read between the seed's bounds, not whole (row security lets a condition
        # reach an index only through LEAKPROOF functions: the bounds are worked out before the join).
        scan = plan[plan.index("ix_messages_conversation"):].split("->")[0]
        condition = next(line for line in scan.splitlines() if "Index Cond" in line)
        assert "created_at >=" in condition and "created_at <=" in condition, plan


def test_a_busy_conversation_gives_the_nearest_taught_messages_reading_only_as_far_as_them(
        database, factory, system_session, owner_engine):
    """300 messages in the half hour around the seed (a busy chat, or an imported history): the memories of the
    two nearest messages that taught something on each side come, and the conversation's index is read only as far
    as those (it was read whole, a seed)."""
    import datetime as dt
    import re

    from memory_core.domain.models import MemorySource, Message
    from memory_core.reading.context import _neighbours

    org = factory.org()
    ana = factory.member(org, role="member")
    conv = factory.conversation(org, ana)
    start = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.timezone.utc)
    with owner_engine.begin() as c:
        c.execute(text("insert into messages (conversation_id, channel, external_id, org_id, user_id, role, text,"
                       " created_at, sent_at) select :c, 'web', 'busy-' || i, :o, :u, 'user', 'hola',"
                       " :t + i * interval '5 seconds', :t + i * interval '5 seconds'"
                       " from generate_series(0, 299) i"), {"c": conv.id, "o": org.id, "u": ana.id, "t": start})
    by_position = {int(e.split("-")[1]): i for i, e in system_session.execute(
        select(Message.id, Message.external_id).where(Message.conversation_id == conv.id))}

    def taught(position):
        memory = factory.memory(None, level="personal", owner=ana, subject="self", attribute=f"n{position}",
                                value=f"nota {position}")
        system_session.add(MemorySource(memory_id=memory.id, message_id=by_position[position],
                                        conversation_id=conv.id))
        system_session.commit()
        return memory

    memories = {p: taught(p) for p in (100, 140, 143, 145, 147, 150, 152, 154, 156, 158, 200)}
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()

    with sent_statements(database.engine, lambda s: "memory_sources" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            found = _neighbours(uow.session, access, [(memories[150].id, 1.0)], set(), {})
    assert {i for i, _ in found} == {memories[p].id for p in (145, 147, 152, 154)}

    statement, parameters = statements[-1]
    with database.unit_of_work(access.scope()) as uow:
        plan = "\n".join(r[0] for r in uow.session.connection().exec_driver_sql(
            "EXPLAIN (ANALYZE) " + statement, parameters))
    read = [float(n) for n in re.findall(r"ix_messages_conversation on messages(?: \w+)?\s+\(cost[^)]*\)"
                                         r" \(actual[^)]*? rows=([\d.]+)", plan)]
    # Both sides read in sort batches (PostgreSQL's incremental sort takes 32 rows at least), not the window's 300.
    assert len(read) == 2 and max(read) < 100, plan
