"""The CPU an agent's turn costs the web process and PostgreSQL, measured in one process, one turn at a time.

    python bench/api_cpu.py [--turns 200] [--agents 4] [--data-dir DIR] [--top 40] [--prof PATH]

Where `bench/api_load.py` measures the production server under concurrent agents (and so under whatever
else the machine runs), this counts CPU time, which load does not inflate much: it starts the embedded
servers in `--data-dir` (a new temporary one by default), builds the app and drives it with Flask's test
client (the whole WSGI stack, not gunicorn's HTTP parsing), the same turn as api_load (ingest the person's
message, /context, report two used memories, ingest the reply). The outbox is drained in this process
between turns, outside what is measured, so memories accumulate as they would with a worker alongside.
Prints, per endpoint: the request thread's CPU ms, SQL statements; per turn: the process's CPU (every
thread: the query embedding runs on its own) and PostgreSQL's (its processes' user + system time).
cProfile runs on the request thread with CPU time as its clock (waits do not count); `--top` lines of
it by own time and by cumulative time are printed, and `--prof` keeps the stats.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.api_load import REPLIES  # noqa: E402
from bench.process_cpu import postmaster_pid, tree_cpu_seconds  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="turns measured (after as many unmeasured)")
    parser.add_argument("--agents", type=int, default=4, help="people taking turns in round robin")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--prof", default=None, help="write the cProfile stats here")
    parser.add_argument("--no-cprofile", action="store_true", help="only the counts (cProfile adds its own cost)")
    parser.add_argument("--show-sql", action="store_true", help="print the statements of the last turn")
    args = parser.parse_args()
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="memoria-api-cpu-")
    os.environ["MEMORIA_DATA_DIR"] = data_dir
    os.environ.setdefault("MEMORIA_BACKEND", "local")
    os.environ.setdefault("MEMORIA_QUEUE", f"memoria-api-cpu-{uuid.uuid4().hex[:6]}")

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from app import served_app
    from bench.api_load import setup
    from bench.pipeline import message
    from jobs.outbox import drain_batch
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate
    from memory_core.adapters.runtime import start_servers, stopping_what_starts
    from memory_core.backends import get_backend

    statements = [0]
    shown: list[str] = []

    @event.listens_for(Engine, "after_cursor_execute")
    def _count(conn, cursor, statement, *_a, **_k):
        statements[0] += 1
        shown.append(" ".join(statement.split())[:160])

    @event.listens_for(Engine, "commit")
    def _commit(conn):
        shown.append("COMMIT")

    @event.listens_for(Engine, "rollback")
    def _rollback(conn):
        shown.append("ROLLBACK")

    with stopping_what_starts():
        start_servers()
        migrate()
        key, users = setup(args.agents)
        app = served_app()
        client = app.test_client()
        headers = {"Authorization": f"Bearer {key}"}
        backend, database = get_backend(), get_database()
        run = uuid.uuid4().hex[:6]
        cpu: dict[str, float] = defaultdict(float)
        sql: dict[str, int] = defaultdict(int)
        calls: dict[str, int] = defaultdict(int)
        profiler = None if args.no_cprofile else cProfile.Profile(time.thread_time)

        def call(name: str, path: str, body: dict, measured: bool) -> dict:
            shown.clear()
            before_sql, before_cpu = statements[0], time.thread_time()
            if measured and profiler:
                profiler.enable()
            response = client.post(path, json=body, headers=headers)
            if measured and profiler:
                profiler.disable()
            if response.status_code != 200:
                sys.exit(f"{name}: {response.status_code} {response.get_data(as_text=True)}")
            if args.show_sql and measured:
                print(f"--- {name}", *shown, sep="\n    ")
            if measured:
                cpu[name] += time.thread_time() - before_cpu
                sql[name] += statements[0] - before_sql
                calls[name] += 1
            return response.get_json()

        def turn(i: int, measured: bool) -> None:
            user = users[i % len(users)]
            conversation = f"cpu-{run}-{i % len(users)}"
            text = message(i // len(users) + (i % len(users)) * 7)
            got = call("POST /messages (user)", "/api/v1/messages", {
                "channel": "web", "conversation": conversation, "external_id": f"{conversation}-u{i}",
                "role": "user", "text": text, "user_id": user}, measured)
            block = call("POST /context", "/api/v1/context", {
                "message": text, "user_id": user, "conversation_id": got["conversation_id"],
                "message_id": got["message_id"]}, measured)
            if block["trace_id"] and block["memory_ids"]:
                call("POST /traces/<id>/used", f"/api/v1/traces/{block['trace_id']}/used",
                     {"memory_ids": block["memory_ids"][:2]}, measured)
            call("POST /messages (reply)", "/api/v1/messages", {
                "channel": "web", "conversation": conversation, "external_id": f"{conversation}-a{i}",
                "role": "assistant", "text": REPLIES[i % len(REPLIES)], "user_id": user}, measured)

        def drain() -> None:
            while drain_batch(database, backend) is not None:
                pass

        for i in range(args.turns):  # unmeasured: models loaded, memories learnt, plans cached
            turn(i, False)
            if i % 10 == 9:
                drain()
        drain()
        pg = postmaster_pid(Path(data_dir))
        process_cpu = pg_cpu = 0.0
        for i in range(args.turns, 2 * args.turns):
            g0 = tree_cpu_seconds(pg)  # read outside the process's clock: a walk of /proc costs ~3 ms
            p0 = time.process_time()
            turn(i, True)
            process_cpu += time.process_time() - p0
            pg_cpu += tree_cpu_seconds(pg) - g0
            if i % 10 == 9:
                drain()
    n = args.turns
    print(f"CPU of a turn, in one process ({args.agents} people, {n} turns measured"
          f"{'' if args.no_cprofile else ', cProfile on: Python figures inflated'})")
    print("  endpoint                  | calls | thread CPU ms/call | SQL/call")
    for name in calls:
        print(f"  {name:25s} | {calls[name]:5d} | {cpu[name] * 1000 / calls[name]:18.2f} | "
              f"{sql[name] / calls[name]:8.1f}")
    print(f"  per turn: request threads {sum(cpu.values()) * 1000 / n:.1f} ms, whole process "
          f"{process_cpu * 1000 / n:.1f} ms (other threads: the query embedding), PostgreSQL {pg_cpu * 1000 / n:.1f} "
          f"ms, SQL statements {sum(sql.values()) / n:.1f}")
    if profiler:
        if args.prof:
            profiler.dump_stats(args.prof)
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
