"""Who an operator is and which proposals they may see and decide, in one place (`can_view`,
`can_decide`), with the readable labels every console page shows. Shared by the console's pages and
the review queue; no Flask here.

- an owner or admin: every proposal of their org, bank accounts included;
- a member: their own confirmation proposals, and low-permission proposals in areas they may edit
  (their own low-permission proposals too, to look at, not to approve); never a bank account.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import and_, func, literal, literal_column, or_, select, union_all
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.planner import constant, generic_plan_window
from memory_core.domain import labels
from memory_core.domain.access import Access
from memory_core.domain.models import Contact, Memory, Organization, User
from memory_core.domain.vocabulary import AREAS, PROPOSAL_KINDS, ProposalKind, Status

COUNT_CAP = 1000
# "Pending" and "active" as literals, not bound parameters: the partial indexes on pending proposals (`where status
# = 'proposed'`) and on active memories then serve the console's generic plans too (planner.kept_plans).
PROPOSED = constant(Status.PROPOSED.value)
ACTIVE = constant(Status.ACTIVE.value)


def kind_labels(lang: str = "en") -> dict[str, str]:
    """The proposal kinds as a page names them, in its language."""
    return {k: labels.term("proposal_kind", k, lang) for k in PROPOSAL_KINDS}


@dataclass(frozen=True)
class Operator:
    """The signed-in person deciding, with their access in the org rebuilt from the database."""
    access: Access
    label: str  # for the audit log (email)
    name: str = ""  # for the author's notification
    lang: str = "en"  # the language of the operator's pages

    @property
    def user_id(self) -> uuid.UUID:
        return self.access.principal.user_id

    @property
    def org_id(self) -> uuid.UUID:
        return self.access.org_id


# ------------------------------------------------------------------------------------ permissions

def visible_proposals(op: Operator, *, decided: bool = False) -> ColumnElement[bool]:
    """The pending proposals this operator may see (the queue's filter); with `decided`, the ones already
    approved or rejected (the queue's history), under the same rule."""
    state = (and_(Memory.proposal_kind.is_not(None), Memory.decided_at.is_not(None)) if decided
             else Memory.status == PROPOSED)
    base = and_(Memory.org_id == op.org_id, state)
    if op.access.is_admin:
        return base
    editable = [a for a in AREAS if op.access.can_edit(a)]
    # Their own confirmations and low-permission proposals; written as one clause on the author (not an OR per
    # kind) so the author's index (ix_memories_proposed_author) serves the queue and its counts.
    mine = and_(Memory.author_user_id == op.user_id,
                Memory.proposal_kind.in_((ProposalKind.CONFIRMATION, ProposalKind.LOW_PERMISSION)))
    if editable:
        return and_(base, or_(mine, and_(Memory.proposal_kind == ProposalKind.LOW_PERMISSION,
                                          Memory.area.in_(editable))))
    return and_(base, mine)


def can_view(op: Operator, p: Memory) -> bool:
    if p.org_id != op.org_id or p.proposal_kind is None:
        return False
    if op.access.is_admin:
        return True
    if p.proposal_kind == ProposalKind.BANK_ACCOUNT:
        return False
    mine = p.author_user_id == op.user_id
    if p.proposal_kind == ProposalKind.CONFIRMATION:
        return mine
    return mine or op.access.can_edit(p.area)


def can_decide(op: Operator, p: Memory) -> bool:
    """Approve, reject or edit: admins always; a member their own confirmations or where they may edit."""
    if not can_view(op, p):
        return False
    if op.access.is_admin:
        return True
    if p.proposal_kind == ProposalKind.CONFIRMATION:
        return p.author_user_id == op.user_id
    return op.access.can_edit(p.area)

def visible_kinds(op: Operator) -> tuple[str, ...]:
    """The kinds this operator may ever see: a member never sees a bank account."""
    return PROPOSAL_KINDS if op.access.is_admin else tuple(k for k in PROPOSAL_KINDS if k != ProposalKind.BANK_ACCOUNT)


def capped_counts(s: Session, where, kinds: tuple[str, ...] = PROPOSAL_KINDS, cap: int = COUNT_CAP) -> dict[str, int]:
    """Pending proposals per kind, counted up to `cap` (shown as "1000+"): counting 100,000 rows
    under row-level security on every page view would cost more than the page itself."""
    counts = {k: 0 for k in PROPOSAL_KINDS}
    if not kinds:
        return counts
    # One statement that names memories once (row security makes each mention cost milliseconds to plan),
    # run once per kind, each from ix_memories_proposed_counts without reading the table.
    # The kinds as one array parameter, not a VALUES list: SQLAlchemy cannot cache a statement holding VALUES data
    # and compiled it afresh on every page view (~2.6 ms).
    kind_list = select(func.unnest(literal(list(kinds), ArrayParam("varchar"))).label("kind")).subquery("kinds")
    capped = (select(literal_column("1")).where(where, Memory.proposal_kind == kind_list.c.kind).limit(cap + 1)
              .correlate(kind_list).subquery())
    counted = select(kind_list.c.kind, select(func.count()).select_from(capped).scalar_subquery())
    with generic_plan_window(s):
        counts.update((kind, int(n or 0)) for kind, n in s.execute(counted))
    return counts


def age(delta: dt.timedelta) -> str:
    secs = max(0, int(delta.total_seconds()))
    if secs < 3600:
        return f"{secs // 60} min"
    if secs < 86400:
        return f"{secs // 3600} h"
    return f"{secs // 86400} d"


class Labels:
    """Readable names for subjects and authors, looked up once per request."""

    def __init__(self, s: Session, org_id: uuid.UUID, lang: str = "en"):
        self.s, self.org_id, self.lang = s, org_id, lang
        self._contacts: dict[str, str] = {}
        self._users: dict[uuid.UUID, str] = {}
        self._org: str | None = None

    def prefetch(self, rows: list[Memory]) -> Labels:
        """Look up every contact, author and decider of a page in one statement instead of one per row."""
        ids = {}
        for m in rows:
            if m.subject.startswith("contact:") and m.subject not in self._contacts:
                try:
                    ids[uuid.UUID(m.subject.split(":", 1)[1])] = m.subject
                except ValueError:
                    pass
        users = ({m.author_user_id for m in rows if m.author_user_id} | {m.decided_by for m in rows if m.decided_by}
                 ) - set(self._users)
        parts = []
        if ids:
            parts.append(select(literal_column("'contact'").label("kind"), Contact.id, Contact.name)
                         .where(Contact.id.in_(list(ids))))
        if users:
            parts.append(select(literal_column("'user'").label("kind"), User.id, User.name)
                         .where(User.id.in_(list(users))))
        found: dict[tuple[str, uuid.UUID], str] = {}
        if parts:
            stmt = parts[0] if len(parts) == 1 else union_all(*parts)
            found = {(kind, id_): name for kind, id_, name in self.s.execute(stmt)}
        for cid, subject in ids.items():
            self._contacts[subject] = found.get(("contact", cid)) or labels.phrase("hidden_contact", self.lang)
        for uid in users:
            self._users[uid] = found.get(("user", uid)) or labels.phrase("former_user", self.lang)
        return self

    def subject(self, subject: str, *texts: str | None) -> str:
        """The subject by name; `texts` (the fact's sentence, value) give a named subject its own spelling."""
        if subject == "self":
            return labels.phrase("self", self.lang)
        if subject == "org":
            if self._org is None:
                name = self.s.scalar(select(Organization.name).where(Organization.id == self.org_id))
                self._org = name or labels.phrase("org", self.lang)
            return self._org
        if subject.startswith("contact:"):
            if subject not in self._contacts:
                try:
                    cid = uuid.UUID(subject.split(":", 1)[1])
                except ValueError:
                    return subject
                name = self.s.scalar(select(Contact.name).where(Contact.id == cid))
                self._contacts[subject] = name or labels.phrase("hidden_contact", self.lang)
            return self._contacts[subject]
        return labels.named_subject(subject, *texts)

    def user(self, user_id: uuid.UUID | None) -> str:
        if user_id is None:
            return "—"
        if user_id not in self._users:
            name = self.s.scalar(select(User.name).where(User.id == user_id))
            self._users[user_id] = name or labels.phrase("former_user", self.lang)
        return self._users[user_id]

    def author(self, m: Memory) -> str:
        if m.author_user_id is not None:
            name = self.user(m.author_user_id)
            former = labels.phrase("former_member", self.lang)
            return f"{name} ({former})" if m.author_former_member else name
        return f"WhatsApp {m.author_phone}" if m.author_phone else "—"


def pending_counts(s: Session, op: Operator) -> dict[str, int]:
    """Pending proposals per kind that this operator may see (the queue's and the dashboard's counters)."""
    return capped_counts(s, visible_proposals(op), visible_kinds(op))


def verified_account_sentence(subject_label: str) -> str:
    return f"{subject_label}: cuenta bancaria verificada con el contacto."


def normalise_account(value: str) -> str:
    """Bank accounts compare without spaces, dashes or case: how people type an IBAN back."""
    return "".join(ch for ch in value.casefold() if ch.isalnum())
