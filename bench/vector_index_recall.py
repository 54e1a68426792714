"""Recall and cost of HNSW against IVFFlat on real sentence vectors (not the scale bench's synthetic ones), printed.

    python bench/vector_index_recall.py [--queries 400] [--share 0.05] [--trained-on 0.5]

The corpus is real conversation text embedded by the local model (USE multilingual, 512 dimensions): every
turn of the LoCoMo conversations and each sentence of the longer ones, their observations, event lines and
session summaries, and the gate's training rows (Spanish and English). The queries are LoCoMo's questions,
which are not in the corpus. Truth is an exact top 10 by cosine, computed in numpy.

Four indexes take turns: HNSW as memoria builds it (m = 16), HNSW with m = 8, an HNSW graph of the vectors'
signs (`binary_quantize`, Hamming distance) whose candidates are re-ranked exactly, and IVFFlat (lists = the
square root of the rows at build). Each is built on the first `--trained-on` share of the rows (in conversation
order, as a table grows), then the rest are inserted, `--timed-inserts` of them one by one and timed (round trip
included): IVFFlat's lists are trained once, on what the table held when it was built, and stay as they are
while the table grows. Two reads are timed and scored, each with the settings search uses:
- `all`: the 10 nearest of the whole table;
- `owned`: the 10 nearest of a `--share` of the rows (one principal's messages, a filter the index cannot
  see), read with an iterative, relaxed-order scan as search does (pgvector 0.8), re-sorted exactly.
An exact scan of the owned rows (no index) is timed last.

Uses the configured servers (DATABASE_URL, or the embedded ones in MEMORIA_DATA_DIR) as the owner, in a
table of its own (`bench_vector_recall`) that it drops at the end. Embedding ~20,000 texts takes a few
minutes on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from locomo import DEFAULT_DATA  # noqa: E402  (beside this file)
from locomo_learn import observations_of, sessions_of, turn_text  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import resolve_urls  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.backends.local_embedder import LocalEmbedder  # noqa: E402
from memory_core.domain.vocabulary import EMBED_DIM  # noqa: E402
from memory_core.reading.search import HNSW_EF_SEARCH, HNSW_MAX_SCAN_TUPLES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = "bench_vector_recall"
K = 10
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def corpus(data: Path) -> tuple[list[str], list[str]]:
    """(texts, questions): texts in conversation order, the gate's rows last; de-duplicated."""
    texts, questions = [], []
    for path in sorted(data.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0):
        conv = json.loads(path.read_text(encoding="utf-8"))
        for _, _, turns in sessions_of(conv):
            for turn in turns:
                whole = turn_text(turn)
                texts.append(whole)
                sentences = [s for s in _SENTENCE.split(turn.get("text", "")) if len(s) > 15]
                if len(sentences) > 1:
                    texts.extend(sentences)
        texts.extend(observation for _, observation, _ in observations_of(conv))
        for key, value in conv.items():
            if re.fullmatch(r"session_\d+_summary", key) and isinstance(value, str):
                texts.append(value)
            elif re.fullmatch(r"events_session_\d+", key) and isinstance(value, dict):
                texts.extend(e for k, events in value.items() if k != "date" for e in events)
        questions.extend(str(q["question"]) for q in conv.get("qa", []) if q.get("question"))
    for name in ("memory_core/backends/data/gate_train.jsonl", "evals/gate.jsonl", "evals/extraction.jsonl"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    seen: set[str] = set()
    unique = [t for t in texts if t.strip() and not (t in seen or seen.add(t))]
    return unique, [q for q in dict.fromkeys(questions) if q not in seen]


def literal(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7f}" for x in v) + "]"


def exact_top(vectors: np.ndarray, queries: np.ndarray, mask: np.ndarray | None) -> list[set[int]]:
    scores = queries @ vectors.T
    if mask is not None:
        scores[:, ~mask] = -np.inf
    return [set(np.argsort(-row)[:K].tolist()) for row in scores]


