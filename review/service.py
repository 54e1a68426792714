"""The review workflow: the queue of pending proposals, their detail, and every decision on them.

Who may see and decide what is `console.services.proposals` (`can_view`, `can_decide`).
Every decision writes the audit log and a notification for the author, in the caller's transaction.
Nothing here commits: the view commits once.
"""
from __future__ import annotations

import datetime as dt
import difflib
import uuid
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from console.services import paging
from console.services.proposals import (
    ACTIVE,
    Labels,
    Operator,
    age,
    can_decide,
    can_view,
    capped_counts,
    kind_labels,
    normalise_account,
    verified_account_sentence,
    visible_kinds,
    visible_proposals,
)
from memory_core.domain import audit, clock
from memory_core.domain.access import message_visible
from memory_core.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from memory_core.domain.ladder import activate_proposal
from memory_core.domain.models import LISTED_MEMORY, Memory, MemorySource, Message, Notification
from memory_core.domain.vocabulary import AREAS, PROPOSAL_KINDS, TEXT_SEARCH_CONFIG, Level, ProposalKind, Status
from memory_core.reading.fence import quoted

PAGE_SIZE = 50
MAX_BULK = 200
CURSOR_TYPES = (paging.datetime_type, paging.uuid_type)  # (created_at or decided_at, id)


# ------------------------------------------------------------------------------------ reading

@dataclass
class QueueRow:
    proposal: Memory
    subject_label: str
    author_label: str
    age: str
    may_decide: bool
    kind_label: str


@dataclass
class Queue:
    rows: list[QueueRow]
    counts: dict[str, int]  # pending per kind (the counters), whatever the filters
    page: paging.Page  # this page's cursors and the filtered list's total
    areas: list[str] = field(default_factory=list)


def _rows(s: Session, op: Operator, page: paging.Page, since) -> list[QueueRow]:
    labels = Labels(s, op.org_id, op.lang).prefetch(page.rows)
    now, kinds = clock.now(), kind_labels(op.lang)
    return [QueueRow(p, labels.subject(p.subject, p.sentence, p.value), labels.author(p), age(now - since(p)),
                     p.status == Status.PROPOSED and can_decide(op, p),
                     kinds.get(p.proposal_kind, p.proposal_kind)) for p in page.rows]


def _filtered(stmt, kind: str | None, area: str | None, q: str | None):
    """The queue's and the history's filters: a kind of proposal, an area, words of the fact."""
    if kind and kind not in PROPOSAL_KINDS:
        raise InvalidInput("Unknown kind of proposal.", "kind")
    if area and area not in AREAS:
        raise InvalidInput("Unknown area.", "area")
    if kind:
        stmt = stmt.where(Memory.proposal_kind == kind)
    if area:
        stmt = stmt.where(Memory.area == area)
    if q:
        stmt = stmt.where(Memory.search_tsv.op("@@")(func.websearch_to_tsquery(TEXT_SEARCH_CONFIG, q)))
    return stmt


def list_queue(s: Session, op: Operator, *, kind: str | None = None, area: str | None = None,
               q: str | None = None, after: str | None = None, before: str | None = None,
               newest_first: bool = False, limit: int = PAGE_SIZE) -> Queue:
    """Pending proposals, oldest first by default (they have waited longest), keyset pages both ways with the
    filtered total, and the counts per kind."""
    where = visible_proposals(op)
    stmt = _filtered(select(Memory).options(LISTED_MEMORY).where(where), kind, area, q)
    counts = capped_counts(s, where, visible_kinds(op))
    # Unless filtered by more than the kind, the counters already hold the list's capped total.
    total = None if area or q else counts.get(kind, 0) if kind else sum(counts.values())
    # A member's queue is their own proposals (and an editable area's): read in the order of the author's
    # index (ix_memories_proposed_author) unless words are searched, which the text index finds faster.
    page = paging.keyset(s, stmt, (Memory.created_at, Memory.id), lambda m: (m.created_at, m.id), CURSOR_TYPES,
                         after=after, before=before, descending=newest_first, limit=limit,
                         in_index_order=not q, total=total, for_values=bool(q))  # words: planned for them
    return Queue(_rows(s, op, page, lambda p: p.created_at), counts, page, list(AREAS))


def list_decided(s: Session, op: Operator, *, kind: str | None = None, area: str | None = None,
                 q: str | None = None, after: str | None = None, before: str | None = None,
                 oldest_first: bool = False, limit: int = PAGE_SIZE) -> Queue:
    """Proposals already decided (approved, rejected, or approved and since replaced), newest decision first by
    default, with the same filters and pages as the queue."""
    stmt = _filtered(select(Memory).options(LISTED_MEMORY).where(visible_proposals(op, decided=True)), kind, area,
                     q)
    # Read in the order of ix_memories_decided (an admin) or ix_memories_decided_author (a member's own).
    page = paging.keyset(s, stmt, (Memory.decided_at, Memory.id), lambda m: (m.decided_at, m.id), CURSOR_TYPES,
                         after=after, before=before, descending=not oldest_first, limit=limit, in_index_order=not q,
                         for_values=bool(q))  # words: planned for them (the console keeps generic plans otherwise)
    counts = capped_counts(s, visible_proposals(op), visible_kinds(op))
    return Queue(_rows(s, op, page, lambda p: p.decided_at), counts, page, list(AREAS))


