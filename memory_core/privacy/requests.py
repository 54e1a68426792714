"""Erasure (GDPR art. 17) and access (art. 15) requests: intake, verification, preview, execution in

One module on purpose (~690 lines): the plan, its execution, the verification scan and the export
must agree table by table; in one file a change to one is seen beside the others.

resumable batches, a verification scan over every table, a receipt that names no erased data, and
the export of everything stored about a subject.

One plan drives preview, execution and export: a list of steps, each a table, a predicate on the
subject, and what happens to the matching rows (deleted, anonymised, or kept and why). So the export
holds exactly the rows the preview counted, and the receipt counts what execution did.

Runs in the system scope (RLS mode "system"): a privacy officer acts across orgs. Every step is
audited with ids and counts only; the audit log is append-only and never holds the subject's data.
"""
from __future__ import annotations

import calendar
import datetime as dt
import io
import json
import re
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from memory_core.adapters.security import keyed_digest, secret
from memory_core.domain import audit, clock
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import Contact, Conversation, PrivacyRequest, User
from memory_core.domain.vocabulary import PrivacyKind, PrivacyStatus, PrivacySubjectType
from memory_core.privacy import readable_export
from memory_core.tenancy.accounts import email_key

KINDS = tuple(PrivacyKind)
# Access (art. 15) and portability (art. 20) end with an export delivered to the person; erasure (art. 17) with a
# hard delete. Each kind has its own legal basis, used when the officer writes none.
EXPORT_KINDS = (PrivacyKind.ACCESS, PrivacyKind.PORTABILITY)
BASIS = {"erasure": "GDPR art. 17 (right to erasure)", "access": "GDPR art. 15 (right of access)",
         "portability": "GDPR art. 20 (right to data portability)"}
CLOSED = (PrivacyStatus.EXECUTED, PrivacyStatus.DELIVERED, PrivacyStatus.REJECTED)
SUBJECT_TYPES = tuple(PrivacySubjectType)
ERASED = "[erased]"
BATCH = 2000
# Columns never exported: derived vectors and indexes, and secrets stored as digests.
NOT_EXPORTED = {"embedding", "search_tsv", "password_hash", "code_hmac", "key_hash", "token_hash"}
PHONE_RE = re.compile(r"^\+?\d{6,15}$")


def add_month(when: dt.datetime) -> dt.datetime:
    """One calendar month later (GDPR art. 12(3)); the 31st becomes the month's last day."""
    year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
    return when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))


# ------------------------------------------------------------------------------------------ subject

@dataclass
class Subject:
    """Who or what a request is about, and every identifier the scan looks for."""
    type: str
    params: dict[str, Any]
    ids: list[uuid.UUID] = field(default_factory=list)  # matched against uuid columns and as text
    strings: list[str] = field(default_factory=list)  # matched as substrings (email, phone, tax id)
    names: list[str] = field(default_factory=list)  # matched as whole words, case-insensitively

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "params": {k: str(v) if isinstance(v, uuid.UUID) else v
                                              for k, v in self.params.items()},
                "ids": [str(i) for i in self.ids], "strings": self.strings, "names": self.names}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Subject:
        return cls(type=data["type"], params=data["params"], ids=[uuid.UUID(i) for i in data["ids"]],
                   strings=data["strings"], names=data["names"])


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value).strip())
    except ValueError:
        raise InvalidInput(f"{what} must be an id (UUID).", field="subject_ref") from None


def normalise_ref(session: Session, subject_type: str, ref: str) -> str:
    """The canonical reference: a user id (an email is accepted), a phone, a contact or conversation id."""
    ref = (ref or "").strip()
    if not ref:
        raise InvalidInput("Say who or what the request is about.", field="subject_ref")
    if subject_type == "user":
        if "@" in ref:
            uid = session.scalar(select(User.id).where(User.email.ilike(ref)))
            if uid is None:
                raise NotFound("No user has that email.")
            return str(uid)
        uid = _uuid(ref, "A user")
        if session.get(User, uid) is None:
            raise NotFound("No such user.")
        return str(uid)
    if subject_type == "phone":
        compact = re.sub(r"[\s\-().]", "", ref)
        if not PHONE_RE.match(compact):
            raise InvalidInput("A phone must be an international number like +34611222333.", field="subject_ref")
        return "+" + compact.lstrip("+")
    model = {"contact": Contact, "conversation": Conversation}.get(subject_type)
    if model is None:
        raise InvalidInput("The subject must be a user, a phone, a contact or a conversation.", field="subject_type")
    rid = _uuid(ref, f"A {subject_type}")
    if session.get(model, rid) is None:
        raise NotFound(f"No such {subject_type}.")
    return str(rid)


