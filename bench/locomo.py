"""LoCoMo retrieval bench: full-text only, vector only and fused, side by side in one run.

    python bench/locomo.py [--conversations N] [--data ../shared/benchmarks/locomo10] [--json]
    python bench/locomo.py --learn --data evals/conversations_es   # every conversation of a folder of its own
    MEMORIA_DATA_DIR=.memoria-locomo python bench/locomo.py --learn [--conversations 44,47] [--tune]
        [--backend local|openai] [--keep] [--reuse] [--dump FILE] [--json]   # see bench/locomo_learn.py

Each conversation's turns become messages of one principal (a scratch org and user per conversation,
written directly as rows with batch-computed embeddings: it is a bench, not the pipeline). Every
question outside category 5 with evidence is searched as that principal through the real `search`;
evidence recall@k is the share of evidence turns in the top k (averaged over questions) and hit@k says
whether at least one is. Query latency (embedding included) is for the fused search. The scratch rows
are removed at the end.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from locomo_learn import sessions_of, turn_text  # noqa: E402  (beside this file)
from sqlalchemy import insert  # noqa: E402

from bench.percentiles import pct  # noqa: E402
from evals.scratch import remove_scratch, scratch_org  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database  # noqa: E402
from memory_core.adapters.migrate import migrate  # noqa: E402
from memory_core.backends.local_embedder import LocalEmbedder  # noqa: E402
from memory_core.domain.access import load_access  # noqa: E402
from memory_core.domain.models import Conversation, Message  # noqa: E402
from memory_core.reading.search import RETRIEVERS, search  # noqa: E402

# The shared data sits beside the checkout (/work/main -> /work/shared) or beside its worktrees' folder.
DEFAULT_DATA = next((p / "shared" / "benchmarks" / "locomo10" for p in Path(__file__).resolve().parents[2:4]
                     if (p / "shared" / "benchmarks" / "locomo10").is_dir()),
                    Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "locomo10")
VARIANTS = {"fts_only": ("fts",), "vector_only": ("vector",), "fused": RETRIEVERS}
KS = (5, 10)


def turns_of(conv: dict) -> list[tuple[str, str, dt.datetime]]:
    """(dia_id, "Speaker: text", session date) for every turn, in order."""
    return [(turn["dia_id"], f"{turn['speaker']}: {turn_text(turn)}", when)
            for _n, when, turns in sessions_of(conv) for turn in turns]


def questions_of(conv: dict) -> list[dict]:
    return [q for q in conv["qa"] if q.get("category") != 5 and q.get("evidence")]


def load(db, name: str, turns, embedder: LocalEmbedder) -> tuple[uuid.UUID, uuid.UUID, dict[uuid.UUID, str]]:
    """One scratch org + user per conversation; its turns as that user's messages, with vectors."""
    tag = uuid.uuid4().hex[:8]
    vectors = embedder.embed([t for _, t, _ in turns])
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org, user = scratch_org(s, f"bench-locomo-{name}-{tag}", owner_email=f"locomo-{tag}@bench.invalid",
                                owner_name=name)
        conv = Conversation(channel="bench", external_id=f"locomo-{name}-{tag}", org_id=org.id, user_id=user.id)
        s.add(conv)
        s.flush()
        rows = [dict(id=uuid.uuid4(), conversation_id=conv.id, channel="bench", external_id=f"{tag}:{dia}",
                     org_id=org.id, user_id=user.id, role="user", text=text, created_at=when, sent_at=when,
                     embedding=vec, embed_model=embedder.model_name)
                for (dia, text, when), vec in zip(turns, vectors)]
        s.execute(insert(Message), rows)
        uow.commit()
    return org.id, user.id, {r["id"]: r["external_id"].split(":", 1)[1] for r in rows}


def remove(db, org_id: uuid.UUID, user_id: uuid.UUID) -> None:
    remove_scratch(db, org_id, [user_id])


