"""The outbox worker as RQ jobs against a real PostgreSQL and a real Redis: the Monday-to-Thursday
story end to end, retries that never lose a message, and a worker process killed mid-batch."""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rq import SimpleWorker
from sqlalchemy import func, select, update

from jobs.outbox import backoff, drain_outbox, enqueue_drain, pending_count
from memory_core.adapters.queue import get_queue
from memory_core.domain.models import (
    Conversation,
    Membership,
    Memory,
    MemorySource,
    Message,
    Notification,
    Outbox,
    PhoneAuthorization,
    UsageLedger,
    User,
)
from memory_core.learning.ingest import ingest_message
from tests.support.fake_openai import fake_openai  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[1]
GARCIA_PHONE = "+34611222333"


def work(servers):
    """Run a real RQ worker in burst mode until the queue is empty."""
    queue = get_queue(servers)
    SimpleWorker([queue], connection=queue.connection).work(burst=True)


def ingest(session, **kw):
    """What an agent does per message: ingest, commit, kick the worker."""
    r = ingest_message(session, **kw)
    session.commit()
    if r.queued:
        enqueue_drain()
    return r


def count(session, model, *where):
    return session.scalar(select(func.count()).select_from(model).where(*where))


def link_whatsapp(session, user: User, org_id):
    """A real link handler: binds the number that sent the code to the account, with its own permissions."""
    def handler(s, phone, code, **_scope):  # the ingest passes the org the code was sent in
        assert code == "Q7K2MZ"
        s.get(User, user.id).phone = phone
        s.add(PhoneAuthorization(org_id=org_id, phone=phone, user_id=user.id,
                                 permissions={"contacts": "edit", "general": "edit"}))
        return "Listo: tu WhatsApp está vinculado."
    return handler


# ---------------------------------------------------------------------------------------------- the story

def test_monday_web_fact_is_corrected_a_month_later_on_whatsapp_and_the_old_version_is_kept(
        factory, system_session, redis_conn, servers):
    org = factory.org("Sumalos Demo")
    ana = factory.member(org, role="owner")
    bea = factory.member(org, role="admin")
    garcia = factory.contact(org, "Talleres García S.L.", tax_id="B12345678")

    # Monday, web: Ana states the new terms; Bea says something too, then leaves before the worker runs.
    ingest(system_session, channel="web", conversation="web-chat-ana", external_id="web-1", org_id=org.id,
           user_id=ana.id, phone=None, role="user", text="Talleres García paga a 60 días ahora, no a 30")
    ingest(system_session, channel="web", conversation="web-chat-bea", external_id="web-2", org_id=org.id,
           user_id=bea.id, phone=None, role="user", text="Talleres García prefiere que le escribamos por WhatsApp")
    system_session.execute(update(Membership).where(Membership.user_id == bea.id)
                           .values(left_at=dt.datetime.now(dt.timezone.utc)))
    system_session.commit()
    # A temporary conversation reads memory but stores nothing.
    temp = ingest(system_session, channel="web", conversation="web-temp", external_id="web-3", org_id=org.id,
                  user_id=ana.id, phone=None, role="user", text="Talleres García paga a 120 días", temporary=True)
    assert temp.temporary and temp.message_id is None
    work(servers)

    [monday] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert (monday.subject, monday.level, monday.category, monday.area, monday.attribute, monday.value) == (
        f"contact:{garcia.id}", "shared", "customer", "contacts", "plazo_pago", "60 días")
    assert monday.author_user_id == ana.id  # nothing from Bea, who left; nothing from the temporary chat
    assert count(system_session, Conversation, Conversation.external_id == "web-temp") == 0
    assert count(system_session, Outbox, Outbox.processed_at.is_(None)) == 0
    [note] = system_session.scalars(select(Notification)).all()
    assert note.user_id == ana.id and "60 días" in note.text

    # Ana links her WhatsApp number from the phone itself.
    link = ingest(system_session, channel="whatsapp", conversation="wa-ana", external_id="wamid.link", org_id=None,
                  user_id=None, phone=GARCIA_PHONE, role="user", text="VINCULAR q7k2mz",
                  link_handler=link_whatsapp(system_session, ana, org.id))
    assert link.link_request and link.reply == "Listo: tu WhatsApp está vinculado."
    # A month passes.
    system_session.execute(update(Memory).where(Memory.id == monday.id).values(
        valid_from=Memory.valid_from - dt.timedelta(days=30), created_at=Memory.created_at - dt.timedelta(days=30)))
    system_session.commit()

    # Thursday a month later, WhatsApp: the agent only knows the number.
    ingest(system_session, channel="whatsapp", conversation="wa-ana", external_id="wamid.2", org_id=org.id,
           user_id=None, phone=GARCIA_PHONE, role="user", text="No, García paga a 90 días")
    work(servers)

    system_session.expire_all()
    [current] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    old = system_session.get(Memory, monday.id)
    assert (current.subject, current.attribute, current.value, current.level) == (
        f"contact:{garcia.id}", "plazo_pago", "90 días", "shared")
    assert current.author_user_id == ana.id and current.author_phone == GARCIA_PHONE
    assert (old.status, old.value, old.superseded_by) == ("superseded", "60 días", current.id)
    assert old.valid_to is not None
    wa_note = system_session.scalars(select(Notification).where(Notification.memory_id == current.id)).one()
    assert wa_note.text.startswith("Por cierto, he apuntado que") and "90 días" in wa_note.text
    assert count(system_session, Message) == 3  # Ana's, Bea's and the WhatsApp correction; no link code


