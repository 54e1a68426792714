"""Who may see what: the principal, its access rebuilt from the database, and the one ownership filter.

Every read of memories, messages, documents and contacts goes through `visible(...)`; PostgreSQL's
row-level security (migration 0002) repeats the same rule from the transaction's Scope. Both fail
closed: no principal, no rows.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import String, and_, bindparam, false, func, literal_column, or_, select, text, true
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.db import Scope
from memory_core.adapters.rows import rows as read_rows
from memory_core.domain.models import Contact, Document, Membership, Memory, Message, PhoneAuthorization
from memory_core.domain.vocabulary import AREAS, DEFAULT_READ_AREAS, Level

RANK = {"read": 1, "edit": 2}


@dataclass(frozen=True)
class Principal:
    """Who is writing or reading: a web user, a WhatsApp phone, or both once linked."""
    user_id: uuid.UUID | None = None
    phone: str | None = None

    def __post_init__(self) -> None:
        if self.user_id is None and not self.phone:
            raise ValueError("a principal needs a user or a phone")


@dataclass(frozen=True)
class Access:
    principal: Principal
    org_id: uuid.UUID | None
    role: str | None = None  # owner | admin | member; None for a number with no account behind it
    permissions: dict[str, str] = field(default_factory=dict)

    def can_read(self, area: str) -> bool:
        return self.org_id is not None and self.permissions.get(area) in RANK

    def can_edit(self, area: str) -> bool:
        return self.org_id is not None and self.permissions.get(area) == "edit"

    @property
    def read_areas(self) -> tuple[str, ...]:
        return tuple(sorted(a for a, p in self.permissions.items() if p in RANK))

    @property
    def is_admin(self) -> bool:
        return self.role in ("owner", "admin")

    def scope(self) -> Scope:
        return Scope(mode="principal", org_id=self.org_id, user_id=self.principal.user_id,
                     phone=self.principal.phone, read_areas=self.read_areas)

    def ladder_scope(self) -> Scope:
        """The principal writing through the write ladder in the request (remember), as the worker does
        in system scope: also the org's shared facts and proposals of every area, which the ladder
        compares with and files proposals beside (migration t3_sec_links_web_scopes)."""
        return Scope(mode="ladder", org_id=self.org_id, user_id=self.principal.user_id,
                     phone=self.principal.phone, read_areas=self.read_areas)


def member_permissions(role: str, permissions: dict[str, str]) -> dict[str, str]:
    """A member's effective permissions: owners and admins edit every area; a member has the areas
    granted (unknown ones dropped) and reads the default areas."""
    if role in ("owner", "admin"):
        return {a: "edit" for a in AREAS}
    perms = {a: p for a, p in (permissions or {}).items() if a in AREAS and p in RANK}
    for area in DEFAULT_READ_AREAS:
        perms.setdefault(area, "read")
    return perms


def weaker_permissions(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    """Per area, the lesser of two permission sets: a number never gets more than its person."""
    return {area: min(a[area], b[area], key=RANK.get) for area in a.keys() & b.keys()}


def user_of_phone(session: Session, phone: str) -> uuid.UUID | None:
    """The account a number is linked to, if any, in any scope: a SECURITY DEFINER function (migration
    t1_sysscope_definer_lookups) answers, since the account may be invisible in the caller's scope (the
    API's org scope, a person who left the org, another org's person)."""
    return session.scalar(text("select memoria_user_of_phone(:p)"), {"p": phone})


# Every API request and every message the worker learns from rebuilds an access: its two reads are built once.
_MEMBERSHIP = select(Membership.role, Membership.permissions).where(
    Membership.org_id == bindparam("org", type_=UUID(as_uuid=True)),
    Membership.user_id == bindparam("user", type_=UUID(as_uuid=True)),
    Membership.left_at.is_(None), Membership.deactivated_at.is_(None))
_PHONE_AUTHORIZATION = select(PhoneAuthorization.user_id, PhoneAuthorization.permissions).where(
    PhoneAuthorization.org_id == bindparam("org", type_=UUID(as_uuid=True)),
    PhoneAuthorization.phone == bindparam("phone", type_=String), PhoneAuthorization.revoked_at.is_(None))


# The worker's batch learns for many writers at once: their memberships in one read (`load_member_accesses`).
_MEMBERSHIPS = select(Membership.org_id, Membership.user_id, Membership.role, Membership.permissions).where(
    Membership.user_id == func.any(bindparam("users", type_=ArrayParam("uuid"))),
    Membership.left_at.is_(None), Membership.deactivated_at.is_(None))


def load_member_accesses(session: Session, members: Iterable[tuple[uuid.UUID, uuid.UUID]]
                         ) -> dict[tuple[uuid.UUID, uuid.UUID], Access | None]:
    """`load_access(session, org_id, user_id=user_id)` for each (org_id, user_id) given, in one statement:
    the access of each signed-in person (no number) in that org as it is now, or None."""
    members = set(members)
    found = {(r.org_id, r.user_id): member_access(r.user_id, r.org_id, r.role, r.permissions)
             for r in read_rows(session, _MEMBERSHIPS, {"users": list({u for _, u in members})})}
    return {key: found.get(key) for key in members}


def member_access(user_id: uuid.UUID, org_id: uuid.UUID, role: str, permissions: dict | None) -> Access:
    """A signed-in member's access in an org, from their active membership row as just read (`load_access`
    reads it; the console's user loader has read it for the request already)."""
    return Access(Principal(user_id=user_id), org_id, role, member_permissions(role, permissions))


