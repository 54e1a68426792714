"""A person's own memory controls in the domain: pausing learning through the real worker, the explicit
path respecting the pause, and what a person may change (only their own)."""
from __future__ import annotations

import pytest
from rq import SimpleWorker
from sqlalchemy import func, select

from jobs.outbox import enqueue_drain
from memory_core.adapters.queue import get_queue
from memory_core.backends import get_backend
from memory_core.domain.access import load_access
from memory_core.domain.errors import Forbidden, NotFound
from memory_core.domain.models import Memory, Message, Outbox, UsageLedger
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message
from memory_core.learning.remember import remember
from memory_core.privacy import my_memory


def work(servers):
    """A real RQ worker in burst mode until the queue is empty."""
    queue = get_queue(servers)
    SimpleWorker([queue], connection=queue.connection).work(burst=True)


def say(s, org, user, external_id, text):
    r = ingest_message(s, channel="web", conversation=f"chat-{user.id}", external_id=external_id, org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    s.commit()
    enqueue_drain()
    return r.message_id


def facts(s, **where):
    q = select(Memory).where(Memory.status == "active")
    for k, v in where.items():
        q = q.where(getattr(Memory, k) == v)
    return s.scalars(q).all()


def test_pause_stops_learning_through_the_worker_and_resume_restarts_it(factory, system_session, redis_conn,
                                                                         servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    access = load_access(system_session, org.id, user_id=ana.id)
    my_memory.set_learning_paused(system_session, access.principal, True, actor_label="test")
    system_session.commit()

    paused_msg = say(system_session, org, ana, "m-1", "Talleres García paga a 60 días ahora, no a 30")
    work(servers)
    system_session.expire_all()
    assert facts(system_session) == []
    # not even read for learning: no gate or extraction call was made for it
    assert system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.message_id == paused_msg)).all() == [
        "embed"]
    # the message is still stored, indexed and done with: pausing stops learning, not the chat
    msg = system_session.get(Message, paused_msg)
    assert msg is not None and msg.embedding is not None
    assert system_session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None))) == 0

    my_memory.set_learning_paused(system_session, access.principal, False, actor_label="test")
    system_session.commit()
    say(system_session, org, ana, "m-2", "Talleres García paga a 90 días ahora")
    work(servers)
    system_session.expire_all()
    [learnt] = facts(system_session, subject=f"contact:{garcia.id}")
    assert learnt.value == "90 días" and learnt.author_user_id == ana.id


def test_a_paused_message_processed_alone_says_why_nothing_was_learnt(factory, system_session, servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    my_memory.set_learning_paused(system_session, load_access(system_session, org.id, user_id=ana.id).principal,
                                  True, actor_label="test")
    mid = ingest_message(system_session, channel="web", conversation="c", external_id="x", org_id=org.id,
                         user_id=ana.id, phone=None, role="user", text="Talleres García paga a 60 días").message_id
    system_session.commit()
    out = process_message(system_session, mid, get_backend(servers))
    assert out.outcome == "paused" and facts(system_session) == []


def test_an_explicit_remember_while_paused_saves_nothing(factory, system_session, servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    my_memory.set_learning_paused(system_session, access.principal, True, actor_label="test")
    out = remember(system_session, access, org, "Recuerda que prefiero que me tutees", backend=get_backend(servers))
    assert out.outcome == "refused" and out.policy == "paused" and facts(system_session) == []


def test_a_person_changes_only_their_own_and_sees_shared_ones_read_only(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    bea = factory.member(org)
    mine = factory.memory(org, level="private", subject="org", attribute="nota", value="a", owner=ana)
    hers = factory.memory(org, level="private", subject="org", attribute="nota", value="b", owner=bea)
    shared = factory.memory(org, subject="org", attribute="horario", value="8 a 15")
    access = load_access(system_session, org.id, user_id=ana.id)
    assert my_memory.get_own(system_session, access, mine.id).id == mine.id
    with pytest.raises(NotFound):
        my_memory.get_own(system_session, access, hers.id)
    with pytest.raises(Forbidden):
        my_memory.delete_own(system_session, access, shared.id, actor_label="test")
    kinds = [(s.kind, s.editable, s.total) for s in my_memory.sections(system_session, access)]
    assert kinds == [("personal", True, 0), ("private", True, 1), ("shared", False, 1)]


def test_a_big_orgs_shared_memories_are_counted_up_to_a_cap_and_shown_as_at_least(factory, system_session,
                                                                                   monkeypatch):
    """Counting every shared memory of a big org would cost more than the page: "3+" past the cap."""
    monkeypatch.setattr(my_memory, "COUNT_CAP", 3)
    monkeypatch.setattr(my_memory, "SHARED_LIMIT", 2)
    org = factory.org()
    ana = factory.member(org)
    for i in range(5):
        factory.memory(org, subject="org", attribute=f"dato_{i}", value=str(i))
    factory.memory(org, level="private", subject="org", attribute="nota", value="mía", owner=ana)
    access = load_access(system_session, org.id, user_id=ana.id)
    shared = {s.kind: s for s in my_memory.sections(system_session, access)}["shared"]
    assert (shared.total_text, shared.shown, shared.truncated) == ("3+", 2, True)
    own = {s.kind: s for s in my_memory.sections(system_session, access)}["private"]
    assert (own.total_text, own.truncated) == ("1", False)
    export = {s.kind: s for s in my_memory.sections(system_session, access, export=True)}["shared"]
    assert export.total_text == "5" and export.shown == 5