# ---------------------------------------------------------------------------------------------- kicks

def test_kicks_are_deduplicated_so_a_burst_of_messages_queues_one_drain(servers, redis_conn, database):
    assert enqueue_drain() is not None
    assert enqueue_drain() is None
    assert get_queue(servers).count == 1


def test_the_safety_net_drains_messages_whose_kick_was_lost(factory, system_session, redis_conn, servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    ingest_message(system_session, channel="web", conversation="c", external_id="lost-kick", org_id=org.id,
                   user_id=ana.id, phone=None, role="user", text="Prefiero que me tutees")
    system_session.commit()  # no kick
    counts = drain_outbox()  # what the per-minute cron job runs
    assert counts == {"done": 1, "failed": 0}
    assert count(system_session, Outbox, Outbox.processed_at.is_(None)) == 0


# ---------------------------------------------------------------------------------------------- OpenAI path

@pytest.fixture
def openai_env(monkeypatch, fake_openai):  # noqa: F811
    monkeypatch.setenv("MEMORIA_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    return fake_openai


def test_the_openai_backend_learns_through_the_worker_and_a_429_loses_nothing(
        factory, system_session, redis_conn, servers, openai_env):
    fake = openai_env
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    text = "Talleres García paga a 60 días ahora, no a 30"
    fake.script_gate(text, 0.93, category="customer", scope="shared", corrects=0.6)
    fake.script_facts(text, [{"subject": f"contact:{garcia.id}", "attribute": "plazo_pago", "value": "60 días",
                              "sentence": "Talleres García paga a 60 días.", "category": "customer"}])
    fake.fail_next(1, "429", path="/chat/completions")  # retried inside the call
    ingest(system_session, channel="web", conversation="c1", external_id="oa-1", org_id=org.id, user_id=ana.id,
           phone=None, role="user", text=text)
    work(servers)
    [m] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert (m.subject, m.value, m.embed_model) == (f"contact:{garcia.id}", "60 días", "text-embedding-3-small")
    assert {r.path.rsplit("/", 1)[-1] for r in fake.requests if r.answered == "429"} == {"completions"}
    ledger = system_session.scalars(select(UsageLedger).where(UsageLedger.org_id == org.id)).all()
    assert {r.purpose for r in ledger} == {"gate", "extract", "embed"} and all(r.input_tokens > 0 for r in ledger)


def test_a_call_that_keeps_failing_is_retried_later_and_never_lost(
        factory, system_session, redis_conn, servers, openai_env):
    fake = openai_env
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    text = "Talleres García paga a 45 días"
    fake.script_gate(text, 0.9, category="customer", scope="shared")
    fake.script_facts(text, [{"subject": f"contact:{garcia.id}", "attribute": "plazo_pago", "value": "45 días",
                              "sentence": "Talleres García paga a 45 días.", "category": "customer"}])
    fake.fail_next(20, "429", path="/chat/completions")
    ingest(system_session, channel="web", conversation="c1", external_id="oa-2", org_id=org.id, user_id=ana.id,
           phone=None, role="user", text=text)
    before = dt.datetime.now(dt.timezone.utc)
    work(servers)
    row = system_session.scalars(select(Outbox)).one()
    assert row.processed_at is None and row.attempts == 1 and "BackendError" in row.last_error
    assert text not in row.last_error  # the message never leaks into an error
    # Backoff: not retried at once but a wait after the failed try (however long the try took on a busy machine).
    assert row.next_attempt_at >= before + backoff(1)
    assert drain_outbox() == {"done": 0, "failed": 0}
    assert count(system_session, Memory) == 0
    # What was paid for before and during the failure is in the ledger, outside the rolled-back work.
    spent = system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.org_id == org.id)).all()
    assert sorted(spent) == ["embed", "gate"]

    fake.reset()
    fake.script_gate(text, 0.9, category="customer", scope="shared")
    fake.script_facts(text, [{"subject": f"contact:{garcia.id}", "attribute": "plazo_pago", "value": "45 días",
                              "sentence": "Talleres García paga a 45 días.", "category": "customer"}])
    system_session.execute(update(Outbox).values(next_attempt_at=dt.datetime.now(dt.timezone.utc)))
    system_session.commit()
    assert drain_outbox() == {"done": 1, "failed": 0}
    system_session.expire_all()
    assert [m.value for m in system_session.scalars(select(Memory))] == ["45 días"]
    assert system_session.scalars(select(Outbox)).one().processed_at is not None