def load_access(session: Session, org_id: uuid.UUID | None, *, user_id: uuid.UUID | None = None,
                phone: str | None = None) -> Access | None:
    """Rebuild a principal's access from the database as it is now; None when it has none.

    A phone linked to an account resolves to that user too. A user who left the org (left_at set),
    a deactivated membership or a revoked number has no access, so the worker learns nothing from them.
    """
    if user_id is None and phone:
        user_id = user_of_phone(session, phone)
    principal = Principal(user_id=user_id, phone=phone)
    if org_id is None:
        # No org picked (a number allowed in several orgs): only personal memory applies.
        return Access(principal=principal, org_id=None)
    member_perms: dict[str, str] | None = None
    role = None
    if user_id is not None:
        m = read_rows(session, _MEMBERSHIP, {"org": org_id, "user": user_id}).first()
        if m is not None:
            role, member_perms = m.role, member_permissions(m.role, m.permissions)
    if phone:
        auth = read_rows(session, _PHONE_AUTHORIZATION, {"org": org_id, "phone": phone}).first()
        if auth is None:
            return None
        phone_perms = member_permissions("member", auth.permissions)
        if auth.user_id is not None or user_id is not None:
            if member_perms is None:
                return None  # the person behind the number is no longer a member
            return Access(principal, org_id, role, weaker_permissions(phone_perms, member_perms))
        return Access(principal, org_id, None, phone_perms)
    if member_perms is None:
        return None
    return Access(principal, org_id, role, member_perms)


@dataclass(frozen=True)
class _Who:
    """The values a visibility rule compares with: Python values, or bind parameters (see `template`)."""
    user_id: Any
    phone: Any
    org_id: Any
    read_areas: Any
    has_user: bool
    has_phone: bool
    has_org: bool
    has_areas: bool


def _values(access: Access) -> _Who:
    p = access.principal
    return _Who(p.user_id, p.phone, access.org_id, access.read_areas, p.user_id is not None, bool(p.phone),
                access.org_id is not None, bool(access.read_areas))


def shape(access: Access) -> tuple[bool, bool, bool, bool]:
    """What decides the form of a visibility rule: which of user, phone, org and readable areas exist."""
    v = _values(access)
    return v.has_user, v.has_phone, v.has_org, v.has_areas


