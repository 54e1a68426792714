"""What operators do to memories outside the queue: browse, read a memory's versions, restore, edit,
pin and delete; and the contact pages. No Flask here; nothing commits.

Reads always go through access.memory_visible (the ownership filter) on a session whose RLS scope
repeats it. Changes never overwrite a fact: an edit or a restore is a new active version that
supersedes the current one, which is kept.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import and_, func, literal_column, or_, select
from sqlalchemy.orm import Session, defer

from console.services import paging
from console.services.proposals import (
    ACTIVE,
    Labels,
    Operator,
    normalise_account,
    verified_account_sentence,
    visible_proposals,
)
from memory_core.adapters.planner import constant
from memory_core.domain import audit, clock, versions
from memory_core.domain.access import contact_visible, memory_visible, message_visible
from memory_core.domain.errors import Forbidden, InvalidInput, NotFound
from memory_core.domain.ladder import BANK_ATTRIBUTES
from memory_core.domain.models import LISTED_MEMORY, Contact, Memory, MemorySource, Message
from memory_core.domain.policy import iban_valid
from memory_core.domain.vocabulary import (
    AREAS,
    LEVELS,
    MEMORY_CATEGORIES,
    STATUSES,
    TEXT_SEARCH_CONFIG,
    ContactKind,
    Level,
    Status,
)

PAGE_SIZE = 50


# ------------------------------------------------------------------------------------ who may change what

def may_change(op: Operator, m: Memory) -> bool:
    """Edit, pin, delete: owners and admins on shared facts; anyone on their own private or personal
    memory; a member on shared facts of areas they may edit."""
    if m.level in (Level.PRIVATE, Level.PERSONAL):
        return m.owner_user_id == op.user_id
    if m.org_id != op.org_id:
        return False
    return op.access.is_admin or op.access.can_edit(m.area)


def may_restore(op: Operator, m: Memory) -> bool:
    return op.access.is_admin and may_change(op, m)


# ------------------------------------------------------------------------------------ browsing

def _readable(op: Operator):
    """memory_visible, less the proposals the review rules keep from this operator: a member never
    reads an unverified bank account, nor someone else's pending or rejected proposal."""
    undecided = Memory.status.in_((Status.PROPOSED, Status.REJECTED))
    if op.access.is_admin:
        return memory_visible(op.access)
    return and_(memory_visible(op.access), or_(~undecided, visible_proposals(op)))


@dataclass
class MemoryFilters:
    q: str | None = None
    subject: str | None = None
    contact_id: uuid.UUID | None = None
    owner: str | None = None  # "mine" | "shared"
    level: str | None = None
    area: str | None = None
    category: str | None = None
    status: str | None = "active"

    def validate(self) -> None:
        for name, allowed in (("level", LEVELS), ("area", AREAS), ("category", MEMORY_CATEGORIES),
                              ("status", STATUSES), ("owner", ("mine", "shared"))):
            value = getattr(self, name)
            if value and value not in allowed:
                raise InvalidInput(f"Unknown {name}: pick one from the list.", name)
        if self.q and len(self.q) > 200:
            raise InvalidInput("Search for at most 200 characters.", "q")


@dataclass
class MemoryRow:
    memory: Memory
    subject_label: str
    author_label: str


@dataclass
class MemoryPage:
    rows: list[MemoryRow]
    next_cursor: str | None
    prev_cursor: str | None = None
    total_label: str = "0"




