"""Where a big org's turn goes: assemble_context and search for the scale bench's big org principals, statement
by statement (wall ms of each kind in the call), then each statement replayed under EXPLAIN ANALYZE in the same
scope and settings (planning and execution ms).

    MEMORIA_DATA_DIR=.memoria-bench python bench/scale.py --orgs 200 --memories 60000 --messages 60000 \
        --big-share 0.84 --queries 10 --org-indexes on         # load once
    MEMORIA_DATA_DIR=.memoria-bench python bench/turn_profile.py --turns 20 [--typical]

Each statement is named by what it reads (profile, fts, vector, date...); `settings` are the set_config round trips,
`count` the principal's rows counted (reading/principal_size.py: on a principal's first turn in a process). Each
kind's wall is also printed for the principals' first turns alone. The replay runs each captured statement in order
in a new transaction of the same scope: set_config statements as they were, the others under EXPLAIN (ANALYZE); a
statement runs a second time there, so its execution figure is warm. The replay plans every statement afresh: the
wall figures, not the replay's, show what kept statements' generic plans save (each turn commits its trace as the
API does, so the connection keeps its prepared statements; the traces are deleted at the end). CPU is of every
PostgreSQL process of the data dir, so it is meaningful with `--no-explain` and nothing else using that server; so
are the bytes it read from storage in a call (`read_bytes` of /proc/PID/io: rows in neither its shared buffers nor
the OS's page cache), and the latency of the calls that read nothing is printed apart. So are a principal's first
timed turn (its rows perhaps not in PostgreSQL's buffers; its block counts them, as this process has not) and its
later ones.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402
from sqlalchemy import event, text  # noqa: E402

from bench.percentiles import pct  # noqa: E402
from bench.process_cpu import postmaster_pid, tree_cpu_and_disk  # noqa: E402
from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls  # noqa: E402
from memory_core.adapters.heap import freeze_heap  # noqa: E402
from memory_core.domain.access import load_access  # noqa: E402

KINDS = [  # first match names the statement
    ("settings", re.compile(r"set_config\(")),
    ("count", re.compile(r" AS n_(memory|message|contact|document)\b")),  # reading/principal_size.py
    ("trace", re.compile(r"memoria_store_trace\(|^INSERT INTO (memory_traces|trace_items)")),
    ("conversation", re.compile(r"FROM conversations")),
    ("profile", re.compile(r"k_rank")),
    ("fts", re.compile(r"fts_cand_")),
    ("vector", re.compile(r"<=>")),
    ("date", re.compile(r"q_from|q_to")),
    ("trigram", re.compile(r"word_similarity")),
    ("exact", re.compile(r"strpos")),
    ("subjects", re.compile(r"of_subjects")),  # with the contacts the texts name
    ("contacts", re.compile(r"FROM contacts")),
    ("neighbours", re.compile(r"memory_sources")),
    ("describe", re.compile(r"replace\(memories\.attribute")),
]


def kind_of(statement: str) -> str:
    for name, pattern in KINDS:
        if pattern.search(statement):
            return name
    return "memories by id" if "FROM memories" in statement else "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--typical", action="store_true", help="Profile typical principals instead of the big org's.")
    parser.add_argument("--no-explain", action="store_true")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", default="", help="Print the slowest plan of these statement kinds (comma-separated).")
    parser.add_argument("--tail", type=int, default=0,
                        help="Print the N slowest calls of each kind, statement by statement, and the rest (Python).")
    args = parser.parse_args()
    from memory_core.adapters.runtime import start_servers

    start_servers()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scale import MODEL, NOW, WARM_TURNS, pool_sentences  # the bench's own data, clock and warm-up

    from memory_core.backends.local_embedder import LocalEmbedder
    from memory_core.reading.context import assemble_context
    from memory_core.reading.search import search

    db = get_database()
    rng = random.Random(args.seed)
    sentences = pool_sentences(3000, random.Random(7))
    embedder = LocalEmbedder()
    embedder.warm_up()
    freeze_heap()  # as a served process does once loaded (bench/scale.py)
    with db.unit_of_work(SYSTEM) as uow:
        big = uow.session.execute(text("select id from organizations where name = 'big'")).scalar_one()
        cmp = "<>" if args.typical else "="
        principals = uow.session.execute(text(
            "select m.org_id, m.user_id, c.id from memberships m join conversations c on c.user_id = m.user_id "
            f"where m.org_id {cmp} :big order by m.user_id limit 50 + :warm"), {"big": big, "warm": WARM_TURNS}).all()
        principals, warm_principals = principals[:50], principals[50:]
    # The big org has a few principals, all measured: its untimed turns are one of each (a big principal's reads have
    # shapes of their own, compiled at their first run in a process, and its first turn counts its rows, which a
    # served process then remembers for a minute: reading/principal_size.py).
    warm_principals = warm_principals or list(principals)
    traces: list = []  # every turn's trace, deleted at the end
    for org_id, user_id, conv_id in warm_principals:  # untimed, so that no statement is compiled in a timed turn
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        with db.unit_of_work(access.scope()) as uow:
            traces.append(assemble_context(uow.session, access, conv_id, sentences[0], now=NOW,
                                           embed=embedder.embed, embed_model=MODEL).trace_id)
            search(uow.session, access, sentences[1], embed=embedder.embed, embed_model=MODEL, now=NOW)
            uow.commit()  # kept prepared, as the timed turns below (a rollback makes the driver forget them)

    captured: list[tuple[str, object]] = []
    timings: list[tuple[str, float]] = []
    started: dict[int, float] = {}

    def before(conn, cursor, statement, parameters, context, executemany):
        started[id(cursor)] = time.perf_counter()
        captured.append((statement, parameters))

    def after(conn, cursor, statement, parameters, context, executemany):
        timings.append((kind_of(statement), (time.perf_counter() - started.pop(id(cursor))) * 1000))

    pg = postmaster_pid(Path(get_settings().data_dir))
    cpu = defaultdict(list)  # call -> [(this process ms, PostgreSQL ms)]
    disk = defaultdict(list)  # call -> [KB PostgreSQL read from storage (not its buffers, not the OS cache)]
    wall = defaultdict(lambda: defaultdict(list))  # call -> kind -> [ms summed per turn]
    wall_first = defaultdict(lambda: defaultdict(list))  # the same, of the principals' first turns only
    totals = defaultdict(list)
    turns = defaultdict(list)  # call -> [(ms, {kind: ms}, query, turn, KB from storage)]: where the slowest calls went
    plan = defaultdict(lambda: defaultdict(lambda: {"planning": [], "execution": []}))
    show = set(filter(None, args.show.split(",")))
    slowest: dict[str, tuple[float, str, str]] = {}
    seen: set = set()  # principals timed already: a principal's first turn is printed apart
    first = defaultdict(list)  # call -> [whether the turn was its principal's first in this run]
    for _ in range(args.turns):
        org_id, user_id, conv_id = rng.choice(principals)
        is_first = user_id not in seen
        seen.add(user_id)
        query = rng.choice(sentences)
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        for call in ("assemble_context", "search"):
            captured.clear()
            timings.clear()
            event.listen(db.engine, "before_cursor_execute", before)
            event.listen(db.engine, "after_cursor_execute", after)
            try:
                with db.unit_of_work(access.scope()) as uow:
                    g0, r0 = tree_cpu_and_disk(pg)  # /proc read before and after the clocks: its cost is not the call's
                    t0, c0 = time.perf_counter(), time.process_time()
                    if call == "assemble_context":
                        traces.append(assemble_context(uow.session, access, conv_id, query, now=NOW,
                                                       embed=embedder.embed, embed_model=MODEL).trace_id)
                    else:
                        search(uow.session, access, query, embed=embedder.embed, embed_model=MODEL, now=NOW)
                    uow.commit()  # as the API does: a rolled-back write would forget the prepared statements
                    took, c1 = time.perf_counter() - t0, time.process_time() - c0
                    totals[call].append(took * 1000)
                    first[call].append(is_first)
                    g1, r1 = tree_cpu_and_disk(pg)
                    cpu[call].append((c1 * 1000, (g1 - g0) * 1000))
                    disk[call].append((r1 - r0) / 1024)
            finally:
                event.remove(db.engine, "before_cursor_execute", before)
                event.remove(db.engine, "after_cursor_execute", after)
            per = defaultdict(float)
            for kind, ms in timings:
                per[kind] += ms
            for kind, ms in per.items():
                wall[call][kind].append(ms)
                if is_first:
                    wall_first[call][kind].append(ms)
            turns[call].append((totals[call][-1], dict(per), query, len(totals[call]), disk[call][-1]))
            if args.no_explain:
                continue
            replay = list(captured)
            with db.unit_of_work(access.scope()) as uow:
                conn = uow.session.connection()
                for statement, parameters in replay:
                    kind = kind_of(statement)
                    if kind == "trace":
                        continue  # the turn's trace, committed with it: written again it would be a duplicate
                    if kind == "settings":
                        conn.exec_driver_sql(statement, parameters)
                        continue
                    out = conn.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters).scalar()
                    out = out[0] if isinstance(out, list) else json.loads(out)[0]
                    plan[call][kind]["planning"].append(out["Planning Time"])
                    plan[call][kind]["execution"].append(out["Execution Time"])
                    took = out["Planning Time"] + out["Execution Time"]
                    if kind in show and took > slowest.get(f"{call} {kind}", (0.0,))[0]:
                        text_plan = "\n".join(r[0] for r in conn.exec_driver_sql(
                            "EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters))
                        slowest[f"{call} {kind}"] = (took, statement, text_plan)
                uow.rollback()
    with psycopg.connect(resolve_urls().owner.replace("postgresql+psycopg://", "postgresql://"),
                         autocommit=True) as conn:  # the bench leaves no traces
        conn.execute("delete from memory_traces where id = any(%s)", [[t for t in traces if t]])
    report = {"principals": "typical" if args.typical else "big org", "turns": args.turns, "calls": {}}
    for call in ("assemble_context", "search"):
        kinds = {}
        for kind, values in sorted(wall[call].items(), key=lambda kv: -statistics.median(kv[1])):
            p = plan[call].get(kind)
            firsts = wall_first[call].get(kind)
            kinds[kind] = {"wall_p50": round(statistics.median(values), 1), "wall_p95": pct(values, 0.95),
                           "first_turns_p50": round(statistics.median(firsts), 1) if firsts else None}
            if p and p["planning"]:
                kinds[kind] |= {"plan_p50": round(statistics.median(p["planning"]), 1),
                                "exec_p50": round(statistics.median(p["execution"]), 1)}
        report["calls"][call] = {"total_p50": round(statistics.median(totals[call]), 1),
                                 "total_p95": pct(totals[call], 0.95), "by_statement": kinds,
                                 "cpu_ms": {"this process": round(statistics.mean(c for c, _ in cpu[call]), 1),
                                            "postgresql": round(statistics.mean(g for _, g in cpu[call]), 1)}}
        # The calls that made PostgreSQL read from storage (rows in neither its buffers nor the OS's cache), apart:
        # what the rest take is the latency of a server whose memory holds what its principals read.
        unread = [took for took, kb in zip(totals[call], disk[call], strict=True) if kb == 0]
        report["calls"][call]["storage"] = {
            "calls_reading": len(totals[call]) - len(unread), "kb_a_call": round(statistics.mean(disk[call]), 1),
            "p50_without_reads": round(statistics.median(unread), 1) if unread else None,
            "p95_without_reads": pct(unread, 0.95) if unread else None}
        for name, wanted in (("first_turns", True), ("later_turns", False)):
            took = [t for t, f in zip(totals[call], first[call], strict=True) if f is wanted]
            report["calls"][call][name] = {"n": len(took), "p50": round(statistics.median(took), 1) if took else None,
                                           "p95": pct(took, 0.95) if took else None}
    for call, calls in turns.items():
        for took, per, query, n, kb in sorted(calls, key=lambda t: -t[0])[:args.tail]:
            parts = sorted(per.items(), key=lambda kv: -kv[1])
            rest = took - sum(per.values())
            print(f"{call} #{n} {took:.1f} ms ({len(query.split())} words): " + ", ".join(
                f"{kind} {ms:.1f}" for kind, ms in parts[:6]) + f", outside statements {rest:.1f}; "
                f"PostgreSQL read {kb:.0f} KB from storage")
    for key, (took, statement, text_plan) in slowest.items():
        print(f"==== {key}: {took:.1f} ms\n{statement}\n{text_plan}\n")
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['principals']} principals, {args.turns} turns")
    for call, r in report["calls"].items():
        print(f"\n{call}: p50 {r['total_p50']} / p95 {r['total_p95']} ms; CPU a call: this process "
              f"{r['cpu_ms']['this process']} ms, PostgreSQL {r['cpu_ms']['postgresql']} ms")
        st = r["storage"]
        print(f"  PostgreSQL read from storage in {st['calls_reading']} of {args.turns} calls ({st['kb_a_call']} KB a "
              f"call); the calls that read nothing: p50 {st['p50_without_reads']} / p95 {st['p95_without_reads']} ms")
        a, b = r["first_turns"], r["later_turns"]
        print(f"  a principal's first turn here ({a['n']} calls): p50 {a['p50']} / p95 {a['p95']} ms; its later turns "
              f"({b['n']}): p50 {b['p50']} / p95 {b['p95']} ms")
        print(f"  {'statement':24s} {'wall p50':>9} {'p95':>7} {'first turns p50':>16} {'plan p50':>9} "
              f"{'exec p50':>9}  (ms, summed per call)")
        for kind, v in r["by_statement"].items():
            print(f"  {kind:24s} {v['wall_p50']:>9} {v['wall_p95']:>7} {v['first_turns_p50'] or '':>16} "
                  f"{v.get('plan_p50', ''):>9} {v.get('exec_p50', ''):>9}")


if __name__ == "__main__":
    main()
