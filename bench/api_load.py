"""The HTTP API under concurrent agents: turns/s and latency per endpoint, printed.

    python bench/api_load.py [--agents 1,8,32,128] [--seconds 20] [--port 5618] [--web-workers 2]
                             [--data-dir DIR] [--calls 4,2] [--profile] [--cprofile]

Starts its own embedded PostgreSQL and Redis in `--data-dir` (a new temporary directory by default),
migrates, creates an org with one person per agent, 40 contacts and an API key, then starts the
production web server (`memoria serve`: gunicorn, `--web-workers` processes) on `--port` and one
`memoria worker` beside it, which drains the outbox while the agents talk. For each N in `--agents`,
N agents (threads, each with its own conversation and person, through memoria's own HTTP client with
retries off) take turns for `--seconds`: ingest the person's message, get the memory block for it
(/context), report two of its memories as used, ingest the assistant's reply. `--calls 2` takes the same turn
in two calls (/turns: the message and its block; /messages: the reply with the memories it used); the
default runs both, side by side, for each N. Prints completed turns/s,
the p50/p95/p99 of each endpoint, errors, and the outbox left waiting at the end of each run (what the
worker had not learnt yet), and the CPU each process group spent per completed turn (the load generator,
gunicorn, the RQ worker, PostgreSQL, Redis: user + system time from /proc, with reaped children).
`--profile` runs the server with MEMORIA_PROFILE_DIR (memory_core/adapters/request_profile.py) and prints,
per endpoint and run, the server's wall and CPU milliseconds, SQL statements and their milliseconds and
connection checkouts per request; `--cprofile` adds each endpoint's top functions by cumulative time.
Stops what it started (the server and worker by their process ids).
The machine is shared: read the figures side by side, under whatever load it carries.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.process_cpu import postmaster_pid, tree_cpu_seconds  # noqa: E402

REPLIES = ["Entendido, lo tengo en cuenta.", "Perfecto, te preparo la factura.", "Hecho.",
           "Ahora mismo lo miro y te digo.", "De acuerdo."]
ENDPOINTS = ("POST /messages (user)", "POST /context", "POST /traces/<id>/used", "POST /messages (reply)")
# The same turn in two calls: the person's message with its block, the reply with the memories it used.
TWO_CALLS = ("POST /turns", "POST /messages (reply+used)")


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")


def cpu_snapshot(roots: dict[str, int]) -> dict[str, float]:
    snap = {name: tree_cpu_seconds(pid) for name, pid in roots.items()}
    t = os.times()
    snap["load generator"] = t.user + t.system
    return snap


def profile_snapshot(directory: Path) -> dict[str, dict[str, float]]:
    """The server's per-endpoint counts so far, summed over its worker processes."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for f in directory.glob("requests-*.json"):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        for name, counts in data.items():
            for k, v in counts.items():
                out[name][k] += v
    return out


def print_profile(before: dict, after: dict) -> None:
    print("    server side, per request: endpoint                         |    n |  wall ms |   cpu ms |  SQL |"
          "   SQL ms | checkouts")
    for name in sorted(after):
        d = {k: after[name].get(k, 0) - before.get(name, {}).get(k, 0) for k in after[name]}
        n = d.get("requests", 0)
        if n <= 0:
            continue
        print(f"    {name:58s} | {int(n):4d} | {d['wall_ms'] / n:8.1f} | {d['cpu_ms'] / n:8.1f} | "
              f"{d['sql'] / n:4.1f} | {d['sql_ms'] / n:8.1f} | {d['checkouts'] / n:9.1f}")


def print_cprofile(directory: Path, top: int = 25) -> None:
    import pstats

    by_endpoint: dict[str, list[Path]] = defaultdict(list)
    for f in directory.glob("*.prof"):
        by_endpoint[f.name.split("-", 1)[1]].append(f)
    for name, files in sorted(by_endpoint.items()):
        stats = pstats.Stats(*map(str, files))
        print(f"\n=== cProfile (all runs, every worker): {name}")
        stats.sort_stats(os.environ.get("MEMORIA_CPROFILE_SORT", "cumulative")).print_stats(top)


