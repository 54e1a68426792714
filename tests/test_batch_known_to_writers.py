"""A worker batch learns for many writers at once. It reads what each writer may see (names, attributes) once and
keeps it up to date with what the batch writes (context_reads.KnownToWriters): each message's context is what a
fresh read would give. It reads every writer's access and learning pause in two statements, and each writer is
still judged as they are now (a member who left teaches nothing, a person who paused learning is not sent to the
gate, a member who may not edit an area proposes)."""
from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select, update

from jobs.outbox import drain_batch
from memory_core.domain.access import load_access, load_member_accesses
from memory_core.domain.ladder import Source, write_memory
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Membership, Memory, UsageLedger
from memory_core.learning.context_reads import KnownToWriters, context_reads
from memory_core.learning.ingest import ingest_message
from memory_core.privacy import my_memory
from tests.support.statements import sent_statements


def say(session, org, user, text, *, conversation):
    r = ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-{text}",
                       org_id=org.id, user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    return r.message_id


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
    said = "Hierros Olano y Talleres García"
    known = KnownToWriters()

    def both_agree():
        for access in (a, m):
            assert context_reads(system_session, access, subjects, None, known=known, mentioned_in=said) == \
                context_reads(system_session, access, subjects, None, mentioned_in=said)

    both_agree()  # each writer's names and attributes are read once, here
    writes = [_write(system_session, a, org, f"contact:{garcia.id}", "plazo_pago", "60 días", "customer"),
              _write(system_session, a, org, "name:hierros olano", "plazo_pago", "30 días", "customer"),
              _write(system_session, a, org, "org", "plantilla", "12 personas", "company"),
              _write(system_session, m, org, "self", "nombre", "Marta", "person")]
    known.wrote(writes)
    both_agree()
    assert context_reads(system_session, a, subjects, None, known=known, mentioned_in=said)[0] == ("hierros olano",)
    names, _, attributes = context_reads(system_session, m, subjects, None, known=known, mentioned_in=said)
    assert names == () and f"contact:{garcia.id}" not in attributes  # never what Marta may not read
    assert attributes == {"self": ("nombre",)}  # nor the company area's staff
    # A correction: same subject and attribute, so nothing is read afresh and nothing is lost.
    known.wrote([_write(system_session, a, org, f"contact:{garcia.id}", "plazo_pago", "90 días", "customer")])
    both_agree()
    # A row that went away (a forgotten message): the cache is dropped and read again.
    system_session.delete(system_session.scalar(select(Memory).where(Memory.subject == "org")))
    system_session.flush()
    known.forget()
    both_agree()
    assert "org" not in context_reads(system_session, a, subjects, None, known=known)[2]


def test_one_batch_reads_its_writers_at_once_and_judges_each_as_they_are_now(
        factory, system_session, database, backend):
    org = factory.org()
    garcia = factory.contact(org, "Talleres García S.L.")
    lopez = factory.contact(org, "Talleres López S.L.")
    ruiz = factory.contact(org, "Talleres Ruiz S.L.")
    soler = factory.contact(org, "Talleres Soler S.L.")
    factory.phone(org, "+34600111222")  # a number with no account behind it, allowed to edit every area
    ana = factory.member(org, role="owner")
    ben = factory.member(org, role="admin")
    carla = factory.member(org, role="admin")
    dani = factory.member(org, role="member")
    my_memory.set_learning_paused(system_session, load_access(system_session, org.id, user_id=ben.id).principal,
                                  True, actor_label="test")
    system_session.commit()

    said = {
        "ana": say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c-ana"),
        "ben": say(system_session, org, ben, "Talleres López paga a 45 días", conversation="c-ben"),
        "carla": say(system_session, org, carla, "Talleres Ruiz paga a 30 días", conversation="c-carla"),
        "dani": say(system_session, org, dani, "Talleres López prefiere que le mandemos las facturas por email",
                    conversation="c-dani"),
    }
    on_the_phone = ingest_message(system_session, channel="whatsapp", conversation="wa-1", external_id="wa-1-1",
                                  org_id=org.id, user_id=None, phone="+34600111222", role="user",
                                  text="Talleres Soler paga a 90 días")
    system_session.commit()
    # Carla leaves after she spoke and before the worker runs.
    system_session.execute(update(Membership).where(Membership.user_id == carla.id)
                           .values(left_at=dt.datetime.now(dt.timezone.utc)))
    system_session.commit()

    with sent_statements(database.system_engine or database.engine,
                         lambda statement: re.search(r"\bFROM (memberships|users)\b", statement)) as reads:
        assert drain_batch(database, backend) == {"done": 5, "failed": 0, "skipped": 0}
    # Four members: their memberships in one read and their pauses in another, not two reads a writer (the
    # number is judged by its own authorization, read apart).
    assert len(reads) == 2, reads
    system_session.expire_all()

    learnt = {(m.subject, m.value, m.status, m.author_user_id) for m in system_session.scalars(select(Memory))}
    assert (f"contact:{garcia.id}", "60 días", "active", ana.id) in learnt
    assert (f"contact:{soler.id}", "90 días", "active", None) in learnt
    assert not any(subject in (f"contact:{lopez.id}", f"contact:{ruiz.id}") and value in ("45 días", "30 días")
                   for subject, value, _, _ in learnt)  # Ben paused learning; Carla has left
    # Dani may not edit contacts: her fact is kept for her and proposed to whoever may.
    assert {status for subject, _, status, author in learnt if author == dani.id} == {"active", "proposed"}

    def purposes(message_id):
        return sorted(system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.message_id == message_id)))

    assert purposes(said["ben"]) == ["embed"]  # indexed for search, never sent to the gate
    assert all("gate" in purposes(m) for m in (said["ana"], said["dani"], on_the_phone.message_id))


def test_many_memberships_read_at_once_are_what_each_read_alone_gives(factory, system_session):
    org, other = factory.org(), factory.org()
    owner = factory.member(org, role="owner")
    member = factory.member(org, role="member", permissions={"invoices": "edit"})
    gone = factory.member(org, role="admin")
    elsewhere = factory.member(other, role="member")
    system_session.execute(update(Membership).where(Membership.user_id == gone.id)
                           .values(deactivated_at=dt.datetime.now(dt.timezone.utc)))
    system_session.commit()

    asked = [(org.id, owner.id), (org.id, member.id), (org.id, gone.id), (org.id, elsewhere.id),
             (other.id, elsewhere.id)]
    together = load_member_accesses(system_session, asked)
    assert together == {(o, u): load_access(system_session, o, user_id=u) for o, u in asked}
    assert together[(org.id, gone.id)] is None and together[(org.id, elsewhere.id)] is None
    assert together[(org.id, member.id)].can_edit("invoices") and not together[(org.id, member.id)].can_edit(
        "contacts")
    assert together[(other.id, elsewhere.id)].org_id == other.id