def resolve_subject(session: Session, subject_type: str, ref: str) -> Subject:
    if subject_type == "user":
        user = session.get(User, uuid.UUID(ref))
        if user is None:
            raise NotFound("The user no longer exists.")
        params = {"uid": user.id, "phone": user.phone, "email": user.email.lower(),
                  "name_subject": f"name:{user.name}".lower()}
        return Subject("user", params, ids=[user.id], strings=[s for s in (user.email, user.phone) if s],
                       names=[user.name] if len(user.name.strip()) >= 4 else [])
    if subject_type == "phone":
        return Subject("phone", {"uid": None, "phone": ref, "email": None, "name_subject": None}, strings=[ref])
    if subject_type == "contact":
        c = session.get(Contact, uuid.UUID(ref))
        if c is None:
            raise NotFound("The contact no longer exists.")
        names = [n for n in [c.name, *(c.aliases or [])] if len(n.strip()) >= 4]
        return Subject("contact", {"cid": c.id, "org": c.org_id, "mem_subject": f"contact:{c.id}",
                                   "name_subject": f"name:{c.name}".lower()},
                       ids=[c.id], strings=[c.tax_id] if c.tax_id else [], names=names)
    conv = session.get(Conversation, uuid.UUID(ref))
    if conv is None:
        raise NotFound("The conversation no longer exists.")
    return Subject("conversation", {"conv": conv.id}, ids=[conv.id], strings=[conv.external_id])


# ---------------------------------------------------------------------------------------------- plan

@dataclass(frozen=True)
class Step:
    table: str
    category: str  # delete | anonymise | keep
    where: str
    set: str | None = None  # for anonymise/keep-with-update: the SET clause; None: nothing to change
    reason: str = ""
    pk: str = "id"


def _subsets(subject: Subject) -> dict[str, str]:
    """SQL sub-selects of the subject's own rows, per kind."""
    if subject.type in ("user", "phone"):
        conv = "select id from conversations where user_id = :uid or phone = :phone"
        msg = f"select id from messages where user_id = :uid or phone = :phone or conversation_id in ({conv})"
        mem = ("select id from memories where owner_user_id = :uid or owner_phone = :phone "
               "or lower(subject) = :name_subject")
    elif subject.type == "contact":
        conv = "select null::uuid where false"
        msg = "select null::uuid where false"
        mem = ("select id from memories where org_id = :org and (subject = :mem_subject "
               "or lower(subject) = :name_subject)")
    else:
        conv = "select :conv"
        msg = "select id from messages where conversation_id = :conv"
        # Erasure takes the personal and private memories that came only from it, edited or not.
        mem = ("select m.id from memories m where m.level in ('personal', 'private') "
               "and exists (select 1 from memory_sources s where s.memory_id = m.id and s.conversation_id = :conv) "
               "and not exists (select 1 from memory_sources s where s.memory_id = m.id "
               "and (s.conversation_id is null or s.conversation_id <> :conv))")
    trace = f"select id from memory_traces where conversation_id in ({conv})"
    if subject.type in ("user", "phone"):
        trace = f"select id from memory_traces where user_id = :uid or phone = :phone or conversation_id in ({conv})"
    return {"conv": conv, "msg": msg, "mem": mem, "trace": trace}


# Free text where the subject may be mentioned by others: scrubbed (anonymised) where it stays.
MENTION_COLUMNS = [
    ("messages", "text", "id"), ("memories", "sentence", "id"), ("memories", "value", "id"),
    ("memories", "decision_reason", "id"), ("notifications", "text", "id"), ("notifications", "data", "id"),
    ("memory_traces", "block_text", "id"), ("conversation_summaries", "content", "conversation_id"),
    ("documents", "title", "id"), ("documents", "text", "id"), ("outbox", "last_error", "id"),
]
JSON_COLUMNS = {("notifications", "data"), ("conversation_summaries", "content")}
# Rows whose text changed: their vectors describe the old text, so they leave the vector index.
REINDEX = {"messages", "memories", "documents"}