def insert(conn, vectors: np.ndarray, owned: np.ndarray, start: int, stop: int, one_by_one: bool) -> list[float]:
    """Rows start..stop; with one_by_one, each in its own statement, returning each one's ms (round trip included)."""
    rows = [{"id": i, "v": literal(vectors[i]), "o": bool(owned[i])} for i in range(start, stop)]
    stmt = text(f"insert into {TABLE} (id, embedding, owned) values (:id, cast(:v as vector), :o)")
    if not one_by_one:
        conn.execute(stmt, rows)
        return []
    times = []
    for row in rows:
        t = time.perf_counter()
        conn.execute(stmt, row)
        times.append((time.perf_counter() - t) * 1000)
    return times


EXACT = "select id from {table} {where} order by embedding <=> cast(:q as vector) limit {k}"
# Iterative scans return rows in roughly, not exactly, the index's order: re-sort, as search does.
RESORTED = ("select id from (select id, embedding <=> cast(:q as vector) d from {table} {where} "
            "order by embedding <=> cast(:q as vector) limit {depth}) s order by d limit {k}")
# The binary-quantized graph orders by Hamming distance of the signs; its candidates are re-ranked exactly.
BITS = (f"select id from (select id, embedding <=> cast(:q as vector) d from {{table}} {{where}} "
        f"order by binary_quantize(embedding)::bit({EMBED_DIM}) <~> binary_quantize(cast(:q as vector)) "
        f"limit {{depth}}) s order by d limit {{k}}")


def read(conn, sql: str, settings: dict[str, str], queries: np.ndarray, owned_only: bool
         ) -> tuple[list[set[int]], list[float]]:
    stmt = text(sql.format(table=TABLE, where="where owned" if owned_only else "", k=K))
    found, times = [], []
    for q in queries:
        with conn.begin():
            for name, value in settings.items():
                conn.execute(text("select set_config(:n, :v, true)"), {"n": name, "v": value})
            t = time.perf_counter()
            ids = conn.execute(stmt, {"q": literal(q)}).scalars().all()
            times.append((time.perf_counter() - t) * 1000)
        found.append(set(ids))
    return found, times


