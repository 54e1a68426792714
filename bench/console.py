"""Console latency: p50/p95 of the review queue, the memory list and a memory page, on a big org.

Loads one org with N memories and M pending proposals by COPY (default 1,000,000 and 100,000), then
times the real Flask views through the test client, signed in as an admin and as a member (RLS on,
CSRF on, the app's restricted role). Aim: p95 <= 150 ms.

    .venv/bin/python bench/console.py                      # full size, embedded PostgreSQL in a temp dir
    .venv/bin/python bench/console.py --memories 100000 --proposals 10000 --requests 50
    DATABASE_URL=postgresql://... .venv/bin/python bench/console.py   # any server you point it at

Prints one JSON object with the sizes, load time and per-page p50/p95 in milliseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=1_000_000)
    ap.add_argument("--proposals", type=int, default=100_000)
    ap.add_argument("--contacts", type=int, default=1_000)
    ap.add_argument("--requests", type=int, default=200, help="timed requests per page and role")
    ap.add_argument("--data-dir", help="embedded PostgreSQL data dir (default: a fresh temp dir)")
    ap.add_argument("--keep-running", action="store_true", help="leave the embedded server up (to EXPLAIN)")
    args = ap.parse_args()
    scratch = None
    if not os.environ.get("DATABASE_URL") and not os.environ.get("MEMORIA_DATA_DIR"):
        scratch = None if args.data_dir else tempfile.mkdtemp(prefix="memoria-bench-console-")
        os.environ["MEMORIA_DATA_DIR"] = args.data_dir or scratch
    os.environ.setdefault("MEMORIA_SECURE_COOKIES", "0")
    os.environ.setdefault("MEMORIA_BACKEND", "local")

    from memory_core.adapters.config import get_settings
    from memory_core.adapters.migrate import migrate

    settings = get_settings()
    handle = None
    if not settings.database_url:
        from memory_core.adapters.runtime import start_postgres

        handle = start_postgres(settings.data_dir)
    try:
        migrate(settings)
        world, load_s = load(settings, args)
        report = {"memories": args.memories, "proposals": args.proposals, "contacts": args.contacts,
                  "load_seconds": round(load_s, 1), "requests_per_page": args.requests, "pages": {}}
        report["pages"] = measure(settings, world, args.requests)
        print(json.dumps(report, indent=2))
    finally:
        if handle is not None and handle.started_here and not args.keep_running:
            handle.stop()
            if scratch:
                import shutil

                shutil.rmtree(scratch, ignore_errors=True)  # a million rows: ~2 GB we made only to time


def load(settings, args):
    """Create the org, users and contacts, then COPY memories and proposals in; ANALYZE."""
    import psycopg

    from memory_core.adapters.db import resolve_urls
    from memory_core.adapters.security import hash_password

    owner_url = resolve_urls(settings).owner.replace("postgresql+psycopg://", "postgresql://")
    started = time.perf_counter()
    org, admin, member = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    pw = hash_password("bench-pass")
    with psycopg.connect(owner_url, autocommit=True) as c:
        c.execute("insert into organizations (id, name) values (%s, 'Bench S.L.')", (org,))
        for uid, email in ((admin, "admin"), (member, "member")):
            c.execute("insert into users (id, email, name, password_hash) values (%s, %s, %s, %s)",
                      (uid, f"{email}-{org}@bench.test", email.title(), pw))
        c.execute("insert into memberships (org_id, user_id, role, permissions) values (%s, %s, 'admin', '{}'),"
                  " (%s, %s, 'member', '{\"contacts\": \"read\"}')", (org, admin, org, member))
        contacts = [uuid.uuid4() for _ in range(args.contacts)]
        with c.cursor().copy("copy contacts (id, org_id, name, tax_id, kind) from stdin") as cp:
            for i, cid in enumerate(contacts):
                cp.write_row((cid, org, f"Cliente {i} S.L.", f"B{i:08d}", "customer" if i % 3 else "supplier"))
        rnd = random.Random(7)
        words = ("paga", "entrega", "factura", "cuenta", "email", "martes", "jueves", "pedido", "descuento", "plazo")
        cols = ("org_id, level, owner_user_id, area, category, subject, attribute, value, sentence, status, "
                "proposal_kind, proposal_rule, author_user_id, created_at, valid_from")
        with c.cursor().copy(f"copy memories ({cols}) from stdin") as cp:
            for i in range(args.memories):
                contact = contacts[i % len(contacts)]
                # one in ten is an older, superseded version; the active ones are unique per fact
                status = "superseded" if i % 10 == 0 else "active"
                level, owner = ("private", member) if i % 50 == 1 else ("shared", None)
                area = "contacts" if i % 4 else "company"
                at = f"2026-{1 + i % 11:02d}-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:00+00"
                w = " ".join(rnd.choice(words) for _ in range(5))
                cp.write_row((org, level, owner, area, "customer", f"contact:{contact}", f"a{i // len(contacts)}",
                              f"valor {i}", f"Cliente {i % len(contacts)} {w} {i}.", status, None, None, admin, at, at))
            kinds = ("bank_account", "confirmation", "low_permission")
            for i in range(args.proposals):
                contact = contacts[i % len(contacts)]
                at = f"2026-11-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:{i % 60:02d}+00"
                kind = kinds[i % 3]
                author = member if kind != "bank_account" else admin
                cp.write_row((org, "shared", None, "contacts", "customer", f"contact:{contact}", f"p{i}",
                              f"propuesta {i}", f"Propuesta {i}: {rnd.choice(words)}.", "proposed", kind,
                              "bench rule", author, at, at))
        c.execute("vacuum analyze memories")
        c.execute("analyze contacts")
    return {"org": org, "admin": f"admin-{org}@bench.test", "member": f"member-{org}@bench.test",
            "contacts": contacts}, time.perf_counter() - started


def _pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))], 1)


def measure(settings, world, n: int) -> dict:
    """Time each page as admin and as member through the real app (test client, CSRF on)."""
    import re

    from sqlalchemy import create_engine, text

    from app import create_app
    from memory_core.adapters.db import resolve_urls

    app = create_app({"TESTING": True, "SESSION_COOKIE_SECURE": False}, settings=settings)
    engine = create_engine(resolve_urls(settings).owner)
    with engine.connect() as c:
        memory_ids = c.execute(text("select id from memories where org_id = :o and status = 'active' and level = "
                                    "'shared' order by random() limit 500"), {"o": world["org"]}).scalars().all()
    engine.dispose()
    out = {}
    for role in ("admin", "member"):
        client = app.test_client()
        page = client.get("/login").get_data(as_text=True)
        token = re.search(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"', page).group(1)
        resp = client.post("/login", data={"email": world[role], "password": "bench-pass", "csrf_token": token})
        assert resp.status_code == 302, resp.status_code
        contact = world["contacts"][3]
        pages = {
            "review_queue": lambda i: "/review/",
            "review_queue_low_permission": lambda i: "/review/?kind=low_permission",
            "memory_list": lambda i: "/memories",
            "memory_list_by_contact": lambda i, contact=contact: f"/memories?contact={contact}",
            "memory_list_search": lambda i: "/memories?q=descuento",  # a common word
            "memory_list_search_rare": lambda i: f"/memories?q={123457 + i}",  # matches one row
            "memory_page": lambda i: f"/memories/{memory_ids[i % len(memory_ids)]}",
        }
        for name, url in pages.items():
            for i in range(5):  # warm the pool and the caches
                client.get(url(i))
            samples = []
            for i in range(n):
                t0 = time.perf_counter()
                resp = client.get(url(i))
                samples.append((time.perf_counter() - t0) * 1000)
                if resp.status_code not in (200, 404):
                    raise SystemExit(f"{role} {url(i)} answered {resp.status_code}")
            out[f"{role}.{name}"] = {"p50_ms": _pct(samples, 50), "p95_ms": _pct(samples, 95)}
    return out


if __name__ == "__main__":
    main()
