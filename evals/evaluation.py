"""`memoria eval gate|extraction`: the real pipeline over labelled sets, scored, cost read from the ledger.

The gate eval runs each line of a gate JSONL file (format: docs/evals.md) through ingest, gate, policy,
extraction and the write ladder, as a member who may edit everything in an automatic-mode org. The
org is a scratch one created for the run and removed after it (its users too); the ledger rows of
the run stay, tagged with the run's tag, because they record real spending.
"""
from __future__ import annotations

import importlib.util
import json
import time
import uuid
from collections import Counter
from decimal import Decimal
from pathlib import Path

from sqlalchemy import delete, func, select

from evals.scratch import remove_scratch
from memory_core.adapters.db import SYSTEM, Database
from memory_core.domain import clock
from memory_core.domain.errors import InvalidInput
from memory_core.domain.model_port import ModelBackend
from memory_core.domain.models import Membership, Organization, Outbox, UsageLedger, User
from memory_core.domain.text import fold
from memory_core.domain.vocabulary import AREAS
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message

POLICY_KINDS = ("secret", "special", "bank_account", "insult")
EXPECTS = ("learn", "propose", "refuse", "ignore")
REQUIRED = ("id", "text", "remember", "policy", "expect")
ROOT = Path(__file__).resolve().parents[1]