def pending_counts(s: Session, op: Operator) -> dict[str, int]:
    """The queue's counters (refreshed out of band after each htmx decision)."""
    return capped_counts(s, visible_proposals(op), visible_kinds(op))


def queue_row(s: Session, op: Operator, proposal: Memory, labels: Labels | None = None) -> QueueRow:
    """One row of the queue, for the htmx partial after an action (`labels`: the page's, when it has them)."""
    labels = labels or Labels(s, op.org_id, op.lang)
    return QueueRow(proposal, labels.subject(proposal.subject, proposal.sentence, proposal.value),
                    labels.author(proposal),
                    age(clock.now() - proposal.created_at),
                    proposal.status == Status.PROPOSED and can_decide(op, proposal),
                    kind_labels(op.lang).get(proposal.proposal_kind, proposal.proposal_kind))


@dataclass
class SourceMessage:
    at: dt.datetime
    channel: str
    author: str
    text: str  # fenced: control characters stripped, markers escaped; the template escapes HTML


@dataclass
class Detail:
    row: QueueRow
    sources: list[SourceMessage]
    replaces: Memory | None
    diff: list[tuple[str, str]]  # (op, text): op is "same", "del" or "ins"


def get_proposal(s: Session, op: Operator, proposal_id: uuid.UUID, *, for_update: bool = False) -> Memory:
    """A proposal this operator may see; NotFound otherwise (never reveal what they may not see)."""
    stmt = select(Memory).where(Memory.id == proposal_id, Memory.org_id == op.org_id,
                                Memory.proposal_kind.isnot(None))
    p = s.scalar(stmt.with_for_update() if for_update else stmt)
    if p is None:
        raise NotFound("No such proposal.")
    if not can_view(op, p):
        # Same org: refusing says no more than the org's own queue counts already do.
        raise Forbidden("You may not see this proposal.")
    return p


def detail(s: Session, op: Operator, proposal_id: uuid.UUID) -> Detail:
    p = get_proposal(s, op, proposal_id)
    labels = Labels(s, op.org_id, op.lang).prefetch([p])  # its contact's and author's names in one statement
    stmt = (select(Message).join(MemorySource, MemorySource.message_id == Message.id)
            .where(MemorySource.memory_id == p.id).order_by(Message.created_at))
    if not op.access.is_admin:
        # Reviewers of the org read every source; a member only the messages she may see.
        stmt = stmt.where(message_visible(op.access))
    msgs = s.execute(stmt).scalars().all()
    sources = [SourceMessage(m.created_at, m.channel,
                             labels.user(m.user_id) if m.user_id else (m.phone or m.role),
                             quoted(m.text, 2000)) for m in msgs]
    replaces = _replaced(s, p)
    before = replaces.value if replaces else ""
    return Detail(queue_row(s, op, p, labels), sources, replaces, word_diff(before, p.value))


