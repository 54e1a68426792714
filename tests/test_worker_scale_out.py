"""Several workers drain one backlog at once without deadlocking: a worker never waits for a subject
while its batch holds another, so two batches learning about the same contacts in opposite orders
take turns instead of each waiting for the other."""
from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from sqlalchemy import event, func, select, text

from jobs.outbox import drain_batch, pending_count
from memory_core.adapters.db import SYSTEM
from memory_core.backends import get_backend
from memory_core.domain import subject_locks
from memory_core.domain.models import Memory, MemorySource, Outbox, UsageLedger
from memory_core.learning.ingest import ingest_message

CONTACTS = ["García", "López", "Martín", "Sánchez", "Romero", "Navarro"]
WORKERS = 4


@pytest.fixture(scope="module")
def backend(servers):
    backend = get_backend(servers)
    backend.warm_up()
    return backend


def deadlocks(owner_engine) -> int:
    with owner_engine.connect() as c:
        return c.execute(text("select deadlocks from pg_stat_database where datname = current_database()")).scalar()


def crossed_backlog(session, org, user, conversations: int, rounds: int) -> list:
    """Each conversation names every contact in turn, the even ones from first to last and the odd ones
    from last to first, so two batches hold the same subjects in opposite orders; every message gives
    its contact a new payment term (each one a new version)."""
    ids = []
    for r in range(rounds):
        for k in range(conversations):
            order = CONTACTS if k % 2 == 0 else CONTACTS[::-1]
            for j, name in enumerate(order):
                days = 10 + (r * conversations * len(CONTACTS) + k * len(CONTACTS) + j)
                res = ingest_message(session, channel="web", conversation=f"crossed-{k}",
                                     external_id=f"crossed-{k}-{r}-{j}", org_id=org.id, user_id=user.id, phone=None,
                                     role="user", text=f"Talleres {name} paga a {days} días")
                ids.append(res.message_id)
    session.commit()
    return ids


