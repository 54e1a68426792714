"""`memoria eval updates`: does a new value supersede the old one, and only when it should?

Each case of an updates JSONL file (format: docs/evals.md) is a short sequence of messages, ingested and
processed in order by the real pipeline (ingest, gate, policy, extraction, write ladder) on a scratch org of
its own (two members who may edit everything and one who may read only "general", automatic mode; removed
after the case). Afterwards the case's memories are read back: the active ones on each expected subject must
say the `holds` words and none of them the `not_holds` words, and the number of supersessions must equal
`supersessions` (a new version that closed an old one, with the notes told beside it, is one). A case's
`asks` are later turns, each ingested as a real message and answered with the block its asker gets: the
block must say its `holds` words and none of its `not_holds` (what is served, and to whom).
"""
from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from pathlib import Path

from sqlalchemy import delete, or_, select

from evals.scratch import remove_scratch
from memory_core.adapters.db import SYSTEM, Database
from memory_core.domain import clock
from memory_core.domain.access import load_access
from memory_core.domain.errors import InvalidInput
from memory_core.domain.model_port import ModelBackend
from memory_core.domain.models import Contact, Membership, Memory, Organization, Outbox, User
from memory_core.domain.text import fold
from memory_core.domain.vocabulary import AREAS
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message
from memory_core.reading.context import assemble_context

# The scratch org's members, by `writer`: two who may edit every area, and one who may read only "general"
# (a customer's terms, in "contacts", are never served to them).
PERMISSIONS = ({a: "edit" for a in AREAS}, {a: "edit" for a in AREAS}, {"general": "read"})
WRITERS = len(PERMISSIONS)


def load_update_cases(path: str | Path) -> list[dict]:
    """The cases of an updates JSONL file, checked: a malformed line is an error naming it, not a skip."""
    cases = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except ValueError as exc:
                raise InvalidInput(f"line {number}: not JSON ({exc})") from exc
            _check_case(case, number)
            cases.append(case)
    if not cases:
        raise InvalidInput("the dataset has no lines")
    return cases


def _check_case(case: dict, number: int) -> None:
    missing = [k for k in ("id", "messages", "expect", "supersessions") if k not in case]
    if missing:
        raise InvalidInput(f"line {number}: missing {', '.join(missing)}")
    if not case["messages"] or not all(isinstance(m, dict) and isinstance(m.get("text"), str) and m["text"]
                                       and m.get("writer", 0) in range(WRITERS) for m in case["messages"]):
        raise InvalidInput(f"line {number}: every message needs a text (and a writer 0, 1 or 2)")
    if not isinstance(case["supersessions"], int) or case["supersessions"] < 0:
        raise InvalidInput(f"line {number}: supersessions must be a count")
    for e in case["expect"]:
        if not _words_of_a_writer(e) or not isinstance(e.get("subject"), str):
            raise InvalidInput(f"line {number}: an expectation needs a subject and lists of holds / not_holds")
    for a in case.get("asks", []):
        if not _words_of_a_writer(a) or not isinstance(a.get("text"), str) or not a["text"]:
            raise InvalidInput(f"line {number}: an ask needs a text, a writer 0, 1 or 2 and lists of holds / not_holds")


def _words_of_a_writer(item) -> bool:
    """An expectation or an ask: a dict whose `holds` and `not_holds` (when given) are lists, of a known writer."""
    return isinstance(item, dict) and isinstance(item.get("holds", []), list) \
        and isinstance(item.get("not_holds", []), list) and item.get("writer", 0) in range(WRITERS)


def eval_updates(database: Database, backend: ModelBackend, cases: list[dict], *,
                 run_tag: str | None = None) -> dict:
    """Run every case on its own scratch org; return the metrics (and each case's result) as one dict."""
    run_tag = run_tag or f"eval-updates-{clock.now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    results = [run_case(database, backend, case, run_tag) for case in cases]
    seconds = time.perf_counter() - started
    return metrics(results, backend, run_tag, seconds)


def run_case(database: Database, backend: ModelBackend, case: dict, run_tag: str) -> dict:
    """One case through the pipeline; what it left, scored against its expectations."""
    org_id, user_ids, contacts = _scratch(database, case)
    try:
        blocks = _feed(database, backend, case, org_id, user_ids, run_tag)
        with database.unit_of_work(SYSTEM) as uow:
            memories = uow.session.scalars(select(Memory).where(
                or_(Memory.org_id == org_id, Memory.owner_user_id.in_(user_ids)))
                .order_by(Memory.created_at)).all()
            rows = [{"subject": m.subject, "attribute": m.attribute, "value": m.value, "sentence": m.sentence,
                     "status": m.status, "level": m.level, "owner": m.owner_user_id, "category": m.category,
                     "superseded_by": m.superseded_by}
                    for m in memories]
    finally:
        remove_scratch(database, org_id, user_ids)
    return score(case, rows, user_ids, contacts, blocks)


def _scratch(database, case):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = Organization(name=f"eval updates {uuid.uuid4().hex[:8]}", memory_mode="automatic")
        s.add(org)
        s.flush()
        users = []
        for permissions in PERMISSIONS:
            u = User(email=f"eval-{uuid.uuid4().hex}@eval.memoria.invalid", name="Eval member")
            s.add(u)
            s.flush()
            s.add(Membership(org_id=org.id, user_id=u.id, role="member", permissions=permissions))
            users.append(u.id)
        contacts = {}
        for c in case.get("contacts", []):
            contact = Contact(org_id=org.id, name=c["name"], kind=c.get("kind", "customer"),
                              tax_id=c.get("tax_id"), aliases=c.get("aliases", []))
            s.add(contact)
            s.flush()
            contacts[f"contact:{contact.id}"] = c["name"]
        uow.commit()
        return org.id, users, contacts