def template_params(access: Access) -> dict[str, Any]:
    """The values for the bind parameters of a rule built by `template`."""
    p = access.principal
    return {"acc_user": p.user_id, "acc_phone": p.phone, "acc_org": access.org_id,
            "acc_areas": list(access.read_areas)}


def template(form: tuple[bool, bool, bool, bool]) -> _Who:
    """Bind parameters in place of the principal's values, so a statement is built once per `shape` and
    run with `template_params(access)`: the hot path (search, the memory block) skips rebuilding it."""
    return _Who(bindparam("acc_user", type_=UUID(as_uuid=True)), bindparam("acc_phone", type_=String),
                bindparam("acc_org", type_=UUID(as_uuid=True)), bindparam("acc_areas", expanding=True), *form)


def _who(access: Access | _Who | None) -> _Who | None:
    return access if isinstance(access, _Who) or access is None else _values(access)


def _owned_by(who: _Who, user_col, phone_col) -> ColumnElement[bool]:
    clauses = []
    if who.has_user:
        clauses.append(user_col == who.user_id)
    if who.has_phone:
        clauses.append(phone_col == who.phone)
    return or_(*clauses) if clauses else false()


def level_is(level: str) -> ColumnElement[bool]:
    """`memories.level = '<level>'` with the level written in the statement, not bound: a kept statement's generic
    plan can then prove the partial indexes that hold one level's rows (ix_memories_subject_user: a big org
    principal's named subjects read all 4,102 of their personal rows through another index, 3.3 against 1.8 ms)."""
    return Memory.level == literal_column(f"'{Level(level).value}'")


def memory_owned(access: Access | _Who | None) -> ColumnElement[bool]:
    """The principal's own memories: the personal and private arms of memory_visible."""
    who = _who(access)
    if who is None:
        return false()
    if who.has_org:
        return or_(memory_personal_arm(who), _private_arm(who, who.org_id))
    return memory_personal_arm(who)


def memory_own_arms(access: Access | _Who | None) -> list[ColumnElement[bool]]:
    """memory_owned as disjoint arms, one per owner column: the rows the user owns, then the rows the
    number owns that the user does not. Each compares one owner column, so the planner can read it from
    an index on that owner in that index's order (reading/profile_query.py); together they are memory_owned."""
    who = _who(access)
    if who is None:
        return []
    level = or_(level_is(Level.PERSONAL), and_(level_is(Level.PRIVATE), Memory.org_id == who.org_id)) \
        if who.has_org else level_is(Level.PERSONAL)
    arms = []
    if who.has_user:
        arms.append(and_(Memory.owner_user_id == who.user_id, level))
    if who.has_phone:
        not_the_users = or_(Memory.owner_user_id.is_(None), Memory.owner_user_id != who.user_id) \
            if who.has_user else true()
        arms.append(and_(Memory.owner_phone == who.phone, not_the_users, level))
    return arms


def memory_visible(access: Access | _Who | None) -> ColumnElement[bool]:
    """The ownership filter on memories: personal and private rows of the principal, shared rows of
    readable areas in its org. Status (active, proposed...) is the caller's choice."""
    who = _who(access)
    if who is None:
        return false()
    if who.has_org and who.has_areas:
        return or_(memory_owned(who), memory_shared(who))
    return memory_owned(who)


def memory_shared(access: Access | _Who | None, org_id: Any = None) -> ColumnElement[bool]:
    """The shared arm of memory_visible: the org's shared rows in the areas the principal may read.
    Alone (for a list of shared memories) the planner reads it in an index's order, which it cannot
    do through the whole rule's OR. `org_id`: see memory_org_arm."""
    who = _who(access)
    if who is None or not (who.has_org and who.has_areas):
        return false()
    org = who.org_id if org_id is None else org_id
    return and_(level_is(Level.SHARED), Memory.org_id == org, Memory.area.in_(who.read_areas))