def test_four_workers_drain_a_crossed_backlog_without_deadlocks_or_failures(
        factory, system_session, database, backend, owner_engine):
    org = factory.org()
    ana = factory.member(org, role="owner")
    contacts = {name: factory.contact(org, f"Talleres {name} S.L.", tax_id=None) for name in CONTACTS}
    ids = crossed_backlog(system_session, org, ana, conversations=8, rounds=3)
    before = deadlocks(owner_engine)

    errors: list[BaseException] = []
    outcomes: Counter = Counter()
    lock = threading.Lock()

    def work():
        # Each worker thread takes its own pooled connection per batch, as each RQ work horse does.
        try:
            while True:
                counts = drain_batch(database, backend, limit=4)
                if counts is None:
                    if not pending_count(database):
                        return
                    time.sleep(0.01)  # every waiting conversation is held by another worker
                    continue
                with lock:
                    outcomes.update(counts)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    system_session.expire_all()
    rows = system_session.scalars(select(Outbox)).all()
    assert len(rows) == len(ids)
    assert [r.last_error for r in rows if r.attempts or r.last_error] == []
    assert all(r.processed_at is not None for r in rows)
    assert outcomes["failed"] == 0 and outcomes["done"] == len(ids)
    print(f"messages left for the next claim while another worker held their subject: {outcomes['skipped']}")
    assert deadlocks(owner_engine) == before
    # Learnt once each: one memory version per message, every message the source of exactly one.
    sources = Counter(system_session.scalars(select(MemorySource.message_id)))
    assert set(sources) == set(ids) and set(sources.values()) == {1}
    for contact in contacts.values():
        versions = system_session.scalar(select(func.count()).select_from(Memory).where(
            Memory.subject == f"contact:{contact.id}"))
        active = system_session.scalar(select(func.count()).select_from(Memory).where(
            Memory.subject == f"contact:{contact.id}", Memory.status == "active"))
        assert (versions, active) == (len(ids) // len(CONTACTS), 1)


def gate_calls(session) -> Counter:
    return Counter(session.scalars(select(UsageLedger.message_id).where(UsageLedger.purpose == "gate")))


def test_a_message_whose_subject_another_worker_holds_waits_for_the_next_claim_with_its_conversation(
        factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.", tax_id=None)
    lopez = factory.contact(org, "Talleres López S.L.", tax_id=None)

    def say(conversation, text):
        res = ingest_message(system_session, channel="web", conversation=conversation,
                             external_id=f"{conversation}-{text}", org_id=org.id, user_id=ana.id, phone=None,
                             role="user", text=text)
        system_session.commit()
        return res.message_id

    first = say("c1", "Talleres García paga a 60 días")
    held_back = say("c2", "Talleres López paga a 30 días")
    behind_it = say("c2", "Talleres García prefiere las facturas por email")
    other = say("c3", "Talleres García paga a 90 días")

    # Another worker's batch is writing about Talleres López.
    other_worker = database.session(SYSTEM)
    subject_locks.step_aside(other_worker)
    subject_locks.lock_subject(other_worker, subject_locks.subject_key(
        org.id, "shared", None, None, f"contact:{lopez.id}"))
    try:
        assert drain_batch(database, backend) == {"done": 2, "failed": 0, "skipped": 2}
    finally:
        other_worker.rollback()
        other_worker.close()
    system_session.expire_all()
    pending = {r.message_id for r in system_session.scalars(select(Outbox).where(Outbox.processed_at.is_(None)))}
    assert pending == {held_back, behind_it}
    assert all(r.attempts == 0 and r.last_error is None for r in system_session.scalars(select(Outbox)))
    # The batch's gate call for each message was paid, and is ledgered once, the two left behind included.
    assert gate_calls(system_session) == Counter({first: 1, held_back: 1, behind_it: 1, other: 1})
    assert {m for m in system_session.scalars(select(MemorySource.message_id))} == {first, other}

    # The other worker committed: the next claim learns both, in their conversation's order.
    assert drain_batch(database, backend) == {"done": 2, "failed": 0, "skipped": 0}
    system_session.expire_all()
    assert system_session.scalar(select(Memory.value).where(
        Memory.subject == f"contact:{lopez.id}", Memory.status == "active")) == "30 días"
    assert {m for m in system_session.scalars(select(MemorySource.message_id))} == {first, other, held_back, behind_it}
    assert system_session.scalar(select(Memory.value).where(
        Memory.subject == f"contact:{garcia.id}", Memory.status == "active", Memory.attribute == "plazo_pago")) \
        == "90 días"


def test_a_message_that_stepped_aside_is_learnt_in_the_same_batch_once_the_other_worker_is_done(
        factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.", tax_id=None)
    lopez = factory.contact(org, "Talleres López S.L.", tax_id=None)
    said = []
    for conversation, text_ in (("c1", "Talleres García paga a 60 días"), ("c2", "Talleres López paga a 30 días"),
                                ("c2", "Talleres García prefiere las facturas por email"),
                                ("c3", "Talleres García paga a 90 días")):
        said.append(ingest_message(system_session, channel="web", conversation=conversation,
                                   external_id=f"{conversation}-{text_}", org_id=org.id, user_id=ana.id, phone=None,
                                   role="user", text=text_).message_id)
        system_session.commit()

    # Another worker's batch is writing about Talleres López, and commits while this batch goes on: when this
    # batch has stepped aside from López (its message's savepoint rolled back).
    other_worker = database.session(SYSTEM)
    subject_locks.step_aside(other_worker)
    subject_locks.lock_subject(other_worker, subject_locks.subject_key(
        org.id, "shared", None, None, f"contact:{lopez.id}"))

    def other_worker_done(*args):
        if other_worker.in_transaction():
            other_worker.commit()

    event.listen(database.system_engine, "rollback_savepoint", other_worker_done)
    try:
        assert drain_batch(database, backend) == {"done": 4, "failed": 0, "skipped": 0}
    finally:
        event.remove(database.system_engine, "rollback_savepoint", other_worker_done)
        other_worker.close()
    system_session.expire_all()
    assert pending_count(database) == 0
    assert set(system_session.scalars(select(MemorySource.message_id))) == set(said)
    assert gate_calls(system_session) == Counter(dict.fromkeys(said, 1))  # the one call each, ledgered once
    assert system_session.scalar(select(Memory.value).where(
        Memory.subject == f"contact:{lopez.id}", Memory.status == "active")) == "30 días"
