"""What storing a message's vector costs PostgreSQL, index by index, printed.

    python bench/message_vector_write.py [--messages 300] [--rounds 5] [--ivfflat]

The worker stores each message's vector with an UPDATE of `messages.embedding` (learning/pipeline.py,
_store_vectors). The column is indexed, so the update is never HOT: every index of messages gets the new
version. This bench adds `--messages` new messages (texts copied from the table, in a scratch org) and times
that UPDATE with every index, without the HNSW index, and with the HNSW index alone: each variant in a
transaction that drops the other indexes first and is rolled back, the variants taking turns for `--rounds`
rounds (the first round reads cold pages: read the medians). `--ivfflat` also builds an IVFFlat index
(lists = √rows) beside the HNSW one and times it alone; it is dropped afterwards.

Uses the configured servers (DATABASE_URL/REDIS_URL, or the embedded ones in MEMORIA_DATA_DIR), as the
table's owner (it drops indexes, inside transactions it rolls back). Run it on a data dir that holds
messages with vectors, e.g. one loaded by bench/scale.py.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

from bench.process_cpu import tree_cpu_seconds  # noqa: E402
from evals.scratch import remove_scratch, scratch_org  # noqa: E402
from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.domain.models import Conversation  # noqa: E402
from memory_core.domain.vocabulary import EMBED_DIM  # noqa: E402

HNSW = "ix_messages_embedding"
IVFFLAT = "bench_messages_ivfflat"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ivfflat", action="store_true")
    args = ap.parse_args()
    start_servers()
    database = get_database()
    owner = create_engine(resolve_urls(get_settings()).owner)
    with owner.connect() as c:
        texts = c.execute(text("select text from messages where length(text) > 20 order by random() limit :n"),
                          {"n": args.messages}).scalars().all()
        rows = c.execute(text("select count(*) from messages")).scalar()
        indexes = c.execute(text("select indexrelid::regclass::text from pg_index "
                                 "where indrelid = 'messages'::regclass and not indisprimary and not indisunique"))\
            .scalars().all()
    if HNSW not in indexes or len(texts) < args.messages:
        sys.exit(f"needs a messages table with {HNSW} and at least {args.messages} texts")
    with database.unit_of_work(SYSTEM) as uow:
        org, person = scratch_org(uow.session, f"bench vector write {uuid.uuid4().hex[:6]}",
                                  owner_email=f"bench-{uuid.uuid4().hex[:8]}@bench.test", owner_name="Bench")
        conv = Conversation(channel="web", external_id=f"bench-{uuid.uuid4()}", org_id=org.id, user_id=person.id)
        uow.session.add(conv)
        uow.session.flush()
        ids = uow.session.execute(text(
            "insert into messages (id, conversation_id, channel, external_id, org_id, user_id, role, text) "
            "select gen_random_uuid(), :conv, 'web', 'bench-' || gen_random_uuid(), :org, :user, 'user', t "
            "from unnest(cast(:texts as text[])) t returning id"),
            {"conv": conv.id, "org": org.id, "user": person.id, "texts": texts}).scalars().all()
        uow.commit()
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(len(ids), EMBED_DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    updates = [{"v": "[" + ",".join(f"{x:.6f}" for x in v) + "]", "id": i} for v, i in zip(vectors, ids)]
    others = [i for i in indexes if i != HNSW]
    variants = {"every index": [], "without HNSW": [HNSW], "HNSW alone": others}
    try:
        if args.ivfflat:
            with owner.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                c.exec_driver_sql("set maintenance_work_mem = '512MB'")
                c.exec_driver_sql(f"create index {IVFFLAT} on messages using ivfflat (embedding vector_cosine_ops) "
                                  f"with (lists = {max(10, int(math.sqrt(rows)))})")
            variants = {name: drop + [IVFFLAT] for name, drop in variants.items()} | {"IVFFlat alone": others + [HNSW]}
        spent: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, drop in variants.items():
                with owner.connect() as c:
                    pid = c.execute(text("select pg_backend_pid()")).scalar()
                    for index in drop:
                        c.exec_driver_sql(f"drop index {index}")
                    cpu, wall = tree_cpu_seconds(pid), time.perf_counter()  # a backend: no children
                    c.exec_driver_sql("update messages set embedding = %(v)s::vector, embed_model = 'bench' "
                                      "where id = %(id)s", updates)
                    wall, cpu = time.perf_counter() - wall, tree_cpu_seconds(pid) - cpu
                    c.rollback()
                spent[name].append((cpu, wall))
    finally:
        if args.ivfflat:
            with owner.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                c.exec_driver_sql(f"drop index if exists {IVFFLAT}")
        remove_scratch(database, org.id, [person.id])
        owner.dispose()
    n = len(ids)
    print(f"the vector UPDATE of {n} new messages on a table of {rows:,} ({args.rounds} rounds, medians; "
          f"each round's wall ms a message in brackets):")
    for name, runs in spent.items():
        print(f"  {name:14s} PostgreSQL's CPU {statistics.median(c for c, _ in runs) / n * 1e3:.2f} ms a message, "
              f"wall {statistics.median(w for _, w in runs) / n * 1e3:.2f} ms "
              f"({', '.join(f'{w / n * 1e3:.2f}' for _, w in runs)})")


if __name__ == "__main__":
    main()