def _replaced(s: Session, p: Memory) -> Memory | None:
    """The memory approval would replace: the active shared fact with the same subject and attribute."""
    current = s.scalar(select(Memory).where(
        Memory.status == ACTIVE, Memory.level == Level.SHARED, Memory.org_id == p.org_id,
        Memory.subject == p.subject, Memory.attribute == p.attribute))
    if current is None and p.replaces_id is not None:
        current = s.get(Memory, p.replaces_id)
    return current


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level before/after diff as (op, text) pieces."""
    a, b = before.split(), after.split()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("ins", " ".join(b[j1:j2])))
    return out


# ------------------------------------------------------------------------------------ deciding

def approve(s: Session, op: Operator, proposal_id: uuid.UUID, *, typed_account: str | None = None,
            value: str | None = None, sentence: str | None = None) -> Memory:
    """Approve (optionally edited first). A bank account needs an owner or admin and the account
    typed again. Returns the proposal row, now decided (or still pending as a low-permission one)."""
    p = _decidable(s, op, proposal_id)
    edited = value is not None or sentence is not None
    if edited:
        value = (value or "").strip() if value is not None else None
        sentence = (sentence or "").strip() if sentence is not None else None
        if value is not None and not value:
            raise InvalidInput("The value cannot be empty.", "value")
        if sentence is not None and not sentence:
            raise InvalidInput("The sentence cannot be empty.", "sentence")
        if value is not None and len(value) > 2000 or sentence is not None and len(sentence) > 4000:
            raise InvalidInput("That text is too long.", "value")
    if p.proposal_kind == ProposalKind.BANK_ACCOUNT:
        if not op.access.is_admin:
            raise Forbidden("Only an owner or admin can verify a bank account.")
        if edited:
            raise InvalidInput("A bank account cannot be edited here: reject it and ask the contact again.", "value")
        if not typed_account or not typed_account.strip():
            raise InvalidInput("Type the new account again to confirm you checked it with the contact.",
                               "confirm_account")
        if normalise_account(typed_account) != normalise_account(p.value):
            raise InvalidInput("The account you typed does not match the proposed one. Nothing was changed.",
                               "confirm_account")
        # Verified now: the fact must stop reading "sin verificar" wherever it is shown or sent.
        p.sentence = verified_account_sentence(Labels(s, op.org_id, "es").subject(p.subject))
    if p.proposal_kind == ProposalKind.CONFIRMATION and not op.access.can_edit(p.area):
        # The author confirms the fact, but may not share in this area: someone who may must approve it.
        p.proposal_kind = ProposalKind.LOW_PERMISSION
        p.proposal_rule = (f"Confirmed by its author, who may not edit {p.area}: "
                           f"someone who may edit {p.area} must share it.")
        if edited:
            p.value, p.sentence, p.hand_edited = value or p.value, sentence or p.sentence, True
        _audit(s, op, "proposal.confirmed", p, edited=edited)
        return p
    kind = p.proposal_kind
    result = activate_proposal(s, p, decided_by=op.user_id, value=value, sentence=sentence)
    _audit(s, op, "proposal.approved", p, edited=edited, outcome=result.outcome,
           superseded=str(result.superseded.id) if result.superseded else None)
    _notify(s, p, "proposal_approved", f"Approved by {op.name or op.label}: {p.sentence}",
            {"proposal_kind": kind, "outcome": result.outcome})
    return p


def reject(s: Session, op: Operator, proposal_id: uuid.UUID, reason: str) -> Memory:
    """Reject with a reason; the proposal stays as a rejected row until retention removes it."""
    p = _decidable(s, op, proposal_id)
    if p.proposal_kind == ProposalKind.BANK_ACCOUNT and not op.access.is_admin:
        raise Forbidden("Only an owner or admin can decide on a bank account.")
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Say why you reject it: the author will read it.", "reason")
    if len(reason) > 500:
        raise InvalidInput("Keep the reason under 500 characters.", "reason")
    p.status, p.decided_by, p.decided_at = Status.REJECTED, op.user_id, clock.now()
    p.decision_reason = reason
    _audit(s, op, "proposal.rejected", p)
    _notify(s, p, "proposal_rejected", f"Rejected by {op.name or op.label}: {p.sentence} — {reason}",
            {"proposal_kind": p.proposal_kind})
    return p


@dataclass
class BulkResult:
    done: list[uuid.UUID]
    skipped: list[tuple[uuid.UUID, str]]


def bulk(s: Session, op: Operator, action: str, ids: list[uuid.UUID], reason: str = "") -> BulkResult:
    """Approve or reject many non-bank proposals; each is checked on its own, bank accounts are skipped."""
    if action not in ("approve", "reject"):
        raise InvalidInput("Pick approve or reject.", "action")
    if not ids:
        raise InvalidInput("Select at least one proposal.", "ids")
    if len(ids) > MAX_BULK:
        raise InvalidInput(f"Select at most {MAX_BULK} proposals at once.", "ids")
    if action == "reject" and not (reason or "").strip():
        raise InvalidInput("Say why you reject them: the authors will read it.", "reason")
    out = BulkResult([], [])
    for pid in dict.fromkeys(ids):
        try:
            p = get_proposal(s, op, pid)
            if p.proposal_kind == ProposalKind.BANK_ACCOUNT:
                out.skipped.append((pid, "Bank accounts are verified one by one."))
                continue
            with s.begin_nested():
                if action == "approve":
                    approve(s, op, pid)
                else:
                    reject(s, op, pid, reason)
            out.done.append(pid)
        except (NotFound, Forbidden, Conflict, InvalidInput) as exc:
            out.skipped.append((pid, str(exc)))
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id, action=f"proposal.bulk_{action}",
                 org_id=op.org_id, details={"done": len(out.done), "skipped": len(out.skipped)})
    return out


def _decidable(s: Session, op: Operator, proposal_id: uuid.UUID) -> Memory:
    p = get_proposal(s, op, proposal_id, for_update=True)
    if p.status != Status.PROPOSED:
        raise Conflict("Someone already decided on this proposal.")
    if not can_decide(op, p):
        raise Forbidden("You may not decide on this proposal.")
    return p


def _audit(s: Session, op: Operator, action: str, p: Memory, **details) -> None:
    audit.record(s, actor_label=op.label, actor_user_id=op.user_id, action=action, org_id=p.org_id,
                 target_type="memory", target_id=p.id,
                 details={"proposal_kind": p.proposal_kind, "area": p.area, "attribute": p.attribute,
                          **{k: v for k, v in details.items() if v is not None}})


def _notify(s: Session, p: Memory, kind: str, text: str, data: dict) -> None:
    if p.author_user_id is None and not p.author_phone:
        return
    conversation_id = s.scalar(select(MemorySource.conversation_id).where(MemorySource.memory_id == p.id).limit(1))
    s.add(Notification(org_id=p.org_id, user_id=p.author_user_id,
                       phone=None if p.author_user_id else p.author_phone, conversation_id=conversation_id,
                       memory_id=p.id, kind=kind, text=text, data=data))
