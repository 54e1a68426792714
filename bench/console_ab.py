"""Console latency, old code against new, interleaved: two checkouts time the same pages on one loaded database.

On a shared machine two runs a minute apart see different loads, so comparing two `bench/console.py` runs
measures the machine. Here each checkout's app runs in its own process (the real views, the test client, RLS
and CSRF on, signed in as every role) and the two take turns, a few requests at a time, page by page and role by
role, alternating which goes first: both see the same load. Load the database once with bench/console.py:

    .venv/bin/python bench/console.py --memories 200000 --data-dir .memoria-bench --keep-running --requests 5
    git worktree add ../base main   # or: mkdir ../base && git archive main | tar -x -C ../base
    .venv/bin/python bench/console_ab.py ../base . --data-dir .memoria-bench --rounds 6 --batch 6
    .venv/bin/python bench/console_ab.py ../base . --data-dir .memoria-bench --pages my_memory,review_queue

Prints per page and role the p50 and p95 of each side (the first request of each batch is dropped), the p50 of the
app process's own CPU time a request (what Python, the templates and the driver cost, apart from the database and
from waiting for a core) and the statements a request, and the machine's load average at each round. Both checkouts
must read the same schema (the same migration head).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROLES = ("admin", "member", "staff", "privacy", "platform")
PAGES = ("home", "review_queue", "review_queue_low_permission", "review_decided", "review_proposal", "memory_list",
         "memory_list_by_contact", "memory_list_search", "memory_list_search_rare", "memory_page", "contacts",
         "contacts_search", "contact_page", "my_memory", "traces", "traces_used", "trace_page", "audit", "audit_search",
         "jobs", "usage", "privacy_requests", "privacy_request", "platform_orgs", "platform_people", "platform_keys",
         "people", "settings", "api_keys")


def worker(tree: str, data_dir: str) -> None:
    """One side: `tree`'s app on the loaded database; reads 'role page n' lines, answers [[status, ms], ...]."""
    os.environ["MEMORIA_DATA_DIR"] = str(Path(data_dir).resolve())  # before chdir: relative to where we started
    sys.path.insert(0, str(Path(tree).resolve()))
    os.chdir(tree)
    os.environ.setdefault("MEMORIA_SECURE_COOKIES", "0")
    os.environ.setdefault("MEMORIA_BACKEND", "local")
    from sqlalchemy import create_engine, event, text
    from sqlalchemy.engine import Engine

    from app import served_app
    from bench.console import page_urls, reused, signed_in
    from memory_core.adapters.config import get_settings
    from memory_core.adapters.db import resolve_urls
    from memory_core.adapters.runtime import start_postgres, start_redis

    settings = get_settings()
    if not settings.database_url:
        start_postgres(settings.data_dir)
    if not settings.redis_url:
        start_redis(settings.data_dir)
    world, _ = reused(settings, argparse.Namespace())
    app = served_app(settings, {"TESTING": True, "SESSION_COOKIE_SECURE": False})
    engine = create_engine(resolve_urls(settings).owner)
    with engine.connect() as c:  # the same rows on both sides: ordered by id, not at random
        memory_ids = c.execute(text("select id from memories where org_id = :o and status = 'active' and level = "
                                    "'shared' order by id limit 500"), {"o": world["org"]}).scalars().all()
        proposal_ids = c.execute(text("select id from memories where org_id = :o and status = 'proposed' "
                                      "order by id limit 200"), {"o": world["org"]}).scalars().all()
        trace_ids = c.execute(text("select id from memory_traces where org_id = :o order by id limit 200"),
                              {"o": world["org"]}).scalars().all()
        request_ids = c.execute(text("select id from privacy_requests where org_id = :o order by id limit 200"),
                                {"o": world["org"]}).scalars().all()
    engine.dispose()
    urls, clients = page_urls(world, memory_ids=memory_ids, proposal_ids=proposal_ids, trace_ids=trace_ids,
                              request_ids=request_ids), {}
    for role in ROLES:
        clients[role] = signed_in(app, world[role])
    statements = [0]
    event.listen(Engine, "before_cursor_execute", lambda *_: statements.__setitem__(0, statements[0] + 1))
    print("ready", flush=True)
    for line in sys.stdin:
        role, page, n = line.split()
        url, client, out = urls[page], clients[role], []
        for i in range(int(n)):
            statements[0] = 0
            t0, cpu0 = time.perf_counter(), time.thread_time()
            status = client.get(url(i)).status_code
            # wall ms, this process's CPU ms (Python, templates, the driver: not the database nor waiting
            # for a core), statements
            out.append((status, (time.perf_counter() - t0) * 1000, (time.thread_time() - cpu0) * 1000,
                        statements[0]))
        print(json.dumps(out), flush=True)