def load_gate_rows(path: str | Path) -> list[dict]:
    """The lines of a gate JSONL file, checked: a malformed line is an error naming it, not a skip."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InvalidInput(f"line {number}: not JSON ({exc})") from exc
            missing = [k for k in REQUIRED if k not in row]
            if missing:
                raise InvalidInput(f"line {number}: missing {', '.join(missing)}")
            if row["expect"] not in EXPECTS or row["policy"] not in (*POLICY_KINDS, "none"):
                raise InvalidInput(f"line {number}: unknown expect or policy")
            if not all(isinstance(f, dict) and "subject" in f and isinstance(f.get("holds"), list)
                       for f in row.get("facts", [])):
                raise InvalidInput(f"line {number}: each of facts needs a subject and a list of holds")
            rows.append(row)
    if not rows:
        raise InvalidInput("the dataset has no lines")
    return rows


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def eval_gate(database: Database, backend: ModelBackend, rows: list[dict], *, run_tag: str | None = None,
              errors: list | None = None) -> dict:
    """Run every line through the pipeline on a scratch org; return the metrics as one dict."""
    run_tag = run_tag or f"eval-gate-{clock.now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    org_id, user_ids = _scratch_org(database)
    results: list[tuple[dict, object]] = []
    started = time.perf_counter()
    try:
        for i, row in enumerate(rows):
            results.append((row, _run_line(database, backend, org_id, user_ids, row, i, run_tag)))
    finally:
        remove_scratch(database, org_id, user_ids)
    seconds = time.perf_counter() - started
    with database.unit_of_work(SYSTEM) as uow:
        ledger = uow.session.execute(select(UsageLedger.purpose, func.count(), func.sum(UsageLedger.cost_usd),
                                            func.sum(UsageLedger.input_tokens + UsageLedger.output_tokens))
                                     .where(UsageLedger.run_tag == run_tag).group_by(UsageLedger.purpose)).all()
    return _metrics(results, ledger, backend, run_tag, seconds, errors)


def _run_line(database, backend, org_id, user_ids, row, i, run_tag):
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        user_id = user_ids[i % len(user_ids)]
        conversation = f"eval-{run_tag}-{row['id']}"
        if row.get("previous_assistant"):
            ingest_message(s, channel="eval", conversation=conversation, external_id=f"{conversation}-a",
                           org_id=org_id, user_id=user_id, phone=None, role="assistant",
                           text=row["previous_assistant"])
        r = ingest_message(s, channel="eval", conversation=conversation, external_id=f"{conversation}-u",
                           org_id=org_id, user_id=user_id, phone=None, role="user", text=row["text"])
        outcome = process_message(s, r.message_id, backend, run_tag=run_tag)
        # The eval is its own worker: nothing is left in the outbox for the real one.
        s.execute(delete(Outbox).where(Outbox.message_id == r.message_id))
        uow.commit()
        return outcome


def _scratch_org(database) -> tuple[uuid.UUID, list[uuid.UUID]]:
    with database.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = Organization(name=f"eval scratch {uuid.uuid4().hex[:8]}", memory_mode="automatic")
        s.add(org)
        s.flush()
        # A few members, so one line's personal facts rarely meet the next line's.
        users = []
        for _ in range(16):
            u = User(email=f"eval-{uuid.uuid4().hex}@eval.memoria.invalid", name="Eval member")
            s.add(u)
            s.flush()
            s.add(Membership(org_id=org.id, user_id=u.id, role="member", permissions={a: "edit" for a in AREAS}))
            users.append(u.id)
        uow.commit()
        return org.id, users




def _metrics(results, ledger, backend, run_tag, seconds, errors) -> dict:
    n = len(results)
    gated = [(row, out) for row, out in results if out.decision is not None]
    tp = sum(1 for row, out in gated if out.decision.passes and row["remember"])
    fp = sum(1 for row, out in gated if out.decision.passes and not row["remember"])
    fn = sum(1 for row, out in gated if not out.decision.passes and row["remember"])
    matches = [out.expect == row["expect"] for row, out in results]
    # The whole pipeline as a detector: something kept (learnt or proposed) when something should be.
    kept = [(out.expect in ("learn", "propose"), row["expect"] in ("learn", "propose")) for row, out in results]
    k_tp = sum(p and e for p, e in kept)
    k_fp = sum(p and not e for p, e in kept)
    k_fn = sum(e and not p for p, e in kept)
    policy = {}
    for kind in POLICY_KINDS:
        lines = [(row, out) for row, out in results if row["policy"] == kind]
        policy[kind] = {"n": len(lines), "handled": sum(out.expect == row["expect"] for row, out in lines)}
    bank_applied = sum(1 for row, out in results for w in out.writes
                       if w.outcome in ("learnt", "superseded") and w.memory is not None
                       and w.memory.attribute == "cuenta_bancaria" and w.memory.level == "shared")
    cost = sum((c or Decimal(0)) for _, _, c, _ in ledger)
    tokens = sum((t or 0) for _, _, _, t in ledger)
    if errors is not None:
        for row, out in results:
            if out.expect != row["expect"] or (out.decision is not None and out.decision.passes != row["remember"]) \
                    or ("subject" in row and not _placed_right(row, out)) or ("holds" in row and not _holds(row, out)) \
                    or ("facts" in row and not _facts_right(row, out)):
                errors.append({"id": row["id"], "text": row["text"], "expect": row["expect"], "got": out.expect,
                               "remember": row["remember"],
                               "p_remember": round(out.decision.remember, 3) if out.decision else None,
                               "outcome": out.outcome, "reason": out.reason,
                               "kept": [f"{m.subject} · {m.attribute} = {m.value}" for m in _kept(out)]})
    # Lines that say on whom their fact belongs ("subject": null for a line that must teach nothing): right when
    # the outcome is, and what was learnt or proposed is on that subject alone.
    placed = [_placed_right(row, out) for row, out in results if "subject" in row]
    # Lines that name words what is kept must say ("holds": the question a short reply answers): right when the
    # outcome is, and every memory learnt or proposed holds each of them in its value or sentence.
    held = [_holds(row, out) for row, out in results if "holds" in row]
    return {
        "n": n,
        "backend": getattr(backend, "name", "?"),
        "subject_lines": {"n": len(placed), "right": sum(placed)} if placed else None,
        "holds_lines": {"n": len(held), "right": sum(held)} if held else None,
        "facts": _facts_score([(row, out) for row, out in results if "facts" in row]),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        # Secrets never reach the gate (the denylist refuses them first), so the gate is scored on the rest.
        "gate_n": len(gated),
        "expect_accuracy": _ratio(sum(matches), n),
        "pipeline": {"precision": _ratio(k_tp, k_tp + k_fp), "recall": _ratio(k_tp, k_tp + k_fn)},
        "policy": policy,
        "secrets_refused": f"{sum(out.outcome == 'refused' for row, out in results if row['policy'] == 'secret')}/"
                           f"{policy['secret']['n']}",
        "bank_accounts_applied": bank_applied,
        "confusion": dict(sorted(Counter(f"{row['expect']}->{out.expect}" for row, out in results).items())),
        "cost_per_1000_usd": float(round(cost / n * 1000, 6)) if n else 0.0,
        "tokens_per_1000": round(tokens / n * 1000) if n else 0,
        "calls": {purpose: calls for purpose, calls, _, _ in ledger},
        "messages_per_second": round(n / seconds, 1) if seconds else None,
        "run_tag": run_tag,
    }


def _kept(out) -> list:
    """The memories a line learnt or proposed."""
    return [w.memory for w in out.writes if w.memory is not None] + \
        [w.proposal for w in out.writes if w.proposal is not None]


def _placed_right(row: dict, out) -> bool:
    if out.expect != row["expect"]:
        return False
    return row["subject"] is None or {fold(m.subject) for m in _kept(out)} == {fold(row["subject"])}


def _holds(row: dict, out) -> bool:
    if out.expect != row["expect"]:
        return False
    values = [fold(f"{m.value} {m.sentence}") for m in _kept(out)]
    return all(all(fold(word) in v for word in row["holds"]) for v in values)


def _fact_found(fact: dict, memory) -> bool:
    return fold(memory.subject) == fold(fact["subject"]) and \
        all(fold(word) in fold(f"{memory.value} {memory.sentence}") for word in fact["holds"])


def _facts_tally(row: dict, out) -> tuple[int, int, int]:
    """(facts of the line some kept memory holds, memories kept, kept memories that hold none of its facts)."""
    kept = _kept(out)
    found = sum(any(_fact_found(f, m) for m in kept) for f in row["facts"])
    extra = sum(not any(_fact_found(f, m) for f in row["facts"]) for m in kept)
    return found, len(kept), extra


def _facts_right(row: dict, out) -> bool:
    found, _, extra = _facts_tally(row, out)
    return found == len(row["facts"]) and not extra


def _facts_score(lines: list) -> dict | None:
    """Lines that list every fact they hold ("facts": each a subject and the words its memory must say; [] for a
    line that holds none), scored memory by memory, whatever the line's outcome: how many of those facts some
    memory learnt or proposed holds, and how many of the memories hold none of them (a greeting kept, a fact on
    the wrong subject). `lines_right`: every fact found and no memory besides."""
    if not lines:
        return None
    tallies = [(len(row["facts"]), *_facts_tally(row, out)) for row, out in lines]
    expected, found, kept, extra = (sum(t[i] for t in tallies) for i in range(4))
    return {"lines": len(lines), "lines_right": sum(f == e and not x for e, f, _, x in tallies),
            "expected": expected, "found": found, "kept": kept, "extra": extra,
            "recall": _ratio(found, expected), "precision": _ratio(kept - extra, kept)}


# ------------------------------------------------------------------------------------ extraction

class _MeteredExtractor:
    def __init__(self, backend):
        self.backend, self.cost, self.calls = backend, 0.0, 0

    def extract(self, context):
        facts, usage = self.backend.extract(context)
        self.cost += usage.cost_usd
        self.calls += 1
        return facts, usage


def eval_extraction(backend: ModelBackend, path: str | Path) -> dict:
    """Score backend.extract on an extraction JSONL file (scoring from evals/extraction_report.py)."""
    spec = importlib.util.spec_from_file_location("memoria_extraction_report", ROOT / "evals" / "extraction_report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    metered = _MeteredExtractor(backend)
    result = report.evaluate(report.load(Path(path)), extractor=metered)
    result["backend"] = getattr(backend, "name", "?")
    result["cost_per_1000_usd"] = round(metered.cost / metered.calls * 1000, 6) if metered.calls else 0.0
    return result
