"""Worker throughput and ingest latency of the learning pipeline (local backend), printed.

    python bench/pipeline.py [--messages 600] [--workers 1] [--profile]

Uses the configured servers (DATABASE_URL/REDIS_URL, or the embedded ones in MEMORIA_DATA_DIR). It
creates a scratch org with 40 contacts, ingests a realistic mix (about a third carry a fact; the rest
are questions, orders and small talk), drains the outbox with the real worker code, then removes the
scratch org. Figures: ingest latency p50/p95 (one message + its outbox row, committed), worker
throughput in messages/s through embedding, gate, policy, extraction and write, and the per-stage
split.
"""
from __future__ import annotations

import argparse
import cProfile
import multiprocessing as mp
import os
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MEMORIA_BACKEND", "local")

from sqlalchemy import delete, func, select  # noqa: E402

from jobs.outbox import drain_once  # noqa: E402
from memory_core.backends import get_backend  # noqa: E402
from memory_core.db import SYSTEM, get_database  # noqa: E402
from memory_core.ingest import ingest_message  # noqa: E402
from memory_core.migrate import migrate  # noqa: E402
from memory_core.models import Contact, Membership, Memory, Organization, Outbox, User  # noqa: E402

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


def setup(db) -> tuple[uuid.UUID, uuid.UUID]:
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = Organization(name=f"bench {uuid.uuid4().hex[:6]}")
        user = User(email=f"bench-{uuid.uuid4().hex}@bench.memoria.invalid", name="Bench")
        s.add_all([org, user])
        s.flush()
        s.add(Membership(org_id=org.id, user_id=user.id, role="owner"))
        for name in SURNAMES:
            s.add(Contact(org_id=org.id, name=f"Talleres {name} S.L.", kind="customer"))
        uow.commit()
        return org.id, user.id


def teardown(db, org_id, user_id) -> None:
    with db.unit_of_work(SYSTEM) as uow:
        uow.session.execute(delete(Memory).where(Memory.owner_user_id == user_id))
        uow.session.execute(delete(Organization).where(Organization.id == org_id))
        uow.session.execute(delete(User).where(User.id == user_id))
        uow.commit()


def _drain_worker(org_id: str, results) -> None:
    """One worker process: drain until nothing of this org is left."""
    db, backend = get_database(), get_backend()
    done = 0
    while drain_once(db, backend) is not None:
        done += 1
    results.put(done)


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="print the 25 costliest functions (1 worker)")
    args = parser.parse_args()
    migrate()
    db, backend = get_database(), get_backend()
    started = time.perf_counter()
    backend.warm_up()
    print(f"backend {backend.name}: gate + embedder loaded in {time.perf_counter() - started:.1f} s "
          f"(embed model {backend.embed_model})")
    with db.unit_of_work(SYSTEM) as uow:
        if uow.session.scalar(select(func.count()).select_from(Outbox).where(Outbox.processed_at.is_(None))):
            sys.exit("the outbox has pending rows: run the bench on a database with no live traffic")
    org_id, user_id = setup(db)
    try:
        latencies = []
        for i in range(args.messages):
            t = time.perf_counter()
            with db.unit_of_work(SYSTEM) as uow:
                ingest_message(uow.session, channel="web", conversation=f"bench-{org_id}-{i % 20}",
                               external_id=f"bench-{org_id}-{i}", org_id=org_id, user_id=user_id, phone=None,
                               role="user", text=message(i))
                uow.commit()
            latencies.append((time.perf_counter() - t) * 1000)
        print(f"ingest: {args.messages} messages, latency p50 {percentile(latencies, 50):.2f} ms, "
              f"p95 {percentile(latencies, 95):.2f} ms, mean {statistics.mean(latencies):.2f} ms")

        t = time.perf_counter()
        if args.workers == 1:
            profiler = cProfile.Profile() if args.profile else None
            if profiler:
                profiler.enable()
            done = 0
            while drain_once(db, backend) is not None:
                done += 1
            if profiler:
                profiler.disable()
        else:
            ctx = mp.get_context("fork")
            results = ctx.Queue()
            db.dispose()  # no pooled connection crosses a fork
            procs = [ctx.Process(target=_drain_worker, args=(str(org_id), results)) for _ in range(args.workers)]
            for p in procs:
                p.start()
            for p in procs:
                p.join()
            done = sum(results.get() for _ in procs)
        seconds = time.perf_counter() - t
        with db.unit_of_work(SYSTEM) as uow:
            learnt = uow.session.scalar(select(func.count()).select_from(Memory).where(
                (Memory.org_id == org_id) | (Memory.owner_user_id == user_id)))
        print(f"worker ({args.workers} process{'es' if args.workers > 1 else ''}): {done} messages in {seconds:.2f} s "
              f"= {done / seconds:.1f} messages/s through embed, gate, policy, extraction and write "
              f"({learnt} memories written or versioned)")
        if args.profile and args.workers == 1:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    finally:
        teardown(db, org_id, user_id)


if __name__ == "__main__":
    main()
