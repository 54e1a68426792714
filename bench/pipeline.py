"""Worker throughput and ingest latency of the learning pipeline (local backend), printed.

    python bench/pipeline.py [--messages 600] [--workers 1] [--conversations 20] [--batch 32] [--profile]
    python bench/pipeline.py --scale-out 1,2,4 [--messages 2000] [--conversations 40]
    python bench/pipeline.py --scale-out 4 --messages 20000 --conversations 400   # the 4-worker soak
    python bench/pipeline.py --messages 1000 --dump learnt.jsonl   # what was learnt, to diff two checkouts
    python bench/pipeline.py --messages 3000 --conversations 200 --writers 50   # a batch learns for many people
    python bench/pipeline.py --messages 1000 --conversations 50 --address-book 1000 --dump learnt.jsonl  # big book
    python bench/pipeline.py --messages 1000 --conversations 50 --writers 10 --known-names 2000  # many names

Uses the configured servers (DATABASE_URL/REDIS_URL, or the embedded ones in MEMORIA_DATA_DIR). It
creates a scratch org with 40 contacts (`--address-book N`: N more; `--known-names N`: N customers known by
name only), ingests a realistic mix (about a
third carry a fact; the rest are questions, orders and small talk), drains the outbox with the real
worker code, then removes the scratch org. Figures: ingest latency p50/p95 (one message + its outbox row,
committed), worker throughput in messages/s through embedding, gate, policy, extraction and write.

Workers run `jobs.outbox.drain_batch` (what the RQ job runs) in processes forked after the models
are loaded, as the RQ worker forks its work horses; `--batch 1` is the message-by-message path.
Messages of one conversation are learnt in order: a claim takes each waiting conversation's oldest
message, then the next ones of those conversations (bench/backlog.py: one conversation's backlog).

`--writers N` spreads the conversations over N people of the org (the owner and admins, so every message takes
the same path down the write ladder): a batch then learns for up to N writers, and the extraction context (the
names and attributes a writer may see) is read once per writer and batch, as it is in production, where one
writer a batch (the default) is the best case.

`--scale-out 1,2,4` drains the same backlog (the same mix, loaded afresh) with each number of worker
processes in turn, then again in the reverse order, and prints messages/s side by side with the ratio to
one worker, the messages left for a later claim because another worker held their subject, the failed
messages and PostgreSQL's deadlock count over the run (both must stay 0). A single count runs once: the
soak of the scale-out target is `--scale-out 4 --messages 20000`.

`--profile` also prints the statements sent by kind and the time a message in the local models, in SQL
(psycopg executing and committing) and in the rest of the Python (`breakdown`); `--profile-cpu` times
the profile by the worker's CPU clock (its SQL figure is then psycopg's own CPU, not PostgreSQL's).
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import multiprocessing as mp
import os
import pstats
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MEMORIA_BACKEND", "local")

from sqlalchemy import func, select, text  # noqa: E402

from bench.process_cpu import postmaster_pid, tree_cpu_seconds  # noqa: E402
from evals.scratch import remove_scratch, scratch_org  # noqa: E402
from jobs.outbox import CLAIM_SIZE, LINGER_POLL_SECONDS, drain_batch, pending_count  # noqa: E402
from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database  # noqa: E402
from memory_core.adapters.heap import freeze_heap  # noqa: E402
from memory_core.adapters.migrate import migrate  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.backends import get_backend  # noqa: E402
from memory_core.domain.models import Contact, Membership, Memory, Message, Outbox, UsageLedger, User  # noqa: E402
from memory_core.domain.text import fold  # noqa: E402
from memory_core.learning.ingest import ingest_message  # noqa: E402

SURNAMES = ["García", "López", "Martín", "Sánchez", "Romero", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos",
            "Gil", "Serrano", "Blanco", "Molina", "Morales", "Ortega", "Delgado", "Castro", "Ortiz", "Rubio",
            "Marín", "Sanz", "Iglesias", "Núñez", "Medina", "Garrido", "Cortés", "Castillo", "Santos", "Lozano",
            "Guerrero", "Cano", "Prieto", "Méndez", "Cruz", "Calvo", "Gallego", "Vidal", "León", "Herrera"]
CHATTER = ["gracias", "¿qué facturé en septiembre?", "vale, perfecto", "hazme la factura de la reparación",
           "¿cuánto me debe?", "ok", "mañana lo miro", "¿me recuerdas el total del trimestre?"]


def message(i: int) -> str:
    if i % 3 == 0:
        name = SURNAMES[(i // 3) % len(SURNAMES)]
        return [f"Talleres {name} paga a {30 + i % 60} días",
                f"Talleres {name} prefiere que le mandemos las facturas por email",
                f"Llámame {name}"][(i // 3) % 3]
    return CHATTER[i % len(CHATTER)]


TRADES = ["Academia", "Clínica", "Ferretería", "Transportes", "Construcciones", "Hierros", "Talleres", "Reformas"]


def setup(db, writers: int = 1, address_book: int = 0, known_names: int = 0) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A scratch org with its contacts and `writers` people who may edit every area (the owner and admins);
    `address_book` more contacts whose names share the messages' words ("Academia García 17"); `known_names`
    customers learnt without a contact, so known by name to every writer, named the same way."""
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org, user = scratch_org(s, f"bench {uuid.uuid4().hex[:6]}",
                                owner_email=f"bench-{uuid.uuid4().hex}@bench.memoria.invalid", owner_name="Bench")
        users = [user] + [User(email=f"bench-{uuid.uuid4().hex}@bench.memoria.invalid", name=f"Bench {n}")
                          for n in range(1, writers)]
        s.add_all(users[1:])
        s.flush()
        s.add_all(Membership(org_id=org.id, user_id=u.id, role="admin") for u in users[1:])
        for name in SURNAMES:
            s.add(Contact(org_id=org.id, name=f"Talleres {name} S.L.", kind="customer"))
        s.add_all(Contact(org_id=org.id, name=f"{TRADES[i % len(TRADES)]} {SURNAMES[i // len(TRADES) % len(SURNAMES)]} "
                          f"{i}", kind="customer") for i in range(address_book))
        s.add_all(Memory(org_id=org.id, level="shared", area="contacts", category="customer",
                         subject=f"name:{fold(TRADES[i % len(TRADES)])} "
                                 f"{fold(SURNAMES[i // len(TRADES) % len(SURNAMES)])} {i}",
                         attribute=attribute, value=value, sentence=f"{attribute}: {value}.")
                  for i in range(known_names)
                  for attribute, value in (("plazo_pago", f"{30 + i % 3 * 15} días"), ("persona_contacto", "Marisa")))
        uow.commit()
        return org.id, [u.id for u in users]