def mention_pattern(subject: Subject) -> str | None:
    """One case-insensitive POSIX regex for every identifier that may appear in free text."""
    parts = [re.escape(s) for s in subject.strings] + [r"\m" + re.escape(n) + r"\M" for n in subject.names]
    return "(" + "|".join(parts) + ")" if parts else None


def plan(subject: Subject) -> list[Step]:
    """What erasure does, table by table, children before parents."""
    q = _subsets(subject)
    steps: list[Step] = []
    hold = "legal hold: the law requires keeping it; owner detached, required fields kept"
    if subject.type in ("user", "phone"):
        steps += [
            Step("documents", "keep", "(owner_user_id = :uid or owner_phone = :phone) and legal_hold",
                 "owner_user_id = null, owner_phone = null", hold),
            Step("usage_ledger", "keep", f"message_id in ({q['msg']})", "message_id = null",
                 "usage and cost accounting: kept without identifiers"),
            Step("memories", "anonymise",
                 f"(author_user_id = :uid or author_phone = :phone or decided_by = :uid) and id not in ({q['mem']})",
                 "author_user_id = case when author_user_id = :uid then null else author_user_id end, "
                 "author_phone = case when author_phone = :phone then null else author_phone end, "
                 "decided_by = case when decided_by = :uid then null else decided_by end",
                 "shared knowledge of the org: kept without its author"),
            Step("api_keys", "anonymise", "created_by = :uid", "created_by = null",
                 "org key: kept without its creator"),
            Step("platform_api_keys", "anonymise", "created_by = :uid", "created_by = null",
                 "platform key: kept without its creator"),
            Step("account_tokens", "anonymise", "created_by = :uid and user_id is distinct from :uid "
                 "and lower(email) is distinct from :email", "created_by = null",
                 "a link sent to someone else: kept without who sent it"),
            Step("privacy_requests", "anonymise", "handled_by = :uid", "handled_by = null",
                 "another request: kept without its handler"),
            Step("users", "anonymise", "phone = :phone and id is distinct from :uid", "phone = null",
                 "the account stays; the erased number is unlinked"),
        ]
    elif subject.type == "contact":
        steps += [
            Step("documents", "keep", "contact_id = :cid and legal_hold", "contact_id = null", hold),
        ]
    steps += [
        Step("outbox", "delete", f"message_id in ({q['msg']})"),
        Step("notifications", "delete",
             f"memory_id in ({q['mem']}) or conversation_id in ({q['conv']})"
             + (" or user_id = :uid or phone = :phone" if subject.type in ("user", "phone") else "")),
        Step("trace_items", "delete", f"trace_id in ({q['trace']}) or memory_id in ({q['mem']})"),
        Step("memory_traces", "delete", f"id in ({q['trace']})"),
        Step("memory_sources", "delete",
             f"memory_id in ({q['mem']}) or source_memory_id in ({q['mem']}) or message_id in ({q['msg']}) "
             f"or conversation_id in ({q['conv']})"),
        Step("memories", "delete", f"id in ({q['mem']})"),
    ]
    if subject.type != "contact":
        steps += [
            Step("conversation_summaries", "delete", f"conversation_id in ({q['conv']})", pk="conversation_id"),
            Step("messages", "delete", f"id in ({q['msg']})"),
            Step("conversations", "delete", f"id in ({q['conv']})"),
        ]
    if subject.type in ("user", "phone"):
        steps += [
            Step("link_codes", "delete", "user_id = :uid or used_by_phone = :phone"),
            Step("account_tokens", "delete", "user_id = :uid or lower(email) = :email"),
            Step("phone_authorizations", "delete", "user_id = :uid or phone = :phone"),
            Step("memberships", "delete", "user_id = :uid"),
            Step("documents", "delete", "(owner_user_id = :uid or owner_phone = :phone) and not legal_hold"),
            Step("login_attempts", "delete",
                 "key = :email_key or key = :phone_key or starts_with(key, :email_key || ' from ')"),
        ]
    if subject.type == "user":
        steps.append(Step("users", "delete", "id = :uid"))
    if subject.type == "contact":
        steps += [Step("documents", "delete", "contact_id = :cid and not legal_hold"),
                  Step("contacts", "delete", "id = :cid")]
    pattern = mention_pattern(subject)
    if pattern:
        by_table: dict[str, list[str]] = {}
        for table, col, _pk in MENTION_COLUMNS:
            by_table.setdefault(table, []).append(col)
        for table, cols in by_table.items():
            exprs = {c: f"{c}::text" if (table, c) in JSON_COLUMNS else c for c in cols}
            where = "(" + " or ".join(f"{e} ~* :pattern" for e in exprs.values()) + ")"
            if table == "documents":
                where += " and not legal_hold"
            sets = []
            for c, e in exprs.items():
                scrubbed = f"regexp_replace({e}, :pattern, '{ERASED}', 'gi')"
                sets.append(f"{c} = ({scrubbed})::jsonb" if (table, c) in JSON_COLUMNS else f"{c} = {scrubbed}")
            if table in REINDEX:
                sets.append("embedding = null, embed_model = null")
            pk = next(k for t, _c, k in MENTION_COLUMNS if t == table)
            steps.append(Step(table, "anonymise", where, ", ".join(sets),
                              "mentions of the subject replaced by " + ERASED, pk=pk))
    steps.append(Step("audit_log", "keep",
                      "actor_user_id = any(:id_list) or target_id = any(:id_texts)", None,
                      "append-only audit log: opaque ids and counts only, no personal data; "
                      "the ids no longer resolve to anyone"))
    return steps


