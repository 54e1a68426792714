"""A principal's turn, old code against new, interleaved: two checkouts time the same blocks and searches at 1M.

On this shared 2-core machine the same Python loop runs 30-50% slower from one minute to the next, so two
`bench/turn_profile.py` runs a minute apart compare the machine, not the code (session 21: three alternating pairs
disagreed on which side was faster). Here each checkout runs in its own process on the scale bench's database and
the two take turns principal by principal, the same message each, alternating which goes first: both see the same
machine. Load the database once with bench/scale.py (see bench/turn_profile.py), then:

    git worktree add ../base main && ln -s "$PWD/.venv" ../base/.venv
    MEMORIA_DATA_DIR=.memoria-bench .venv/bin/python bench/turns_ab.py ../base . --turns 200 [--big]

Prints for `assemble_context` and `search` the p50 and p95 of each side, the median of new/old over the paired
turns, how many turns the new code was the faster, and each side's own CPU a call (the calling thread's: Python and
the driver, not the database, nor the query's embedding, which runs in a thread of its own). Both checkouts must
read the same schema (the same migration head). The turns' traces are deleted.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from percentiles import pct  # beside this file

CALLS = ("assemble_context", "search")


def side(tree: str, big: bool, seed: int) -> None:
    """One checkout: reads 'principal query' index pairs, answers [[call, wall ms, cpu ms], ...] for one turn."""
    sys.path.insert(0, str(Path(tree).resolve()))
    sys.path.insert(1, str(Path(tree).resolve() / "bench"))
    os.chdir(tree)
    import psycopg
    from scale import MODEL, NOW, WARM_TURNS, pool_sentences
    from sqlalchemy import text

    from memory_core.adapters.db import SYSTEM, get_database, resolve_urls
    from memory_core.adapters.heap import freeze_heap
    from memory_core.adapters.runtime import start_servers
    from memory_core.backends.local_embedder import LocalEmbedder
    from memory_core.domain.access import load_access
    from memory_core.reading.context import assemble_context
    from memory_core.reading.search import search

    start_servers()
    db = get_database()
    sentences = pool_sentences(3000, random.Random(seed))
    embedder = LocalEmbedder()
    embedder.warm_up()
    freeze_heap()  # as a served process does once loaded
    with db.unit_of_work(SYSTEM) as uow:
        big_org = uow.session.execute(text("select id from organizations where name = 'big'")).scalar_one()
        principals = uow.session.execute(text(
            "select m.org_id, m.user_id, c.id from memberships m join conversations c on c.user_id = m.user_id "
            f"where m.org_id {'=' if big else '<>'} :big order by m.user_id limit 50 + :warm"),
            {"big": big_org, "warm": WARM_TURNS}).all()
    traces: list = []

    def turn(org_id, user_id, conv_id, query) -> list:
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        out = []
        for call in CALLS:
            with db.unit_of_work(access.scope()) as uow:
                t0, c0 = time.perf_counter(), time.thread_time()
                if call == "assemble_context":
                    traces.append(assemble_context(uow.session, access, conv_id, query, now=NOW,
                                                   embed=embedder.embed, embed_model=MODEL).trace_id)
                else:
                    search(uow.session, access, query, embed=embedder.embed, embed_model=MODEL, now=NOW)
                uow.commit()  # as the API does
                out.append([call, (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000])
        return out

    for org_id, user_id, conv_id in principals:  # untimed: every statement compiled, every principal counted
        turn(org_id, user_id, conv_id, sentences[0])
    principals = principals[:50] if not big else principals
    print(json.dumps({"principals": len(principals), "queries": len(sentences)}), flush=True)
    for line in sys.stdin:
        p, q = map(int, line.split())
        print(json.dumps(turn(*principals[p], sentences[q])), flush=True)
    with psycopg.connect(resolve_urls().owner.replace("postgresql+psycopg://", "postgresql://"),
                         autocommit=True) as conn:  # the bench leaves no traces (their items go with them)
        conn.execute("delete from memory_traces where id = any(%s)", [[t for t in traces if t]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", nargs="?", help="the old checkout")
    ap.add_argument("new", nargs="?", help="the new checkout")
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--big", action="store_true", help="the big org's principals instead of typical ones")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        return side(args.side, args.big, 7)
    if not args.base or not args.new:
        ap.error("give the old and the new checkout")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from memory_core.adapters.runtime import start_servers

    start_servers()  # once, before the two sides attach to it
    sides = {name: subprocess.Popen([sys.executable, __file__, "--side", tree] + (["--big"] if args.big else []),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for name, tree in (("old", args.base), ("new", args.new))}
    shape = {name: json.loads(p.stdout.readline()) for name, p in sides.items()}
    assert shape["old"] == shape["new"], shape
    rng = random.Random(args.seed)
    got: dict = {call: {"old": [], "new": []} for call in CALLS}
    started = time.time()
    for i in range(args.turns):
        p, q = rng.randrange(shape["new"]["principals"]), rng.randrange(shape["new"]["queries"])
        for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
            sides[name].stdin.write(f"{p} {q}\n")
            sides[name].stdin.flush()
            for call, ms, cpu in json.loads(sides[name].stdout.readline()):
                got[call][name].append((ms, cpu))
    for proc in sides.values():
        proc.stdin.close()
        proc.wait()
    print(f"{args.turns} turns a side, {'the big org' if args.big else 'typical principals'}, interleaved, "
          f"{time.time() - started:.0f} s; ms")
    print(f"{'call':17} {'p50 old':>8} {'p50 new':>8} {'p95 old':>8} {'p95 new':>8} {'new/old':>8} {'new faster':>11}"
          f" {'cpu old':>8} {'cpu new':>8}")
    for call in CALLS:
        old, new = got[call]["old"], got[call]["new"]
        ratios = [n[0] / o[0] for o, n in zip(old, new, strict=True)]
        print(f"{call:17} {pct([o[0] for o in old], .5):>8} {pct([n[0] for n in new], .5):>8} "
              f"{pct([o[0] for o in old], .95):>8} {pct([n[0] for n in new], .95):>8} "
              f"{statistics.median(ratios):>8.3f} {sum(r < 1 for r in ratios):>5} of {len(ratios):<4} "
              f"{pct([o[1] for o in old], .5):>8} {pct([n[1] for n in new], .5):>8}")


if __name__ == "__main__":
    main()