def list_memories(s: Session, op: Operator, f: MemoryFilters, *, after: str | None = None, before: str | None = None,
                  oldest_first: bool = False, limit: int = PAGE_SIZE) -> MemoryPage:
    """Newest (or oldest) first, keyset pages both ways with a capped total; every filter is a column the
    indexes cover."""
    f.validate()
    # The console works in one org (RLS "org" mode hides personal rows anyway): saying so lets the
    # planner read the first page from ix_memories_org_status_created in order.
    stmt = select(Memory).options(LISTED_MEMORY).where(_readable(op), Memory.org_id == op.org_id)
    if f.status:
        stmt = stmt.where(Memory.status == constant(f.status))  # one of STATUSES (validate): a generic plan sees it
    if f.contact_id:
        stmt = stmt.where(Memory.subject == f"contact:{f.contact_id}")
    elif f.subject:
        stmt = stmt.where(Memory.subject == f.subject)
    if f.owner == "mine":
        stmt = stmt.where(Memory.owner_user_id == op.user_id)
    elif f.owner == "shared":
        stmt = stmt.where(Memory.level == Level.SHARED)
    for col, value in ((Memory.level, f.level), (Memory.area, f.area), (Memory.category, f.category)):
        if value:
            stmt = stmt.where(col == value)
    if f.q:
        stmt = stmt.where(Memory.search_tsv.op("@@")(func.websearch_to_tsquery(TEXT_SEARCH_CONFIG, f.q)))
    # Unfiltered but for the status (the page as it opens), ix_memories_org_status_created serves the page and
    # its capped total in order; a narrower filter may match few of the org's rows, which an index finds faster.
    plain = not (f.q or f.subject or f.contact_id or f.owner or f.level or f.area or f.category) and bool(f.status)
    page = paging.keyset(s, stmt, (Memory.created_at, Memory.id), lambda m: (m.created_at, m.id),
                         (paging.datetime_type, paging.uuid_type), after=after, before=before,
                         descending=not oldest_first, limit=limit, in_index_order=plain, for_values=bool(f.q))
    labels = Labels(s, op.org_id, op.lang).prefetch(page.rows)
    return MemoryPage([MemoryRow(m, labels.subject(m.subject, m.sentence, m.value), labels.author(m))
                       for m in page.rows],
                      page.next_cursor, page.prev_cursor, page.total_label)


def get_memory(s: Session, op: Operator, memory_id: uuid.UUID, *, for_update: bool = False) -> Memory:
    stmt = select(Memory).where(Memory.id == memory_id, _readable(op))
    m = s.scalar(stmt.with_for_update() if for_update else stmt)
    if m is None:
        raise NotFound("No such memory, or you may not see it.")
    return m


@dataclass
class Version:
    memory: Memory
    author_label: str
    decided_label: str | None
    sources: list[Message | None]
    is_current: bool


@dataclass
class MemoryDetail:
    memory: Memory
    subject_label: str
    versions: list[Version]
    current: Memory | None
    may_change: bool
    may_restore: bool

    @property
    def is_bank_account(self) -> bool:
        return self.memory.attribute in BANK_ATTRIBUTES


def memory_detail(s: Session, op: Operator, memory_id: uuid.UUID) -> MemoryDetail:
    m = get_memory(s, op, memory_id)
    chain = versions.chain(s, op.access, m)
    labels = Labels(s, op.org_id, op.lang).prefetch(chain)  # every version's author and decider in one statement
    ids = [v.id for v in chain]
    sources: dict[uuid.UUID, list[Message | None]] = {i: [] for i in ids}
    # Owners and admins read the source of every org fact; anyone else only messages they may see.
    on = Message.id == MemorySource.message_id
    if not op.access.is_admin:
        on = and_(on, message_visible(op.access))
    for src, msg in s.execute(select(MemorySource, Message).options(defer(Message.embedding)).outerjoin(Message, on)
                              .where(MemorySource.memory_id.in_(ids)).order_by(MemorySource.created_at)):
        sources[src.memory_id].append(msg)
    current = next((v for v in chain if v.status == "active"), None)
    history = [Version(v, labels.author(v), labels.user(v.decided_by) if v.decided_by else None,
                        sources[v.id], v.status == "active") for v in chain]
    return MemoryDetail(m, labels.subject(m.subject, m.sentence, m.value),
                        history, current, may_change(op, m), may_restore(op, m))


# ------------------------------------------------------------------------------------ changing