def score(found: list[set[int]], truth: list[set[int]]) -> float:
    return sum(len(f & t) for f, t in zip(found, truth)) / sum(len(t) for t in truth)


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--share", type=float, default=0.05, help="the share of rows one principal owns")
    ap.add_argument("--trained-on", type=float, default=0.5, help="the share of rows present when indexes are built")
    ap.add_argument("--timed-inserts", type=int, default=500)
    args = ap.parse_args()
    texts, questions = corpus(args.data)
    rng = np.random.default_rng(7)
    questions = [questions[i] for i in sorted(rng.choice(len(questions), min(args.queries, len(questions)),
                                                         replace=False))]
    print(f"corpus: {len(texts):,} texts, {len(questions)} questions (not in the corpus)", flush=True)
    embedder = LocalEmbedder(batch_size=32)
    t = time.perf_counter()
    vectors = embedder.embed_array(texts)
    queries = embedder.embed_array(questions)
    print(f"embedded in {time.perf_counter() - t:.0f} s", flush=True)
    n = len(vectors)
    owned = rng.random(n) < args.share
    truth_all = exact_top(vectors, queries, None)
    truth_owned = exact_top(vectors, queries, owned)
    built_at = int(n * args.trained_on)
    timed = min(args.timed_inserts, n - built_at)

    start_servers()
    owner = create_engine(resolve_urls(get_settings()).owner)
    lists = max(1, round(math.sqrt(built_at)))
    iterative = {"hnsw.iterative_scan": "relaxed_order", "hnsw.max_scan_tuples": str(HNSW_MAX_SCAN_TUPLES)}
    hnsw_all = [(f"ef_search={ef}", RESORTED.replace("{depth}", "{k}"), {"hnsw.ef_search": str(ef)})
                for ef in (40, 100, HNSW_EF_SEARCH)]
    hnsw_owned = [(f"ef_search={HNSW_EF_SEARCH}", RESORTED.replace("{depth}", str(K * 4)),
                   {"hnsw.ef_search": str(HNSW_EF_SEARCH), **iterative})]
    bits = [(f"re-rank {depth}", BITS.replace("{depth}", str(depth)), {"hnsw.ef_search": str(max(depth, 40))})
            for depth in (40, 100, 200)]
    bits_owned = [(f"re-rank {depth}", BITS.replace("{depth}", str(depth)),
                   {"hnsw.ef_search": str(max(depth, HNSW_EF_SEARCH)), **iterative}) for depth in (100, 200)]
    ivf_probes = sorted({1, 5, 10, lists // 4, lists // 2})
    variants = [
        ("hnsw m=16", "using hnsw (embedding vector_cosine_ops)", hnsw_all, hnsw_owned),
        ("hnsw m=8", "using hnsw (embedding vector_cosine_ops) with (m = 8)", hnsw_all, hnsw_owned),
        ("hnsw bits", f"using hnsw ((binary_quantize(embedding)::bit({EMBED_DIM})) bit_hamming_ops)", bits,
         bits_owned),
        (f"ivfflat lists={lists}", f"using ivfflat (embedding vector_cosine_ops) with (lists = {lists})",
         [(f"probes={pr}", RESORTED.replace("{depth}", "{k}"), {"ivfflat.probes": str(pr)}) for pr in ivf_probes],
         [(f"probes={pr}", RESORTED.replace("{depth}", str(K * 4)),
           {"ivfflat.probes": str(pr), "ivfflat.iterative_scan": "relaxed_order", "ivfflat.max_probes": str(lists)})
          for pr in (5, lists // 4)]),
    ]
    print(f"rows: {n:,}; indexes built on the first {built_at:,}, then {n - built_at:,} inserted; "
          f"one principal owns {int(owned.sum()):,} rows", flush=True)
    print(f"{'index':<20} {'read':<6} {'setting':<24} {'recall@10':>9} {'p50 ms':>7} {'p95 ms':>7}")
    try:
        for name, using, reads_all, reads_owned in variants:
            with owner.connect() as conn:
                with conn.begin():
                    conn.execute(text(f"drop table if exists {TABLE}"))
                    conn.execute(text(f"create table {TABLE} (id int primary key, embedding vector({EMBED_DIM}) "
                                      f"not null, owned boolean not null)"))
                    insert(conn, vectors, owned, 0, built_at, one_by_one=False)
                    conn.execute(text(f"create index {TABLE}_ix on {TABLE} {using}"))
                with conn.begin():
                    per_insert = insert(conn, vectors, owned, built_at, built_at + timed, one_by_one=True)
                    insert(conn, vectors, owned, built_at + timed, n, one_by_one=False)
            with owner.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text(f"vacuum analyze {TABLE}"))
            print(f"{name:<20} insert one row: PostgreSQL + round trip p50 {p(per_insert, 50):.2f} ms, "
                  f"mean {statistics.fmean(per_insert):.2f} ms", flush=True)
            with owner.connect() as conn:
                read(conn, *reads_all[0][1:], queries[:20], False)  # warm the index's pages
                for owned_only, reads, truth in ((False, reads_all, truth_all), (True, reads_owned, truth_owned)):
                    for label, sql, setting in reads:
                        found, times = read(conn, sql, setting, queries, owned_only)
                        print(f"{'':<20} {'owned' if owned_only else 'all':<6} {label:<24} "
                              f"{score(found, truth):>9.3f} {p(times, 50):>7.2f} {p(times, 95):>7.2f}", flush=True)
        with owner.connect() as conn:
            found, times = read(conn, EXACT, {"enable_indexscan": "off"}, queries, True)
            print(f"{'exact scan':<20} {'owned':<6} {'(no index)':<24} {score(found, truth_owned):>9.3f} "
                  f"{p(times, 50):>7.2f} {p(times, 95):>7.2f}")
    finally:
        with owner.begin() as conn:
            conn.execute(text(f"drop table if exists {TABLE}"))


if __name__ == "__main__":
    main()
