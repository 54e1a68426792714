"""The outbox worker's batches (jobs.outbox.drain_batch): the gate and the message vectors are computed
for many messages at once, yet each message is learnt as on its own, in order, with every call ledgered."""
from __future__ import annotations

import datetime as dt
import logging

import numpy as np
import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select, update
from sqlalchemy import text as sql

from jobs.outbox import _claim, drain_batch
from memory_core.adapters.db import SYSTEM, WORKER_ROLE
from memory_core.domain.models import Memory, Message, Outbox, UsageLedger
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import BatchCache, prepare_messages, process_message


def say(session, org, user, text, *, conversation, role="user", external_id=None, event="new"):
    r = ingest_message(session, channel="web", conversation=conversation,
                       external_id=external_id or f"{conversation}-{text}",
                       org_id=org.id, user_id=user.id, phone=None, role=role, text=text, event=event)
    session.commit()
    return r.message_id


def ledger(session, message_id):
    return sorted(session.scalars(select(UsageLedger.purpose).where(UsageLedger.message_id == message_id)))


def test_a_batch_learns_each_message_as_on_its_own_and_ledgers_every_call(factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    fact = say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c1")
    chatter = say(system_session, org, ana, "¿Qué facturé en septiembre?", conversation="c2")
    secret = say(system_session, org, ana, "La contraseña del banco es Almendro.2025", conversation="c3")
    assistant = say(system_session, org, ana, "Entendido: Talleres García paga a 90 días.", conversation="c4",
                    role="assistant")

    assert drain_batch(database, backend) == {"done": 4, "failed": 0, "skipped": 0}

    [m] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert (m.subject, m.attribute, m.value) == (f"contact:{garcia.id}", "plazo_pago", "60 días")
    # the message's vector, the gate, the extraction, the fact's vector: as when processed alone
    assert ledger(system_session, fact) == ["embed", "embed", "extract", "gate"]
    assert ledger(system_session, chatter) == ["embed", "gate"]
    assert ledger(system_session, assistant) == ["embed"]  # indexed, never gated
    assert ledger(system_session, secret) == []  # no model saw it, not even the embedder
    vectors = {mid: system_session.get(Message, mid).embedding for mid in (fact, chatter, secret, assistant)}
    assert vectors[secret] is None and all(vectors[mid] is not None for mid in (fact, chatter, assistant))
    # A vector computed in a batch is the one the message gets alone.
    alone, _ = backend.embed(["¿Qué facturé en septiembre?"])
    assert np.allclose(vectors[chatter], alone[0], atol=1e-6)
    assert system_session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None))) == 0
    assert drain_batch(database, backend) is None


