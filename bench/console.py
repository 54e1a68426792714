"""Console latency: p50/p95 of every console page for every role, on a big org.

Loads one org with N memories and M pending proposals by COPY (default 1,000,000 and 100,000), plus
traces, audit entries, job runs and privacy requests, then times every page through the real Flask
views and the test client, signed in as an org admin, an org member, platform staff, a privacy officer
and a platform admin (RLS on, CSRF on, the app's restricted role). A page a role may not open (403/404)
is left out of that role's figures. Aim (issue 17): p95 <= 50 ms for every page and role.

    .venv/bin/python bench/console.py                      # full size, embedded PostgreSQL in a temp dir
    .venv/bin/python bench/console.py --memories 100000 --proposals 10000 --traces 5000 --requests 20
    DATABASE_URL=postgresql://... .venv/bin/python bench/console.py   # any server you point it at
    # load once and keep it, then time old and new code on the same rows (run the other checkout's copy
    # of this file with the same --data-dir); --statements counts each page's SQL, --explain 20 plans the slow ones
    .venv/bin/python bench/console.py --memories 200000 --data-dir .memoria-bench --keep-running --requests 5
    .venv/bin/python bench/console.py --data-dir .memoria-bench --reuse --statements [--explain 20] [--only review]

Prints one JSON object with the sizes, load time and per-page p50/p95 in milliseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
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
    ap.add_argument("--traces", type=int, default=50_000, help="memory traces (5 items each) and audit entries")
    ap.add_argument("--requests", type=int, default=100, help="timed requests per page and role")
    ap.add_argument("--only", help="only pages whose name contains this")
    ap.add_argument("--data-dir", help="embedded PostgreSQL data dir (default: a fresh temp dir)")
    ap.add_argument("--keep-running", action="store_true", help="leave the embedded server up (to EXPLAIN)")
    ap.add_argument("--statements", action="store_true",
                    help="also count each page's SQL statements, its SQL, template and other time, and show its three"
                         " slowest statements (the median of five untimed requests)")
    ap.add_argument("--explain", type=float, metavar="MS",
                    help="with --statements: print EXPLAIN (ANALYZE, BUFFERS) of every statement slower than MS")
    ap.add_argument("--profile", type=int, metavar="N", default=0,
                    help="also run cProfile over N more requests of each page and print its N heaviest functions")
    ap.add_argument("--roles", default="admin,member,staff,privacy,platform", help="comma-separated roles to time")
    ap.add_argument("--reuse", action="store_true",
                    help="time the org an earlier run loaded into --data-dir (or DATABASE_URL) instead of loading one:"
                         " old and new code timed on one dataset")
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
    handle = redis_handle = None
    if not settings.database_url:
        from memory_core.adapters.runtime import start_postgres

        handle = start_postgres(settings.data_dir)
    if not settings.redis_url:
        from memory_core.adapters.runtime import start_redis

        redis_handle = start_redis(settings.data_dir)  # the home and jobs pages read the queue
    try:
        migrate(settings)
        world, load_s = reused(settings, args) if args.reuse else load(settings, args)
        report = {"memories": args.memories, "proposals": args.proposals, "contacts": args.contacts,
                  "load_seconds": round(load_s, 1), "requests_per_page": args.requests, "pages": {}}
        report["pages"] = measure(settings, world, args.requests, args.only, args.statements, args.explain,
                                  args.profile, args.roles.split(","))
        if report["pages"]:
            slowest = max(report["pages"].items(), key=lambda kv: kv[1]["p95_ms"])
            report["slowest_p95"] = {"page": slowest[0], "p95_ms": slowest[1]["p95_ms"]}
        print(json.dumps(report, indent=2))
    finally:
        if redis_handle is not None and redis_handle.started_here and not args.keep_running:
            redis_handle.stop()
        if handle is not None and handle.started_here and not args.keep_running:
            handle.stop()
            if scratch and not args.reuse:
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
    platform = {"staff": uuid.uuid4(), "privacy": uuid.uuid4(), "platform": uuid.uuid4()}
    pw = hash_password("bench-pass")
    with psycopg.connect(owner_url, autocommit=True) as c:
        c.execute("insert into organizations (id, name) values (%s, 'Bench S.L.')", (org,))
        for uid, email in ((admin, "admin"), (member, "member")):
            c.execute("insert into users (id, email, name, password_hash) values (%s, %s, %s, %s)",
                      (uid, f"{email}-{org}@bench.test", email.title(), pw))
        for (email, uid), role in zip(platform.items(), ("staff", "privacy_officer", "platform_admin")):
            c.execute("insert into users (id, email, name, password_hash, platform_role) values (%s, %s, %s, %s, %s)",
                      (uid, f"{email}-{org}@bench.test", email.title(), pw, role))
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
        load_activity(c, org, admin, member, args.traces)
        for table in ("memories", "contacts", "conversations", "messages", "memory_traces", "trace_items",
                      "audit_log", "job_runs", "privacy_requests"):
            c.execute(f"vacuum analyze {table}")
    return {"org": org, **{role: f"{role}-{org}@bench.test" for role in ("admin", "member", *platform)},
            "contacts": contacts}, time.perf_counter() - started


def reused(settings, args):
    """The org an earlier run loaded (the newest 'Bench S.L.'), its sizes read back into args."""
    import psycopg

    from memory_core.adapters.db import resolve_urls

    owner_url = resolve_urls(settings).owner.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(owner_url, autocommit=True) as c:
        row = c.execute("select id from organizations where name = 'Bench S.L.' order by created_at desc limit 1")
        org = (row.fetchone() or (None,))[0]
        if org is None:
            raise SystemExit("--reuse: no bench org in this database; run once without --reuse first")
        args.memories, args.proposals = c.execute(
            "select count(*) filter (where status <> 'proposed'), count(*) filter (where status = 'proposed')"
            " from memories where org_id = %s", (org,)).fetchone()
        contacts = [r[0] for r in c.execute("select id from contacts where org_id = %s order by tax_id", (org,))]
        args.contacts = len(contacts)
    roles = ("admin", "member", "staff", "privacy", "platform")
    return {"org": org, **{role: f"{role}-{org}@bench.test" for role in roles}, "contacts": contacts}, 0.0


def load_activity(c, org, admin, member, traces: int) -> None:
    """Conversations, messages and traces of the two members (five items each, one in five used), as
    many audit entries, and a few thousand job runs and privacy requests: generated by the server."""
    c.execute("""insert into conversations (id, channel, external_id, org_id, user_id)
                 select gen_random_uuid(), 'web', 'bench-' || i, %(org)s, case when i %% 2 = 0 then %(a)s::uuid
                        else %(m)s::uuid end from generate_series(1, 1000) i""", {"org": org, "a": admin, "m": member})
    c.execute("""insert into messages (id, conversation_id, channel, external_id, org_id, user_id, role, text,
                                       created_at, sent_at)
                 select gen_random_uuid(), c.id, 'web', 'bench-msg-' || i, c.org_id, c.user_id, 'user',
                        'Factura a Cliente ' || (i %% 1000) || ' con el plazo de siempre, mensaje ' || i,
                        now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval
                 from generate_series(1, %(n)s) i
                 join lateral (select id, org_id, user_id from conversations where org_id = %(org)s
                               offset (i %% 1000) limit 1) c on true""", {"org": org, "n": traces})
    c.execute("""insert into memory_traces (id, org_id, conversation_id, message_id, user_id, channel, block_text,
                                            tokens, created_at)
                 select gen_random_uuid(), m.org_id, m.conversation_id, m.id, m.user_id, 'web',
                        '<memory>...</memory>', 300, m.created_at from messages m where m.org_id = %(org)s""",
              {"org": org})
    c.execute("""insert into trace_items (trace_id, memory_id, block, rank, score, chars, used)
                 select t.id, ids.ids[1 + (abs(hashtext(t.id::text || k)) %% 1000)], 'related', k, 0.5, 80, k = 1
                 from memory_traces t, generate_series(1, 5) k,
                      (select array_agg(id) ids from (select id from memories where org_id = %(org)s
                       and status = 'active' limit 1000) x) ids
                 where t.org_id = %(org)s""", {"org": org})
    c.execute("""insert into audit_log (actor_user_id, actor_label, action, org_id, target_type, target_id,
                                        details, at)
                 select case when i %% 2 = 0 then %(a)s::uuid else %(m)s::uuid end, 'console admin',
                        (array['memory.edit', 'proposal.approve', 'proposal.reject', 'memory.restore'])[1 + i %% 4],
                        %(org)s, 'memory', gen_random_uuid()::text, '{}'::jsonb,
                        now() - (i || ' minutes')::interval
                 from generate_series(1, %(n)s) i""", {"org": org, "a": admin, "m": member, "n": traces})
    c.execute("""insert into job_runs (job, status, started_at, finished_at, counts, triggered_by, org_id)
                 select 'retention', 'succeeded', now() - (i || ' hours')::interval,
                        now() - (i || ' hours')::interval + interval '1 minute', '{"deleted": 3}'::jsonb,
                        'schedule', case when i %% 2 = 0 then %(org)s::uuid end
                 from generate_series(1, 2000) i""", {"org": org})
    c.execute("""insert into privacy_requests (kind, subject_type, subject_ref, org_id, requested_by, status,
                                               due_at, created_at)
                 select (array['access', 'erasure'])[1 + i %% 2], 'contact', 'Cliente ' || i, %(org)s,
                        'Persona ' || i, 'received', now() + interval '30 days', now() - (i || ' hours')::interval
                 from generate_series(1, 2000) i""", {"org": org})


def _pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))], 1)


class StatementLog:
    """Every SQL statement the app runs while `recording`, with its time (SQLAlchemy's cursor events)."""

    def __init__(self, explain_ms: float | None = None) -> None:
        from flask import before_render_template, template_rendered
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        self.recording, self.rows, self.explain_ms, self.page = False, [], explain_ms, ""
        self.render_ms, self._render_t0 = 0.0, []
        event.listen(Engine, "before_cursor_execute", self._before)
        event.listen(Engine, "after_cursor_execute", self._after)
        before_render_template.connect(self._render_start, weak=False)
        template_rendered.connect(self._render_end, weak=False)

    def _render_start(self, app, **_):
        self._render_t0.append(time.perf_counter())

    def _render_end(self, app, **_):
        t0 = self._render_t0.pop()
        if self.recording and not self._render_t0:  # the outermost render (a page may render partials in it)
            self.render_ms += (time.perf_counter() - t0) * 1000

    def _before(self, conn, cursor, statement, params, context, many):
        conn.info["bench_t0"] = time.perf_counter()

    def _after(self, conn, cursor, statement, params, context, many):
        if self.recording:
            ms = (time.perf_counter() - conn.info.pop("bench_t0")) * 1000
            self.rows.append((ms, " ".join(statement.split())))
            if self.explain_ms is not None and ms > self.explain_ms and statement.lstrip().lower().startswith("select"):
                # Again, in the same transaction and row-security scope, on a cursor of its own.
                with conn.connection.dbapi_connection.cursor() as cur:
                    cur.execute("explain (analyze, buffers) " + statement, params)
                    plan = "\n".join(r[0] for r in cur.fetchall())
                print(f"--- {self.page}: {ms:.1f} ms\n{statement}\n{params}\n{plan}\n", file=sys.stderr)

    def of(self, get, url: str) -> dict:
        self.rows, self.recording, self.render_ms = [], True, 0.0
        t0 = time.perf_counter()
        try:
            get(url)
        finally:
            self.recording = False
        total_ms = (time.perf_counter() - t0) * 1000
        slowest = sorted(self.rows, reverse=True)[:3]
        if os.environ.get("BENCH_ALL_STATEMENTS"):
            print(f"=== statements of {self.page}", *(f"{ms:6.1f} ms  {sql[:400]}" for ms, sql in self.rows),
                  sep="\n", file=sys.stderr)
        sql_ms = sum(ms for ms, _ in self.rows)
        # the rest of the request: the view's own Python, the user loader, Flask, Werkzeug
        return {"statements": len(self.rows), "sql_ms": round(sql_ms, 1), "template_ms": round(self.render_ms, 1),
                "other_ms": round(total_ms - sql_ms - self.render_ms, 1),
                "slowest": [f"{ms:.1f} ms: {sql[:300]}" for ms, sql in slowest]}


def profile_of(get, url: str, n: int, page: str) -> None:
    """cProfile over n requests of one page: its heaviest functions by own time, then by cumulative time."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        get(url)
    prof.disable()
    if os.environ.get("BENCH_PROFILE_DIR"):  # kept for pstats / snakeviz
        prof.dump_stats(os.path.join(os.environ["BENCH_PROFILE_DIR"], f"{page}.prof"))
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    print(f"=== profile {page} ({n} requests)\n{out.getvalue()}", file=sys.stderr)


def signed_in(app, email: str):
    """A test client of `app` signed in as `email` through the login form (CSRF token and all)."""
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"', page).group(1)
    resp = client.post("/login", data={"email": email, "password": "bench-pass", "csrf_token": token})
    assert resp.status_code == 302, resp.status_code
    return client


def page_urls(world: dict, *, memory_ids: list, proposal_ids: list, trace_ids: list = (), request_ids: list = ()
              ) -> dict:
    """Each page's URL for the i-th request (rows drawn in turn from the ids given); shared with console_ab."""
    contact, org = world["contacts"][3], world["org"]

    def one_of(ids):
        return lambda i: ids[i % len(ids)]

    memory, trace, proposal, request_ = (one_of(ids) for ids in (memory_ids, trace_ids, proposal_ids, request_ids))
    return {
        "home": lambda i: "/",
        "review_queue": lambda i: "/review/",
        "review_queue_low_permission": lambda i: "/review/?kind=low_permission",
        "review_decided": lambda i: "/review/?state=decided",
        "review_proposal": lambda i: f"/review/{proposal(i)}",
        "memory_list": lambda i: "/memories",
        "memory_list_by_contact": lambda i: f"/memories?contact={contact}",
        "memory_list_search": lambda i: "/memories?q=descuento",  # a common word
        "memory_list_search_rare": lambda i: f"/memories?q={123457 + i}",  # matches one row
        "memory_page": lambda i: f"/memories/{memory(i)}",
        "contacts": lambda i: "/contacts",
        "contacts_search": lambda i: f"/contacts?q=Cliente {i}",
        "contact_page": lambda i: f"/contacts/{contact}",
        "traces": lambda i: f"/traces?org={org}",
        "traces_used": lambda i: f"/traces?org={org}&used=1",
        "trace_page": lambda i: f"/traces/{trace(i)}",
        "audit": lambda i: f"/audit?org={org}",
        "audit_search": lambda i: f"/audit?org={org}&q=memory",
        "usage": lambda i: "/usage",
        "jobs": lambda i: "/jobs",
        "settings": lambda i: "/settings",
        "people": lambda i: "/people",
        "api_keys": lambda i: "/api-keys",
        "my_memory": lambda i: "/my-memory",
        "privacy_requests": lambda i: "/privacy",
        "privacy_request": lambda i: f"/privacy/{request_(i)}",
        "platform_orgs": lambda i: "/platform/orgs",
        "platform_people": lambda i: "/platform/people",
        "platform_keys": lambda i: "/platform/keys",
    }


def measure(settings, world, n: int, only: str | None = None, statements: bool = False,
            explain_ms: float | None = None, profile: int = 0,
            roles: list[str] | tuple[str, ...] = ("admin", "member", "staff", "privacy", "platform")) -> dict:
    """Time every page for every role through the real app (test client, CSRF on)."""

    from sqlalchemy import create_engine, text

    from app import served_app
    from memory_core.adapters.db import resolve_urls

    app = served_app(settings, {"TESTING": True, "SESSION_COOKIE_SECURE": False})
    engine = create_engine(resolve_urls(settings).owner)
    with engine.connect() as c:
        memory_ids = c.execute(text("select id from memories where org_id = :o and status = 'active' and level = "
                                    "'shared' order by random() limit 500"), {"o": world["org"]}).scalars().all()
        trace_ids = c.execute(text("select id from memory_traces where org_id = :o order by random() limit 200"),
                              {"o": world["org"]}).scalars().all()
        proposal_ids = c.execute(text("select id from memories where org_id = :o and status = 'proposed' "
                                      "order by random() limit 200"), {"o": world["org"]}).scalars().all()
        request_ids = c.execute(text("select id from privacy_requests where org_id = :o limit 200"),
                                {"o": world["org"]}).scalars().all()
    engine.dispose()
    pages = page_urls(world, memory_ids=memory_ids, trace_ids=trace_ids, proposal_ids=proposal_ids,
                      request_ids=request_ids)
    out = {}
    log = StatementLog(explain_ms) if statements else None
    for role in roles:
        client = signed_in(app, world[role])
        for name, url in pages.items():
            if only and only not in name:
                continue
            # Untimed, these warm the pool and the caches too. A page of one row (a memory, a proposal) is asked for
            # rows picked at random: a member may open some of them, not others.
            statuses = [client.get(url(i)).status_code for i in range(10)]
            if 200 not in statuses:
                if set(statuses) <= {302, 403, 404}:
                    continue  # not this role's page
                raise SystemExit(f"{role} {url(0)}...: answered {statuses}")
            samples = []
            for i in range(n):
                t0 = time.perf_counter()
                resp = client.get(url(i))
                elapsed = (time.perf_counter() - t0) * 1000
                if resp.status_code >= 500:
                    raise SystemExit(f"{role} {url(i)} answered {resp.status_code}")
                if resp.status_code == 200:  # a row this role may not open (403) is not its page
                    samples.append(elapsed)
            out[f"{role}.{name}"] = {f"p{p}_ms": _pct(samples, p) for p in (50, 95, 99)}
            if log is not None:
                log.page = f"{role}.{name}"
                # the median of five untimed requests' split (one alone is noise on a loaded machine)
                runs = sorted((log.of(client.get, url(n + k)) for k in range(5)), key=lambda r: r["sql_ms"]
                              + r["template_ms"] + r["other_ms"])
                out[f"{role}.{name}"].update(runs[2])
            if profile:
                profile_of(client.get, url(n), profile, f"{role}.{name}")
    return out


if __name__ == "__main__":
    main()
