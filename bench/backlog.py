"""Backlog recovery: one conversation's 5,000 waiting messages drain at the worker's normal rate.

    python bench/backlog.py [--backlog 5000] [--mixed 1000] [--conversations 20]

Drains of the same message mix, one after the other in one run, with the real worker code
(`jobs.outbox.drain_batch`, as the RQ job runs it): `--mixed` messages spread over `--conversations`
conversations (the worker's rate on mixed traffic), then `--backlog` messages all in one conversation,
then the mixed traffic again (the two mixed runs bracket the backlog, so a busy machine weighs on both
sides alike). Prints the rates side by side and the ratio of the backlog's to the mixed runs' mean
(the target is >= 0.8). Uses the
configured servers (DATABASE_URL/REDIS_URL, or the embedded ones in MEMORIA_DATA_DIR, started if
needed) and removes its scratch org.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MEMORIA_BACKEND", "local")

from bench.pipeline import drain, load, setup, teardown  # noqa: E402
from jobs.outbox import CLAIM_SIZE  # noqa: E402
from memory_core.adapters.db import get_database  # noqa: E402
from memory_core.adapters.heap import freeze_heap  # noqa: E402
from memory_core.adapters.migrate import migrate  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.backends import get_backend  # noqa: E402


def timed_drain(db, backend) -> tuple[int, float]:
    started = time.perf_counter()
    done = drain(db, backend, CLAIM_SIZE)
    return done, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=5000, help="messages waiting in one conversation")
    parser.add_argument("--mixed", type=int, default=1000, help="messages of each mixed-traffic drain")
    parser.add_argument("--conversations", type=int, default=20, help="conversations of the mixed traffic")
    args = parser.parse_args()
    start_servers()  # a bench runs alone: it starts the embedded servers it needs (and leaves them running)
    migrate()
    db, backend = get_database(), get_backend()
    backend.warm_up()
    freeze_heap()
    org_id, users = setup(db)
    try:
        runs = []
        for name, n, conversations in (("mixed traffic, before", args.mixed, args.conversations),
                                       ("one conversation's backlog", args.backlog, 1),
                                       ("mixed traffic, after", args.mixed, args.conversations)):
            load(db, org_id, users, n, conversations, f"{name[:5]}{len(runs)}")
            done, seconds = timed_drain(db, backend)
            runs.append((name, conversations, done, seconds))
    finally:
        teardown(db, org_id, users)
    for name, conversations, done, seconds in runs:
        print(f"{name} ({conversations} conversation{'s' if conversations > 1 else ''}): {done} messages in "
              f"{seconds:.1f} s = {done / seconds:.1f} messages/s")
    mixed = (runs[0][2] / runs[0][3] + runs[2][2] / runs[2][3]) / 2
    print(f"backlog rate / mixed rate = {runs[1][2] / runs[1][3] / mixed:.2f} (target >= 0.80)")


if __name__ == "__main__":
    main()