def restore(s: Session, op: Operator, version_id: uuid.UUID) -> Memory:
    """Restore an old version: a new active version with its value supersedes the current one."""
    old = get_memory(s, op, version_id, for_update=True)
    if not may_restore(op, old):
        raise Forbidden("Only an owner or admin can restore a version.")
    if old.status != Status.SUPERSEDED:
        raise InvalidInput("Only an older version can be restored.", "version")
    current = next((v for v in versions.chain(s, op.access, old) if v.status == "active"), None)
    if current is not None:
        s.refresh(current, with_for_update=True)
        if current.status != Status.ACTIVE:
            current = None
    row = versions.new_version(s, old, value=old.value, sentence=old.sentence, origin="restore",
                               hand_edited=old.hand_edited, by=op.user_id)
    versions.supersede(s, current, row)
    versions.copy_sources(s, old.id, row.id)
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id, action="memory.restored", org_id=row.org_id,
                 target_type="memory", target_id=row.id,
                 details={"restored_from": str(old.id), "superseded": str(current.id) if current else None,
                          "level": row.level, "attribute": row.attribute})
    return row


def edit(s: Session, op: Operator, memory_id: uuid.UUID, value: str, sentence: str,
         typed_account: str | None = None) -> Memory:
    """Correct a memory by hand: a new hand-edited version supersedes it. A bank account goes through the same
    safeguard as its proposal: an owner or admin, a valid IBAN, typed twice."""
    m = get_memory(s, op, memory_id, for_update=True)
    if not may_change(op, m):
        raise Forbidden("You may not edit this memory.")
    value, sentence = (value or "").strip(), (sentence or "").strip()
    if m.attribute in BANK_ATTRIBUTES:
        value = normalise_account(value).upper()
        if not op.access.is_admin:
            raise Forbidden("Only an owner or admin can change a bank account.")
        if not iban_valid(value):
            raise InvalidInput("That is not a valid IBAN (check the country code, length and check digits).", "value")
        if normalise_account(typed_account or "").upper() != value:
            raise InvalidInput("The account you typed again does not match. Nothing was changed.", "confirm_account")
        sentence = verified_account_sentence(Labels(s, op.org_id, "es").subject(m.subject))
    row = versions.hand_edit(s, m, value, sentence, origin="console", by=op.user_id)
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id, action="memory.edited", org_id=row.org_id,
                 target_type="memory", target_id=row.id, details={"superseded": str(m.id), "level": row.level,
                                                                  "attribute": row.attribute})
    return row


def set_pinned(s: Session, op: Operator, memory_id: uuid.UUID, pinned: bool) -> Memory:
    """Pinned memories go first in every profile block."""
    m = get_memory(s, op, memory_id, for_update=True)
    if not may_change(op, m):
        raise Forbidden("You may not pin this memory.")
    if m.status != Status.ACTIVE:
        raise InvalidInput("Only the current version can be pinned.", "pinned")
    m.pinned, m.updated_at = pinned, clock.now()
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id,
                 action="memory.pinned" if pinned else "memory.unpinned",
                 org_id=m.org_id, target_type="memory", target_id=m.id)
    return m


def delete_memory(s: Session, op: Operator, memory_id: uuid.UUID) -> int:
    """Forget a fact: the memory and every older version of it. Returns how many rows went."""
    m = get_memory(s, op, memory_id, for_update=True)
    if not may_change(op, m):
        raise Forbidden("You may not delete this memory.")
    ids = [v.id for v in versions.chain(s, op.access, m)]
    count = versions.delete_versions(s, ids)
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id, action="memory.deleted", org_id=m.org_id,
                 target_type="memory", target_id=m.id, details={"versions": count, "level": m.level,
                                                                "attribute": m.attribute})
    return count


# ------------------------------------------------------------------------------------ contacts

@dataclass
class ContactPage:
    contact: Contact
    memories: list[Memory]  # the first CONTACT_FACTS
    proposals: list[Memory]  # the oldest CONTACT_PROPOSALS
    more_memories: bool = False
    more_proposals: bool = False