def _params(subject: Subject) -> dict[str, Any]:
    """Every named parameter the plan's statements may use, each with a value (None when the subject
    has none). A statement binds the ones it names; SQLAlchemy leaves the others out."""
    p = dict(subject.params)
    for k in ("uid", "cid", "org", "conv"):
        if isinstance(p.get(k), str):
            p[k] = uuid.UUID(p[k])
    key = secret("link_code_key")
    p["email_key"] = email_key(p["email"]) if p.get("email") else None
    p["phone_key"] = ("link:" + keyed_digest(key, "phone:" + p["phone"])) if p.get("phone") else None
    p["pattern"] = mention_pattern(subject)
    p["id_list"] = list(subject.ids)
    p["id_texts"] = [str(i) for i in subject.ids]
    for k in ("uid", "phone", "email", "name_subject", "cid", "org", "mem_subject", "conv"):
        p.setdefault(k, None)
    return p


def _count(session: Session, step: Step, params: dict[str, Any]) -> int:
    return session.execute(text(f"select count(*) from {step.table} where {step.where}"), params).scalar_one()


@dataclass(frozen=True)
class RowSet:
    """Distinct rows of one table in one category: the union of its steps, less rows a delete takes."""
    table: str
    category: str
    where: str
    pk: str
    reason: str


def row_sets(steps: list[Step]) -> list[RowSet]:
    groups: dict[tuple[str, str], list[Step]] = {}
    for st in steps:
        groups.setdefault((st.table, st.category), []).append(st)
    out = []
    for (table, category), group in groups.items():
        where = " or ".join(f"({st.where})" for st in group)
        deletes = groups.get((table, "delete"), []) if category != "delete" else []
        if deletes:
            taken = " or ".join(f"({st.where})" for st in deletes)
            where = f"({where}) and {group[0].pk} not in (select {group[0].pk} from {table} where {taken})"
        out.append(RowSet(table, category, where, group[0].pk, group[0].reason))
    return out


def compute_preview(session: Session, subject: Subject) -> dict[str, Any]:
    """Counts per table of the distinct rows erasure would delete, anonymise, and keep (and why)."""
    params = _params(subject)
    out: dict[str, Any] = {"delete": {}, "anonymise": {}, "keep": {}}
    for rs in row_sets(plan(subject)):
        n = session.execute(text(f"select count(*) from {rs.table} where {rs.where}"), params).scalar_one()
        if not n:
            continue
        if rs.category == "keep":
            out["keep"][rs.table] = {"rows": n, "why": rs.reason}
        else:
            out[rs.category][rs.table] = n
    return out


# ------------------------------------------------------------------------------------------ requests

def _get(session: Session, request_id: uuid.UUID, lock: bool = False) -> PrivacyRequest:
    req = session.get(PrivacyRequest, request_id, with_for_update=lock)
    if req is None:
        raise NotFound("No such privacy request.")
    return req


