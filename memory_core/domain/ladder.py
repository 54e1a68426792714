"""The write ladder: decides who a fact belongs to, never widening what was asked, then supersedes
instead of overwriting.

Rungs, top to bottom:
- personal facts (the person, their preferences, their own events) are owned by the user, or by the
  phone when no account is behind the number;
- business, customer and supplier facts are shared in the org, in their area;
  - a customer's or supplier's bank account becomes an unverified shared proposal (bank_account);
  - confirmation mode: a background fact waits for its author (confirmation);
  - a writer who may only read the area keeps a private memory plus a low_permission proposal;
- a caller may ask for less (private), never for more.

Everything here runs in the caller's transaction: memory, supersede link, source and audit row
commit together or not at all.
"""
from __future__ import annotations

import dataclasses
import unicodedata
import uuid
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from memory_core.domain import clock
from memory_core.domain import audit
from memory_core.domain.access import Access
from memory_core.backends.base import Fact
from memory_core.domain.models import Memory, MemorySource, Organization
from memory_core.domain.vocabulary import CATEGORY_AREA

# Two facts of one subject whose sentences are at least this similar are the same fact said with
# another attribute name: a different value supersedes, the same value merges.
SAME_FACT_SIMILARITY = 0.92
BANK_ATTRIBUTES = ("cuenta_bancaria",)
PERSONAL_CATEGORIES = ("person", "preference")
# Things a person has several of: each value is a fact of its own, not a correction of the last one.
MANY_VALUED = ("hijo", "hija", "hermano", "hermana")

Embed = Callable[[list[str]], list[list[float]]]


@dataclass(frozen=True)
class Source:
    message_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None


@dataclass
class WriteResult:
    """What the ladder did: learnt | merged | superseded | proposed | refused, and the rows it touched."""
    outcome: str
    memory: Memory | None = None  # the active memory now holding the fact (private one for low_permission)
    proposal: Memory | None = None
    superseded: Memory | None = None
    reason: str = ""


def normalise(value: str) -> str:
    """Compare values the way a person would: case, accents and spacing do not matter."""
    folded = unicodedata.normalize("NFKD", value.casefold())
    return " ".join("".join(c for c in folded if not unicodedata.combining(c)).split()).strip(" .")


def stored_attribute(fact: Fact) -> str:
    """The attribute a fact is stored under: two children or two dated events must not supersede
    each other, so their attribute carries the name or the date (hijo_juan, evento_2026-03-15)."""
    if fact.category == "event" and fact.event_date is not None and not fact.attribute.endswith(
            fact.event_date.isoformat()):
        return f"{fact.attribute}_{fact.event_date.isoformat()}"
    if fact.attribute in MANY_VALUED:
        return f"{fact.attribute}_{'_'.join(normalise(fact.value).split())}"
    return fact.attribute


def requested_level(fact: Fact, scope: str | None = None) -> str:
    """The widest level a fact may get: personal for the person, shared for the business."""
    if fact.category in PERSONAL_CATEGORIES or fact.subject == "self":
        return "personal"
    if fact.category == "event" and scope != "shared":
        return "personal"
    return "shared"


def write_memory(session: Session, access: Access, org: Organization | None, fact: Fact, *,
                 source: Source | None = None, explicit: bool = False, level: str | None = None,
                 embed: Embed | None = None, embed_model: str | None = None, origin: str | None = None,
                 actor_label: str = "memoria worker") -> WriteResult:
    """Write one fact for the principal in `access`, down the ladder. Does not commit."""
    fact = dataclasses.replace(fact, attribute=stored_attribute(fact))
    wanted = requested_level(fact)
    if level == "private" and wanted == "shared":
        wanted = "private"  # the caller asked for less: honour it, never the reverse
    origin = origin or ("explicit" if explicit else "background")
    area = CATEGORY_AREA.get(fact.category, "general")
    writer = _Writer(session, access, org, fact, source, embed, embed_model, origin, actor_label)

    if wanted == "personal":
        return writer.put_active(level="personal", area="general")
    if org is None:
        # A number with no org picked: only what is about the person can be kept.
        return WriteResult("refused", reason="No organization: only facts about the person are kept.")
    if wanted == "private":
        return writer.put_active(level="private", area=area)
    if fact.attribute in BANK_ATTRIBUTES and fact.subject.startswith(("contact:", "name:")):
        return writer.propose("bank_account", area,
                              "A customer's or supplier's new bank account is never learnt directly: "
                              "an owner or admin must verify it.")
    if org.memory_mode == "confirmation" and not explicit:
        return writer.propose("confirmation", area,
                              "Confirmation mode: business facts learnt in the background wait for their author.")
    if access.can_edit(area):
        return writer.put_active(level="shared", area=area)
    private = writer.put_active(level="private", area=area)
    proposal = writer.propose("low_permission", area,
                              f"The author may not edit {area}: someone who may edit it must share it.")
    return WriteResult("proposed", memory=private.memory, proposal=proposal.proposal,
                       superseded=private.superseded, reason=proposal.reason)