def writer_of(users: list[uuid.UUID], conversation: int) -> uuid.UUID:
    """Who writes in a conversation: the writers take the conversations in turn."""
    return users[conversation % len(users)]


def dump_learnt(db, org_id, users: list[uuid.UUID], path: str) -> None:
    """What was learnt, one JSON line a memory, sorted, with no ids or times (contacts by name), so two runs
    of the same backlog (this checkout and another) compare with `diff`."""
    import json

    from memory_core.domain.models import MemorySource, Notification

    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        names = {f"contact:{c.id}": f"contact:{c.name}" for c in s.scalars(select(Contact).where(
            Contact.org_id == org_id))}
        mine = (Memory.org_id == org_id) | Memory.owner_user_id.in_(users)
        sources = dict(s.execute(select(MemorySource.memory_id, func.count())
                                 .join(Memory, Memory.id == MemorySource.memory_id).where(mine)
                                 .group_by(MemorySource.memory_id)).all())
        notes = dict(s.execute(select(Notification.memory_id, func.count())
                               .join(Memory, Memory.id == Notification.memory_id).where(mine)
                               .group_by(Notification.memory_id)).all())
        lines = sorted(json.dumps({
            "level": m.level, "subject": names.get(m.subject, m.subject), "attribute": m.attribute, "value": m.value,
            "sentence": m.sentence, "category": m.category, "status": m.status, "confidence": m.confidence,
            "area": m.area, "proposal_kind": m.proposal_kind, "sources": sources.get(m.id, 0),
            "notifications": notes.get(m.id, 0), "superseded": m.superseded_by is not None,
            "embedding": None if m.embedding is None else [round(float(v), 6) for v in m.embedding[:4]],
        }, ensure_ascii=False, sort_keys=True) for m in s.scalars(select(Memory).where(mine)))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"learnt: {len(lines)} memories written to {path}")