def test_corrections_in_one_conversation_are_learnt_in_order_in_one_claim(
        factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    factory.contact(org, "Talleres López S.L.")
    for days in (30, 45, 60):
        say(system_session, org, ana, f"Talleres García paga a {days} días", conversation="garcia")
    say(system_session, org, ana, "Talleres López paga a 90 días", conversation="lopez")

    # One claim takes both conversations' heads and García's later corrections behind its head, in order.
    assert drain_batch(database, backend)["done"] == 4
    assert drain_batch(database, backend) is None
    values = dict(system_session.execute(select(Memory.value, Memory.status).where(
        Memory.subject.like("contact:%"), Memory.value.in_(["60 días", "90 días"]))).all())
    assert values == {"60 días": "active", "90 días": "active"}
    assert system_session.scalar(select(func.count()).select_from(Memory).where(Memory.status == "superseded")) == 2


def test_a_claim_takes_every_conversations_head_before_one_conversations_backlog(
        factory, system_session, database):
    org = factory.org()
    ana = factory.member(org, role="owner")
    backlog = [say(system_session, org, ana, f"nota {n}", conversation="backlog") for n in range(6)]
    others = [say(system_session, org, ana, f"hola {n}", conversation=f"c{n}") for n in range(2)]
    with database.unit_of_work(SYSTEM) as uow:
        claimed = [r.message_id for r in _claim(uow.session, dt.datetime.now(dt.timezone.utc), 4)]
    assert claimed == backlog[:2] + others


def test_a_conversation_whose_head_another_worker_holds_is_left_alone(factory, system_session, database):
    org = factory.org()
    ana = factory.member(org, role="owner")
    backlog = [say(system_session, org, ana, f"nota {n}", conversation="backlog") for n in range(5)]
    other = say(system_session, org, ana, "hola", conversation="other")
    now = dt.datetime.now(dt.timezone.utc)
    with database.unit_of_work(SYSTEM) as first, database.unit_of_work(SYSTEM) as second:
        assert [r.message_id for r in _claim(first.session, now, 1)] == backlog[:1]
        # The second worker skips the locked head and takes none of the rows behind it.
        assert [r.message_id for r in _claim(second.session, now, 32)] == [other]


def test_a_failed_row_does_not_hold_back_the_rest_of_its_conversation(factory, system_session, database):
    org = factory.org()
    ana = factory.member(org, role="owner")
    failed, *rest = [say(system_session, org, ana, f"nota {n}", conversation="c") for n in range(3)]
    system_session.execute(update(Outbox).where(Outbox.message_id == failed).values(
        attempts=1, next_attempt_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)))
    system_session.commit()
    with database.unit_of_work(SYSTEM) as uow:
        assert [r.message_id for r in _claim(uow.session, dt.datetime.now(dt.timezone.utc), 32)] == rest


def test_a_message_edited_after_its_batch_was_prepared_is_learnt_from_its_new_text(
        factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, ana, "Me llamo Pablo", conversation="c1", external_id="m-edit")
    cache = BatchCache()
    prepared = prepare_messages(system_session, [mid], backend, cache)
    system_session.commit()
    say(system_session, org, ana, "Me llamo Pedro", conversation="c1", external_id="m-edit", event="edited")

    out = process_message(system_session, mid, backend, prepared=prepared[mid], cache=cache)
    system_session.commit()
    assert out.outcome == "learnt"
    assert [(m.attribute, m.value) for m in system_session.scalars(select(Memory))] == [("nombre", "Pedro")]
    # The vector stored for the old text was cleared by the edit and recomputed for the new one.
    alone, _ = backend.embed(["Me llamo Pedro"])
    assert np.allclose(system_session.get(Message, mid).embedding, alone[0], atol=1e-6)


def test_the_gate_answers_a_batch_as_it_answers_each_message_alone(backend):
    pairs = [("Talleres García paga a 60 días", None), ("gracias", "¿Algo más?"),
             ("Soy alérgica a la penicilina", None), ("Llámame Lucía", "¿Cómo quieres que te llame?")]
    together = backend.decide_many(pairs)
    for (text, previous), (decision, usage) in zip(pairs, together, strict=True):
        alone, alone_usage = backend.decide(text, previous)
        assert decision.passes == alone.passes and decision.top_category == alone.top_category
        assert abs(decision.remember - alone.remember) < 1e-4 and abs(decision.special - alone.special) < 1e-4
        assert usage == alone_usage


