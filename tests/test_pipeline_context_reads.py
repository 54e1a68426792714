"""The extraction context (context_reads): the names this writer may see that the message shares a word with
(tests/test_many_known_names for a writer who knows many), the conversation's recent subjects, and the attributes already stored for the message's subjects,
those names and the recent subjects."""
from __future__ import annotations

import datetime as dt
import re

from memory_core.domain import clock
from memory_core.domain.access import load_access
from memory_core.domain.models import MemorySource
from memory_core.learning.context_reads import context_reads
from memory_core.learning.subjects import recent_subjects


def test_the_one_round_trip_context_holds_the_writers_names_recent_subjects_and_attributes(factory, system_session):
    org, other_org = factory.org(), factory.org()
    ana = factory.member(org, role="owner")
    bea = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    olano = factory.memory(org, subject="name:hierros olano", attribute="plazo_pago", value="30 días",
                           category="customer")
    factory.memory(org, subject="name:hierros olano", attribute="persona_contacto", value="Marisa",
                   category="customer", status="proposed")
    factory.memory(org, subject="name:ferralla sur", attribute="plazo_pago", value="60 días", category="supplier",
                   status="superseded")  # not live: no name, no attribute
    factory.memory(org, level="private", owner=bea, subject="name:secreto de bea", attribute="nota", value="x")
    factory.memory(other_org, subject="name:otra empresa", attribute="nota", value="y")
    factory.memory(org, subject=f"contact:{garcia.id}", attribute="forma_pago", value="transferencia",
                   category="customer")
    factory.memory(None, level="personal", owner=ana, subject="self", attribute="nombre", value="Ana",
                   category="person")
    factory.memory(None, level="personal", owner=bea, subject="self", attribute="tono", value="tú",
                   category="person")
    conversation = factory.conversation(org, ana)
    old = factory.memory(org, subject=f"contact:{garcia.id}", attribute="nota", value="z", category="customer")
    for memory, minutes_ago in ((olano, 1), (old, 45)):
        system_session.add(MemorySource(memory_id=memory.id, conversation_id=conversation.id,
                                        created_at=clock.now() - dt.timedelta(minutes=minutes_ago)))
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)

    subjects = ["self", "org", f"contact:{garcia.id}"]
    names, recent, known = context_reads(system_session, access, subjects, conversation.id, mentioned_in=(
        "¿Qué sabemos de Hierros Olano, Ferralla Sur, el secreto de Bea y la otra empresa?"))

    assert names == ("hierros olano",)  # live, in Ana's org: not Bea's private note nor the other org's
    # what was said about Hierros Olano a minute ago carries over; García's note, 45 minutes old, does not
    assert recent == ("name:hierros olano",) == recent_subjects(system_session, access, conversation.id)
    assert known == {"self": ("nombre",), f"contact:{garcia.id}": ("forma_pago", "nota"),
                     "name:hierros olano": ("persona_contacto", "plazo_pago")}
    # A message that names no one: no names, but the subject it carries over brings its attributes.
    assert context_reads(system_session, access, subjects, conversation.id, mentioned_in="y ahora a 45 días") == (
        (), recent, known)
    assert context_reads(system_session, access, subjects, None)[1:] == (  # no conversation, nothing recent
        (), {"self": ("nombre",), f"contact:{garcia.id}": ("forma_pago", "nota")})


