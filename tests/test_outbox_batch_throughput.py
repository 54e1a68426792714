"""The outbox worker writes a whole batch in one transaction, a savepoint per message: a message that
fails loses only its own work (its failure and what it paid for are kept), the others are learnt, and
the batch's ledger rows and done marks are written together."""
from __future__ import annotations

from sqlalchemy import select

from jobs.outbox import drain_batch
from memory_core.domain.model_port import BackendError
from memory_core.domain.models import Memory, Notification, Outbox, UsageLedger
from memory_core.learning.ingest import ingest_message


def say(session, org, user, text, *, conversation):
    r = ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-{text}",
                       org_id=org.id, user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    return r.message_id


def test_a_failing_message_rolls_back_only_itself_and_the_batch_commits_the_rest(
        factory, system_session, database, backend, monkeypatch):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    lopez = factory.contact(org, "Talleres López S.L.")
    ok_1 = say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c1")
    bad = say(system_session, org, ana, "Talleres López paga a 90 días", conversation="c2")
    ok_2 = say(system_session, org, ana, "gracias", conversation="c3")

    real_extract = backend.extract

    def extract(context):
        if "López" in context.message:
            raise BackendError("extractor down")
        return real_extract(context)

    monkeypatch.setattr(backend, "extract", extract)
    assert drain_batch(database, backend) == {"done": 2, "failed": 1, "skipped": 0}
    system_session.expire_all()

    rows = {r.message_id: r for r in system_session.scalars(select(Outbox))}
    assert rows[ok_1].processed_at is not None and rows[ok_2].processed_at is not None
    assert rows[bad].processed_at is None and rows[bad].attempts == 1 and "BackendError" in rows[bad].last_error
    [m] = system_session.scalars(select(Memory)).all()
    assert (m.subject, m.value) == (f"contact:{garcia.id}", "60 días")
    assert not system_session.scalars(select(Memory).where(Memory.subject == f"contact:{lopez.id}")).all()
    assert len(system_session.scalars(select(Notification)).all()) == 1

    def ledger(message_id):
        return sorted(system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.message_id == message_id)))

    # Every call paid for is ledgered once, the failed message's too (its vector was stored by the batch).
    assert ledger(ok_1) == ["embed", "embed", "extract", "gate"]
    assert ledger(bad) == ["embed", "gate"]
    assert ledger(ok_2) == ["embed", "gate"]
    assert system_session.get(UsageLedger, system_session.scalar(
        select(UsageLedger.id).where(UsageLedger.message_id == ok_1, UsageLedger.purpose == "gate"))).org_id == org.id

    # Retried after its backoff, the failed message is learnt once.
    monkeypatch.setattr(backend, "extract", real_extract)
    assert drain_batch(database, backend, now=rows[bad].next_attempt_at) == {"done": 1, "failed": 0, "skipped": 0}
    system_session.expire_all()
    assert sorted(m.value for m in system_session.scalars(select(Memory))) == ["60 días", "90 días"]
    assert ledger(bad) == ["embed", "embed", "extract", "gate", "gate"]


def test_a_message_that_fails_after_writing_leaves_no_audit_row_or_notification_and_the_rest_keep_theirs(
        factory, system_session, database, backend, monkeypatch):
    import memory_core.learning.pipeline as pipeline
    from memory_core.domain.models import AuditLog

    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    factory.contact(org, "Talleres López S.L.")
    good = say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c1")
    bad = say(system_session, org, ana, "Talleres López paga a 90 días. Talleres López prefiere las facturas por "
              "email.", conversation="c2")
    real_write = pipeline.write_memory
    written: list = []

    def write_memory(session, access, org_, fact, **kw):
        if "López" in fact.sentence and written:
            raise RuntimeError("disk full")  # the second fact of the bad message, after its first was written
        result = real_write(session, access, org_, fact, **kw)
        if "López" in fact.sentence:
            written.append(result)
        return result

    monkeypatch.setattr(pipeline, "write_memory", write_memory)
    assert drain_batch(database, backend) == {"done": 1, "failed": 1, "skipped": 0}
    system_session.expire_all()

    [m] = system_session.scalars(select(Memory)).all()
    assert m.value == "60 días" and written  # the bad message wrote a fact before it failed
    audited = system_session.scalars(select(AuditLog.target_id).where(AuditLog.action.like("memory.%"))).all()
    assert audited == [str(m.id)]
    [note] = system_session.scalars(select(Notification)).all()
    assert note.memory_id == m.id and note.data["message_id"] == str(good)
    assert system_session.scalar(select(Outbox.attempts).where(Outbox.message_id == bad)) == 1
