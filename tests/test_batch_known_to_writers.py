"""A worker batch reads what each writer may see (names, attributes) once and keeps it up to date with what
the batch writes (context_reads.KnownToWriters): each message's context is what a fresh read would give."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from jobs.outbox import drain_batch
from memory_core.backends import get_backend
from memory_core.domain.access import load_access
from memory_core.domain.ladder import Source, write_memory
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Memory
from memory_core.learning.context_reads import KnownToWriters, context_reads
from memory_core.learning.ingest import ingest_message


@pytest.fixture(scope="module")
def backend(servers):
    return get_backend(servers)


def say(session, org, user, text, *, conversation):
    ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-{text}",
                   org_id=org.id, user_id=user.id, phone=None, role="user", text=text)
    session.commit()


def _live(session, org):
    return sorted((m.subject, m.attribute, m.value) for m in session.scalars(
        select(Memory).where(Memory.org_id == org.id, Memory.status == "active")))


def test_a_name_learnt_by_one_message_is_known_to_the_next_message_of_the_same_batch(
        factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    say(system_session, org, ana, "Hierros Olano paga a 30 días", conversation="c1")
    say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c2")  # ana's context is read
    say(system_session, org, ana, "Olano ahora paga a 45 días", conversation="c3")

    assert drain_batch(database, backend) == {"done": 3, "failed": 0, "skipped": 0}

    # The third message's "Olano" is the Hierros Olano the first one taught, in the same batch: its new
    # term replaces the old one instead of starting a second subject.
    olano = [m for m in _live(system_session, org) if "olano" in m[0]]
    assert olano == [("name:hierros olano", "plazo_pago", "45 días")]


def test_the_same_facts_are_learnt_across_batches_and_workers(factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, org, ana, "Hierros Olano paga a 30 días", conversation="c1")
    assert drain_batch(database, backend)["done"] == 1
    say(system_session, org, ana, "Olano ahora paga a 45 días", conversation="c2")
    assert drain_batch(database, backend)["done"] == 1  # a later batch (any worker) reads afresh

    assert [m for m in _live(system_session, org) if "olano" in m[0]] == [
        ("name:hierros olano", "plazo_pago", "45 días")]


def _write(session, access, org, subject, attribute, value, category, message_id=None):
    fact = Fact(subject=subject, attribute=attribute, value=value, sentence=f"{subject}: {value}.",
                category=category, confidence=0.9)
    return write_memory(session, access, org, fact, source=Source(message_id=message_id, conversation_id=None))


def test_a_writers_cached_context_is_what_a_fresh_read_gives_after_each_write(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    # Marta may read only the general area: a customer's fact (area contacts) is not hers to see.
    marta = factory.member(org, role="member", permissions={"general": "read"})
    garcia = factory.contact(org, "Talleres García S.L.")
    system_session.commit()
    a = load_access(system_session, org.id, user_id=ana.id)
    m = load_access(system_session, org.id, user_id=marta.id)
    subjects = ["self", "org", f"contact:{garcia.id}"]
    known = KnownToWriters()

    def both_agree():
        for access in (a, m):
            assert context_reads(system_session, access, subjects, None, known=known) == \
                context_reads(system_session, access, subjects, None)

    both_agree()  # each writer's names and attributes are read once, here
    writes = [_write(system_session, a, org, f"contact:{garcia.id}", "plazo_pago", "60 días", "customer"),
              _write(system_session, a, org, "name:hierros olano", "plazo_pago", "30 días", "customer"),
              _write(system_session, a, org, "org", "horario", "de 9 a 18", "company"),
              _write(system_session, m, org, "self", "nombre", "Marta", "person")]
    known.wrote(writes)
    both_agree()
    names, _, attributes = context_reads(system_session, m, subjects, None, known=known)
    assert names == () and f"contact:{garcia.id}" not in attributes  # never what Marta may not read
    assert attributes == {"self": ("nombre",)}  # nor the company area's hours
    # A correction: same subject and attribute, so nothing is read afresh and nothing is lost.
    known.wrote([_write(system_session, a, org, f"contact:{garcia.id}", "plazo_pago", "90 días", "customer")])
    both_agree()
    # A row that went away (a forgotten message): the cache is dropped and read again.
    system_session.delete(system_session.scalar(select(Memory).where(Memory.subject == "org")))
    system_session.flush()
    known.forget()
    both_agree()
    assert "org" not in context_reads(system_session, a, subjects, None, known=known)[2]
