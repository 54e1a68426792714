"""Each console page's statements as kept prepared statements, under generic vs custom plans (issue 17).

For every page and role, one request's statements are captured (the real views, signed in through the login
form), then replayed in one transaction on the app's own role and connection (row security on, the scopes the
page set, set again in order): each read is prepared and run under `plan_cache_mode` force_generic_plan and
force_custom_plan, the best of three runs each after one to warm. Load the database with bench/console.py first:

    .venv/bin/python bench/console_plans.py --data-dir .memoria-bench [--pages audit,my_memory] [--roles admin]

Prints one line a statement: page, role, generic ms, custom ms, ratio (custom/generic: > 1 means generic wins)
and the statement's start.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _best(cur, statement: str, params, mode: str, runs: int = 3) -> float:
    cur.execute("select set_config('plan_cache_mode', %s, true)", (mode,))
    cur.execute(statement, params, prepare=True)
    cur.fetchall()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        cur.execute(statement, params, prepare=True)
        cur.fetchall()
        best = min(best, (time.perf_counter() - t0) * 1000)
    return best


def _explained(cur, statement: str, params) -> str:
    """EXPLAIN ANALYZE of the statement as psycopg prepared it, under a generic plan and then a custom one."""
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", statement)))
    numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", statement).replace("%%", "%")
    name = cur.execute("select name from pg_prepared_statements where statement = %s", (numbered,)).fetchone()[0]
    out = [statement, str(params)]
    for mode in ("force_generic_plan", "force_custom_plan"):
        cur.execute("select set_config('plan_cache_mode', %s, true)", (mode,))
        args = ", ".join("%s" for _ in names)
        client = psycopg.ClientCursor(cur.connection)  # the values as literals: EXECUTE's arguments take no $n
        client.execute(f"explain (analyze, buffers) execute {name}({args})", [params[n] for n in names])
        out += [f"-- {mode}"] + [r[0] for r in client.fetchall()]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--pages", help="comma-separated pages (default: all)")
    ap.add_argument("--roles", default="admin,member,staff,privacy,platform")
    ap.add_argument("--explain", action="store_true",
                    help="also print EXPLAIN ANALYZE of both plans of each statement whose generic plan loses")
    ap.add_argument("--explain-over", type=float, metavar="MS",
                    help="also print them for every statement whose generic plan takes more than MS")
    args = ap.parse_args()
    os.environ["MEMORIA_DATA_DIR"] = str(Path(args.data_dir).resolve())
    os.environ.setdefault("MEMORIA_SECURE_COOKIES", "0")
    os.environ.setdefault("MEMORIA_BACKEND", "local")
    from sqlalchemy import create_engine, event, text

    from app import create_app
    from bench.console import page_urls, reused, signed_in
    from bench.console_ab import PAGES
    from memory_core.adapters.config import get_settings
    from memory_core.adapters.db import resolve_urls
    from memory_core.adapters.runtime import start_postgres, start_redis

    settings = get_settings()
    start_postgres(settings.data_dir)
    start_redis(settings.data_dir)
    world, _ = reused(settings, argparse.Namespace())
    app = create_app({"TESTING": True, "SESSION_COOKIE_SECURE": False}, settings=settings)
    owner = create_engine(resolve_urls(settings).owner)
    with owner.connect() as c:
        ids = {name: c.execute(text(sql), {"o": world["org"]}).scalars().all() for name, sql in (
            ("memory_ids", "select id from memories where org_id = :o and status = 'active' and level = 'shared'"
                           " order by id limit 50"),
            ("proposal_ids", "select id from memories where org_id = :o and status = 'proposed' order by id limit 50"),
            ("trace_ids", "select id from memory_traces where org_id = :o order by id limit 50"),
            ("request_ids", "select id from privacy_requests where org_id = :o order by id limit 50"))}
    owner.dispose()
    urls = page_urls(world, **ids)
    engine = app.extensions["memoria.db"].engine
    sent: list[tuple] = []
    event.listen(engine, "before_cursor_execute", lambda conn, cur, st, p, ctx, many: sent.append((st, p)))
    for role in args.roles.split(","):
        client = signed_in(app, world[role])
        for page in args.pages.split(",") if args.pages else PAGES:
            client.get(urls[page](1))
            sent.clear()
            status = client.get(urls[page](2)).status_code
            if status != 200:
                continue
            captured = list(sent)
            raw = engine.raw_connection()
            try:
                cur = raw.driver_connection.cursor()
                for statement, params in captured:
                    head = " ".join(statement.split())[:150]
                    if "set_config" in statement or not head.upper().startswith(("SELECT", "WITH")):
                        if "plan_cache_mode" not in statement and head.upper().startswith(("SELECT", "SET")):
                            cur.execute(statement, params)
                        continue
                    g = _best(cur, statement, params, "force_generic_plan")
                    c = _best(cur, statement, params, "force_custom_plan")
                    print(f"{page:28s} {role:8s} gen {g:7.2f} cust {c:7.2f} x{c / g:5.1f}  {head}", flush=True)
                    if (args.explain and g > c) or (args.explain_over is not None and g > args.explain_over):
                        print(_explained(cur, statement, params), flush=True)
                raw.driver_connection.rollback()
            finally:
                raw.close()


if __name__ == "__main__":
    main()
