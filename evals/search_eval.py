"""`memoria eval search`: load a search dataset into a scratch org, run every query through the real
`search`, report hit@k and MRR, and remove the scratch data whatever happens.

Dataset (docs/evals.md): {"now", "corpus": [{id, kind, text}], "queries": [{q, expected: [ids]}]}. Optional
corpus fields give the rows their real shape: contacts `tax_id`, `aliases`, `contact_kind`; memories
`attribute`, `value`, `subject` (a contact's corpus id), `category`, `level`; messages `date`; host
records `ref`, `title`, `tax_id`, `contact`, `date`.
"""
from __future__ import annotations

import datetime as dt
import json
import statistics
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.scratch import remove_scratch, scratch_org
from memory_core.adapters.db import SYSTEM, Database
from memory_core.domain import clock
from memory_core.domain.access import load_access
from memory_core.domain.errors import InvalidInput
from memory_core.domain.models import Contact, Conversation, Memory, Message
from memory_core.domain.vocabulary import CATEGORY_AREA, DOCUMENT_KINDS, SEARCH_KINDS
from memory_core.reading.search import RETRIEVERS, Embed, index_document, search

SINGLE_RETRIEVERS = {"fts_only": ("fts",), "vector_only": ("vector",)}


def load_dataset(path: str | Path) -> dict[str, Any]:
    """Read and check a search dataset; InvalidInput says what is wrong and where."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read the dataset {path}: {exc}") from exc
    if not (isinstance(data, dict) and isinstance(data.get("corpus"), list)
            and isinstance(data.get("queries"), list)):
        raise InvalidInput("the dataset must be an object with 'corpus' and 'queries' lists")
    ids = set()
    for i, item in enumerate(data["corpus"]):
        if not isinstance(item, dict) or not {"id", "kind", "text"} <= item.keys():
            raise InvalidInput(f"corpus[{i}] needs id, kind and text")
        if item["kind"] not in SEARCH_KINDS:
            raise InvalidInput(f"corpus[{i}] has unknown kind {item['kind']!r}")
        if item["id"] in ids:
            raise InvalidInput(f"corpus[{i}] repeats id {item['id']!r}")
        ids.add(item["id"])
    for i, query in enumerate(data["queries"]):
        if not isinstance(query, dict) or not isinstance(query.get("q"), str) or not query.get("expected"):
            raise InvalidInput(f"queries[{i}] needs q and a non-empty expected list")
        missing = [e for e in query["expected"] if e not in ids]
        if missing:
            raise InvalidInput(f"queries[{i}] expects ids not in the corpus: {missing}")
    return data


def _date(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


@dataclass
class Scratch:
    org_id: uuid.UUID
    user_id: uuid.UUID
    ids: dict[str, tuple[str, uuid.UUID]]  # corpus id -> (kind, row id)


def load_scratch(db: Database, data: dict[str, Any], embed: Embed, embed_model: str) -> Scratch:
    """Write the corpus as real rows of a fresh org with one owner; committed, so search sees it."""
    tag = uuid.uuid4().hex[:10]
    now = _date(data.get("now")) or clock.now()
    corpus = data["corpus"]
    vectors = embed([c["text"] for c in corpus]) if corpus else []
    ids: dict[str, tuple[str, uuid.UUID]] = {}
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org, user = scratch_org(s, f"eval-search-{tag}", owner_email=f"eval-search-{tag}@eval.invalid",
                                owner_name="Eval")
        conv = Conversation(channel="eval", external_id=f"eval-{tag}", org_id=org.id, user_id=user.id)
        s.add(conv)
        s.flush()
        for item in (c for c in corpus if c["kind"] == "contact"):
            row = Contact(org_id=org.id, name=item["text"], tax_id=item.get("tax_id"),
                          kind=item.get("contact_kind", "customer"), aliases=item.get("aliases", []))
            s.add(row)
            s.flush()
            ids[item["id"]] = ("contact", row.id)
        for item, vector in zip(corpus, vectors):
            kind = item["kind"]
            if kind == "memory":
                subject = f"contact:{ids[item['subject']][1]}" if item.get("subject") in ids else "org"
                category = item.get("category") or ("customer" if subject != "org" else "company")
                level = item.get("level", "shared")
                row = Memory(org_id=None if level == "personal" else org.id, level=level,
                             owner_user_id=user.id if level != "shared" else None,
                             area=CATEGORY_AREA.get(category, "general"), category=category,
                             subject="self" if level == "personal" else subject,
                             attribute=item.get("attribute") or f"dato_{item['id']}",
                             value=item.get("value", item["text"]), sentence=item["text"],
                             valid_from=now, embedding=vector, embed_model=embed_model)
            elif kind == "message":
                row = Message(conversation_id=conv.id, channel="eval", external_id=f"eval-{tag}-{item['id']}",
                              org_id=org.id, user_id=user.id, role=item.get("role", "user"), text=item["text"],
                              created_at=_date(item.get("date")) or now,
                              sent_at=_date(item.get("date")) or now, embedding=vector, embed_model=embed_model)
            elif kind in DOCUMENT_KINDS:
                contact = ids.get(item.get("contact", ""), (None, None))[1]
                doc_id = index_document(s, org_id=org.id, kind=kind, external_ref=item.get("ref") or item["id"],
                                        title=item.get("title", ""), text=item["text"], contact_id=contact,
                                        tax_id=item.get("tax_id"), doc_date=(_date(item.get("date")) or now).date(),
                                        embed=lambda _texts, v=vector: [v], embed_model=embed_model)
                ids[item["id"]] = (kind, doc_id)
                continue
            else:
                continue
            s.add(row)
            s.flush()
            ids[item["id"]] = (kind, row.id)
        uow.commit()
        return Scratch(org_id=org.id, user_id=user.id, ids=ids)


def _metrics(ranks: list[int | None], latencies: list[float]) -> dict[str, float]:
    n = len(ranks)

    def hit(k: int) -> float:
        return round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) if n else 0.0

    lat = sorted(latencies)
    return {
        "hit_at_1": hit(1), "hit_at_5": hit(5), "hit_at_10": hit(10),
        "mrr": round(sum(1 / r for r in ranks if r is not None) / n, 4) if n else 0.0,
        "latency_ms_p50": round(statistics.median(lat), 1) if lat else 0.0,
        "latency_ms_p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1) if lat else 0.0,
    }


def evaluate(db: Database, data: dict[str, Any], embed: Embed, embed_model: str, *, limit: int = 10,
             baselines: bool = True) -> dict[str, Any]:
    """Run every query through `search` for the scratch org's owner; the scratch data is always removed."""
    scratch = load_scratch(db, data, embed, embed_model)
    try:
        by_row = {row_id: cid for cid, (_, row_id) in scratch.ids.items()}
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, scratch.org_id, user_id=scratch.user_id)
        now = _date(data.get("now"))
        variants = {"fused": RETRIEVERS}
        if baselines:
            variants |= SINGLE_RETRIEVERS
        report: dict[str, Any] = {"n": len(data["queries"])}
        misses = []
        for name, retrievers in variants.items():
            ranks, latencies = [], []
            for query in data["queries"]:
                with db.unit_of_work(access.scope()) as uow:
                    t0 = time.perf_counter()
                    hits = search(uow.session, access, query["q"], limit=limit, embed=embed, embed_model=embed_model,
                                  retrievers=retrievers, now=now)
                    latencies.append((time.perf_counter() - t0) * 1000)
                got = [by_row.get(h.id) for h in hits]
                rank = next((i for i, cid in enumerate(got, 1) if cid in query["expected"]), None)
                ranks.append(rank)
                if name == "fused" and (rank is None or rank > 1):
                    misses.append({"q": query["q"], "expected": query["expected"], "rank": rank, "top3": got[:3]})
            metrics = _metrics(ranks, latencies)
            if name == "fused":
                report.update(metrics)
                tags: dict[str, list[int | None]] = {}
                for query, rank in zip(data["queries"], ranks):
                    tags.setdefault(query.get("tag", "untagged"), []).append(rank)
                report["by_tag"] = {t: {"n": len(r), **{k: v for k, v in _metrics(r, []).items()
                                                        if k in ("hit_at_5", "mrr")}} for t, r in sorted(tags.items())}
            else:
                report[name] = {k: v for k, v in metrics.items() if not k.startswith("latency")}
        report["not_first"] = misses
        return report
    finally:
        remove_scratch(db, scratch.org_id, [scratch.user_id])