def test_a_message_vector_stored_by_a_batch_is_the_embedders_bit_for_bit(factory, system_session, database, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    texts = ["¿Me recuerdas el total del trimestre?", "mañana lo miro", "Hazme la factura de la reparación"]
    ids = [say(system_session, org, ana, t, conversation=f"v{i}") for i, t in enumerate(texts)]

    assert drain_batch(database, backend)["done"] == 3

    alone, _ = backend.embed(texts)
    for message_id, vector in zip(ids, alone, strict=True):
        stored = system_session.get(Message, message_id).embedding
        # PostgreSQL keeps float4s: the stored ones are exactly the embedder's float32 values
        assert np.array_equal(np.asarray(stored, dtype=np.float32), np.asarray(vector, dtype=np.float32))


def test_a_memory_vector_learnt_by_a_batch_is_the_embedders_bit_for_bit(factory, system_session, database, backend):
    """A memory's vector goes to PostgreSQL in binary (models.BinaryVectorColumn): the same float32 values the
    embedder gave its sentence, read back by search and by the ladder's comparisons as before."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    say(system_session, org, ana, "Talleres García paga a 60 días", conversation="mv")

    assert drain_batch(database, backend)["done"] == 1

    [m] = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    [alone], _ = backend.embed([m.sentence])
    assert np.array_equal(np.asarray(m.embedding, dtype=np.float32), np.asarray(alone, dtype=np.float32))
    assert system_session.scalar(select(Memory.embedding.cosine_distance(alone)).where(Memory.id == m.id)) < 1e-6


class _DropsTheConnection:
    """The real backend, except that its first embedding call first has PostgreSQL end the worker's connection (what a
    restart or a failover does mid-batch)."""

    def __init__(self, backend, owner_engine):
        self.backend, self.owner_engine, self.dropped = backend, owner_engine, False

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def embed(self, texts):
        if not self.dropped:
            self.dropped = True
            with self.owner_engine.connect() as c:
                ended = c.execute(sql("select count(pg_terminate_backend(pid)) from pg_stat_activity "
                                      "where usename = :worker and state = 'idle in transaction'"),
                                  {"worker": WORKER_ROLE}).scalar()
                c.commit()
            assert ended == 1
        return self.backend.embed(texts)


def test_a_batch_whose_connection_drops_leaves_its_messages_pending_and_blames_none_of_them(
        factory, system_session, database, backend, owner_engine, caplog):
    org = factory.org()
    ana = factory.member(org, role="owner")
    ids = [say(system_session, org, ana, f"Talleres {name} paga a 60 días", conversation=f"c-{name}")
           for name in ("García", "López", "Martín")]
    with caplog.at_level(logging.WARNING, logger="jobs.outbox"), pytest.raises(sa_exc.DBAPIError):
        drain_batch(database, _DropsTheConnection(backend, owner_engine), limit=10)
    assert "failed, attempt" not in caplog.text  # an outage is not the messages' fault: no attempt is counted
    system_session.expire_all()
    rows = system_session.scalars(select(Outbox).where(Outbox.message_id.in_(ids))).all()
    assert [(r.processed_at, r.attempts, r.last_error) for r in rows] == [(None, 0, None)] * 3
    assert drain_batch(database, backend, limit=10) == {"done": 3, "failed": 0, "skipped": 0}


def test_a_turn_stores_its_trace_while_a_worker_learns_from_its_message_and_an_edit_still_waits(
        factory, system_session, database, backend, owner_engine, monkeypatch):
    """The worker holds the messages of its batch until the batch commits: an edit or an erasure of one waits for
    it, but the person's turn right after their message (its block's trace refers to the message) does not."""
    from memory_core.adapters import db as db_module
    from memory_core.domain.access import load_access
    from memory_core.reading.context import assemble_context

    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, ana, "Talleres García paga a 60 días", conversation="c1")
    conversation = system_session.get(Message, mid).conversation_id
    monkeypatch.setattr(db_module, "LOCK_TIMEOUT", "300ms")  # a request's statements give up after this
    with database.unit_of_work(SYSTEM) as worker:  # a worker's batch, not yet committed
        prepare_messages(worker.session, [mid], backend, BatchCache(), lock=True)
        with database.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org.id, user_id=ana.id)
        with database.unit_of_work(access.scope()) as turn:
            block = assemble_context(turn.session, access, conversation, "¿Cuándo paga Talleres García?",
                                     message_id=mid)
            turn.commit()
        with owner_engine.connect() as editor:  # an edit of the message waits for the batch
            editor.execute(sql("set lock_timeout = '300ms'"))
            with pytest.raises(sa_exc.OperationalError, match="lock timeout"):
                editor.execute(sql("update messages set text = 'editado' where id = :id"), {"id": mid})
            editor.rollback()
    assert block.trace_id is not None
    assert system_session.scalar(sql("select message_id from memory_traces where id = :id"),
                                 {"id": block.trace_id}) == mid