class _Writer:
    def __init__(self, session, access, org, fact, source, embed, embed_model, origin, actor_label):
        self.s, self.access, self.org, self.fact = session, access, org, fact
        self.source, self.embed, self.embed_model = source, embed, embed_model
        self.origin, self.actor_label = origin, actor_label
        self._vector: list[float] | None = None

    def vector(self) -> list[float] | None:
        if self._vector is None and self.embed is not None:
            self._vector = self.embed([self.fact.sentence])[0]
        return self._vector

    def _owner(self, level: str) -> tuple[uuid.UUID | None, str | None]:
        if level == "shared":
            return None, None
        p = self.access.principal
        return (p.user_id, None) if p.user_id is not None else (None, p.phone)

    def _new_row(self, level: str, area: str, status: str = "active", proposal_kind: str | None = None,
                 rule: str | None = None) -> Memory:
        owner_user, owner_phone = self._owner(level)
        f = self.fact
        row = Memory(
            org_id=None if level == "personal" else self.org.id if self.org else None, level=level,
            owner_user_id=owner_user, owner_phone=owner_phone, area=area, category=f.category,
            subject=f.subject, attribute=f.attribute, value=f.value, sentence=f.sentence,
            confidence=f.confidence, status=status, proposal_kind=proposal_kind, proposal_rule=rule,
            author_user_id=self.access.principal.user_id, author_phone=self.access.principal.phone,
            origin=self.origin, event_date=f.event_date, embedding=self.vector(), embed_model=self.embed_model)
        self.s.add(row)
        self.s.flush()
        self._add_source(row, new=True)
        return row

    def _add_source(self, row: Memory, *, new: bool = False) -> None:
        if self.source is None or (self.source.message_id is None and self.source.conversation_id is None):
            return
        # A row this writer just inserted has no source yet: nothing to look up.
        exists = None if new else self.s.scalar(select(MemorySource.id).where(
            MemorySource.memory_id == row.id, MemorySource.message_id == self.source.message_id))
        if exists is None:
            self.s.add(MemorySource(memory_id=row.id, message_id=self.source.message_id,
                                    conversation_id=self.source.conversation_id))

    def _audit(self, action: str, row: Memory, **details) -> None:
        audit.record(self.s, actor_label=self.actor_label, actor_user_id=self.access.principal.user_id,
                     action=action, org_id=row.org_id, target_type="memory", target_id=row.id,
                     details={"level": row.level, "category": row.category, "attribute": row.attribute,
                              "origin": self.origin, **details})

    def _same_level_active(self, level: str) -> list[Memory]:
        owner_user, owner_phone = self._owner(level)
        # Two workers learning about one subject at once take turns: without this, both see no
        # active row and the second trips the one-active-row index instead of superseding.
        org = self.org.id if self.org is not None and level != "personal" else ""
        key = f"{org}:{level}:{owner_user or owner_phone or ''}:{self.fact.subject}"
        self.s.execute(select(func.pg_advisory_xact_lock(func.hashtextextended(key, 0))))
        q = select(Memory).where(
            Memory.status == "active", Memory.level == level, Memory.subject == self.fact.subject,
            Memory.owner_user_id.is_(None) if owner_user is None else Memory.owner_user_id == owner_user,
            Memory.owner_phone.is_(None) if owner_phone is None else Memory.owner_phone == owner_phone)
        if level != "personal":
            q = q.where(Memory.org_id == (self.org.id if self.org else None))
        return list(self.s.scalars(q.with_for_update()))

    def find_match(self, level: str) -> Memory | None:
        """The active memory this fact restates or corrects: same attribute, else same meaning."""
        candidates = self._same_level_active(level)
        for m in candidates:
            if m.attribute == self.fact.attribute:
                return m
        vec = self.vector()
        if vec is None:
            return None
        best, best_sim = None, SAME_FACT_SIMILARITY
        for m in candidates:
            if m.embedding is None or m.embed_model != self.embed_model:
                continue
            sim = float(np.dot(np.asarray(m.embedding, dtype=float), np.asarray(vec, dtype=float)))
            if sim >= best_sim:
                best, best_sim = m, sim
        return best

    def put_active(self, level: str, area: str) -> WriteResult:
        match = self.find_match(level)
        if match is not None and normalise(match.value) == normalise(self.fact.value):
            self._add_source(match)
            match.confidence = min(1.0, max(match.confidence, self.fact.confidence) + 0.05)
            match.updated_at = clock.now()
            self._audit("memory.merged", match)
            return WriteResult("merged", memory=match, reason="Already known: added this message as a source.")
        if match is not None:
            match.status = "superseded"
            match.valid_to = clock.now()
            self.s.flush()  # the unique index allows one active row: close the old one first
            row = self._new_row(level, area)
            match.superseded_by = row.id
            self._audit("memory.superseded", row, superseded=str(match.id))
            return WriteResult("superseded", memory=row, superseded=match,
                               reason="Replaces an older value, kept as a version.")
        row = self._new_row(level, area)
        self._audit("memory.learnt", row)
        return WriteResult("learnt", memory=row, reason="Learnt.")

    def propose(self, kind: str, area: str, rule: str) -> WriteResult:
        current = self.find_match("shared")
        if current is not None and normalise(current.value) == normalise(self.fact.value):
            self._add_source(current)
            return WriteResult("merged", memory=current, reason="Already known: nothing to propose.")
        pending = self.s.scalar(select(Memory).where(
            Memory.status == "proposed", Memory.org_id == (self.org.id if self.org else None),
            Memory.subject == self.fact.subject, Memory.attribute == self.fact.attribute,
            Memory.proposal_kind == kind))
        if pending is not None and normalise(pending.value) == normalise(self.fact.value):
            self._add_source(pending)
            return WriteResult("proposed", proposal=pending, reason=pending.proposal_rule or rule)
        row = self._new_row("shared", area, status="proposed", proposal_kind=kind, rule=rule)
        row.replaces_id = current.id if current is not None else None
        self._audit("memory.proposed", row, proposal_kind=kind)
        return WriteResult("proposed", proposal=row, reason=rule)