def _audit(session: Session, req: PrivacyRequest, action: str, actor: uuid.UUID | None, **details) -> None:
    audit.record(session, actor_user_id=actor, actor_label="privacy officer", action=action, org_id=None,
                 target_type="privacy_request", target_id=req.id,
                 details={"kind": req.kind, "subject_type": req.subject_type, **details})


def intake(session: Session, *, kind: str, subject_type: str, subject_ref: str, requested_by: str, basis: str,
           verification: str = "", actor: uuid.UUID | None = None) -> PrivacyRequest:
    """Record a request as received, due in one calendar month. Does not commit."""
    if kind not in KINDS:
        raise InvalidInput("The request must be an erasure, access or portability request.", field="kind")
    if subject_type not in SUBJECT_TYPES:
        raise InvalidInput("The subject must be a user, a phone, a contact or a conversation.", field="subject_type")
    requested_by, basis = (requested_by or "").strip(), (basis or "").strip()
    if not requested_by:
        raise InvalidInput("Say who asked.", field="requested_by")
    basis = basis or BASIS[kind]
    ref = normalise_ref(session, subject_type, subject_ref)
    now = clock.now()
    req = PrivacyRequest(kind=kind, subject_type=subject_type, subject_ref=ref, requested_by=requested_by[:300],
                         basis=basis, verification=(verification or "").strip(), status=PrivacyStatus.RECEIVED,
                         created_at=now, due_at=add_month(now), handled_by=actor, progress={})
    session.add(req)
    session.flush()
    _audit(session, req, "privacy.received", actor)
    return req


def _require(req: PrivacyRequest, *statuses: str) -> None:
    if req.status not in statuses:
        raise Conflict(f"The request is {req.status}; this step needs it to be {' or '.join(statuses)}.")


def verify(session: Session, request_id: uuid.UUID, note: str, actor: uuid.UUID | None) -> PrivacyRequest:
    """Note how the requester's identity was verified. Does not commit."""
    req = _get(session, request_id, lock=True)
    _require(req, PrivacyStatus.RECEIVED)
    note = (note or "").strip()
    if not note and not req.verification:
        raise InvalidInput("Note how the identity was verified.", field="verification")
    if note:  # what was typed at intake is not asked again
        req.verification = (req.verification + "\n" if req.verification else "") + note
    req.status, req.updated_at = PrivacyStatus.VERIFIED, clock.now()
    req.progress = {**req.progress, "verified_at": clock.now().isoformat()}
    _audit(session, req, "privacy.verified", actor)
    return req


def reject(session: Session, request_id: uuid.UUID, reason: str, actor: uuid.UUID | None) -> PrivacyRequest:
    """Refuse a request (identity not verified, manifestly unfounded...). Does not commit."""
    req = _get(session, request_id, lock=True)
    _require(req, PrivacyStatus.RECEIVED, PrivacyStatus.VERIFIED, PrivacyStatus.PREVIEWED)
    if not (reason or "").strip():
        raise InvalidInput("Say why the request is rejected.", field="reason")
    req.status, req.updated_at = PrivacyStatus.REJECTED, clock.now()
    req.subject_ref = _digest(req.subject_ref)
    req.progress = {**req.progress, "rejected_at": clock.now().isoformat(), "rejection": reason.strip()[:500]}
    _audit(session, req, "privacy.rejected", actor)
    return req


def preview(session: Session, request_id: uuid.UUID, actor: uuid.UUID | None) -> PrivacyRequest:
    """Count, before anything happens, what the request touches. Does not commit."""
    req = _get(session, request_id, lock=True)
    _require(req, PrivacyStatus.VERIFIED, PrivacyStatus.PREVIEWED)
    subject = resolve_subject(session, req.subject_type, req.subject_ref)
    req.preview = compute_preview(session, subject)
    req.status, req.updated_at = PrivacyStatus.PREVIEWED, clock.now()
    req.progress = {**req.progress, "previewed_at": clock.now().isoformat()}
    _audit(session, req, "privacy.previewed", actor, counts=preview_totals(req.preview))
    return req


def preview_totals(pv: dict[str, Any]) -> dict[str, int]:
    return {"delete": sum(pv["delete"].values()), "anonymise": sum(pv["anonymise"].values()),
            "keep": sum(e["rows"] for e in pv["keep"].values())}


