"""Subjects named in part: "Olano" after "Hierros Olano", "Talleres Garcia" for "Talleres García".

The extractor names a subject it cannot link to a contact `name:<name>`. Before the ladder writes, such
a subject is resolved to the one registered contact, else the one subject already remembered by name,
whose name holds every significant word of it (accents and case aside). Two businesses that share a
word stay apart: "Hierros" alone matches both "Hierros Olano" and "Hierros Martín", so it is left as is.

The extractor also gets what the conversation has just been about (so "and they pay at 45 days" is about the
customer introduced a message earlier) and the names already learnt about. Everything is read with the writer's
visibility.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
import uuid
from collections.abc import Iterable, Sequence

from sqlalchemy import Interval, Select, and_, func, literal_column, or_, select
from sqlalchemy.orm import Session

from memory_core.adapters import planner
from memory_core.domain import clock
from memory_core.domain.access import Access, memory_visible
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Memory, MemorySource, Message
from memory_core.domain.text import fold

# A conversation's subject carries over this long and this many subjects back.
CARRY_OVER = dt.timedelta(minutes=30)
# How far a host's clock may run ahead of ours (or a local time be sent as UTC) and the carry-over still hold.
CLOCK_MARGIN = dt.timedelta(days=1)
_CLOCK_MARGIN_SQL = literal_column(f"interval '{int(CLOCK_MARGIN.total_seconds())} seconds'", Interval)
RECENT_SUBJECTS = 3
_NAMED = or_(Memory.subject.like("contact:%"), Memory.subject.like("name:%"))
LIVE = ("active", "proposed")

# Words of a company or person name that do not tell one from another.
NAME_NOISE = frozenset({"sl", "sa", "slu", "sll", "de", "del", "la", "el", "los", "las", "y", "e", "cb", "sc", "coop",
                        "ltd", "inc", "llc", "the", "and", "hijos", "cia", "co"})

def recent_subjects_query(access: Access, conversation_id, since, until) -> Select:
    """The statement behind `recent_subjects` (rows: subject, at), newest first: `at` is when the source
    message was sent (imported history keeps its own times), else when the source was added.
    `conversation_id`, `since` and `until` may be values or bind parameters (`since` a timestamp)."""
    # The conversation's sources added since the window began (a range of ix_memory_sources_conversation), then
    # their memories by key. A source is added when its message is learnt, after it was sent, so a source of a
    # message sent in the window was added in it or later (CLOCK_MARGIN allows for a host whose clock runs ahead,
    # or that sends local time as UTC). Reading every source the conversation ever had made each fact of a long
    # conversation dearer (bench/long_conversation.py: with 3,000 earlier sources the worker's read p50 28.6-48.3
    # ms, now 10.0-15.1; with none, 7 both).
    # Joined the other way round, a planner that thinks memory_sources tiny scans it once per memory of the writer.
    # The memories' conditions sit inside coalesce(..., false) (the same rows), out of the planner's index matching:
    # matched, the worker's generic plan read every visible row of the writer and the org once per source (a bitmap
    # of the owner and org arms, 1-2 ms a read at 60 rows, growing with the org) instead of one primary key lookup.
    sources = (select(MemorySource.memory_id, MemorySource.message_id, MemorySource.created_at)
               .where(MemorySource.conversation_id == conversation_id,
                      MemorySource.created_at >= since - _CLOCK_MARGIN_SQL)
               .cte("conversation_sources").prefix_with("MATERIALIZED"))
    at = func.coalesce(Message.sent_at, sources.c.created_at)
    return (select(Memory.subject, at.label("at")).select_from(sources)
            .join(Memory, Memory.id == sources.c.memory_id)
            .outerjoin(Message, Message.id == sources.c.message_id)
            .where(at >= since, at <= until, planner.out_of_index_reach(and_(_NAMED, Memory.status.in_(LIVE),
                                                             memory_visible(access))))
            .order_by(at.desc()).limit(20))


def recent_since(now: dt.datetime | None = None) -> dt.datetime:
    """How far back a conversation's subjects carry over from `now` (the message's send time)."""
    return (now or clock.now()) - CARRY_OVER


def recent_of(rows: Iterable[tuple[str, dt.datetime]]) -> tuple[str, ...]:
    """`recent_subjects` from the rows of its query."""
    return tuple(dict.fromkeys(subject for subject, _ in rows))[:RECENT_SUBJECTS]


def recent_subjects(session: Session, access: Access, conversation_id: uuid.UUID | None,
                    now: dt.datetime | None = None) -> tuple[str, ...]:
    """The contacts and named subjects learnt from this conversation in the last half hour, newest first."""
    if conversation_id is None:
        return ()
    now = now or clock.now()
    return recent_of(session.execute(recent_subjects_query(access, conversation_id, recent_since(now), now)).all())


def significant_words(name: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"\w+", fold(name)) if w not in NAME_NOISE and len(w) > 1)


def _unique(candidates: list[str]) -> str | None:
    found = list(dict.fromkeys(candidates))
    return found[0] if len(found) == 1 else None


def resolve_subject(subject: str, contacts: Iterable, known_names: Iterable[str]) -> str:
    """`name:<x>` -> `contact:<id>` or `name:<y>` when exactly one contact (else one remembered name) holds
    every significant word of x; any other subject is returned as is. `contacts` have id, name, aliases."""
    if not subject.startswith("name:"):
        return subject
    wanted = significant_words(subject[5:])
    if not wanted:
        return subject
    by_contact = [f"contact:{c.id}" for c in contacts
                  for n in (c.name, *(getattr(c, "aliases", None) or ())) if wanted <= significant_words(n)]
    contact = _unique(by_contact)
    if contact:
        return contact
    if by_contact:
        return subject  # several contacts share the words: not ours to pick
    by_name = [f"name:{n}" for n in known_names if wanted <= significant_words(n)]
    return _unique(by_name) or subject


def resolve_subjects(facts: Sequence[Fact], contacts: Iterable, names: Sequence[str]) -> list[Fact]:
    """The facts with every partly named subject resolved (see the module's docstring); `names` are the
    extraction context's `known_names` (the writer's, sharing a word with the message)."""
    if not any(f.subject.startswith("name:") for f in facts):
        return list(facts)
    contacts = list(contacts)
    out = []
    for f in facts:
        subject = resolve_subject(f.subject, contacts, names)
        out.append(f if subject == f.subject else dataclasses.replace(f, subject=subject))
    return out
