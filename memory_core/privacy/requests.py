"""Erasure (GDPR art. 17) and access (art. 15) requests: intake, verification, preview, execution in
resumable batches, a verification scan over every table (`erasure_scan`), a receipt that names no erased
data, and the export of everything stored about a subject.

One plan (`erasure_plan`) drives preview, execution and export: a list of steps, each a table, a predicate
on the subject, and what happens to the matching rows (deleted, anonymised, or kept and why). So the
export holds exactly the rows the preview counted, and the receipt counts what execution did.

Intake, verification and rejection run in the officer's platform scope (migration t3_sec_platform_scope);
preview, execution and export read every table, so they run in system scope, on the worker
(jobs/privacy.py). Every step is audited with ids and counts only; the audit log is append-only and
never holds the subject's data.
"""
from __future__ import annotations

import calendar
import datetime as dt
import io
import json
import re
import uuid
import zipfile
from decimal import Decimal
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from memory_core.adapters.security import keyed_digest, secret
from memory_core.domain import audit, clock
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import Contact, Conversation, PrivacyRequest, User
from memory_core.domain.phones import normalise_phone
from memory_core.domain.vocabulary import PrivacyKind, PrivacyStatus, PrivacySubjectType
from memory_core.privacy import readable_export
from memory_core.privacy.erasure_plan import ERASED, Step, Subject, batch, count, mention_pattern, plan, row_sets, rows
from memory_core.privacy.erasure_scan import verification_scan

KINDS = tuple(PrivacyKind)
# Access (art. 15) and portability (art. 20) end with an export delivered to the person; erasure (art. 17) with a
# hard delete. Each kind has its own legal basis, used when the officer writes none.
EXPORT_KINDS = (PrivacyKind.ACCESS, PrivacyKind.PORTABILITY)
BASIS = {"erasure": "GDPR art. 17 (right to erasure)", "access": "GDPR art. 15 (right of access)",
         "portability": "GDPR art. 20 (right to data portability)"}
CLOSED = (PrivacyStatus.EXECUTED, PrivacyStatus.DELIVERED, PrivacyStatus.REJECTED)
SUBJECT_TYPES = tuple(PrivacySubjectType)
BATCH = 2000
# Columns never exported: derived vectors and indexes, and secrets stored as digests.
NOT_EXPORTED = {"embedding", "search_tsv", "password_hash", "code_hmac", "key_hash", "token_hash"}


def add_month(when: dt.datetime) -> dt.datetime:
    """One calendar month later (GDPR art. 12(3)); the 31st becomes the month's last day."""
    year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
    return when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))


# ------------------------------------------------------------------------------------------ subject

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
        try:
            return normalise_phone(ref)
        except InvalidInput:
            raise InvalidInput("A phone must be an international number like +34611222333.",
                               field="subject_ref") from None
    if subject_type not in ("contact", "conversation"):
        raise InvalidInput("The subject must be a user, a phone, a contact or a conversation.", field="subject_type")
    rid = _uuid(ref, f"A {subject_type}")
    # Asked of a SECURITY DEFINER function (migration t3_sec_platform_scope): the officer's platform scope
    # reads no org data, and learns only that the id exists.
    if not session.scalar(text("select memoria_privacy_subject_exists(:t, :id)"), {"t": subject_type, "id": rid}):
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


# ------------------------------------------------------------------------------------------- preview

def compute_preview(session: Session, subject: Subject) -> dict[str, Any]:
    """Counts per table of the distinct rows erasure would delete, anonymise, and keep (and why)."""
    out: dict[str, Any] = {"delete": {}, "anonymise": {}, "keep": {}}
    for rs in row_sets(plan(subject)):
        n = session.execute(count(rs.table, rs.where)).scalar_one()
        if not n:
            continue
        if rs.category == "keep":
            out["keep"][rs.table.name] = {"rows": n, "why": rs.reason}
        else:
            out[rs.category][rs.table.name] = n
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
        n = _run_batch(session, step, batch_size)
        done, table = progress["done"], step.table.name
        if step.category == "keep":
            entry = done["keep"].setdefault(table, {"rows": 0, "why": step.reason})
            entry["rows"] += n if step.set else session.execute(count(step.table, step.where)).scalar_one()
        else:
            done[step.category][table] = done[step.category].get(table, 0) + n
        if n < batch_size or (step.category == "keep" and step.set is None):
            progress["step"] = i + 1
        progress["done"], progress["updated_at"] = done, clock.now().isoformat()
        req.progress = progress
        session.commit()
        batches += 1
        if max_batches is not None and batches >= max_batches:
            return _get(session, request_id)
    return _finish_erasure(session, req, subject, actor)


def _run_batch(session: Session, step: Step, batch_size: int) -> int:
    if step.category == "keep" and step.set is None:
        return 0
    return session.execute(batch(step, batch_size)).rowcount


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


# --------------------------------------------------------------------------------------------- export

def export_rows(session: Session, subject: Subject) -> dict[str, list[dict[str, Any]]]:
    """Every row the plan touches (deleted, anonymised or kept), per table, without vectors or secrets."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rs in row_sets(plan(subject)):
        found = out.setdefault(rs.table.name, {})
        for row in session.execute(rows(rs)).mappings():
            found[str(row[rs.pk])] = {k: _jsonable(v) for k, v in row.items() if k not in NOT_EXPORTED}
    return {t: list(rows.values()) for t, rows in out.items() if rows}


def _jsonable(v: Any) -> Any:
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, (uuid.UUID, Decimal)):
        return str(v)
    return v


def export_zip(session: Session, request_id: uuid.UUID, actor: uuid.UUID | None, lang: str = "en") -> bytes:
    """The access export: a ZIP of JSON files, one per table, plus a manifest, and the readable summary and CSVs
    in `lang` (en, es). Audited; does not commit."""
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
        names = readable_export.subject_names(session, rows, lang)
        zf.writestr("summary.html", readable_export.summary_html(rows, names, generated, lang))
        for name, body in readable_export.csv_files(rows, names, lang).items():
            zf.writestr(f"csv/{name}", body)
    _audit(session, req, "privacy.exported", actor, rows=sum(len(r) for r in rows.values()))
    return buf.getvalue()


def export_downloaded(session: Session, request_id: uuid.UUID, actor: uuid.UUID | None) -> None:
    """Audit that the officer took the export the worker built (`privacy.exported` recorded the build). Does
    not commit."""
    _audit(session, _get(session, request_id), "privacy.export_downloaded", actor)
