"""A person's own memory controls, like "manage memory" in the assistants people already use: what
memoria knows about them, edit and delete what is theirs, forget a subject, pause learning, export.

Everything is read through `access.memory_visible` (the one visibility rule; its own arms are
`access.memory_owned`) for one Access: the
person's personal memories, their private ones in the access's org and the shared ones they may
read there. What is theirs is exactly the personal and private rows of that rule (those arms already
require the person to own them); shared facts belong to the org: the person may see them, never
change them here. Changes reuse the versions module: an edit is a new hand-edited version, a delete
takes every version. Nothing here commits; every change is audited with ids and counts only.
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import and_, bindparam, func, select, update
from sqlalchemy.orm import Session

from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.planner import constant
from memory_core.adapters.rows import rows as read_rows
from memory_core.domain import audit, clock, versions
from memory_core.domain.access import (
    Access,
    Principal,
    contact_visible,
    memory_level_arm,
    memory_owned,
    memory_visible,
    message_visible,
)
from memory_core.domain.errors import Forbidden, InvalidInput, NotFound
from memory_core.domain.labels import named_subject, phrase
from memory_core.domain.models import (
    LISTED_MEMORY,
    Contact,
    Conversation,
    Memory,
    MemorySource,
    Message,
    Organization,
    User,
)
from memory_core.domain.vocabulary import Level, Status

OWN_LEVELS = ("personal", "private")
# The list shows at most this many of the person's own memories and of the shared ones per org,
# newest first, and says how many there are; the export has every own memory. 50, not 200: the page
# renders each own memory with its edit and delete forms, and 400 of them took a second to render.
OWN_LIMIT = 50
SHARED_LIMIT = 50
SHARED_EXPORT_LIMIT = 5000
# Counting every shared memory of a big org costs more than the page: the list counts up to this many.
COUNT_CAP = 1000
EXCERPT_CHARS = 200
SHARED_ONLY_SEEN = ("Shared memories belong to the organization: they are listed here to see, not to change "
                    "(whoever may edit their area changes them in the organization's memories).")



# ------------------------------------------------------------------------------------ what it knows

@dataclass(frozen=True)
class SourceRef:
    """Where a memory came from: a message (its text only when the person may read it) or a folded memory."""
    at: dt.datetime
    conversation_id: uuid.UUID | None
    message_id: uuid.UUID | None
    channel: str | None
    excerpt: str | None


@dataclass
class Item:
    memory: Memory
    sources: list[SourceRef]
    editable: bool
    older_versions: list[Memory] = field(default_factory=list)


@dataclass
class SubjectGroup:
    subject: str
    label: str
    items: list[Item]


@dataclass
class Section:
    """One part of the list: personal (follows the person everywhere), private (theirs, in one org) or
    shared (the org's, that they may read)."""
    kind: str
    org_id: uuid.UUID | None
    org_name: str | None
    editable: bool
    groups: list[SubjectGroup]
    total: int
    shown: int
    capped: bool = False  # there are more than `total`

    @property
    def truncated(self) -> bool:
        return self.shown < self.total or self.capped

    @property
    def total_text(self) -> str:
        return f"{self.total}+" if self.capped else str(self.total)


def owned(access: Access):
    """The person's own memories: the personal and private arms of memory_visible."""
    return memory_owned(access)


def _subject_labels(s: Session, access: Access, subjects: set[str], org_name: str | None,
                    lang: str = "en") -> dict[str, str]:
    ids = {}
    for subject in subjects:
        if subject.startswith("contact:"):
            try:
                ids[uuid.UUID(subject.split(":", 1)[1])] = subject
            except ValueError:
                pass
    names = dict(s.execute(select(Contact.id, Contact.name).where(Contact.id.in_(list(ids)), contact_visible(access)))
                 .all()) if ids else {}
    labels = {}
    for subject in subjects:
        if subject == "self":
            labels[subject] = phrase("you", lang)
        elif subject == "org":
            labels[subject] = org_name or phrase("your_org", lang)
        elif subject in ids.values():
            cid = uuid.UUID(subject.split(":", 1)[1])
            labels[subject] = names.get(cid) or phrase("hidden_contact", lang).capitalize()
        else:
            labels[subject] = named_subject(subject)
    return labels


def _excerpt(text: str | None) -> str | None:
    return (text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")) if text else None


def _sources(s: Session, access: Access, memory_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[SourceRef]]:
    out: dict[uuid.UUID, list[SourceRef]] = defaultdict(list)
    if not memory_ids:
        return out
    on = and_(Message.id == MemorySource.message_id, message_visible(access))
    # The columns a source shows, and of its message only the excerpt's characters (one more, to say it goes on):
    # not the message's vector nor its whole text.
    rows = s.execute(select(MemorySource.memory_id, MemorySource.created_at, MemorySource.conversation_id,
                            MemorySource.message_id, Message.id, Message.created_at,
                            func.left(Message.text, EXCERPT_CHARS + 1), Conversation.channel)
                     .outerjoin(Message, on)
                     .outerjoin(Conversation, Conversation.id == MemorySource.conversation_id)
                     .where(MemorySource.memory_id.in_(memory_ids)).order_by(MemorySource.created_at))
    for memory_id, src_at, conversation_id, message_id, msg_id, msg_at, text, channel in rows:
        out[memory_id].append(SourceRef(
            at=msg_at if msg_id is not None else src_at, conversation_id=conversation_id,
            message_id=message_id, channel=channel, excerpt=_excerpt(text)))
    return out


def _group(rows: list[Memory], labels: dict[str, str], editable: bool, sources: dict[uuid.UUID, list[SourceRef]],
           older: dict[uuid.UUID, list[Memory]] | None = None) -> list[SubjectGroup]:
    by_subject: dict[str, list[Memory]] = defaultdict(list)
    for m in rows:
        by_subject[m.subject].append(m)
    order = sorted(by_subject, key=lambda subj: (subj != "self", subj != "org", labels[subj].casefold()))
    return [SubjectGroup(subj, labels[subj], [
        Item(m, sources.get(m.id, []), editable, (older or {}).get(m.id, []))
        for m in sorted(by_subject[subj], key=lambda m: (not m.pinned, m.attribute))]) for subj in order]


def item(s: Session, access: Access, m: Memory) -> Item:
    """One memory as the list shows it (after an edit, the new version)."""
    return Item(m, _sources(s, access, [m.id]).get(m.id, []), m.level in OWN_LEVELS)


@dataclass
class _Level:
    """One level's rows as read, before they are grouped by subject."""
    kind: str
    rows: list[Memory]
    older: dict[uuid.UUID, list[Memory]]
    total: int
    capped: bool


def _level_rows(s: Session, access: Access, kind: str, limit: int | None, *, with_versions: bool = False) -> _Level:
    """The active memories of one level (kind) the access may see, newest first, at most `limit`."""
    # By the arm of the visibility rule for this level (the same rows), which the planner reads
    # through an index; through the whole rule's OR it scans the org's memories. "active" is written into the
    # statement: the console keeps its generic plan (planner.kept_plans), which then still reads the partial
    # index on active rows (ix_memories_own_created).
    where = and_(memory_level_arm(access, kind), Memory.status == constant(Status.ACTIVE.value))
    stmt = select(Memory).options(LISTED_MEMORY).where(where).order_by(Memory.created_at.desc(), Memory.id.desc())
    total, capped = 0, False
    if limit is None:
        rows = list(s.scalars(stmt))
        total = len(rows)
    else:
        # The page and its total (counted up to the cap) in one statement: the count is an uncorrelated
        # subquery, which PostgreSQL runs once, beside the page (a round trip and a statement's planning less).
        cap = max(limit, COUNT_CAP)
        counted = select(func.count()).select_from(select(Memory.id).where(where).limit(cap + 1).subquery())
        got = s.execute(stmt.add_columns(counted.scalar_subquery()).limit(limit)).all()
        rows = [m for m, _ in got]
        if got:
            capped, total = got[0][1] > cap, min(got[0][1], cap)
    older: dict[uuid.UUID, list[Memory]] = {}
    if with_versions and kind in OWN_LEVELS:
        # Every older version of this level in one query, matched to its current row the way
        # versions.chain matches a fact (org, owner, subject, attribute), newest first.
        fact = lambda m: (m.org_id, m.owner_user_id, m.owner_phone, m.subject, m.attribute)  # noqa: E731
        current = {fact(m): m.id for m in rows}
        for v in s.scalars(select(Memory).options(LISTED_MEMORY).where(memory_visible(access), Memory.level == kind,
                                                Memory.status == "superseded")
                           .order_by(Memory.valid_from.desc(), Memory.created_at.desc())):
            if fact(v) in current:
                older.setdefault(current[fact(v)], []).append(v)
    return _Level(kind, rows, older, total, capped)


def sections(s: Session, access: Access, *, personal: bool = True, export: bool = False,
             lang: str = "en", org_name: str | None = None) -> list[Section]:
    """What memoria knows about the person from one access: their personal memories (unless
    `personal` is False: a caller showing several orgs lists them once), their private ones in the
    access's org, and the shared ones they may read there. `export`: every own memory with its older
    versions, and more shared ones. `org_name`: the access's org's name when the caller has it (else read)."""
    own_limit = None if export else OWN_LIMIT
    if access.org_id and org_name is None:
        org_name = s.scalar(select(Organization.name).where(Organization.id == access.org_id))
    levels = []
    if personal:
        levels.append(_level_rows(s, access, "personal", own_limit, with_versions=export))
    if access.org_id is not None:
        levels.append(_level_rows(s, access, "private", own_limit, with_versions=export))
        levels.append(_level_rows(s, access, "shared", SHARED_EXPORT_LIMIT if export else SHARED_LIMIT))
    # The sources and the contacts' names of every level in one query each (row security makes each
    # statement that names a table cost milliseconds to plan).
    ids = [m.id for lv in levels for m in lv.rows] + [v.id for lv in levels for vs in lv.older.values() for v in vs]
    sources = _sources(s, access, ids)
    labels = _subject_labels(s, access, {m.subject for lv in levels for m in lv.rows}, org_name, lang)
    out = []
    for lv in levels:
        in_org, editable = lv.kind != "personal", lv.kind in OWN_LEVELS
        out.append(Section(lv.kind, access.org_id if in_org else None, org_name if in_org else None, editable,
                           _group(lv.rows, labels, editable, sources, lv.older), lv.total, len(lv.rows),
                           lv.capped))
    return out


def person_sections(views: list[tuple[Session, Access]], *, export: bool = False,
                    lang: str = "en", org_names: dict[uuid.UUID, str] | None = None) -> list[Section]:
    """`sections` of one person seen from several places: `views` are (session, access) pairs, each
    session in its access's scope, the first one listing the personal memories (the console passes
    the org-less one, then one per org). A personal memory learnt in an org shows its source message
    as read in that org's scope."""
    org_names = org_names or {}
    out = [sec for i, (s, access) in enumerate(views)
           for sec in sections(s, access, personal=i == 0, export=export, lang=lang,
                               org_name=org_names.get(access.org_id) if access.org_id else None)]
    items = [i for sec in out if sec.kind == "personal" for g in sec.groups for i in g.items]
    missing = {src.message_id for i in items for src in i.sources if src.excerpt is None and src.message_id}
    found: dict[uuid.UUID, str] = {}
    for s, access in views[1:]:
        if missing - set(found):
            found.update(s.execute(select(Message.id, Message.text).where(
                Message.id.in_(list(missing - set(found))), message_visible(access))).all())
    for i in items:
        i.sources = [replace(src, excerpt=_excerpt(found.get(src.message_id)))
                     if src.excerpt is None and src.message_id in found else src for src in i.sources]
    return out


# ------------------------------------------------------------------------------------ changing what is theirs

def get_own(s: Session, access: Access, memory_id: uuid.UUID, *, for_update: bool = False) -> Memory:
    """One of the person's own memories. A shared one they may read: Forbidden, saying why; anything
    else (another person's, another org's, none): NotFound."""
    stmt = select(Memory).where(Memory.id == memory_id, memory_visible(access))
    m = s.scalar(stmt.with_for_update() if for_update else stmt)
    if m is None:
        raise NotFound("No such memory of yours.")
    if m.level not in OWN_LEVELS:
        raise Forbidden(SHARED_ONLY_SEEN)
    return m


def edit_own(s: Session, access: Access, memory_id: uuid.UUID, value: str, sentence: str, *, actor_label: str,
             origin: str) -> Memory:
    """Correct one of their memories: a new hand-edited version supersedes it (and outlives the
    conversation it came from)."""
    m = get_own(s, access, memory_id, for_update=True)
    row = versions.hand_edit(s, m, value, sentence, origin=origin, by=access.principal.user_id)
    audit.record(s, actor_label=actor_label, actor_user_id=access.principal.user_id, action="memory.edited",
                 org_id=row.org_id, target_type="memory", target_id=row.id,
                 details={"superseded": str(m.id), "level": row.level, "attribute": row.attribute, "by": "owner"})
    return row


def delete_own(s: Session, access: Access, memory_id: uuid.UUID, *, actor_label: str) -> int:
    """Delete one of their memories with every version of it. Returns how many rows went."""
    m = get_own(s, access, memory_id, for_update=True)
    count = versions.delete_versions(s, [v.id for v in versions.chain(s, access, m)])
    audit.record(s, actor_label=actor_label, actor_user_id=access.principal.user_id, action="memory.deleted",
                 org_id=m.org_id, target_type="memory", target_id=m.id,
                 details={"versions": count, "level": m.level, "attribute": m.attribute, "by": "owner"})
    return count


def check_subject(subject: str | None) -> str:
    subject = (subject or "").strip()
    if not subject or len(subject) > 200 or "\x00" in subject:
        raise InvalidInput("Name the subject to forget: self, org, contact:<id> or name:<name>.", "subject")
    if subject.startswith("contact:"):
        try:
            uuid.UUID(subject.split(":", 1)[1])
        except ValueError:
            raise InvalidInput("A contact subject is contact:<id>.", "subject") from None
    elif subject not in ("self", "org") and not subject.startswith("name:"):
        raise InvalidInput("Name the subject to forget: self, org, contact:<id> or name:<name>.", "subject")
    return subject


def forget_subject(s: Session, access: Access, subject: str, *, actor_label: str, personal: bool = True) -> int:
    """Forget everything of theirs about one subject: their personal and private memories about it,
    every version and status. Shared facts about it stay (they are the org's). Returns rows removed.
    `personal` False: only the private ones of the access's org, for a caller forgetting in several views (the
    console: the personal view, then one per org), each its own transaction until all commit: an org's view sees
    the personal memories too, and locking them again there would wait for the first view's transaction forever."""
    subject = check_subject(subject)
    which = owned(access) if personal else memory_level_arm(access, Level.PRIVATE)
    ids = list(s.scalars(select(Memory.id).where(which, Memory.subject == subject).with_for_update()))
    count = versions.delete_versions(s, ids)
    audit.record(s, actor_label=actor_label, actor_user_id=access.principal.user_id, action="memory.subject_forgotten",
                 org_id=access.org_id, target_type="user" if access.principal.user_id else "phone",
                 target_id=access.principal.user_id or None,
                 details={"memories_removed": count, "kind": subject.split(":", 1)[0]})
    return count


# ------------------------------------------------------------------------------------ pausing learning

def _paused_at(s: Session, user_id: uuid.UUID | None) -> dt.datetime | None:
    if user_id is None:
        return None  # a number with no account behind it cannot pause
    return s.scalar(select(User.learning_paused_at).where(User.id == user_id))


def learning_paused(s: Session, user_id: uuid.UUID | None) -> bool:
    """Whether the person paused learning (what the worker and the explicit path check)."""
    return _paused_at(s, user_id) is not None


_PAUSED_AMONG = select(User.id).where(User.id == func.any(bindparam("users", type_=ArrayParam("uuid"))),
                                      User.learning_paused_at.is_not(None))


def paused_among(s: Session, user_ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these people paused learning, in one read (a worker batch learns for many)."""
    return set(read_rows(s, _PAUSED_AMONG, {"users": list(user_ids)}).scalars())


def paused_since(s: Session, principal: Principal) -> dt.datetime | None:
    """Since when the person paused learning; None while it is on."""
    return _paused_at(s, principal.user_id)


def set_learning_paused(s: Session, principal: Principal, paused: bool, *, actor_label: str,
                        org_id: uuid.UUID | None = None) -> dt.datetime | None:
    """Pause or resume learning for the person; returns since when it is paused (None: learning).
    While paused, nothing is learnt from their messages, in the background or on request."""
    if principal.user_id is None:
        raise InvalidInput("Learning can be paused only for a person with an account; this number has none.",
                           "user_id")
    current = paused_since(s, principal)
    if paused == (current is not None):
        return current
    since = clock.now() if paused else None
    s.execute(update(User).where(User.id == principal.user_id).values(learning_paused_at=since))
    audit.record(s, actor_label=actor_label, actor_user_id=principal.user_id, org_id=org_id,
                 action="learning.paused" if paused else "learning.resumed", target_type="user",
                 target_id=principal.user_id)
    return since


# ------------------------------------------------------------------------------------ export

def _memory_json(m: Memory) -> dict[str, Any]:
    return {"id": str(m.id), "org_id": str(m.org_id) if m.org_id else None, "level": m.level, "area": m.area,
            "category": m.category, "subject": m.subject, "attribute": m.attribute, "value": m.value,
            "sentence": m.sentence, "status": m.status, "pinned": m.pinned, "hand_edited": m.hand_edited,
            "origin": m.origin, "event_date": m.event_date.isoformat() if m.event_date else None,
            "event_until": m.event_until.isoformat() if m.event_until else None,
            "valid_from": m.valid_from.isoformat(), "valid_to": m.valid_to.isoformat() if m.valid_to else None,
            "created_at": m.created_at.isoformat()}


def _source_json(src: SourceRef) -> dict[str, Any]:
    return {"at": src.at.isoformat(), "channel": src.channel, "excerpt": src.excerpt,
            "conversation_id": str(src.conversation_id) if src.conversation_id else None,
            "message_id": str(src.message_id) if src.message_id else None}


def section_json(sec: Section) -> dict[str, Any]:
    return {"kind": sec.kind, "org_id": str(sec.org_id) if sec.org_id else None, "org_name": sec.org_name,
            "editable": sec.editable, "total": sec.total, "total_is_at_least": sec.capped,
            "truncated": sec.truncated,
            "subjects": [{"subject": g.subject, "label": g.label, "memories": [
                _memory_json(i.memory) | {"editable": i.editable, "sources": [_source_json(x) for x in i.sources],
                                          "older_versions": [_memory_json(v) for v in i.older_versions]}
                for i in g.items]} for g in sec.groups]}


def export(views: list[tuple[Session, Access]]) -> dict[str, Any]:
    """Everything `sections` shows, as JSON-ready data, with the older versions of their own memories.
    `views`: (session, access) pairs of one person, each session in its access's scope; the first
    one lists the personal memories (the API passes one pair, the console one per org)."""
    s0, a0 = views[0]
    p = a0.principal
    paused = paused_since(s0, p)
    return {"exported_at": clock.now().isoformat(),
            "person": {"user_id": str(p.user_id) if p.user_id else None, "phone": p.phone},
            "learning_paused_at": paused.isoformat() if paused else None,
            "sections": [section_json(sec) for sec in person_sections(views, export=True)]}