def memory_level_arm(access: Access | _Who | None, level: str) -> ColumnElement[bool]:
    """The arm of memory_visible that holds one level's rows (personal, private or shared): a list of one level
    (My memory) read through it alone is served by an index in its order, where the whole rule's OR, or
    memory_owned's, makes the planner read every row the person owns and sort them."""
    who = _who(access)
    if who is None:
        return false()
    if level == Level.PERSONAL:
        return memory_personal_arm(who)
    if level == Level.PRIVATE:
        return _private_arm(who, who.org_id) if who.has_org else false()
    if level == Level.SHARED:
        return memory_shared(who)
    return false()


def memory_personal_arm(access: Access | _Who | None) -> ColumnElement[bool]:
    """The personal arm of memory_visible: the principal's own personal memories (they have no org)."""
    who = _who(access)
    if who is None:
        return false()
    return and_(level_is(Level.PERSONAL), _owned_by(who, Memory.owner_user_id, Memory.owner_phone))


def memory_org_arm(access: Access | _Who | None, org_id: Any = None) -> ColumnElement[bool]:
    """The org arms of memory_visible: the principal's private rows in its org and the shared ones it may
    read. `org_id`, when given, is compared instead of the principal's bound org (a literal lets the
    planner use an index that holds only that org's rows: reading/org_indexes.py)."""
    who = _who(access)
    if who is None or not who.has_org:
        return false()
    org = who.org_id if org_id is None else org_id
    return or_(_private_arm(who, org), memory_shared(who, org_id=org))


def _private_arm(who: _Who, org) -> ColumnElement[bool]:
    return and_(level_is(Level.PRIVATE), Memory.org_id == org,
                _owned_by(who, Memory.owner_user_id, Memory.owner_phone))


def message_visible(access: Access | _Who | None) -> ColumnElement[bool]:
    who = _who(access)
    if who is None:
        return false()
    same_org = or_(Message.org_id.is_(None), Message.org_id == who.org_id) if who.has_org else Message.org_id.is_(None)
    own = and_(_owned_by(who, Message.user_id, Message.phone), same_org)
    if not who.has_org or not who.has_areas:
        return own
    return or_(own, and_(Message.visibility == "shared_in_org", Message.org_id == who.org_id,
                         Message.area.in_(who.read_areas)))


def message_personal_arm(access: Access | _Who | None) -> ColumnElement[bool]:
    """The principal's own messages outside any org: with message_org_arm, the rows of message_visible."""
    who = _who(access)
    if who is None:
        return false()
    return and_(_owned_by(who, Message.user_id, Message.phone), Message.org_id.is_(None))


def message_org_arm(access: Access | _Who | None, org_id: Any = None) -> ColumnElement[bool]:
    """The org's messages the principal may see: its own there and those shared in areas it reads. `org_id`:
    see memory_org_arm (a literal lets the planner use an index that holds only that org's messages)."""
    who = _who(access)
    if who is None or not who.has_org:
        return false()
    org = who.org_id if org_id is None else org_id
    own = _owned_by(who, Message.user_id, Message.phone)
    if not who.has_areas:
        return and_(Message.org_id == org, own)
    return and_(Message.org_id == org, or_(own, and_(Message.visibility == "shared_in_org",
                                                     Message.area.in_(who.read_areas))))


def document_visible(access: Access | _Who | None) -> ColumnElement[bool]:
    who = _who(access)
    if who is None or not who.has_org:
        return false()
    own = _owned_by(who, Document.owner_user_id, Document.owner_phone)
    if not who.has_areas:
        return and_(Document.org_id == who.org_id, own)
    shared = and_(Document.visibility == "shared_in_org", Document.area.in_(who.read_areas))
    return and_(Document.org_id == who.org_id, or_(own, shared))


def contact_visible(access: Access | _Who | None) -> ColumnElement[bool]:
    who = _who(access)
    if who is None or not who.has_org or not who.has_areas:
        return false()
    return and_(Contact.org_id == who.org_id, Contact.area.in_(who.read_areas))