def _digest(ref: str) -> str:
    return "digest:" + keyed_digest(secret("link_code_key"), "privacy-subject:" + ref)


# ------------------------------------------------------------------------------------------- execute

def execute(session: Session, request_id: uuid.UUID, actor: uuid.UUID | None, *, batch_size: int = BATCH,
            max_batches: int | None = None) -> PrivacyRequest:
    """Carry out a previewed request. Erasure runs in batches, each committed with its progress, so a
    large subject never holds long locks and an interrupted run resumes where it stopped; the last
    batch scrubs the request itself, scans every table and writes the receipt. An access request is
    executed once its export was delivered. Commits (per batch)."""
    req = _get(session, request_id, lock=True)
    if req.status in (PrivacyStatus.EXECUTED, PrivacyStatus.DELIVERED):
        return req
    _require(req, PrivacyStatus.PREVIEWED)
    if req.kind in EXPORT_KINDS:
        return _finish_access(session, req, actor)
    progress = dict(req.progress or {})
    if "subject" not in progress:
        # Snapshot the identifiers: once the user row is gone, a resumed run still knows what to look for.
        progress["subject"] = resolve_subject(session, req.subject_type, req.subject_ref).to_json()
        progress.update(step=0, done={"delete": {}, "anonymise": {}, "keep": {}},
                        started_at=clock.now().isoformat(), state="running")
        req.progress = progress
        _audit(session, req, "privacy.execution_started", actor)
        session.commit()
    subject = Subject.from_json(progress["subject"])
    params = _params(subject)
    steps = plan(subject)
    batches = 0
    while True:
        req = _get(session, request_id, lock=True)  # one executor at a time, batch by batch
        progress = dict(req.progress)
        if req.status == PrivacyStatus.EXECUTED:
            session.commit()
            return req
        i = progress["step"]
        if i >= len(steps):
            break
        step = steps[i]
        n = _run_batch(session, step, params, batch_size)
        done = progress["done"]
        if step.category == "keep":
            entry = done["keep"].setdefault(step.table, {"rows": 0, "why": step.reason})
            entry["rows"] += n if step.set else _count(session, step, params)
        else:
            done[step.category][step.table] = done[step.category].get(step.table, 0) + n
        if n < batch_size or (step.category == "keep" and step.set is None):
            progress["step"] = i + 1
        progress["done"], progress["updated_at"] = done, clock.now().isoformat()
        req.progress = progress
        session.commit()
        batches += 1
        if max_batches is not None and batches >= max_batches:
            return _get(session, request_id)
    return _finish_erasure(session, req, subject, actor)


def _run_batch(session: Session, step: Step, params: dict[str, Any], batch_size: int) -> int:
    if step.category == "keep" and step.set is None:
        return 0
    pick = f"select {step.pk} from {step.table} where {step.where} limit :batch for update"
    if step.category == "delete":
        sql = f"delete from {step.table} where {step.pk} in ({pick})"
    else:
        sql = f"update {step.table} set {step.set} where {step.pk} in ({pick})"
    return session.execute(text(sql), {**params, "batch": batch_size}).rowcount


def _scrub_request(req: PrivacyRequest, subject: Subject) -> None:
    """The request itself keeps no identifier of its subject once done."""
    pattern = mention_pattern(subject)
    ids = [str(i) for i in subject.ids]

    def clean(value: str) -> str:
        if pattern:
            value = re.sub(pattern.replace(r"\m", r"\b").replace(r"\M", r"\b"), ERASED, value, flags=re.I)
        for i in ids:
            value = value.replace(i, ERASED)
        return value

    req.subject_ref = _digest(req.subject_ref)
    # Who asked is free text typed at intake, most often the subject in their own words ("Ana herself"):
    # no pattern can tell which of it identifies them, so none of it is kept.
    req.requested_by = ERASED
    req.basis, req.verification = clean(req.basis), clean(req.verification)


