"""The audit log as a person reads it: who (the operator's name and email as they are now, resolved from the id
at display time; "erased user" once erased), what (a sentence, not a key=value dump) and a link to the target."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from flask import url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from console.services import paging
from memory_core.domain import labels
from memory_core.domain.models import AuditLog, User
from web.language import select_language

# What each action means, as the end of "<who> ...". Details fill the {placeholders}; a missing one falls back to
# the action's plain sentence without it.
SENTENCES = {
    "console.login": _l("signed in to the console"),
    "memory.learnt": _l("learnt a fact in the background"),
    "memory.proposed": _l("proposed a fact for review"),
    "memory.merged": _l("confirmed a fact that was already known"),
    "memory.superseded": _l("replaced a fact with a newer value"),
    "memory.edited": _l("edited a memory by hand"),
    "memory.restored": _l("restored an older version of a memory"),
    "memory.deleted": _l("deleted a memory with its {versions} version(s)"),
    "memory.pinned": _l("pinned a memory"),
    "memory.unpinned": _l("unpinned a memory"),
    "memory.undone": _l("undid a fact that had just been learnt"),
    "memory.forgotten_with_message": _l("forgot a memory whose only source was deleted"),
    "proposal.approved": _l("approved a proposal"),
    "proposal.confirmed": _l("confirmed their own proposal"),
    "proposal.rejected": _l("rejected a proposal"),
    "proposal.bulk_approve": _l("approved {count} proposals at once"),
    "proposal.bulk_reject": _l("rejected {count} proposals at once"),
    "api_key.created": _l("created an API key"),
    "api_key.revoked": _l("revoked an API key"),
    "contact.deleted": _l("deleted a contact and its facts"),
    "conversation.deleted": _l("deleted a conversation"),
    "membership.ended": _l("ended a membership"),
    "identity.link_code_issued": _l("asked for a WhatsApp link code"),
    "identity.linked": _l("linked a WhatsApp number"),
    "identity.link_refused": _l("tried to link a number that belongs to another account"),
    "identity.history_adopted": _l("adopted what their number said before it was linked"),
    "settings.memory_mode": _l("changed the memory mode to {mode}"),
    "settings.retention": _l("changed how long memory is kept"),
    "settings.exclusion_added": _l("added a word to the exclusion list"),
    "settings.exclusion_removed": _l("removed a word from the exclusion list"),
    "settings.exclusion_toggled": _l("switched an exclusion on or off"),
    "privacy.received": _l("recorded a {kind} request"),
    "privacy.verified": _l("noted how the requester's identity was verified"),
    "privacy.previewed": _l("previewed a privacy request"),
    "privacy.execution_started": _l("started executing an erasure"),
    "privacy.executed": _l("executed a privacy request"),
    "privacy.exported": _l("prepared a privacy export"),
    "privacy.export_downloaded": _l("downloaded a privacy export"),
    "privacy.rejected": _l("rejected a privacy request"),
    "job.run_now": _l("ran the {job} job now"),
}


@dataclass(frozen=True)
class Entry:
    row: AuditLog
    who: str
    email: str | None
    sentence: str
    link: str | None


# Details that name an internal word, and the family of labels that names it (memory_core.domain.labels).
DETAIL_TERMS = {"mode": "memory_mode", "kind": "privacy_kind", "job": "job"}


def sentence(row: AuditLog) -> str:
    lang = select_language()
    if row.action.startswith("staff.view."):
        what = labels.term("staff_view", row.action.removeprefix("staff.view."), lang)
        return gettext("viewed %(what)s as platform staff", what=what)
    text = SENTENCES.get(row.action)
    if text is None:
        return labels.humanise(row.action.replace(".", ": ").replace("_", " "))
    details = {k: labels.term(DETAIL_TERMS[k], v, lang) if k in DETAIL_TERMS else v
               for k, v in (row.details or {}).items()}
    try:
        return str(text).format(**details)
    except (KeyError, IndexError, ValueError):
        return str(text).split(" {")[0].split(" ({")[0].replace("{", "").replace("}", "")


def action_name(action: str) -> str:
    """An action as the Action filter lists it: its sentence without the details."""
    if action.startswith("staff.view."):
        return sentence(AuditLog(action=action, details={}))
    text = SENTENCES.get(action)
    return str(text).split(" {")[0].split(" ({")[0] if text is not None else action


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


def present(s: Session, rows: list[AuditLog], *, may_open_privacy: bool,
            found: dict[uuid.UUID, tuple[str, str]] | None = None) -> list[Entry]:
    """The page's entries; `found`: the actors' names and emails when the caller read them already (`filters`)."""
    if found is None:
        found = people(s, {r.actor_user_id for r in rows if r.actor_user_id})
    out = []
    for r in rows:
        if r.actor_user_id is None:
            who, email = r.actor_label, None
        else:
            who, email = found.get(r.actor_user_id, (labels.phrase("erased_user", select_language()), None))
        out.append(Entry(r, who, email, sentence(r), _link(r, may_open_privacy)))
    return out


def actor_ids_matching(s: Session, q: str) -> list[uuid.UUID]:
    """The users whose name or email contains q (searching the log by who did it)."""
    like = paging.contains(q)
    return list(s.scalars(select(User.id).where(or_(User.name.ilike(like), User.email.ilike(like))).limit(200)))


def _by_name(found: dict[uuid.UUID, tuple[str, str]]) -> list[tuple[uuid.UUID, str]]:
    return sorted(((uid, f"{name} <{email}>") for uid, (name, email) in found.items()), key=lambda p: p[1].lower())


@dataclass
class Filters:
    """What the log's page shows beside its entries: the actions and the people of its filter lists, and the
    names and emails of everyone on the page."""
    actions: list[str]
    actors: list[tuple[uuid.UUID, str]]
    people: dict[uuid.UUID, tuple[str, str]]


def filters(s: Session, org_id: uuid.UUID | None, rows: list[AuditLog]) -> Filters:
    """The Action and Who filter lists (every action, and everyone who appears in this log, by name) in one
    statement, and one read of the names of the people in them and on the page: two statements where four were."""
    of_org = (lambda stmt: stmt) if org_id is None else (lambda stmt: stmt.where(AuditLog.org_id == org_id))
    actions, actor_ids = paging.distinct_values_of(s, [(of_org(select(AuditLog.action)), AuditLog.action, 200),
                                                       (of_org(select(AuditLog.actor_user_id)),
                                                        AuditLog.actor_user_id, 200)], generic=True)
    found = people(s, set(actor_ids) | {r.actor_user_id for r in rows if r.actor_user_id})
    return Filters(actions, _by_name({uid: found[uid] for uid in actor_ids if uid in found}), found)


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
    found, erased = people(s, set(ids.values())), (labels.phrase("erased_user", select_language()), None)
    return {run.id: found.get(ids[run.id], erased) if run.id in ids else (run.triggered_by, None) for run in runs}
