"""A fact's versions: the chain of rows of one fact, a new version that supersedes the current one,
and forgetting a fact with every version. Nothing here commits; callers check who may do it.

A change never overwrites a fact: an edit or a restore is a new active row and the current one is
closed (status superseded, valid_to) and kept as a version.
"""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from memory_core.domain import clock
from memory_core.domain.access import Access, memory_visible
from memory_core.domain.errors import InvalidInput
from memory_core.domain.ids import uuid7
from memory_core.domain.models import Memory, MemorySource

MAX_VALUE_CHARS = 2000
MAX_SENTENCE_CHARS = 4000


def chain(s: Session, access: Access, m: Memory) -> list[Memory]:
    """Every version of the same fact the access may see: same org, level, owner, subject and
    attribute, newest first."""
    same_owner = (Memory.owner_user_id.is_(None) if m.owner_user_id is None
                  else Memory.owner_user_id == m.owner_user_id)
    stmt = select(Memory).where(
        memory_visible(access), Memory.level == m.level, Memory.subject == m.subject,
        Memory.attribute == m.attribute, same_owner, Memory.status.in_(("active", "superseded")),
        Memory.org_id.is_(None) if m.org_id is None else Memory.org_id == m.org_id)
    rows = list(s.scalars(stmt.order_by(Memory.valid_from.desc(), Memory.created_at.desc()).limit(200)))
    if m not in rows:
        rows.insert(0, m)
    return rows


def new_version(s: Session, old: Memory, *, value: str, sentence: str, origin: str, hand_edited: bool,
                by: uuid.UUID | None) -> Memory:
    now = clock.now()
    row = Memory(org_id=old.org_id, level=old.level, owner_user_id=old.owner_user_id, owner_phone=old.owner_phone,
                 area=old.area, category=old.category, subject=old.subject, attribute=old.attribute, value=value,
                 sentence=sentence, confidence=old.confidence, pinned=old.pinned, status="active",
                 author_user_id=old.author_user_id, author_phone=old.author_phone,
                 author_former_member=old.author_former_member, origin=origin, hand_edited=hand_edited,
                 event_date=old.event_date, event_until=old.event_until, decided_by=by, decided_at=now,
                 valid_from=now)
    s.add(row)
    return row


def supersede(s: Session, current: Memory | None, new_row: Memory, *, at: dt.datetime | None = None) -> None:
    """Make `new_row` the active version, closing `current` (None: nothing to replace) at `at` (default
    now); the one home of supersede-never-overwrite (write ladder, approved proposals, edits, restores).
    `new_row` may be a row not yet flushed or a proposal being approved."""
    at = at or clock.now()
    if current is not None:
        # One active row per fact: the current one is closed, and pointed at its successor, before that one is
        # active. Its id is made here for a row not yet inserted; the foreign key is checked at commit.
        if new_row.id is None:
            new_row.id = uuid7()
        current.status, current.valid_to, current.superseded_by = "superseded", at, new_row.id
        s.flush()
    new_row.status = "active"
    if new_row not in s:
        s.add(new_row)
    s.flush()


def copy_sources(s: Session, from_id: uuid.UUID, to_id: uuid.UUID) -> None:
    for src in s.scalars(select(MemorySource).where(MemorySource.memory_id == from_id)):
        s.add(MemorySource(memory_id=to_id, message_id=src.message_id, conversation_id=src.conversation_id,
                           source_memory_id=src.source_memory_id))


def hand_edit(s: Session, m: Memory, value: str, sentence: str, *, origin: str, by: uuid.UUID | None) -> Memory:
    """Correct the current version of a fact by hand: a new hand-edited version supersedes it, with its
    sources. Hand-edited memories outlive the conversation they came from (forgetting.py)."""
    value, sentence = (value or "").strip(), (sentence or "").strip()
    if not value:
        raise InvalidInput("The value cannot be empty.", "value")
    if not sentence:
        raise InvalidInput("The sentence cannot be empty.", "sentence")
    if len(value) > MAX_VALUE_CHARS or len(sentence) > MAX_SENTENCE_CHARS:
        raise InvalidInput("That text is too long.", "value")
    if m.status != "active":
        raise InvalidInput("Only the current version can be edited; restore an old one instead.", "value")
    if value == m.value and sentence == m.sentence:
        raise InvalidInput("Nothing changed.", "value")
    row = new_version(s, m, value=value, sentence=sentence, origin=origin, hand_edited=True, by=by)
    supersede(s, m, row)
    copy_sources(s, m.id, row.id)
    return row


def delete_versions(s: Session, ids: list[uuid.UUID]) -> int:
    """Delete these rows (a fact's versions), unlinking whatever still points at them. Returns how many went."""
    if not ids:
        return 0
    s.execute(update(Memory).where(Memory.replaces_id.in_(ids)).values(replaces_id=None))
    s.execute(update(Memory).where(Memory.superseded_by.in_(ids)).values(superseded_by=None))
    return s.execute(delete(Memory).where(Memory.id.in_(ids))).rowcount