def test_a_batchs_recent_subjects_and_written_rows_are_read_by_primary_key_not_by_the_writers_whole_range(
        factory, system_session, database):
    """The later reads of a writer in a worker batch (the conversation's recent subjects and the rows the batch
    wrote) look their memories up by key: the plan the worker keeps for them (generic) reads no range of the
    writer's or the org's rows, which grows with the org, nor every source the conversation ever had, which grows
    with the conversation (only those added since the half hour began), and they still give what the full read
    gives."""
    from memory_core.learning.context_reads import KnownToWriters
    from tests.support.statements import generic_plan_by_index, sent_statements

    org = factory.org()
    ana = factory.member(org, role="owner")
    for i in range(30):  # the org's and Ana's other rows, which the reads must not go through
        factory.memory(org, subject=f"name:cliente {i}", attribute="nota", value=str(i), category="customer")
        factory.memory(None, level="personal", owner=ana, subject="self", attribute=f"gusto_{i}", value=str(i),
                       category="preference")
    conversation = factory.conversation(org, ana)
    olano = factory.memory(org, subject="name:hierros olano", attribute="plazo_pago", value="30 días",
                           category="customer")
    system_session.add(MemorySource(memory_id=olano.id, conversation_id=conversation.id,
                                    created_at=clock.now() - dt.timedelta(minutes=1)))
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)
    known = KnownToWriters()
    context_reads(system_session, access, ["self"], conversation.id, known=known)  # the writer's full read
    known.written.append(olano.id)  # as if the batch had just merged into it
    with sent_statements(database.system_engine, lambda s: "conversation_sources" in s) as sent:
        names, recent, attributes = context_reads(system_session, access, ["self"], conversation.id, known=known,
                                                  mentioned_in="Olano")

    assert recent == ("name:hierros olano",) == recent_subjects(system_session, access, conversation.id)
    assert "hierros olano" in names and attributes["name:hierros olano"] == ("plazo_pago",)
    [(statement, _)] = sent
    system_session.close()
    database.dispose()
    plan = generic_plan_by_index(database, statement)
    assert "memories_pkey" in plan, plan
    for range_of_rows in ("ix_memories_owner_user", "ix_memories_org_subject"):
        assert range_of_rows not in plan, plan
    # The conversation's sources are a range cut by when they were added, never the whole conversation's.
    assert re.search(r"ix_memory_sources_conversation on memory_sources.*\n.*Index Cond: \(\(conversation_id = "
                     r"\$\d+\) AND \(created_at >= ", plan), plan


def test_recent_subjects_are_the_half_hours_however_long_the_conversation_and_however_far_the_hosts_clock_runs_ahead(
        factory, system_session):
    """Only sources added since the half hour began are read; a source is added once its message is learnt, so
    that holds every source of a message sent in it, also when the host's clock runs hours ahead of ours (or it
    sends local time as UTC): the carry-over holds within a day of difference."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    conversation = factory.conversation(org, ana)
    now = clock.now()

    def learnt(subject: str, sent_at: dt.datetime, added_at: dt.datetime) -> None:
        said = factory.message(conversation, f"sobre {subject}", sent_at=sent_at)
        memory = factory.memory(org, subject=f"name:{subject}", attribute="nota", value=subject,
                                category="customer")
        system_session.add(MemorySource(memory_id=memory.id, message_id=said.id, conversation_id=conversation.id,
                                        created_at=added_at))

    for day in range(1, 40):  # a long history, learnt as it was said
        learnt(f"cliente {day}", now - dt.timedelta(days=day), now - dt.timedelta(days=day, seconds=-5))
    learnt("hierros olano", now + dt.timedelta(hours=5), now)  # the host's clock 5 hours ahead: sent "later"
    learnt("ferralla sur", now - dt.timedelta(minutes=50), now - dt.timedelta(minutes=49))  # before the window
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)

    # The host's next message, sent 10 minutes after Olano's by its clock.
    at = now + dt.timedelta(hours=5, minutes=10)
    assert recent_subjects(system_session, access, conversation.id, now=at) == ("name:hierros olano",)
    assert context_reads(system_session, access, [], conversation.id, at)[1] == ("name:hierros olano",)
    # Read as of a day ago, the day's sources (added then) carry over, and nothing later does.
    a_day_ago = now - dt.timedelta(days=1, minutes=-10)
    assert recent_subjects(system_session, access, conversation.id, now=a_day_ago) == ("name:cliente 1",)
