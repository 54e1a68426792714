"""A worker batch learns for many people at once: it reads every writer's access and learning pause in two
statements, and each writer is still judged as they are now (a member who left teaches nothing, a person who
paused learning is not sent to the gate, a member who may not edit an area proposes)."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import event, select, update

from jobs.outbox import drain_batch
from memory_core.backends import get_backend
from memory_core.domain.access import load_access, load_member_accesses
from memory_core.domain.models import Membership, Memory, UsageLedger
from memory_core.learning.ingest import ingest_message
from memory_core.privacy import my_memory


@pytest.fixture(scope="module")
def backend(servers):
    return get_backend(servers)


def say(session, org, user, text, *, conversation):
    r = ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-1",
                       org_id=org.id, user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    return r.message_id


class Reads:
    """The statements a block of code sends that read memberships or users."""

    def __init__(self, engine):
        self.engine, self.seen = engine, []

    def _before(self, conn, cursor, statement, parameters, context, executemany):
        if re.search(r"\bFROM (memberships|users)\b", statement):
            self.seen.append(statement)

    def __enter__(self):
        event.listen(self.engine, "before_cursor_execute", self._before)
        return self

    def __exit__(self, *exc):
        event.remove(self.engine, "before_cursor_execute", self._before)


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

    with Reads(database.system_engine or database.engine) as reads:
        assert drain_batch(database, backend) == {"done": 5, "failed": 0, "skipped": 0}
    # Four members: their memberships in one read and their pauses in another, not two reads a writer (the
    # number is judged by its own authorization, read apart).
    assert len(reads.seen) == 2, reads.seen
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