def _finish_erasure(session: Session, req: PrivacyRequest, subject: Subject, actor: uuid.UUID | None) -> PrivacyRequest:
    now = clock.now()
    progress = dict(req.progress)
    progress.pop("subject", None)
    _scrub_request(req, subject)
    req.progress = {**progress, "state": "verifying"}
    session.flush()
    scan = verification_scan(session, subject)
    done = progress["done"]
    done = {"delete": {t: n for t, n in done["delete"].items() if n},
            "anonymise": {t: n for t, n in done["anonymise"].items() if n},
            "keep": {t: e for t, e in done["keep"].items() if e["rows"]}}
    req.receipt = {
        "receipt": "memoria erasure receipt",
        "request_id": str(req.id), "kind": req.kind, "subject_type": req.subject_type,
        "basis": req.basis, "received_at": req.created_at.isoformat(), "due_at": req.due_at.isoformat(),
        "verified_at": progress.get("verified_at"), "previewed_at": progress.get("previewed_at"),
        "started_at": progress.get("started_at"), "executed_at": now.isoformat(),
        "deleted": done["delete"], "anonymised": done["anonymise"], "kept": done["keep"],
        "verification": scan, "on_time": now <= req.due_at,
        "note": "Rows were hard-deleted, not flagged. Counts only: this receipt names no erased data.",
    }
    req.progress = {**progress, "state": "done", "finished_at": now.isoformat()}
    req.status, req.updated_at = PrivacyStatus.EXECUTED, now
    _audit(session, req, "privacy.executed", actor, counts={k: sum(v.values()) if k != "keep" else
                                                           sum(e["rows"] for e in v.values())
                                                           for k, v in done.items()},
           verification_clean=scan["clean"])
    session.commit()
    return req


def _finish_access(session: Session, req: PrivacyRequest, actor: uuid.UUID | None) -> PrivacyRequest:
    now = clock.now()
    subject = resolve_subject(session, req.subject_type, req.subject_ref)
    counts = {t: len(rows) for t, rows in export_rows(session, subject).items()}
    _scrub_request(req, subject)
    req.receipt = {"receipt": f"memoria {req.kind} receipt", "request_id": str(req.id), "kind": req.kind,
                   "subject_type": req.subject_type, "basis": req.basis,
                   "received_at": req.created_at.isoformat(), "due_at": req.due_at.isoformat(),
                   "delivered_at": now.isoformat(), "exported": counts, "on_time": now <= req.due_at,
                   "note": "Counts only: this receipt names no exported data."}
    req.status, req.updated_at = PrivacyStatus.DELIVERED, now
    req.progress = {**req.progress, "state": "done", "finished_at": now.isoformat()}
    _audit(session, req, "privacy.delivered", actor, counts={"exported": sum(counts.values())})
    session.commit()
    return req


# ------------------------------------------------------------------------------ verification scan

def verification_scan(session: Session, subject: Subject) -> dict[str, Any]:
    """Scan every text, uuid, json and text-array column of every table for the subject's
    identifiers. Hits in the append-only audit log that are opaque ids, and hits in documents kept
    under legal hold, are reported as such; any other hit makes the scan unclean."""
    cols = session.execute(text(
        "select c.table_name, c.column_name, c.data_type, c.udt_name from information_schema.columns c "
        "join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name "
        "where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.table_name <> 'alembic_version' "
        "and (c.data_type in ('text', 'character varying', 'uuid', 'jsonb') or c.udt_name = '_text') "
        "order by c.table_name, c.ordinal_position")).all()
    started = time.perf_counter()
    id_texts = [str(i) for i in subject.ids]
    likes = [f"%{_like_escape(s)}%" for s in [*subject.strings, *id_texts]]
    words = [r"\m" + re.escape(n) + r"\M" for n in subject.names]
    hits: list[dict[str, Any]] = []
    tables = set()
    for table, column, data_type, udt in cols:
        tables.add(table)
        if data_type == "uuid":
            if not subject.ids:
                continue
            cond, params = f'"{column}" = any(:ids)', {"ids": list(subject.ids)}
        else:
            expr = f'"{column}"::text' if data_type == "jsonb" else (
                f"array_to_string(\"{column}\", ' ')" if udt == "_text" else f'"{column}"')
            parts, params = [], {}
            if likes:
                parts.append(f"{expr} ilike any(:likes)")
                params["likes"] = likes
            if words:
                parts.append(f"{expr} ~* any(:words)")
                params["words"] = words
            if not parts:
                continue
            cond = " or ".join(parts)
        try:
            with session.begin_nested():
                n = session.execute(text(f'select count(*) from "{table}" where {cond}'), params).scalar_one()
                held = 0
                if n and table == "documents":
                    held = session.execute(text(f'select count(*) from documents where legal_hold and ({cond})'),
                                           params).scalar_one()
        except DBAPIError:
            # A table the app role may not read cannot be vouched for: the scan says so.
            hits.append({"table": table, "column": column, "rows": None, "kind": "unreadable"})
            continue
        if not n:
            continue
        if table == "audit_log" and _only_ids(session, column, cond, params, subject):
            hits.append({"table": table, "column": column, "rows": n, "kind": "opaque_id_in_audit_log"})
            continue
        if held:
            hits.append({"table": table, "column": column, "rows": held, "kind": "legal_hold"})
        if n - held:
            hits.append({"table": table, "column": column, "rows": n - held, "kind": "found"})
    return {"at": clock.now().isoformat(), "tables_scanned": len(tables), "columns_scanned": len(cols),
            "identifiers_checked": len(subject.ids) + len(subject.strings) + len(subject.names),
            "seconds": round(time.perf_counter() - started, 3), "hits": hits,
            "clean": not any(h["kind"] in ("found", "unreadable") for h in hits)}