def activate_proposal(session: Session, proposal: Memory, *, decided_by: uuid.UUID | None,
                      value: str | None = None, sentence: str | None = None) -> WriteResult:
    """Approve a proposal: it becomes the active shared fact, superseding (never overwriting) the
    memory it replaces, or merging into an identical one. Does not commit."""
    now = clock.now()
    if value is not None:
        proposal.value, proposal.hand_edited = value, True
    if sentence is not None:
        proposal.sentence, proposal.hand_edited = sentence, True
    current = session.scalar(select(Memory).where(
        Memory.status == "active", Memory.level == "shared", Memory.org_id == proposal.org_id,
        Memory.subject == proposal.subject, Memory.attribute == proposal.attribute).with_for_update())
    proposal.decided_by, proposal.decided_at = decided_by, now
    if current is not None and normalise(current.value) == normalise(proposal.value):
        for src in session.scalars(select(MemorySource).where(MemorySource.memory_id == proposal.id)):
            if src.message_id is None or session.scalar(select(MemorySource.id).where(
                    MemorySource.memory_id == current.id, MemorySource.message_id == src.message_id)) is None:
                src.memory_id = current.id
        proposal.status, proposal.decision_reason = "rejected", "Same as the active memory: merged."
        return WriteResult("merged", memory=current, proposal=proposal)
    if current is not None:
        current.status, current.valid_to = "superseded", now
        session.flush()
    proposal.status, proposal.valid_from = "active", now
    session.flush()
    if current is not None:
        current.superseded_by = proposal.id
    return WriteResult("superseded" if current else "learnt", memory=proposal, proposal=proposal,
                       superseded=current)
