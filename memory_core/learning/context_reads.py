"""What the extractor reads from the database besides the message: the names the writer may see, what the
conversation has just been about, and the attribute names already stored (so corrections reuse them).

`context_reads` reads all three in one statement. The outbox worker learns a batch of messages, most of them
from the same few writers, so it keeps what each writer may see (`KnownToWriters`): the names and attributes
are read once per writer and batch, and each later message of that writer reads only its conversation's recent
subjects together with whichever rows the batch wrote since, that this writer may see (row security and
`memory_visible` decide, as in the full read: no second copy of the rule). The write ladder only adds live
(subject, attribute) pairs: a merge adds a source, a supersede keeps its subject and attribute; what could take
one away (a forgotten message, a supersede that moved a fact to another area) drops the whole cache, and the
next message reads afresh. A message whose savepoint rolled back leaves rows that no longer exist, which the
check by id then does not find.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from functools import lru_cache

from sqlalchemy import DateTime, and_, bindparam, func, literal, null, or_, select, union_all
from sqlalchemy.orm import Session

from memory_core.adapters import planner
from memory_core.adapters.array_param import ArrayParam
from memory_core.domain import clock
from memory_core.domain.access import Access, Principal, memory_visible
from memory_core.domain.ladder import WriteResult
from memory_core.domain.models import Memory
from memory_core.learning.subjects import (
    KNOWN_NAMES_LIMIT,
    LIVE,
    known_names_query,
    names_of,
    recent_of,
    recent_since,
    recent_subjects_query,
)

TIMESTAMPTZ = DateTime(timezone=True)

Reads = tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[str, ...]]]


def _access(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]) -> Access:
    return Access(principal, org_id, permissions={a: "read" for a in read_areas})


def _recent_cte(access: Access):
    return recent_subjects_query(access, bindparam("conversation_id"), bindparam("since", type_=TIMESTAMPTZ),
                                 bindparam("until", type_=TIMESTAMPTZ)).cte("recent")


@lru_cache(maxsize=1024)
def _context_reads_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """`known_names`, `recent_subjects` and the known attributes (of the given subjects and of every known
    name) as one statement, so the extraction context costs one round trip: rows (kind, subject, at,
    attribute), kind n (a name), r (a recent subject) or a (an attribute). Built once per writer (and its
    cache key computed once): the ownership filter only reads the principal, the org and the readable areas."""
    access = _access(principal, org_id, read_areas)
    names = known_names_query(access).cte("known_names")
    recent = _recent_cte(access)
    attributes = (select(Memory.subject, Memory.attribute).where(
        # An array, not an expanding IN: one statement text whatever the count, so it is prepared once and
        # planned once (row security makes planning it cost more than running it).
        or_(Memory.subject == func.any(bindparam("subjects", type_=ArrayParam("varchar"))),
            Memory.subject.in_(select(names.c.subject))),
        Memory.status.in_(LIVE), memory_visible(access)).distinct().cte("attributes"))
    return union_all(
        select(literal("n").label("kind"), names.c.subject, null().label("at"), null().label("attribute")),
        select(literal("r"), recent.c.subject, recent.c.at, null()),
        select(literal("a"), attributes.c.subject, null(), attributes.c.attribute))


@lru_cache(maxsize=1024)
def _recent_and_written_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """The conversation's recent subjects (kind r) and, of the rows written since (`written`, ids), the live
    ones this writer may see (kind w: subject, attribute), in one statement."""
    access = _access(principal, org_id, read_areas)
    recent = _recent_cte(access)
    written = select(Memory.subject, Memory.attribute).where(
        Memory.id == func.any(bindparam("written", type_=ArrayParam("uuid"))),
        # by primary key: see recent_subjects_query
        planner.out_of_index_reach(and_(Memory.status.in_(LIVE), memory_visible(access)))).cte("written")
    return union_all(
        select(literal("r").label("kind"), recent.c.subject, recent.c.at, null().label("attribute")),
        select(literal("w"), written.c.subject, null(), written.c.attribute))


def _recent(rows, conversation_id) -> tuple[str, ...]:
    if conversation_id is None:
        return ()
    return recent_of(sorted(((subject, at) for kind, subject, at, _ in rows if kind == "r"),
                            key=lambda r: r[1], reverse=True))


def _recent_params(conversation_id: uuid.UUID | None, sent_at: dt.datetime) -> dict:
    return {"conversation_id": conversation_id, "since": recent_since(sent_at), "until": sent_at}


def context_reads(session: Session, access: Access, subjects: list[str], conversation_id: uuid.UUID | None,
                  sent_at: dt.datetime | None = None, known: KnownToWriters | None = None) -> Reads:
    """(known_names, recent_subjects, the attribute names already stored per subject of `subjects` and of
    every known name, that this writer may see, so corrections reuse them) in one round trip. Recent means
    sent in the half hour before `sent_at` (the message's send time, default now). `known`: the batch's
    cache of what each writer may see (the outbox worker's)."""
    sent_at = sent_at or clock.now()
    if known is not None:
        return known.reads(session, access, subjects, conversation_id, sent_at)
    return _read_all(session, access, subjects, conversation_id, sent_at)[0]


def _read_all(session: Session, access: Access, subjects: list[str], conversation_id: uuid.UUID | None,
              sent_at: dt.datetime) -> tuple[Reads, list[str], dict[str, set[str]]]:
    # Row security expands into every reference to memories, memory_sources and messages: planning the full
    # read costs ~20 ms, several times running it, and PostgreSQL kept planning it afresh for its parameters at
    # every call (its generic plan looks dearer to it). The generic plan reads the writer's rows by the same
    # indexes.
    with planner.generic_plan_window(session):
        rows = session.execute(_context_reads_stmt(access.principal, access.org_id, access.read_areas),
                               {"subjects": list(subjects), **_recent_params(conversation_id, sent_at)}).all()
    names = [subject for kind, subject, _, _ in rows if kind == "n"]
    attributes: dict[str, set[str]] = {}
    for kind, subject, _, attribute in rows:
        if kind == "a":
            attributes.setdefault(subject, set()).add(attribute)
    return _shaped(names, _recent(rows, conversation_id), attributes), names, attributes


def _shaped(names: list[str], recent: tuple[str, ...], attributes: dict[str, set[str]],
            wanted: set[str] | None = None) -> Reads:
    """The three reads as the extractor takes them: names sorted (the order a read gives is the plan's);
    attributes of the wanted subjects and of the names only."""
    keep = None if wanted is None else wanted | set(names)
    return (tuple(sorted(names_of(names))), recent,
            {s: tuple(sorted(a)) for s, a in attributes.items() if keep is None or s in keep})


@dataclass
class _Known:
    """What one writer may see: the `name:` subjects, and the attributes of `subjects` and of those names."""
    subjects: frozenset[str]
    names: list[str]
    attributes: dict[str, set[str]]
    seen: int  # how many of the batch's written rows this already accounts for


@dataclass
class KnownToWriters:
    """The names and attributes each writer of one worker batch may see, read once and kept up to date
    with what the batch writes (`wrote`); see the module's docstring. Lives one batch (one transaction)."""
    _known: dict = field(default_factory=dict)
    # Ids of the rows the batch's messages wrote (new rows and merged ones), in order.
    written: list[uuid.UUID] = field(default_factory=list)

    def reads(self, session: Session, access: Access, subjects: list[str], conversation_id: uuid.UUID | None,
              sent_at: dt.datetime) -> Reads:
        key = (access.principal, access.org_id, access.read_areas)
        wanted = set(subjects)
        entry = self._known.get(key)
        if entry is None or not wanted <= entry.subjects:
            seen = len(self.written)
            reads, names, attributes = _read_all(session, access, subjects, conversation_id, sent_at)
            if len(names) < KNOWN_NAMES_LIMIT:  # a capped list is the database's pick: read it every time
                self._known[key] = _Known(frozenset(wanted), names, attributes, seen)
            return reads
        rows = session.execute(_recent_and_written_stmt(*key), {
            "written": self.written[entry.seen:], **_recent_params(conversation_id, sent_at)}).all()
        entry.seen = len(self.written)
        for kind, subject, _, attribute in rows:
            if kind != "w":
                continue
            if subject.startswith("name:") and subject not in entry.names:
                entry.names.append(subject)
            if subject in entry.subjects or subject.startswith("name:"):
                entry.attributes.setdefault(subject, set()).add(attribute)
        if len(entry.names) >= KNOWN_NAMES_LIMIT:
            del self._known[key]
        return _shaped(entry.names, _recent(rows, conversation_id), entry.attributes, wanted)

    def wrote(self, writes: list[WriteResult]) -> None:
        """A message's writes, once they are made: the rows to check at the next read of each writer."""
        for w in writes:
            for row in (w.memory, w.proposal):
                if row is not None and row.id is not None:
                    self.written.append(row.id)
            new = w.memory if w.memory is not None else w.proposal
            if w.superseded is not None and new is not None and (
                    w.superseded.area != new.area or w.superseded.attribute != new.attribute
                    or w.superseded.subject != new.subject):
                self.forget()  # the old row's pair may be gone for a writer who cannot see the new one

    def forget(self) -> None:
        """Something may have gone (a forgotten message): every writer reads afresh."""
        self._known.clear()