FACTS_CAP = 20  # the contacts list counts a contact's facts up to this ("20+")
CONTACT_FACTS = 100  # the contact page's facts (pinned first); the memory list filtered by contact has all
CONTACT_PROPOSALS = 50  # the contact page's pending proposals, oldest first

# The contacts list's sort orders: (key columns, descending); a name sort breaks ties on the id.
CONTACT_SORTS = {"name": ((Contact.name, Contact.id), False), "name_desc": ((Contact.name, Contact.id), True),
                 "newest": ((Contact.created_at, Contact.id), True),
                 "oldest": ((Contact.created_at, Contact.id), False)}


def list_contacts(s: Session, op: Operator, q: str | None = None, *, kind: str | None = None, sort: str = "name",
                  after: str | None = None, before: str | None = None, limit: int = PAGE_SIZE) -> paging.Page:
    """Contacts this operator may read, each with how many active facts are known about it: keyset pages both
    ways in the chosen order (name A-Z by default), with the capped total; rows are (contact, facts)."""
    if q and len(q) > 200:
        raise InvalidInput("Search for at most 200 characters.", "q")
    if kind and kind not in tuple(ContactKind):
        raise InvalidInput("Unknown kind of contact.", "kind")
    if sort not in CONTACT_SORTS:
        raise InvalidInput("Unknown sort order.", "sort")
    # Counted up to FACTS_CAP + 1 ("20+"): row security checks every row it counts, ~10 µs each, and a
    # big org's contact holds hundreds of facts (the page read 9,000 rows for its 50 contacts).
    known = (select(literal_column("1")).where(Memory.subject == func.concat("contact:", Contact.id),
                                               Memory.status == ACTIVE, memory_visible(op.access))
             .limit(FACTS_CAP + 1).correlate(Contact).subquery())
    facts = select(func.count()).select_from(known).scalar_subquery()
    stmt = select(Contact, facts).where(contact_visible(op.access))
    if kind:
        stmt = stmt.where(Contact.kind == kind)
    if q:
        like = paging.contains(q)
        stmt = stmt.where(or_(Contact.name.ilike(like), Contact.tax_id.ilike(like),
                              Contact.search_tsv.op("@@")(func.websearch_to_tsquery(TEXT_SEARCH_CONFIG, q))))
    columns, descending = CONTACT_SORTS[sort]
    first = paging.text_type if columns[0] is Contact.name else paging.datetime_type
    return paging.keyset(s, stmt, columns, lambda r: (getattr(r[0], columns[0].key), r[0].id),
                         (first, paging.uuid_type), after=after, before=before, descending=descending,
                         limit=limit, scalars=False, in_index_order=not q,  # ix_contacts_org_name / _created
                         for_values=bool(q))  # matching words: planned for them (a generic plan ran 1.3-1.8x slower)


def contact_page(s: Session, op: Operator, contact_id: uuid.UUID) -> ContactPage:
    c = s.scalar(select(Contact).where(Contact.id == contact_id, contact_visible(op.access)))
    if c is None:
        raise NotFound("No such contact, or you may not see it.")
    subject = f"contact:{c.id}"
    memories = list(s.scalars(select(Memory).options(LISTED_MEMORY).where(
        Memory.subject == subject, Memory.status == ACTIVE, memory_visible(op.access))
                              .order_by(Memory.pinned.desc(), Memory.attribute, Memory.id).limit(CONTACT_FACTS + 1)))
    proposals = list(s.scalars(select(Memory).options(LISTED_MEMORY).where(visible_proposals(op),
                                                                         Memory.subject == subject)
                               .order_by(Memory.created_at, Memory.id).limit(CONTACT_PROPOSALS + 1)))
    return ContactPage(c, memories[:CONTACT_FACTS], proposals[:CONTACT_PROPOSALS],
                       len(memories) > CONTACT_FACTS, len(proposals) > CONTACT_PROPOSALS)

