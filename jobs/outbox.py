"""The outbox worker: RQ jobs that drain the outbox, a batch of messages per transaction (a savepoint each).

At-least-once and idempotent: a row is claimed with FOR UPDATE SKIP LOCKED (two workers never take
the same row), processed, and marked done in the same transaction as everything learnt from it. A
worker killed mid-message rolls back that one transaction and the row is simply pending again. A
failure is written on the row (attempts + 1, last_error, next_attempt_at with backoff) and retried
later; nothing is ever dropped.

Batches: `drain_batch` claims up to CLAIM_SIZE rows (the oldest waiting row of as many conversations,
then the next rows of those conversations in order: `_claim`),
runs the message embedding and the gate for all of them in one model call each, then writes each
message in its own savepoint of the batch's one transaction (a failure rolls back only its message);
the rows are marked done and the usage ledger, the audit rows and the notifications written once per
batch (one statement a table), in that same transaction.

Jobs: `drain_outbox` (kicked after ingest by `enqueue_drain()`, and every minute by the cron
schedule as a safety net). A kicked drain that emptied the outbox waits a moment (LINGER_SECONDS) for the
next message before it ends: RQ forks a new horse per job, whose new connections plan every statement
afresh (row security makes that most of a small batch's cost), while an agent's next message usually
comes within that moment and is learnt on this horse's warm connections.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time

from sqlalchemy import func, insert, literal, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import aliased

from memory_core.adapters import planner
from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.db import SYSTEM, get_database
from memory_core.adapters.outage import transaction_lost
from memory_core.domain import clock, deferred_rows, subject_locks
from memory_core.domain.ledger import record_usage, usage_row
from memory_core.domain.model_port import BackendError, Usage
from memory_core.domain.models import AuditLog, Memory, Message, Notification, Outbox, UsageLedger

log = logging.getLogger(__name__)

# Messages one job drains, and seconds it claims for, before it hands over to a fresh job (so a long backlog
# does not hold the queue's other jobs back for long). RQ forks a horse per job, whose new connections parse
# and plan every statement afresh and whose SQLAlchemy caches start cold: ~1-2 s of CPU a job, which a job
# of 200 messages paid again every 200 messages; a job now runs until one of the two bounds.
BATCH_SIZE = 20_000
DRAIN_WITHIN_SECONDS = 20
# Rows claimed, embedded and gated together. The gate's cost per message falls ~10x from 1 to 32
# messages; more only holds rows (and a crash's redo) longer.
CLAIM_SIZE = 32
# Backoff after the n-th failure: BACKOFF_BASE_SECONDS * 2**(n-1), at most BACKOFF_MAX_SECONDS.
BACKOFF_BASE_SECONDS = 5
BACKOFF_MAX_SECONDS = 3600
# A kick within this many seconds of a pending one is dropped: one queued drain covers every message.
KICK_DEDUP_SECONDS = 30
KICK_KEY = "memoria:outbox:kick"
# Every kick counts here (even one deduplicated away): a lingering drain claims again only when it moved.
KICKS_KEY = "memoria:outbox:kicks"
# A kicked drain that found the outbox empty watches the kick count every LINGER_POLL_SECONDS (one Redis
# read) for this long before it ends, and claims again when a message was kicked; the cron drain does not
# linger.
LINGER_SECONDS = 1.0
LINGER_POLL_SECONDS = 0.05
# ...but only within this many seconds of the job's start, far inside RQ's job timeout (180 s): a trickle of
# messages never keeps one job alive for long.
LINGER_WITHIN_SECONDS = 30
ERROR_CHARS = 500
# "No attempt yet", written into the claim's statements (not sent as a parameter): its generic plan, the one a
# batch uses (`planner.planned_once`), can then read the partial indexes ix_outbox_first_try and ix_outbox_retry.
_NONE = literal(0, literal_execute=True)


def backoff(attempts: int) -> dt.timedelta:
    return dt.timedelta(seconds=min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** max(0, attempts - 1)))


def _claim(session, now: dt.datetime, limit: int = 1) -> list[Outbox]:
    """Up to `limit` due rows, locked, in id order: the oldest waiting row (the head) of as many
    conversations as fit, then the next rows of those conversations in order, then due retries.

    One conversation's messages are learnt in order (a correction never lands before the fact it
    corrects), even with several workers: a first try is claimable only as its conversation's head or
    behind that head in the same claim, so whoever holds the head's lock holds the conversation, and a
    worker that finds the head locked (SKIP LOCKED) takes nothing of it. A row that already failed
    does not hold the others back, but waits behind the first tries before it.

    Each head comes from the partial index ix_outbox_first_try (conversation_id, id) by DISTINCT ON,
    and a conversation's next rows from the same index, so a claim costs the same with 5,000 rows
    waiting in one conversation as with 5 (it used to probe every pending row of each candidate's
    conversation through messages, and took one row per conversation)."""
    table = Outbox.__table__
    first_try = (table.c.processed_at.is_(None), table.c.attempts == _NONE)
    retries_cap = max(1, limit // 4)  # retries never starve the first tries, nor the reverse
    earlier = aliased(Outbox)
    waiting_before = (select(earlier.id).where(
        earlier.conversation_id == Outbox.conversation_id, earlier.processed_at.is_(None), earlier.attempts == _NONE,
        earlier.id < Outbox.id).exists())
    rows = list(session.scalars(
        select(Outbox).where(Outbox.processed_at.is_(None), Outbox.attempts > _NONE, Outbox.next_attempt_at <= now,
                             ~waiting_before)
        .order_by(Outbox.next_attempt_at).limit(min(retries_cap, limit))
        .with_for_update(skip_locked=True)))
    heads_of = (select(table.c.id).where(*first_try).ext(distinct_on(table.c.conversation_id))
                .order_by(table.c.conversation_id, table.c.id))
    heads = list(session.scalars(
        select(Outbox).where(Outbox.id.in_(heads_of), Outbox.processed_at.is_(None), Outbox.attempts == _NONE)
        .order_by(Outbox.id).limit(limit - len(rows)).with_for_update(skip_locked=True)))
    rows += heads
    room = limit - len(rows)
    if room > 0 and heads:
        rows += _follow_heads(session, heads, room)
    return sorted(rows, key=lambda r: r.id)


def _follow_heads(session, heads: list[Outbox], room: int) -> list[Outbox]:
    """The next first tries of the claimed heads' conversations, in order, up to `room` rows.

    Holding a conversation's head, this worker is the only one that may take its next rows. A run
    stops before a message already in the claim (its edit or deletion waits for the next claim)."""
    table = Outbox.__table__
    taken = {h.message_id for h in heads}
    ids: list[int] = []
    for head in heads:  # oldest conversation first
        if len(ids) >= room:
            break
        following = session.execute(
            select(table.c.id, table.c.message_id)
            .where(table.c.conversation_id == head.conversation_id, table.c.processed_at.is_(None),
                   table.c.attempts == _NONE, table.c.id > head.id)
            .order_by(table.c.id).limit(room - len(ids))).all()
        for row_id, message_id in following:
            if message_id in taken:
                break
            taken.add(message_id)
            ids.append(row_id)
    if not ids:
        return []
    # Nobody else claims these (we hold their heads); the lock keeps a deletion from racing us.
    return list(session.scalars(select(Outbox).where(Outbox.id == func.any(_ids(ids)), Outbox.processed_at.is_(None),
                                                    Outbox.attempts == _NONE)
                                .order_by(Outbox.id).with_for_update()))


def _ids(ids: list[int]):
    """Outbox ids as one array parameter: one statement text whatever their number (prepared, planned once)."""
    return literal(ids, ArrayParam("bigint"))


def _error_text(exc: BaseException) -> str:
    # The type and the library's message; the message text itself is never put in an error.
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]


def drain_once(database, backend, *, now: dt.datetime | None = None, run_tag: str | None = None) -> str | None:
    """Claim and process one pending outbox row in its own transaction: 'done', 'failed' or None (none left)."""
    with database.unit_of_work(SYSTEM) as uow:
        rows = _claim(uow.session, now or clock.now())
        if not rows:
            return None
        return _process_row(uow, rows[0], backend, run_tag)


def drain_batch(database, backend, *, limit: int = CLAIM_SIZE, now: dt.datetime | None = None,
                run_tag: str | None = None) -> dict[str, int] | None:
    """Claim up to `limit` rows, embed and gate them together, then process each in a savepoint of the
    batch's one transaction: counts of 'done', 'failed' and 'skipped', or None (none left).

    The claim's row locks (and the messages' locks) are held until the batch commits, so no other
    worker touches them; a message that fails rolls back only its savepoint and its failure is kept
    on its row. A message that needs a subject another worker is writing about, while this batch holds
    others, steps aside with the rest of its conversation's rows in the batch and is tried once more after
    the batch's other messages (the other worker's batch has often committed by then); still held, it is
    'skipped': left pending for the next claim (memory_core.domain.subject_locks: workers never wait while
    holding, so never deadlock).
    Everything learnt, the rows marked done, the failures and the ledger commit together: a crash
    mid-batch leaves every row of the batch pending, to be learnt once by the next worker."""
    from memory_core.learning.pipeline import BatchCache, prepare_messages

    cache = BatchCache()
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        planner.planned_once(s, keep=planner.PREPARED_MAX)
        rows = _claim(s, now or clock.now(), limit)
        if not rows:
            return None
        usage: list[dict] = []  # the batch's ledger rows, written at its end
        try:
            with s.begin_nested():
                vector_usage: list[dict] = []
                prepared = prepare_messages(s, [r.message_id for r in rows], backend, cache, run_tag, lock=True,
                                            ledger_rows=vector_usage)
            usage += vector_usage  # kept only once the savepoint that stored the vectors was released
            locked = True
        except Exception as exc:  # noqa: BLE001 - each message is then computed on its own, where failures are kept
            if transaction_lost(exc):
                raise  # the claim is gone with it: every row stays pending, for the next drain
            log.warning("preparing an outbox batch failed; processing its messages one by one", exc_info=True)
            prepared, locked = {}, False
        counts = {"done": 0, "failed": 0, "skipped": 0}
        done: list[int] = []
        deferred: list = []  # the audit rows and notifications of the messages done
        subject_locks.step_aside(s)
        waiting = rows
        for _ in range(2):  # what stepped aside is tried once more after the rest: the other batch may be done
            stepped_aside: set = set()  # conversations whose next message waits (its conversation stays in order)
            left = []
            for row in waiting:
                outcome = "skipped" if row.conversation_id in stepped_aside else _process_row(
                    uow, row, backend, run_tag, prepared.get(row.message_id), cache, locked=locked, usage=usage,
                    deferred=deferred)
                if outcome == "skipped":
                    stepped_aside.add(row.conversation_id)
                    left.append(row)
                    continue
                counts[outcome] += 1
                if outcome == "done":
                    done.append(row.id)
            waiting = left
            if not waiting:
                break
        counts["skipped"] = len(waiting)
        _left_for_next_claim(s, waiting, prepared, usage, run_tag)
        if done:
            table = Outbox.__table__
            s.execute(table.update().where(table.c.id == func.any(_ids(done)))
                      .values(processed_at=clock.now(), last_error=None))
        if usage:
            s.execute(insert(UsageLedger.__table__), usage)
        if deferred:
            _add_deferred(s, deferred)
        uow.commit()
    return counts


def _batch_gate_usage(prepared) -> Usage | None:
    """The usage of the gate call the batch made for a message before processing it, if it did."""
    return prepared.decision[1] if prepared is not None and prepared.decision is not None else None


def _left_for_next_claim(session, rows: list[Outbox], prepared: dict, usage: list[dict], run_tag: str | None) -> None:
    """Rows left pending for the next claim (their subject still held by another worker): the batch's gate
    call for each was paid, and no attempt of this batch ledgered it."""
    for row in rows:
        call = _batch_gate_usage(prepared.get(row.message_id))
        if call is not None:
            org_id = session.scalar(select(Message.org_id).where(Message.id == row.message_id))
            usage.append(usage_row(call, org_id=org_id, message_id=row.message_id, run_tag=run_tag))


def _add_deferred(session, rows: list) -> None:
    """The batch's audit rows and notifications, one multi-row INSERT a table. A notification whose
    memory a later message of the batch removed goes too, as ON DELETE CASCADE would have taken it."""
    notes = [r for r in rows if isinstance(r, Notification)]
    memory_ids = list({n.memory_id for n in notes if n.memory_id is not None})
    if memory_ids:
        # An array, not an IN list: one statement text whatever the count (prepared, planned once).
        alive = set(session.scalars(select(Memory.id).where(
            Memory.id == func.any(literal(memory_ids, ArrayParam("uuid"))))))
        notes = [n for n in notes if n.memory_id is None or n.memory_id in alive]
    audits = [r for r in rows if isinstance(r, AuditLog)]
    others = [r for r in rows if not isinstance(r, (Notification, AuditLog))]
    if others:
        session.add_all(others)
        session.flush()
    # Their ids come from the server, which the ORM inserts a few rows at a time to read back, in a statement
    # whose text (and plan) changes with the number of rows; nothing reads them back here, so one INSERT a
    # table run for every row (one prepared statement, pipelined).
    for model, kept in ((AuditLog, audits), (Notification, notes)):
        if kept:
            columns = [a.key for a in sa_inspect(model).column_attrs]
            session.execute(insert(model), [{k: r.__dict__[k] for k in columns if k in r.__dict__} for r in kept])


def _process_row(uow, row: Outbox, backend, run_tag: str | None, prepared=None, cache=None, *,
                 locked: bool = False, usage: list[dict] | None = None, deferred: list | None = None) -> str:
    """Process one claimed row: 'done', or 'failed' with the failure kept on the row.

    Alone (`usage` None) it marks the row and commits. In a batch it neither marks a done row nor
    commits, appends the message's ledger rows to `usage` and, once it is done, its audit rows and
    notifications to `deferred`: `drain_batch` writes them all at once."""
    from memory_core.learning.pipeline import process_message

    s = uow.session
    spent: list = []
    batched = usage is not None
    try:
        with s.begin_nested(), (deferred_rows.collecting(s) if deferred is not None
                                else contextlib.nullcontext()) as collected:
            process_message(s, row.message_id, backend, run_tag=run_tag, event=row.event, spent=spent,
                            prepared=prepared, cache=cache, locked=locked, defer_usage=batched)
    except Exception as exc:  # noqa: BLE001 - any failure is kept on the row and retried, never lost
        if transaction_lost(exc):
            raise  # not the message's failure, and nothing can be kept on its row: the drain ends, it stays pending
        if batched and subject_locks.is_busy(exc):
            # Another worker holds a subject this message needs while this batch holds others: the
            # message steps aside, untouched (what its calls cost is kept; the batch's gate call for it
            # once, by the attempt that ends it: `_left_for_next_claim` if none does).
            batch_call = _batch_gate_usage(prepared)
            org_id = s.scalar(select(Message.org_id).where(Message.id == row.message_id))
            usage.extend(usage_row(u, org_id=org_id, message_id=row.message_id, run_tag=run_tag)
                         for u in spent if u is not batch_call)
            return "skipped"
        row.attempts += 1
        row.last_error = _error_text(exc)
        row.next_attempt_at = clock.now() + backoff(row.attempts)
        # The calls made before the failure, and the failed call itself, were paid for: the
        # savepoint took their ledger rows away, so they are written again outside it.
        exc_usage = getattr(exc, "usage", None)
        if isinstance(exc, BackendError) and exc_usage is not None:
            spent.append(exc_usage)
        if spent:
            org_id = s.scalar(select(Message.org_id).where(Message.id == row.message_id))
            for u in spent:
                if batched:
                    usage.append(usage_row(u, org_id=org_id, message_id=row.message_id, run_tag=run_tag))
                else:
                    record_usage(s, u, org_id=org_id, message_id=row.message_id, run_tag=run_tag)
        log.warning("outbox %s (message %s) failed, attempt %d: %s", row.id, row.message_id, row.attempts,
                    row.last_error)
        if not batched:
            uow.commit()
        return "failed"
    if batched:
        if spent:
            org_id = s.get(Message, row.message_id).org_id
            usage.extend(usage_row(u, org_id=org_id, message_id=row.message_id, run_tag=run_tag) for u in spent)
        if collected:
            deferred.extend(collected)
        return "done"
    row.processed_at = clock.now()
    row.last_error = None
    uow.commit()
    return "done"


def drain_outbox(batch_size: int = BATCH_SIZE, linger: float = LINGER_SECONDS, *,
                 sleep=time.sleep, monotonic=time.monotonic) -> dict[str, int]:
    """The RQ job: process up to batch_size pending messages, claiming for DRAIN_WITHIN_SECONDS at most; if
    more remain, queue another drain. Once the outbox is empty it keeps looking for `linger` seconds (from the
    last message it found)."""
    from memory_core.adapters.queue import get_redis
    from memory_core.backends import get_backend

    try:
        get_redis().delete(KICK_KEY)  # from now on a new message needs a new kick
    except Exception:  # noqa: BLE001 - a kick lost is caught by the per-minute safety net
        log.warning("could not clear the outbox kick key")
    database, backend = get_database(), get_backend()
    counts = {"done": 0, "failed": 0}
    claimed = 0
    started = monotonic()
    idle_until = started + linger
    while True:
        seen = _kicks() if linger else None  # read before the claim: a kick after it is seen below
        result = drain_batch(database, backend, limit=min(CLAIM_SIZE, batch_size - claimed))
        if result is None:
            while monotonic() < min(idle_until, started + LINGER_WITHIN_SECONDS):
                sleep(LINGER_POLL_SECONDS)
                if _kicks() != seen:
                    break  # a message came: claim it
            else:
                break
            continue
        idle_until = monotonic() + linger
        claimed += sum(result.values())
        counts["done"] += result["done"]
        counts["failed"] += result["failed"]
        if claimed >= batch_size or monotonic() - started >= DRAIN_WITHIN_SECONDS:
            enqueue_drain(force=True)  # more may wait: a fresh job takes over
            break
    if counts["failed"]:
        _schedule_retry(database)
    return counts


def _kicks() -> object:
    """How many kicks Redis has counted (an object equal to no other when Redis cannot say: claim again)."""
    from memory_core.adapters.queue import get_redis

    try:
        return get_redis().get(KICKS_KEY)
    except Exception:  # noqa: BLE001 - without Redis, look at the outbox itself
        return object()


def _schedule_retry(database) -> None:
    """Ask the scheduler for a drain when the earliest failed row is due (the cron net catches it too)."""
    from sqlalchemy import func

    from memory_core.adapters.queue import get_queue

    with database.unit_of_work(SYSTEM) as uow:
        due = uow.session.scalar(select(func.min(Outbox.next_attempt_at)).where(Outbox.processed_at.is_(None)))
    if due is None:
        return
    delay = max(dt.timedelta(seconds=1), due - clock.now())
    try:
        get_queue().enqueue_in(delay, drain_outbox)
    except Exception:  # noqa: BLE001
        log.warning("could not schedule the outbox retry; the per-minute drain will pick it up")


def enqueue_drain(force: bool = False, settings=None):
    """Kick the worker after ingest committed. Cheap to call per message: kicks are deduplicated.
    `settings`: the caller's (a web process passes its own rather than reading the environment again)."""
    from memory_core.adapters.queue import get_queue, get_redis

    try:
        if not force:
            pipe = get_redis(settings).pipeline(transaction=False)  # one round trip, as the kick alone was
            pipe.incr(KICKS_KEY)  # a lingering drain sees this one
            pipe.set(KICK_KEY, "1", nx=True, ex=KICK_DEDUP_SECONDS)
            if not pipe.execute()[1]:
                return None
        return get_queue(settings).enqueue(drain_outbox)
    except Exception:  # noqa: BLE001 - never fail the agent's turn: the cron safety net drains anyway
        log.warning("could not kick the outbox worker; the per-minute drain will pick the message up")
        return None


def drain_outbox_periodic() -> dict[str, int]:
    """The cron safety net: drains whatever a lost kick or a retry left behind."""
    return drain_outbox(linger=0)


def pending_count(database) -> int:
    from sqlalchemy import func

    with database.unit_of_work(SYSTEM) as uow:
        return uow.session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None)))