def _feed(database, backend, case, org_id, user_ids, run_tag) -> list[str]:
    """The case's messages through the pipeline, then its asks; the block each ask got, in order."""
    # Days between turns ("days_later": after the one before; a minute when absent), the last one now.
    turns = [*case["messages"], *case.get("asks", [])]
    gaps = [dt.timedelta(days=m.get("days_later", 0), minutes=1) for m in turns]
    sent_at = clock.now() - sum(gaps, dt.timedelta()) - dt.timedelta(minutes=1)
    blocks = []
    for i, m in enumerate(turns):
        sent_at += gaps[i]
        writer = m.get("writer", 0)
        channel = m.get("channel", "web")
        conversation = f"eval-{run_tag}-{case['id']}-{channel}-{writer}"
        common = {"channel": channel, "conversation": conversation, "org_id": org_id,
                  "user_id": user_ids[writer], "phone": None}
        asking = i >= len(case["messages"])
        with database.unit_of_work(SYSTEM) as uow:
            s = uow.session
            if m.get("previous_assistant"):
                ingest_message(s, external_id=f"{conversation}-{i}-a", role="assistant",
                               text=m["previous_assistant"], sent_at=sent_at - dt.timedelta(seconds=20), **common)
            r = ingest_message(s, external_id=f"{conversation}-{i}-u", role="user", text=m["text"],
                               sent_at=sent_at, **common)
            if r.message_id is not None:
                # An ask is not learnt from: what it would teach is not what its block is scored on.
                if not asking:
                    process_message(s, r.message_id, backend, run_tag=run_tag)
                # The eval is its own worker: nothing is left in the outbox for the real one.
                s.execute(delete(Outbox).where(Outbox.message_id == r.message_id))
            access = load_access(s, org_id, user_id=user_ids[writer]) if asking else None
            uow.commit()
        if asking:
            blocks.append(_block(database, backend, access, r, m["text"]))
    return blocks


def _block(database, backend, access, ingested, text: str) -> str:
    """The block the asker gets for their message, as the API builds it once the message is ingested."""
    with database.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, ingested.conversation_id, text, message_id=ingested.message_id,
                                 embed=lambda texts: backend.embed(texts)[0], embed_model=backend.embed_model)
        uow.commit()
    return block.text


def _on_subject(row: dict, expect: dict, user_ids, contacts) -> bool:
    want = fold(expect["subject"])
    if want == "self":
        return row["subject"] == "self" and row["owner"] == user_ids[expect.get("writer", 0)]
    if want == "org":
        return row["subject"] == "org"
    name = contacts.get(row["subject"])
    return fold(row["subject"]) in (want, f"name:{want}") or (name is not None and fold(name) == want)


def score(case: dict, rows: list[dict], user_ids, contacts: dict | None = None,
          blocks: list[str] | None = None) -> dict:
    """A case's result from the memories it left (`rows`: subject, value, sentence, status, owner) and the
    blocks its asks got (`blocks`, in the order of `asks`)."""
    contacts = contacts or {}
    active = [r for r in rows if r["status"] == "active"]
    checks = []
    for e in case["expect"]:
        said = [fold(f"{r['value']} {r['sentence']}") for r in active if _on_subject(r, e, user_ids, contacts)]
        holds = all(any(fold(w) in s for s in said) for w in e.get("holds", []))
        stale = [w for w in e.get("not_holds", []) if any(fold(w) in s for s in said)]
        checks.append({"subject": e["subject"], "holds": holds, "stale": stale})
    asks = []
    for a, block in zip(case.get("asks", []), blocks or [], strict=True):
        said = fold(block)
        asks.append({"text": a["text"], "writer": a.get("writer", 0),
                     "missing": [w for w in a.get("holds", []) if fold(w) not in said],
                     "leaked": [w for w in a.get("not_holds", []) if fold(w) in said], "block": block})
    superseded = len({r.get("superseded_by") or id(r) for r in rows if r["status"] == "superseded"})
    expected = case["supersessions"]
    right = all(c["holds"] and not c["stale"] for c in checks) and superseded == expected \
        and not any(a["missing"] or a["leaked"] for a in asks)
    return {"id": case["id"], "right": right, "checks": checks, "asks": asks, "superseded": superseded,
            "expected_supersessions": expected,
            "memories": [{**r, "owner": str(r["owner"]) if r["owner"] else None,
                          "superseded_by": str(r["superseded_by"]) if r.get("superseded_by") else None} for r in rows]}


def metrics(results: list[dict], backend=None, run_tag: str | None = None, seconds: float | None = None) -> dict:
    checks = [c for r in results for c in r["checks"]]
    asks = [a for r in results for a in r.get("asks", [])]
    return {
        "n": len(results),
        "backend": getattr(backend, "name", "?"),
        "cases_right": sum(r["right"] for r in results),
        "holds_right": f"{sum(c['holds'] for c in checks)}/{len(checks)}",
        # Expectations with an old value still said by an active memory on their subject.
        "stale_left_active": sum(bool(c["stale"]) for c in checks),
        "wrong_supersessions": sum(max(0, r["superseded"] - r["expected_supersessions"]) for r in results),
        "missing_supersessions": sum(max(0, r["expected_supersessions"] - r["superseded"]) for r in results),
        # Blocks that said every word they should and none they must not; words missed and words leaked.
        "asks_right": f"{sum(not a['missing'] and not a['leaked'] for a in asks)}/{len(asks)}",
        "asks_missing": sum(bool(a["missing"]) for a in asks),
        "asks_leaked": sum(bool(a["leaked"]) for a in asks),
        "wrong": [r["id"] for r in results if not r["right"]],
        "cases": results,
        "seconds": round(seconds, 1) if seconds else None,
        "run_tag": run_tag,
    }