def setup(agents: int) -> tuple[str, list[str]]:
    """A scratch org with one member per agent and 40 contacts; its API key and the members' ids."""
    from bench.pipeline import SURNAMES
    from memory_core.adapters.db import SYSTEM, get_database
    from memory_core.domain.models import Contact, Membership, Organization, User
    from memory_core.tenancy.api_keys import create_api_key

    db = get_database()
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = Organization(name=f"api load {uuid.uuid4().hex[:6]}")
        s.add(org)
        s.flush()
        users = [User(email=f"agent{i}-{uuid.uuid4().hex[:8]}@bench.memoria.invalid", name=f"Agent {i}")
                 for i in range(agents)]
        s.add_all(users)
        s.flush()
        for i, user in enumerate(users):
            s.add(Membership(org_id=org.id, user_id=user.id, role="owner" if i == 0 else "admin"))
        for name in SURNAMES:
            s.add(Contact(org_id=org.id, name=f"Talleres {name} S.L.", kind="customer"))
        _, key = create_api_key(s, org.id, "api load bench", created_by=users[0].id, actor_label="api load bench")
        uow.commit()
        return key, [str(u.id) for u in users]


def wait_until_ready(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("memoria serve exited before it was ready")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit("memoria serve did not answer /healthz")


def warm_up(base_url: str, key: str, user_id: str, web_workers: int) -> None:
    """Every gunicorn worker loads its query embedder on its first /context: a few rounds of concurrent
    calls, until a round answers in under a second, before anything is timed; and the RQ worker has
    registered (its models loaded)."""
    from rq import Worker

    from client.memoria_client import MemoriaClient
    from memory_core.adapters.queue import get_queue

    client = MemoriaClient(base_url, key, timeout=300, max_retries=3)
    for _ in range(10):
        started = time.perf_counter()
        threads = [threading.Thread(target=client.context, kwargs={"message": "¿qué sabes de Talleres García?",
                                                                   "user_id": user_id})
                   for _ in range(2 * web_workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if time.perf_counter() - started < 1.0:
            break
    deadline = time.monotonic() + 300
    while not Worker.all(queue=get_queue()) and time.monotonic() < deadline:
        time.sleep(0.2)


def timed(calls: list, name: str, call, *args, **kw):
    """call(*args, **kw), its wall time appended to `calls` as (name, seconds) once it answered."""
    t = time.perf_counter()
    out = call(*args, **kw)
    calls.append((name, time.perf_counter() - t))
    return out


def four_calls(client, user_id: str, conversation: str, i: int, text: str, calls: list) -> None:
    """The turn as the issue names it: ingest, block, report used, ingest the reply."""
    ingested = timed(calls, ENDPOINTS[0], client.ingest, channel="web", conversation=conversation,
                     external_id=f"{conversation}-u{i}", role="user", text=text, user_id=user_id)
    block = timed(calls, ENDPOINTS[1], client.context, message=text, user_id=user_id,
                  conversation_id=ingested["conversation_id"], message_id=ingested["message_id"])
    if block["trace_id"] and block["memory_ids"]:
        timed(calls, ENDPOINTS[2], client.report_used, block["trace_id"], block["memory_ids"][:2])
    timed(calls, ENDPOINTS[3], client.ingest, channel="web", conversation=conversation,
          external_id=f"{conversation}-a{i}", role="assistant", text=REPLIES[i % len(REPLIES)], user_id=user_id)


def two_calls(client, user_id: str, conversation: str, i: int, text: str, calls: list) -> None:
    """The same turn in two calls: the message with its block (/turns), the reply with what it used."""
    block = timed(calls, TWO_CALLS[0], client.turn, channel="web", conversation=conversation,
                  external_id=f"{conversation}-u{i}", text=text, user_id=user_id)["context"]
    used = (block["trace_id"], block["memory_ids"][:2]) if block["trace_id"] and block["memory_ids"] else None
    timed(calls, TWO_CALLS[1], client.ingest, channel="web", conversation=conversation,
          external_id=f"{conversation}-a{i}", role="assistant", text=REPLIES[i % len(REPLIES)], user_id=user_id,
          used=used)


def agent(client, user_id: str, conversation: str, deadline: float, lat: dict, errors: dict, turns: list,
          calls_a_turn: int = 4) -> None:
    """One agent's turns until the deadline: every call timed, a failed call ends that turn."""
    from bench.pipeline import message
    from client.memoria_client import ApiError, TransportError

    take_turn, names = (four_calls, ENDPOINTS) if calls_a_turn == 4 else (two_calls, TWO_CALLS)
    i = 0
    done = 0
    while time.monotonic() < deadline:
        calls: list = []
        try:
            take_turn(client, user_id, conversation, i, message(i + hash(conversation) % 97), calls)
            done += 1
        except (ApiError, TransportError) as exc:
            failed = names[len(calls)] if len(calls) < len(names) else "?"
            errors[f"{failed}: {type(exc).__name__} {getattr(exc, 'status', '')}"] += 1
        for name, seconds in calls:
            lat[name].append(seconds * 1000)
        i += 1
    turns.append(done)


def run(base_url: str, key: str, users: list[str], n: int, seconds: float, calls_a_turn: int = 4) -> dict:
    from client.memoria_client import MemoriaClient

    lat: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    turns: list[int] = []
    run_tag = uuid.uuid4().hex[:6]
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=agent, args=(
        MemoriaClient(base_url, key, timeout=120, max_retries=0), users[i], f"agent-{run_tag}-{i}", deadline,
        lat, errors, turns, calls_a_turn)) for i in range(n)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started  # a turn under way at the deadline finishes: count its time
    return {"n": n, "calls": calls_a_turn, "turns": sum(turns), "seconds": elapsed, "lat": lat,
            "errors": dict(errors)}


FLUSH_WAIT = 1.0  # request_profile.FLUSH_SECONDS


def _redis_pid(data_dir: Path) -> int:
    """The redis-server listening on the data dir's socket (found by its command line)."""
    sock = str(data_dir / "redis" / "redis.sock")
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if sock.encode() in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    return -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="1,8,32,128", help="the numbers of concurrent agents, in order")
    parser.add_argument("--seconds", type=float, default=20, help="run time for each number of agents")
    parser.add_argument("--port", type=int, default=5618)
    parser.add_argument("--web-workers", type=int, default=None, help="gunicorn workers (default MEMORIA_WEB_WORKERS)")
    parser.add_argument("--web-threads", type=int, default=None,
                        help="threads of each gunicorn worker (default MEMORIA_SERVE_THREADS)")
    parser.add_argument("--data-dir", default=None, help="its own data dir (default: a new temporary one)")
    parser.add_argument("--profile", action="store_true", help="print where the server's time goes per endpoint")
    parser.add_argument("--cprofile", action="store_true", help="with --profile: cProfile every request too")
    parser.add_argument("--calls", default="4,2", help="the turn in 4 calls (messages, context, used, reply), in 2 "
                        "(turns, reply with used), or both side by side for each number of agents")
    args = parser.parse_args()
    counts = [int(n) for n in args.agents.split(",")]
    modes = [int(c) for c in args.calls.split(",")]
    if not set(modes) <= {2, 4}:
        parser.error("--calls: 4, 2 or 4,2")
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="memoria-api-load-")
    os.environ["MEMORIA_DATA_DIR"] = data_dir
    os.environ.setdefault("MEMORIA_BACKEND", "local")
    os.environ.setdefault("MEMORIA_QUEUE", f"memoria-api-load-{args.port}")

    from jobs.outbox import pending_count
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate
    from memory_core.adapters.runtime import start_servers, stopping_what_starts

    with stopping_what_starts():
        start_servers()
        migrate()
        key, users = setup(max(counts))
        base_url = f"http://127.0.0.1:{args.port}"
        serve = [sys.executable, "-m", "app", "serve", "--port", str(args.port)]
        if args.web_workers:
            serve += ["--workers", str(args.web_workers)]
        if args.web_threads:
            serve += ["--threads", str(args.web_threads)]
        profile_dir = Path(data_dir) / "profile"
        serve_env = dict(os.environ)
        if args.profile or args.cprofile:
            serve_env["MEMORIA_PROFILE_DIR"] = str(profile_dir)
            serve_env["MEMORIA_PROFILE_CPROFILE"] = "1" if args.cprofile else "0"
        procs = [subprocess.Popen(serve, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=serve_env),
                 subprocess.Popen([sys.executable, "-m", "app", "worker"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)]
        try:
            wait_until_ready(base_url, procs[0])
            web = args.web_workers or int(os.environ.get("MEMORIA_WEB_WORKERS", "2"))
            warm_up(base_url, key, users[0], web)
            roots = {"gunicorn": procs[0].pid, "rq worker": procs[1].pid,
                     "postgresql": postmaster_pid(Path(data_dir)), "redis": _redis_pid(Path(data_dir))}
            results = []
            for n, calls_a_turn in [(n, c) for n in counts for c in modes]:
                time.sleep(1.5 * FLUSH_WAIT)
                prof_before, cpu_before = profile_snapshot(profile_dir), cpu_snapshot(roots)
                r = run(base_url, key, users, n, args.seconds, calls_a_turn)
                cpu_after = cpu_snapshot(roots)
                time.sleep(1.5 * FLUSH_WAIT)  # the server writes its counts every second
                r["profile"] = (prof_before, profile_snapshot(profile_dir))
                r["cpu"] = {k: cpu_after[k] - cpu_before[k] for k in cpu_after}
                r["waiting"] = pending_count(get_database())
                results.append(r)
        finally:
            for p in procs:
                p.terminate()  # gunicorn and the RQ worker stop warm on SIGTERM
            for p in procs:
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
    from memory_core.adapters.config import get_settings

    threads = args.web_threads or get_settings().serve_threads
    print(f"API under concurrent agents: memoria serve ({web} gunicorn workers x {threads} threads) + 1 worker "
          "draining, "
          f"{args.seconds:.0f} s per run; machine shared, figures under its load")
    print("  agents | calls a turn | turns | turns/s | endpoint                     |  calls |   p50 ms |   p95 ms |"
          "   p99 ms")
    for r in results:
        first = True
        for name in ENDPOINTS if r["calls"] == 4 else TWO_CALLS:
            values = r["lat"].get(name, [])
            head = (f"  {r['n']:6d} | {r['calls']:12d} | {r['turns']:5d} | {r['turns'] / r['seconds']:7.1f}" if first
                    else f"  {'':6s} | {'':12s} | {'':5s} | {'':7s}")
            print(f"{head} | {name:28s} | {len(values):6d} | {percentile(values, 50):8.1f} | "
                  f"{percentile(values, 95):8.1f} | {percentile(values, 99):8.1f}")
            first = False
        extra = f"outbox waiting at the end: {r['waiting']}"
        if r["errors"]:
            extra += "; errors: " + ", ".join(f"{k} x{v}" for k, v in sorted(r["errors"].items()))
        print(f"  {'':6s}   {extra}")
        turns = max(r["turns"], 1)
        cpu = r["cpu"]
        print(f"  {'':6s}   CPU ms per turn: " + ", ".join(f"{k} {v * 1000 / turns:.1f}" for k, v in cpu.items())
              + f"; total {sum(cpu.values()) * 1000 / turns:.1f} (machine: {os.cpu_count()} cores, "
              f"{sum(cpu.values()) / r['seconds']:.2f} cores busy with these)")
        if args.profile or args.cprofile:
            print_profile(*r["profile"])
    if args.cprofile:
        print_cprofile(profile_dir)


if __name__ == "__main__":
    main()