# ---------------------------------------------------------------------------------------------- the kill test

SURNAMES = ["García", "López", "Martín", "Sánchez", "Romero", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos",
            "Gil", "Serrano", "Blanco", "Molina", "Morales", "Ortega", "Delgado", "Castro", "Ortiz", "Rubio",
            "Marín", "Sanz", "Iglesias", "Núñez", "Medina", "Garrido", "Cortés", "Castillo", "Santos", "Lozano",
            "Guerrero", "Cano", "Prieto", "Méndez", "Cruz", "Calvo", "Gallego", "Vidal", "León", "Herrera"]


def _start_worker() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "worker", "--burst"], cwd=ROOT, env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _kill_all(proc: subprocess.Popen) -> None:
    """SIGKILL the worker and its work horse (RQ puts the horse in its own process group), as a crash would."""
    import psutil

    family = psutil.Process(proc.pid).children(recursive=True)
    for child in family:
        child.kill()
    proc.kill()
    proc.wait(timeout=10)
    psutil.wait_procs(family, timeout=10)


@pytest.mark.slow
def test_a_worker_killed_mid_batch_loses_nothing_and_learns_nothing_twice(
        factory, system_session, redis_conn, servers, database):
    orgs = []
    n = 0
    for _ in range(4):
        org = factory.org()
        owner = factory.member(org, role="owner")
        contacts = [factory.contact(org, f"Talleres {s} S.L.", tax_id=None) for s in SURNAMES]
        orgs.append((org, owner, contacts))
    for org, owner, contacts in orgs:
        for i, c in enumerate(contacts):
            ingest_message(system_session, channel="web", conversation=f"chat-{owner.id}", external_id=f"k-{n}",
                           org_id=org.id, user_id=owner.id, phone=None, role="user",
                           text=f"{c.name.removesuffix(' S.L.')} paga a {30 + i} días")
            n += 1
    system_session.commit()
    enqueue_drain(force=True)

    first = _start_worker()
    try:
        deadline = time.monotonic() + 120
        while count(system_session, Outbox, Outbox.processed_at.is_not(None)) < 10:
            assert first.poll() is None, "the worker finished or died before it could be killed"
            assert time.monotonic() < deadline, "the worker processed nothing"
            system_session.rollback()
            time.sleep(0.05)
        _kill_all(first)
    finally:
        if first.poll() is None:
            _kill_all(first)
    system_session.rollback()
    done_at_kill = count(system_session, Outbox, Outbox.processed_at.is_not(None))
    assert 10 <= done_at_kill < n, "the kill must land mid-batch"

    enqueue_drain(force=True)  # what the per-minute safety net does after a crash
    second = _start_worker()
    assert second.wait(timeout=300) == 0
    system_session.rollback()
    if pending_count(database):  # the new worker may have started before the kick: drain what is left
        drain_outbox()
    assert count(system_session, Outbox, Outbox.processed_at.is_(None)) == 0
    assert count(system_session, Memory) == n  # every message learnt ...
    per_message = system_session.execute(
        select(MemorySource.message_id, func.count()).group_by(MemorySource.message_id)).all()
    assert len(per_message) == n and all(k == 1 for _, k in per_message)  # ... exactly once
    assert count(system_session, Notification) == n
    assert count(system_session, Memory, Memory.status == "active") == n


# ---------------------------------------------------------------------------------------------- concurrency

def test_two_workers_draining_at_once_learn_each_message_once_and_in_order(factory, system_session, database):
    import threading

    from memory_core.backends import get_backend

    org = factory.org()
    ana = factory.member(org, role="owner")
    contacts = [factory.contact(org, f"Talleres {s} S.L.", tax_id=None) for s in SURNAMES[:12]]
    for i, c in enumerate(contacts):
        for days in (30, 45, 60):  # three corrections in one conversation per contact
            ingest_message(system_session, channel="web", conversation=f"chat-{i}", external_id=f"c-{i}-{days}",
                           org_id=org.id, user_id=ana.id, phone=None, role="user",
                           text=f"{c.name.removesuffix(' S.L.')} paga a {days} días")
    system_session.commit()
    from jobs.outbox import drain_once
    backend = get_backend()
    backend.warm_up()

    def worker():
        while drain_once(database, backend) is not None:
            pass

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert count(system_session, Outbox, Outbox.processed_at.is_(None)) == 0
    per_message = system_session.execute(
        select(MemorySource.message_id, func.count()).group_by(MemorySource.message_id)).all()
    assert len(per_message) == 36 and all(k == 1 for _, k in per_message)
    current = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert sorted(m.value for m in current) == ["60 días"] * 12  # the last word of each conversation wins
    assert count(system_session, Memory, Memory.status == "superseded") == 24
