"""The worker on a long conversation: new messages learnt in a conversation with a long history, printed.

    python bench/long_conversation.py [--history 0,1000,3000] [--messages 300] [--reads 40]

A WhatsApp number's conversation lasts for years and keeps every source of what was learnt from it. For each
history size, a scratch org's owner gets one conversation whose earlier messages (one every 10 minutes, going back
from now) each taught a fact about one of 40 customers; then `--messages` new messages of the bench mix
(bench/pipeline.py: a third carry a fact) are ingested into it and drained with the real worker code. Prints, per
history size, the worker's messages/s on them and the p50/p95 of the extraction context's later read in a batch
(the conversation's recent subjects and the batch's written rows: `--reads` runs, each in a transaction as the
writer), the read that grew with the conversation. Uses the configured servers (DATABASE_URL/REDIS_URL, or the
embedded ones in MEMORIA_DATA_DIR) and removes its scratch org.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MEMORIA_BACKEND", "local")

from sqlalchemy import select  # noqa: E402

from bench.pipeline import SURNAMES, drain, message, percentile, setup, teardown  # noqa: E402
from jobs.outbox import CLAIM_SIZE  # noqa: E402
from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database  # noqa: E402
from memory_core.adapters.heap import freeze_heap  # noqa: E402
from memory_core.adapters.migrate import migrate  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.backends import get_backend  # noqa: E402
from memory_core.domain import clock  # noqa: E402
from memory_core.domain.access import load_access  # noqa: E402
from memory_core.domain.models import Memory, MemorySource, Message  # noqa: E402
from memory_core.learning.context_reads import KnownToWriters, context_reads  # noqa: E402
from memory_core.learning.ingest import ingest_message  # noqa: E402

HISTORY_SPACING = dt.timedelta(minutes=10)


def ingest(db, org_id, user_id, conversation: str, texts: list[str], tag: str) -> uuid.UUID:
    with db.unit_of_work(SYSTEM) as uow:
        for i, text in enumerate(texts):
            result = ingest_message(uow.session, channel="whatsapp", conversation=conversation,
                                    external_id=f"{tag}-{i}", org_id=org_id, user_id=user_id, phone=None,
                                    role="user", text=text)
        uow.commit()
    return result.conversation_id


def add_history(db, org_id, user_id, conversation_id, count: int) -> None:
    """`count` earlier messages of the conversation, each the source of a fact about one of 40 customers (a
    note of its own: the org's other conversations hold facts about the same customers)."""
    now = clock.now()
    for start in range(0, count, 500):
        with db.unit_of_work(SYSTEM) as uow:
            s = uow.session
            for i in range(start, min(count, start + 500)):
                at = now - HISTORY_SPACING * (count - i + 3)  # the last one well before the new messages' window
                name = SURNAMES[i % len(SURNAMES)]
                said = Message(org_id=org_id, user_id=user_id, conversation_id=conversation_id, channel="whatsapp",
                               external_id=f"history-{count}-{i}", role="user", text=f"Talleres {name}: nota {i}",
                               sent_at=at)
                fact = Memory(org_id=org_id, level="shared", area="general", category="customer",
                              subject=f"name:talleres {name.lower()}", attribute=f"nota_{count}_{i}", value=f"nota {i}",
                              sentence=f"Talleres {name}: nota {i}", confidence=0.9, status="active",
                              origin="background", valid_from=at)
                s.add_all([said, fact])
                s.flush()
                s.add(MemorySource(memory_id=fact.id, message_id=said.id, conversation_id=conversation_id,
                                   created_at=at))
            uow.commit()


def later_read_ms(db, access, conversation_id, runs: int) -> list[float]:
    """The worker's second extraction-context read of a writer in a batch, timed."""
    took = []
    for _ in range(runs):
        with db.unit_of_work(access.scope()) as uow:
            known = KnownToWriters()
            context_reads(uow.session, access, ["self"], conversation_id, known=known)
            started = time.perf_counter()
            context_reads(uow.session, access, ["self"], conversation_id, known=known)
            took.append((time.perf_counter() - started) * 1e3)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", default="0,1000,3000", help="earlier learnt messages, comma-separated sizes")
    parser.add_argument("--messages", type=int, default=300, help="new messages learnt in each conversation")
    parser.add_argument("--reads", type=int, default=40)
    args = parser.parse_args()
    start_servers()
    migrate(get_settings())
    db, backend = get_database(), get_backend()
    backend.warm_up()
    freeze_heap()
    org_id, users = setup(db)
    user_id = users[0]
    try:
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        # An untimed drain first: a process's first batches load what later ones reuse.
        ingest(db, org_id, user_id, f"warm-{uuid.uuid4().hex[:6]}", [message(i) for i in range(100)], "warm")
        drain(db, backend, CLAIM_SIZE)
        print(f"{'history':>8} {'messages/s':>11} {'read p50':>9} {'read p95':>9}  (ms; {args.messages} new messages)")
        for size in (int(n) for n in args.history.split(",")):
            name = f"long-{size}-{uuid.uuid4().hex[:6]}"
            conversation_id = ingest(db, org_id, user_id, name, ["hola"], f"{name}-first")
            drain(db, backend, CLAIM_SIZE)
            add_history(db, org_id, user_id, conversation_id, size)
            ingest(db, org_id, user_id, name, [message(i) for i in range(args.messages)], name)
            started = time.perf_counter()
            done = drain(db, backend, CLAIM_SIZE)
            rate = done / (time.perf_counter() - started)
            reads = later_read_ms(db, access, conversation_id, args.reads)
            with db.unit_of_work(SYSTEM) as uow:
                sources = len(uow.session.scalars(select(MemorySource.id).where(
                    MemorySource.conversation_id == conversation_id)).all())
            print(f"{size:>8} {rate:>11.1f} {statistics.median(reads):>9.2f} {percentile(reads, 95):>9.2f}"
                  f"  ({sources} sources in the conversation after)", flush=True)
    finally:
        teardown(db, org_id, users)


if __name__ == "__main__":
    main()
