"""Retention throughput and erasure time, on a throwaway embedded PostgreSQL.

    python bench/retention.py [--versions 1000000] [--messages 100000] [--noise 100000] [--batch 1000] [--json]

1. Inserts N superseded memory versions older than a year (plus as many active memories that must
   stay), runs the retention job, and prints rows deleted per second; then runs it again (idempotent:
   nothing to do) and prints how long the no-op took.
2. Creates one user with M messages (in conversations of 100 messages, each with a learnt memory and
   its source, a trace and an outbox row) beside other people's messages, then times an erasure
   request: preview, execution in batches, and the verification scan over every table.

Uses its own data dir (a temporary one unless --data-dir), never the development database. The
machine is shared: the load average is printed with the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", type=int, default=1_000_000, help="superseded versions to expire")
    ap.add_argument("--messages", type=int, default=100_000, help="messages of the user to erase")
    ap.add_argument("--noise", type=int, default=100_000, help="other people's messages that must stay")
    ap.add_argument("--batch", type=int, default=1000, help="retention batch size")
    ap.add_argument("--erasure-batch", type=int, default=5000, help="erasure batch size")
    ap.add_argument("--data-dir", default=None, help="embedded PostgreSQL data dir (default: a temporary one)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="memoria-bench-"))
    os.environ["MEMORIA_DATA_DIR"] = str(data_dir)
    for var in ("DATABASE_URL", "APP_DATABASE_URL"):
        os.environ.pop(var, None)

    from sqlalchemy import create_engine, text

    from memory_core.adapters.db import SYSTEM, Database, resolve_urls
    from memory_core.adapters.migrate import migrate
    from memory_core.adapters.runtime import start_postgres

    pg = start_postgres(data_dir)
    try:
        migrate()
        urls = resolve_urls()
        owner = create_engine(urls.owner)
        database = Database(urls.app, system_url=urls.system)
        figures = {"load_average": os.getloadavg()[0]}
        figures.update(bench_retention(owner, database, args.versions, args.batch, text))
        figures.update(bench_erasure(owner, database, args.messages, args.noise, args.erasure_batch, text, SYSTEM))
        figures["load_average_after"] = os.getloadavg()[0]
        database.dispose()
        owner.dispose()
    finally:
        if pg.started_here:
            pg.stop()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:42} {v:,.2f}" if isinstance(v, float) else f"{k:42} {v:,}")


def bench_retention(owner, database, n: int, batch: int, text) -> dict:
    from jobs.retention import run_retention

    with owner.begin() as c:
        org = c.execute(text("insert into organizations (name) values ('Bench') returning id")).scalar_one()
        t0 = time.perf_counter()
        c.execute(text("""
            insert into memories (org_id, level, category, subject, attribute, value, sentence, status, valid_to)
            select :o, 'shared', 'company', 'org', 'a' || g, 'v' || g, 'old fact ' || g, 'superseded',
                   now() - interval '400 days' - (g || ' seconds')::interval
            from generate_series(1, :n) g"""), {"o": org, "n": n})
        c.execute(text("""
            insert into memories (org_id, level, category, subject, attribute, value, sentence, status)
            select :o, 'shared', 'company', 'org', 'keep' || g, 'v', 'current fact ' || g, 'active'
            from generate_series(1, :n) g"""), {"o": org, "n": max(n // 10, 1)})
        load = time.perf_counter() - t0
    c = owner.connect()
    c.execute(text("analyze memories"))
    c.close()
    t0 = time.perf_counter()
    counts = run_retention("bench", database=database, batch=batch)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = run_retention("bench-again", database=database, batch=batch)
    second = time.perf_counter() - t0
    with owner.connect() as c:
        left = c.execute(text("select count(*) from memories where status = 'superseded'")).scalar_one()
        kept = c.execute(text("select count(*) from memories where status = 'active'")).scalar_one()
    assert left == 0 and again["superseded_versions"] == 0, "retention left rows behind"
    return {"retention_versions": n, "retention_load_seconds": load,
            "retention_deleted": counts["superseded_versions"], "retention_seconds": first,
            "retention_rows_per_second": counts["superseded_versions"] / first if first else 0.0,
            "retention_second_run_seconds": second, "retention_active_rows_kept": kept}


def bench_erasure(owner, database, messages: int, noise: int, batch: int, text, system) -> dict:
    from memory_core.privacy import requests as privacy

    per_conv = 100
    with owner.begin() as c:
        org = c.execute(text("insert into organizations (name) values ('Erasure bench') returning id")).scalar_one()
        uid = c.execute(text("insert into users (email, name, phone) values "
                             "('erase.me@bench.test', 'Persona Borrable', '+34600123456') returning id")).scalar_one()
        other = c.execute(text("insert into users (email, name) values ('stay@bench.test', 'Persona Que Queda') "
                               "returning id")).scalar_one()
        officer = c.execute(text("insert into users (email, name, platform_role) values "
                                 "('officer@bench.test', 'Officer', 'privacy_officer') returning id")).scalar_one()
        c.execute(text("insert into memberships (org_id, user_id) values (:o, :u), (:o, :v)"),
                  {"o": org, "u": uid, "v": other})
        t0 = time.perf_counter()
        for who, count, tag in ((uid, messages, "me"), (other, noise, "other")):
            convs = max(count // per_conv, 1)
            c.execute(text("""
                insert into conversations (channel, external_id, org_id, user_id)
                select 'web', :tag || '-' || g, :o, :u from generate_series(1, :n) g"""),
                      {"tag": tag, "o": org, "u": who, "n": convs})
            c.execute(text("""
                insert into messages (conversation_id, channel, external_id, org_id, user_id, role, text)
                select c.id, 'web', :tag || '-m-' || c.external_id || '-' || g, :o, :u,
                       case when g % 2 = 0 then 'assistant' else 'user' end,
                       'mensaje ' || g || ' sobre pedidos y entregas del almacén'
                from conversations c, generate_series(1, :per) g
                where c.user_id = :u"""), {"tag": tag, "o": org, "u": who, "per": per_conv})
            c.execute(text("""
                insert into memories (org_id, level, owner_user_id, category, subject, attribute, value, sentence,
                                      author_user_id)
                select :o, 'private', :u, 'company', 'org', 'nota_' || c.external_id, 'v', 'una nota', :u
                from conversations c where c.user_id = :u"""), {"o": org, "u": who})
            c.execute(text("""
                insert into memory_sources (memory_id, message_id, conversation_id)
                select m.id, (select id from messages x where x.conversation_id = c.id limit 1), c.id
                from memories m join conversations c on m.attribute = 'nota_' || c.external_id
                where c.user_id = :u"""), {"u": who})
            c.execute(text("""
                insert into memory_traces (org_id, conversation_id, user_id, block_text)
                select :o, c.id, :u, 'bloque' from conversations c where c.user_id = :u"""), {"o": org, "u": who})
            c.execute(text("""
                insert into outbox (message_id, conversation_id, processed_at)
                select id, conversation_id, now() from messages where user_id = :u"""), {"u": who})
        load = time.perf_counter() - t0
    with owner.connect() as c:
        c.execute(text("analyze"))
    with database.unit_of_work(system) as uow:
        s = uow.session
        req = privacy.intake(s, kind="erasure", subject_type="user", subject_ref="erase.me@bench.test",
                             requested_by="bench", basis="GDPR art. 17", actor=officer)
        privacy.verify(s, req.id, "bench", officer)
        uow.commit()
        t0 = time.perf_counter()
        privacy.preview(s, req.id, officer)
        uow.commit()
        preview_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        req = privacy.execute(s, req.id, officer, batch_size=batch)
        execute_s = time.perf_counter() - t0
        receipt = req.receipt
    with owner.connect() as c:
        stayed = c.execute(text("select count(*) from messages where user_id = :u"), {"u": other}).scalar_one()
    return {"erasure_messages": messages, "erasure_noise_messages": noise, "erasure_load_seconds": load,
            "erasure_preview_seconds": preview_s, "erasure_execute_seconds_incl_scan": execute_s,
            "erasure_rows_deleted": sum(receipt["deleted"].values()),
            "erasure_scan_clean": int(receipt["verification"]["clean"]),
            "erasure_other_messages_kept": stayed,
            "erasure_verification_scan_seconds": receipt["verification"]["seconds"]}


if __name__ == "__main__":
    main()