def teardown(db, org_id, users: list[uuid.UUID]) -> None:
    remove_scratch(db, org_id, users)


def drain(db, backend, batch: int) -> int:
    """Drain until the outbox is empty; messages processed by this process (a failure retried later
    counts twice: two workers writing the same contact's fact at once make one of them retry)."""
    done, wait = 0, 0.005
    while True:
        counts = drain_batch(db, backend, limit=batch)
        if counts is None:
            # Every waiting conversation may be held by another worker: wait for it, not for nothing, and longer
            # each time, up to the RQ drain's poll (LINGER_POLL_SECONDS): a backlog's last conversations are
            # drained by one worker while the others would otherwise claim in vain every 5 ms (~300 empty
            # claims a worker on 2,000 messages in 40 conversations: 1.8 ms of CPU a message).
            if not pending_count(db):
                return done
            time.sleep(wait)
            wait = min(LINGER_POLL_SECONDS, wait * 2)
            continue
        done, wait = done + counts["done"] + counts["failed"], 0.005


def _drain_worker(batch: int, results) -> None:
    results.put(drain(get_database(), get_backend(), batch))


def drain_with_processes(db, workers: int, batch: int) -> int:
    """Drain with `workers` processes forked now (the loaded models shared, as RQ's horses share them)."""
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    db.dispose()  # no pooled connection crosses a fork
    procs = [ctx.Process(target=_drain_worker, args=(batch, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    done = sum(results.get() for _ in procs)
    for p in procs:
        p.join()
    return done


class CpuSpent:
    """CPU seconds this process (with its worker children) and the embedded PostgreSQL spent inside the
    block: a cost that the other work on a shared machine inflates far less than the wall clock."""

    def start(self) -> CpuSpent:
        self.pg = postmaster_pid(Path(get_settings().data_dir))
        self._start = (tree_cpu_seconds(os.getpid()), tree_cpu_seconds(self.pg) if self.pg > 0 else 0.0)
        return self

    def stop(self) -> None:
        self.worker = tree_cpu_seconds(os.getpid()) - self._start[0]
        self.postgres = (tree_cpu_seconds(self.pg) if self.pg > 0 else 0.0) - self._start[1]

    def __enter__(self) -> CpuSpent:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def per_message(self, messages: int) -> str:
        per = 1000 / max(1, messages)
        return (f"CPU a message: worker {self.worker * per:.2f} ms + PostgreSQL {self.postgres * per:.2f} ms "
                f"= {(self.worker + self.postgres) * per:.2f} ms")


def deadlocks(db) -> int:
    with db.unit_of_work(SYSTEM) as uow:
        return uow.session.scalar(text("select deadlocks from pg_stat_database where datname = current_database()"))


def load(db, org_id, users: list[uuid.UUID], n: int, conversations: int, tag: str) -> None:
    """n messages of the bench mix over `conversations` conversations, 200 to a transaction."""
    for start in range(0, n, 200):
        with db.unit_of_work(SYSTEM) as uow:
            for i in range(start, min(n, start + 200)):
                ingest_message(uow.session, channel="web", conversation=f"{tag}-{org_id}-{i % conversations}",
                               external_id=f"{tag}-{org_id}-{i}", org_id=org_id,
                               user_id=writer_of(users, i % conversations), phone=None,
                               role="user", text=message(i))
            uow.commit()


def scale_out(db, backend, org_id, users: list[uuid.UUID], counts: list[int], messages: int, conversations: int,
              batch: int) -> None:
    """Drain the same backlog with each worker count, forwards then backwards; print the rates side by side."""
    before = deadlocks(db)
    rates: dict[int, list[float]] = {n: [] for n in counts}
    skipped: dict[int, int] = dict.fromkeys(counts, 0)
    cpu_ms: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}  # (workers, PostgreSQL) a message
    # Each count runs twice (forwards, then backwards) when there are several to compare; one count once.
    orders = (counts, counts[::-1]) if len(counts) > 1 else (counts,)
    # First an untimed drain of the same mix: the first drain of a backlog learns what every later one merges
    # into (inserts and their index entries, against merges), so it would slow whichever count ran first.
    load(db, org_id, users, messages, conversations, "scalewarm")
    warm_started = time.perf_counter()
    warm = drain_with_processes(db, 1, batch)
    print(f"warm-up (untimed below): {warm} messages in {time.perf_counter() - warm_started:.1f} s with 1 worker")
    for round_no, order in enumerate(orders):
        for n in order:
            tag = f"scale{round_no}w{n}"
            load(db, org_id, users, messages, conversations, tag)
            started = time.perf_counter()
            with CpuSpent() as cpu:
                done = drain_with_processes(db, n, batch)
            seconds = time.perf_counter() - started
            rates[n].append(done / seconds)
            cpu_ms[n].append((cpu.worker * 1000 / max(1, done), cpu.postgres * 1000 / max(1, done)))
            with db.unit_of_work(SYSTEM) as uow:
                # A message left for a later claim was gated (and ledgered) once more when it was learnt.
                skipped[n] += uow.session.scalar(
                    select(func.count()).select_from(UsageLedger).join(Message, Message.id == UsageLedger.message_id)
                    .where(Message.org_id == org_id, Message.external_id.like(f"{tag}-%"),
                           UsageLedger.purpose == "gate")) - done
    with db.unit_of_work(SYSTEM) as uow:
        failed = uow.session.scalar(select(func.count()).select_from(Outbox).join(
            Message, Message.id == Outbox.message_id).where(Message.org_id == org_id, Outbox.attempts > 0))
    one = statistics.mean(rates[counts[0]])
    runs = "each count run twice, forwards then backwards" if len(orders) > 1 else "one run"
    print(f"scale-out ({messages} messages over {conversations} conversations per run, batch {batch}, {runs}; "
          f"load average {os.getloadavg()[0]:.1f} at the end):")
    print("  workers | messages/s (runs)        | mean  | vs 1 worker | left for a later claim | CPU ms a message "
          "(workers + PostgreSQL)")
    for n in counts:
        mean = statistics.mean(rates[n])
        runs = ", ".join(f"{r:.1f}" for r in rates[n])
        workers, postgres = (statistics.mean(side) for side in zip(*cpu_ms[n]))
        print(f"  {n:7d} | {runs:24s} | {mean:5.1f} | {mean / one:10.2f}x | {skipped[n]:22d} | "
              f"{workers:.2f} + {postgres:.2f} = {workers + postgres:.2f}")
    print(f"  failed messages: {failed}; deadlocks in PostgreSQL during the run: {deadlocks(db) - before}")


def drain_with_rq(db, workers: int, cpu: CpuSpent) -> tuple[int, float]:
    """Start `workers` real RQ worker processes, wait until their models are loaded, queue one drain job
    per worker: messages drained and seconds from the enqueue to an empty outbox. `cpu` starts counting at
    the enqueue (loading the models is a worker's one-off cost, not a message's)."""
    import subprocess

    from rq import Worker

    from jobs.outbox import drain_outbox
    from memory_core.adapters.queue import get_queue

    queue = get_queue()
    before = pending_count(db)
    procs = [subprocess.Popen([sys.executable, "-m", "app", "worker"], cwd=Path(__file__).resolve().parents[1],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(workers)]
    try:
        # A worker registers once `run_worker` has preloaded the backend and RQ started listening.
        deadline = time.monotonic() + 300
        while len(Worker.all(queue=queue)) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                sys.exit("the RQ workers did not start")
            time.sleep(0.1)
        started = time.perf_counter()
        cpu.start()
        for _ in range(workers):
            queue.enqueue(drain_outbox)
        while pending_count(db):
            time.sleep(0.1)  # the count costs PostgreSQL CPU too: polled often, it weighed on the figure
        seconds = time.perf_counter() - started
        cpu.stop()  # while the workers live: a process that ended no longer counts
    finally:
        for p in procs:
            p.terminate()  # warm shutdown: a horse finishes its job
        for p in procs:
            p.wait(timeout=60)
    return before, seconds


# The profile's per-message breakdown: the local models (the gate's classifiers and sentence encoder,
# the ONNX embedder), the database round trips (psycopg executing and committing), the rest is Python.
MODEL_FUNCTIONS = {("local_gate.py", "decide_texts"), ("local_embedder.py", "embed_array")}
SQL_FUNCTIONS = {("psycopg/cursor.py", "execute"), ("psycopg/cursor.py", "executemany"),
                 ("psycopg/connection.py", "commit"), ("psycopg/connection.py", "rollback")}


def breakdown(stats: pstats.Stats, seconds: float, messages: int, statements: int) -> str:
    """Milliseconds a message in the models, in SQL and in the rest, from the profile's inclusive times."""
    def inclusive(names) -> float:
        return sum(ct for (path, _, name), (_, _, _, ct, _) in stats.stats.items()
                   if any(path.endswith(f) and name == n for f, n in names))
    models, sql = inclusive(MODEL_FUNCTIONS), inclusive(SQL_FUNCTIONS)
    per = 1000 / max(1, messages)
    return (f"per message: {seconds * per:.2f} ms = models {models * per:.2f} ms + SQL {sql * per:.2f} ms "
            f"({statements / max(1, messages):.2f} statements) + other Python {(seconds - models - sql) * per:.2f} ms "
            "(profiled, so slower than unprofiled)")


class StatementCount:
    """Statements sent to PostgreSQL while active, by their first words (the profile's SQL tally)."""

    def __init__(self, engine):
        from collections import Counter

        from sqlalchemy import event

        self.engine, self.by_kind, self.event = engine, Counter(), event

    def _count(self, conn, cursor, statement, parameters, context, executemany):
        words = " ".join(statement.split()[:4])[:60]
        self.by_kind[re.sub(r"sa_savepoint_\d+", "sa_savepoint_N", words)] += 1

    def __enter__(self):
        self.event.listen(self.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc):
        self.event.remove(self.engine, "before_cursor_execute", self._count)

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--conversations", type=int, default=20, help="the messages are spread over this many")
    parser.add_argument("--writers", type=int, default=1,
                        help="people writing, each in their own conversations (a batch then learns for several)")
    parser.add_argument("--address-book", type=int, default=0, metavar="N",
                        help="N more contacts, whose names share the messages' words (an org's big address book)")
    parser.add_argument("--known-names", type=int, default=0, metavar="N",
                        help="N customers learnt by name (two facts each), whose names share the messages' words")
    parser.add_argument("--batch", type=int, default=CLAIM_SIZE, help="rows claimed and gated together")
    parser.add_argument("--scale-out", metavar="COUNTS",
                        help="drain the same backlog with each of these worker counts (e.g. 1,2,4), side by side")
    parser.add_argument("--profile", action="store_true", help="print the 25 costliest functions (1 worker)")
    parser.add_argument("--profile-out", metavar="PATH", help="with --profile: also write the raw profile here")
    parser.add_argument("--profile-cpu", action="store_true",
                        help="with --profile: time the functions by this process's CPU clock, not the wall clock "
                             "(a loaded machine's waits for PostgreSQL and the CPU then drop out of the tables)")
    parser.add_argument("--dump", metavar="PATH",
                        help="write what was learnt (one JSON line a memory, sorted, no ids) to PATH, to diff runs")
    parser.add_argument("--rq", action="store_true",
                        help="drain through real RQ workers (`app worker`: models preloaded, a forked horse per job)")
    args = parser.parse_args()
    start_servers()  # a bench runs alone: it starts the embedded servers it needs (and leaves them running)
    migrate()
    db, backend = get_database(), get_backend()
    started = time.perf_counter()
    backend.warm_up()
    freeze_heap()  # as `memoria worker` does once its models are loaded
    print(f"backend {backend.name}: gate + embedder loaded in {time.perf_counter() - started:.1f} s "
          f"(embed model {backend.embed_model})")
    with db.unit_of_work(SYSTEM) as uow:
        if uow.session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None))):
            sys.exit("the outbox has pending rows: run the bench on a database with no live traffic")
    org_id, users = setup(db, args.writers, args.address_book, args.known_names)
    if args.scale_out:
        try:
            scale_out(db, backend, org_id, users, [int(n) for n in args.scale_out.split(",")], args.messages,
                      args.conversations, args.batch)
        finally:
            teardown(db, org_id, users)
        return
    try:
        latencies = []
        for i in range(args.messages):
            t = time.perf_counter()
            with db.unit_of_work(SYSTEM) as uow:
                ingest_message(uow.session, channel="web", conversation=f"bench-{org_id}-{i % args.conversations}",
                               external_id=f"bench-{org_id}-{i}", org_id=org_id,
                               user_id=writer_of(users, i % args.conversations), phone=None,
                               role="user", text=message(i))
                uow.commit()
            latencies.append((time.perf_counter() - t) * 1000)
        print(f"ingest: {args.messages} messages, latency p50 {percentile(latencies, 50):.2f} ms, "
              f"p95 {percentile(latencies, 95):.2f} ms, mean {statistics.mean(latencies):.2f} ms")

        t = time.perf_counter()
        rq_seconds = None
        cpu = CpuSpent().start()
        if args.rq:
            done, rq_seconds = drain_with_rq(db, args.workers, cpu)
        elif args.workers == 1:
            profiler = (cProfile.Profile(time.process_time) if args.profile_cpu else cProfile.Profile()) \
                if args.profile else None
            counting = StatementCount(db.system_engine or db.engine) if args.profile else contextlib.nullcontext()
            with counting as statements:
                if profiler:
                    profiler.enable()
                done = drain(db, backend, args.batch)
                if profiler:
                    profiler.disable()
        else:
            done = drain_with_processes(db, args.workers, args.batch)
        seconds = rq_seconds or time.perf_counter() - t
        if not args.rq:
            cpu.stop()
        with db.unit_of_work(SYSTEM) as uow:
            learnt = uow.session.scalar(select(func.count()).select_from(Memory).where(
                (Memory.org_id == org_id) | Memory.owner_user_id.in_(users)))
            retried = uow.session.scalar(select(func.count()).select_from(Outbox).join(
                Message, Message.id == Outbox.message_id).where(Message.org_id == org_id, Outbox.attempts > 0))
        print(f"{'RQ ' if args.rq else ''}worker ({args.workers} process{'es' if args.workers > 1 else ''}, "
              f"batch {CLAIM_SIZE if args.rq else args.batch}, "
              f"{args.conversations} conversations, {args.writers} writer{'s' if args.writers > 1 else ''}): "
              f"{done} messages in {seconds:.2f} s "
              f"= {done / seconds:.1f} messages/s through embed, gate, policy, extraction and write "
              f"({learnt} memories written or versioned; {retried} messages failed once and were retried "
              f"after their backoff)")
        print(f"{cpu.per_message(done)} (load average {os.getloadavg()[0]:.1f})")
        if args.profile and args.workers == 1:
            stats = pstats.Stats(profiler)
            if args.profile_out:
                stats.dump_stats(args.profile_out)
            stats.sort_stats("cumulative").print_stats(25)
            stats.sort_stats("tottime").print_stats(25)
            print("statements by kind:", ", ".join(f"{k!r} {n}" for k, n in statements.by_kind.most_common(20)))
            print(breakdown(stats, stats.total_tt if args.profile_cpu else seconds, done, statements.total))
        if args.dump:
            dump_learnt(db, org_id, users, args.dump)
    finally:
        teardown(db, org_id, users)


if __name__ == "__main__":
    main()