def _only_ids(session: Session, column: str, cond: str, params: dict[str, Any], subject: Subject) -> bool:
    """True when the audit rows match only by the subject's opaque ids, never by email, phone or name."""
    if column in ("actor_user_id", "org_id"):
        return True
    strings = [f"%{_like_escape(s)}%" for s in subject.strings]
    words = [r"\m" + re.escape(n) + r"\M" for n in subject.names]
    expr = f'"{column}"::text'
    parts = []
    if strings:
        parts.append(f"{expr} ilike any(:s)")
    if words:
        parts.append(f"{expr} ~* any(:w)")
    if not parts:
        return True
    n = session.execute(text(f"select count(*) from audit_log where {' or '.join(parts)}"),
                        {"s": strings, "w": words}).scalar_one()
    return n == 0


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")


# --------------------------------------------------------------------------------------------- export

def export_rows(session: Session, subject: Subject) -> dict[str, list[dict[str, Any]]]:
    """Every row the plan touches (deleted, anonymised or kept), per table, without vectors or secrets."""
    params = _params(subject)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rs in row_sets(plan(subject)):
        rows = out.setdefault(rs.table, {})
        for row in session.execute(text(f"select * from {rs.table} where {rs.where}"), params).mappings():
            rows[str(row[rs.pk])] = {k: _jsonable(v) for k, v in row.items() if k not in NOT_EXPORTED}
    return {t: list(rows.values()) for t, rows in out.items() if rows}


def _jsonable(v: Any) -> Any:
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, (uuid.UUID, Decimal)):
        return str(v)
    return v


def export_zip(session: Session, request_id: uuid.UUID, actor: uuid.UUID | None) -> bytes:
    """The access export: a ZIP of JSON files, one per table, plus a manifest. Audited; does not commit."""
    req = _get(session, request_id)
    if req.status in CLOSED:
        raise Conflict("This request is closed; its subject is no longer recorded. File a new access request.")
    _require(req, PrivacyStatus.VERIFIED, PrivacyStatus.PREVIEWED)
    subject = resolve_subject(session, req.subject_type, req.subject_ref)
    rows = export_rows(session, subject)
    generated = clock.now()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        manifest = {"request_id": str(req.id), "subject_type": req.subject_type, "generated_at": generated.isoformat(),
                    "tables": {t: len(r) for t, r in rows.items()},
                    "note": "Everything memoria stores about the subject, including every memory version and its "
                            "sources. Start with summary.html; csv/ has the same in spreadsheets; the JSON files are "
                            "the complete rows."}
        zf.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        for table, table_rows in rows.items():
            zf.writestr(f"{table}.json", json.dumps(table_rows, indent=2, ensure_ascii=False, default=str))
        names = readable_export.subject_names(session, rows)
        zf.writestr("summary.html", readable_export.summary_html(rows, names, generated))
        for name, body in readable_export.csv_files(rows, names).items():
            zf.writestr(f"csv/{name}", body)
    _audit(session, req, "privacy.exported", actor, rows=sum(len(r) for r in rows.values()))
    return buf.getvalue()


