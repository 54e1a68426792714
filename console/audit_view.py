"""The audit log as a person reads it: who (the operator's name and email as they are now, resolved from the id
at display time; "erased user" once erased), what (a sentence, not a key=value dump) and a link to the target."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from flask import url_for
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from memory_core.domain.models import AuditLog, User

ERASED = "erased user"

# What each action means, as the end of "<who> ...". Details fill the {placeholders}; a missing one falls back to
# the action's plain sentence without it.
SENTENCES = {
    "console.login": "signed in to the console",
    "memory.learnt": "learnt a fact in the background",
    "memory.proposed": "proposed a fact for review",
    "memory.merged": "confirmed a fact that was already known",
    "memory.superseded": "replaced a fact with a newer value",
    "memory.edited": "edited a memory by hand",
    "memory.restored": "restored an older version of a memory",
    "memory.deleted": "deleted a memory with its {versions} version(s)",
    "memory.pinned": "pinned a memory",
    "memory.unpinned": "unpinned a memory",
    "memory.undone": "undid a fact that had just been learnt",
    "memory.forgotten_with_message": "forgot a memory whose only source was deleted",
    "proposal.approved": "approved a proposal",
    "proposal.confirmed": "confirmed their own proposal",
    "proposal.rejected": "rejected a proposal",
    "proposal.bulk_approve": "approved {count} proposals at once",
    "proposal.bulk_reject": "rejected {count} proposals at once",
    "api_key.created": "created an API key",
    "api_key.revoked": "revoked an API key",
    "contact.deleted": "deleted a contact and its facts",
    "conversation.deleted": "deleted a conversation",
    "membership.ended": "ended a membership",
    "identity.link_code_issued": "asked for a WhatsApp link code",
    "identity.linked": "linked a WhatsApp number",
    "identity.link_refused": "tried to link a number that belongs to another account",
    "identity.history_adopted": "adopted what their number said before it was linked",
    "settings.memory_mode": "changed the memory mode to {mode}",
    "settings.retention": "changed how long memory is kept",
    "settings.exclusion_added": "added a word to the exclusion list",
    "settings.exclusion_removed": "removed a word from the exclusion list",
    "settings.exclusion_toggled": "switched an exclusion on or off",
    "privacy.received": "recorded a {kind} request",
    "privacy.verified": "noted how the requester's identity was verified",
    "privacy.previewed": "previewed a privacy request",
    "privacy.execution_started": "started executing an erasure",
    "privacy.executed": "executed a privacy request",
    "privacy.exported": "downloaded a privacy export",
    "privacy.rejected": "rejected a privacy request",
    "job.run_now": "ran the {job} job now",
}


@dataclass(frozen=True)
class Entry:
    row: AuditLog
    who: str
    email: str | None
    sentence: str
    link: str | None


def sentence(row: AuditLog) -> str:
    if row.action.startswith("staff.view."):
        return f"viewed {row.action.removeprefix('staff.view.').replace('_', ' ')} as platform staff"
    text = SENTENCES.get(row.action)
    if text is None:
        return row.action.replace(".", ": ").replace("_", " ")
    try:
        return text.format(**(row.details or {}))
    except (KeyError, IndexError, ValueError):
        return text.split(" {")[0].replace("{", "").replace("}", "")


def _link(row: AuditLog, may_open_privacy: bool) -> str | None:
    try:
        target = uuid.UUID(row.target_id) if row.target_id else None
    except ValueError:
        return None
    if target is None:
        return None
    if row.target_type == "memory":
        return url_for("console.memory", memory_id=target)
    if row.target_type == "contact":
        return url_for("console.contact", contact_id=target)
    if row.target_type == "api_key":
        return url_for("console.api_keys")
    if row.target_type == "privacy_request" and may_open_privacy:
        return url_for("console.privacy_request", request_id=target)
    return None


def people(s: Session, ids: set[uuid.UUID]) -> dict[uuid.UUID, tuple[str, str]]:
    """Names and emails as they are now."""
    if not ids:
        return {}
    return {uid: (name, email) for uid, name, email in
            s.execute(select(User.id, User.name, User.email).where(User.id.in_(list(ids))))}


def present(s: Session, rows: list[AuditLog], *, may_open_privacy: bool) -> list[Entry]:
    found = people(s, {r.actor_user_id for r in rows if r.actor_user_id})
    out = []
    for r in rows:
        if r.actor_user_id is None:
            who, email = r.actor_label, None
        else:
            who, email = found.get(r.actor_user_id, (ERASED, None))
        out.append(Entry(r, who, email, sentence(r), _link(r, may_open_privacy)))
    return out


def actor_ids_matching(s: Session, q: str) -> list[uuid.UUID]:
    """The users whose name or email contains q (searching the log by who did it)."""
    like = f"%{q.replace('%', '').replace('_', '')}%"
    return list(s.scalars(select(User.id).where(or_(User.name.ilike(like), User.email.ilike(like))).limit(200)))


def actors(s: Session, org_id: uuid.UUID | None) -> list[tuple[uuid.UUID, str]]:
    """Everyone who appears in this log (for the Who filter), by name."""
    stmt = select(AuditLog.actor_user_id).where(AuditLog.actor_user_id.is_not(None)).distinct()
    if org_id is not None:
        stmt = stmt.where(AuditLog.org_id == org_id)
    found = people(s, set(s.scalars(stmt.limit(200))))
    return sorted(((uid, f"{name} <{email}>") for uid, (name, email) in found.items()), key=lambda p: p[1].lower())


CONSOLE_TRIGGER = "console user "  # how console/jobs_actions.py names the person who started a run


def job_triggers(s: Session, runs: list) -> dict[uuid.UUID, tuple[str, str | None]]:
    """Who started each run, as they are now: (name, email) for a console user ("erased user" once erased),
    else the recorded trigger (the schedule, a conversation...)."""
    ids: dict[uuid.UUID, uuid.UUID] = {}
    for run in runs:
        if run.triggered_by.startswith(CONSOLE_TRIGGER):
            try:
                ids[run.id] = uuid.UUID(run.triggered_by.removeprefix(CONSOLE_TRIGGER))
            except ValueError:
                pass
    found = people(s, set(ids.values()))
    return {run.id: (found.get(ids[run.id], (ERASED, None)) if run.id in ids else (run.triggered_by, None))
            for run in runs}