def _pct(xs: list[float], q: float) -> float | None:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))], 1) if xs else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", nargs="?", help="the old checkout")
    ap.add_argument("new", nargs="?", help="the new checkout")
    ap.add_argument("--data-dir", required=True, help="the embedded PostgreSQL data dir bench/console.py loaded")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--batch", type=int, default=6, help="requests a side takes in a turn (the first is dropped)")
    ap.add_argument("--pages", help="comma-separated pages (default: all)")
    ap.add_argument("--roles", default=",".join(ROLES))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.data_dir)
    pages = args.pages.split(",") if args.pages else PAGES
    data_dir = str(Path(args.data_dir).resolve())
    if not os.environ.get("DATABASE_URL") and not (Path(data_dir) / "pg").is_dir():
        raise SystemExit(f"{data_dir}: no database loaded there (run bench/console.py with --data-dir first)")
    sides = {name: subprocess.Popen([sys.executable, __file__, "--worker", tree, "--data-dir", data_dir],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for name, tree in (("old", args.base), ("new", args.new))}
    for p in sides.values():
        assert p.stdout.readline().strip() == "ready", "a side did not start"
    samples: dict = {}
    started, loads = time.time(), []
    for r in range(args.rounds):
        loads.append(Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?")
        for role in args.roles.split(","):
            for page in pages:
                if samples.get((role, page)) == "skip":
                    continue
                for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    sides[name].stdin.write(f"{role} {page} {args.batch}\n")
                    sides[name].stdin.flush()
                    got = json.loads(sides[name].stdout.readline())
                    if r == 0 and got[0][0] != 200:  # not this role's page (302, 403, 404)
                        samples[(role, page)] = "skip"
                        break
                    samples.setdefault((role, page), {}).setdefault(name, []).extend(
                        (ms, cpu, n) for status, ms, cpu, n in got[1:] if status == 200)
    for p in sides.values():
        p.stdin.close()
        p.wait()
    print(f"{args.rounds} rounds x {args.batch} requests a turn, load average at each round: {' '.join(loads)}, "
          f"{time.time() - started:.0f} s")
    print("wall ms p50/p95; cpu: p50 of the app process's own CPU ms a request (Python, templates, driver); stmts: SQL"
          " statements a request (the most seen)")
    print(f"{'page':38} {'p50 old':>8} {'p50 new':>8} {'p95 old':>8} {'p95 new':>8} {'cpu old':>8} {'cpu new':>8}"
          f" {'stmts':>7} {'n':>4}")
    rows = []
    for (role, page), v in samples.items():
        if v == "skip":
            continue
        col = {side: [list(x) for x in zip(*v.get(side, []))] or [[], [], []] for side in ("old", "new")}
        rows.append((f"{role}.{page}", _pct(col["old"][0], 50), _pct(col["new"][0], 50), _pct(col["old"][0], 95),
                     _pct(col["new"][0], 95), _pct(col["old"][1], 50), _pct(col["new"][1], 50),
                     f"{max(col['old'][2], default=0)}→{max(col['new'][2], default=0)}", len(col["new"][0])))
    for row in sorted(rows, key=lambda r: -(r[3] or 0)):
        print(f"{row[0]:38} {row[1]!s:>8} {row[2]!s:>8} {row[3]!s:>8} {row[4]!s:>8} {row[5]!s:>8} {row[6]!s:>8}"
              f" {row[7]:>7} {row[8]:>4}")


if __name__ == "__main__":
    main()