def run(data_dir: Path, conversations: int | None) -> dict:
    migrate()
    db = get_database()
    files = sorted(data_dir.glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0)
    if conversations:
        files = files[:conversations]
    bulk = LocalEmbedder(batch_size=32)  # bulk loading: batched (vectors move by cosine < 0.002)
    query_embedder = LocalEmbedder()
    query_embedder.warm_up()
    sums = {v: {f"{m}@{k}": 0.0 for m in ("recall", "hit") for k in KS} for v in VARIANTS}
    latencies: list[float] = []
    n_questions = n_turns = 0
    t_start = time.perf_counter()
    for path in files:
        conv = json.loads(path.read_text(encoding="utf-8"))
        turns = turns_of(conv)
        n_turns += len(turns)
        org_id, user_id, dia_of = load(db, path.stem, turns, bulk)
        try:
            with db.unit_of_work(SYSTEM) as uow:
                access = load_access(uow.session, org_id, user_id=user_id)
            for q in questions_of(conv):
                evidence = set(q["evidence"])
                n_questions += 1
                for variant, retrievers in VARIANTS.items():
                    with db.unit_of_work(access.scope()) as uow:
                        t0 = time.perf_counter()
                        hits = search(uow.session, access, str(q["question"]), kinds=["message"], limit=10,
                                      embed=query_embedder.embed, retrievers=retrievers)
                        if variant == "fused":
                            latencies.append((time.perf_counter() - t0) * 1000)
                    got = [dia_of.get(h.id) for h in hits]
                    for k in KS:
                        found = evidence & set(got[:k])
                        sums[variant][f"recall@{k}"] += len(found) / len(evidence)
                        sums[variant][f"hit@{k}"] += 1.0 if found else 0.0
        finally:
            remove(db, org_id, user_id)
    report = {"conversations": len(files), "turns": n_turns, "questions": n_questions}
    for variant in VARIANTS:
        report[variant] = {m: round(v / max(1, n_questions), 4) for m, v in sums[variant].items()}
    report["fused_latency_ms"] = {"p50": round(statistics.median(latencies), 1) if latencies else 0.0,
                                  "p95": pct(latencies, 0.95)}
    report["fused_beats_both_on_recall@10"] = all(
        report["fused"]["recall@10"] > report[v]["recall@10"] for v in ("fts_only", "vector_only"))
    report["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", default=None,
                        help="Retrieval: only the first N conversations. --learn: conversation ids, e.g. 44,47.")
    parser.add_argument("--learn", action="store_true",
                        help="Ingest conversations through the real pipeline and measure what it learnt.")
    parser.add_argument("--tune", action="store_true",
                        help="--learn on the tuning conversations (26, 30, 41, 42, 43) instead of the held-out ones.")
    parser.add_argument("--backend", choices=("local", "openai"), default="local", help="--learn: the model backend.")
    parser.add_argument("--keep", action="store_true", help="--learn: leave the learnt scratch orgs in the database.")
    parser.add_argument("--reuse", action="store_true",
                        help="--learn: measure the blocks again on conversations a --keep run left (no ingest).")
    parser.add_argument("--dump", type=Path, default=None, help="--learn: write each question and its block here.")
    parser.add_argument("--json", action="store_true", help="Print JSON only (the default prints JSON too).")
    args = parser.parse_args()
    if not args.data.is_dir():
        parser.error(f"no LoCoMo data at {args.data}")
    from memory_core.adapters.runtime import start_servers

    start_servers()  # a bench runs alone: it starts the embedded servers it needs
    if args.learn:
        import locomo_learn

        picked = ([c.strip() for c in args.conversations.split(",") if c.strip()] if args.conversations
                  else locomo_learn.default_conversations(args.data, tune=args.tune))
        report = locomo_learn.run(args.data, picked, args.backend, keep=args.keep, reuse=args.reuse,
                                  dump=args.dump)
    else:
        if args.conversations is not None and not args.conversations.isdigit():
            parser.error("--conversations takes a number without --learn")
        report = run(args.data, int(args.conversations) if args.conversations else None)
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
