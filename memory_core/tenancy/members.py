"""People in an org: invitations and their acceptance, roles, per-area permissions, deactivation and
removal (the member-leaves forgetting rule, with its preview), password resets.

Every function takes the session and does not commit (the caller's unit of work does, once); every
change an operator makes is audited with ids and kinds, never emails or names.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from memory_core.adapters.security import hash_password
from memory_core.domain import audit
from memory_core.domain.access import member_permissions
from memory_core.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from memory_core.domain.models import AccountToken, Membership, Organization, User
from memory_core.domain.vocabulary import AREAS, PERMISSIONS, ROLES
from memory_core.tenancy import tokens
from memory_core.tenancy.leaving import member_leaves, member_leaves_preview
from memory_core.tenancy.passwords import check_password


@dataclass(frozen=True)
class Actor:
    """Who does it, as the audit log names them: a user id (if any) and a label by role or key.

    `org_role` is the actor's role in the org when a person acts in the console: an admin may not
    make, change or remove owners (only an owner may). None: an operator, a key or the command line."""
    label: str
    user_id: uuid.UUID | None = None
    org_role: str | None = None

    def check_may_manage(self, *roles: str | None) -> None:
        if self.org_role == "admin" and "owner" in roles:
            raise Forbidden("Only an owner can make, change or remove an owner.")
        if self.org_role == "member":
            raise Forbidden("Only owners and admins manage the people of an organization.")


# ---------------------------------------------------------------------------- input rules

def clean_email(email: str) -> str:
    email = (email or "").strip().lower()
    if len(email) > 320 or email.count("@") != 1 or not all(email.split("@")) or any(c.isspace() for c in email):
        raise InvalidInput("Give a valid email address.", field="email")
    return email


def clean_name(name: str, email: str) -> str:
    name = (name or "").strip() or email.split("@")[0]
    if len(name) > 200:
        raise InvalidInput("Give a name of at most 200 characters.", field="name")
    return name


def clean_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidInput("The role must be one of %(roles)s.", field="role", roles=", ".join(ROLES))
    return role


def clean_permissions(permissions: dict[str, str] | None) -> dict[str, str]:
    """Explicit per-area grants: known areas only, "read" or "edit"; "none" (or empty) drops the area."""
    out: dict[str, str] = {}
    for area, level in (permissions or {}).items():
        if area not in AREAS:
            raise InvalidInput("Unknown area %(area)r; areas are %(areas)s.", field="permissions", area=area,
                               areas=", ".join(AREAS))
        if level in (None, "", "none"):
            continue
        if level not in PERMISSIONS:
            raise InvalidInput("Permission for %(area)s must be read or edit.", field="permissions", area=area)
        out[area] = level
    return out


def parse_areas(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`contacts=read invoices=edit` (as the CLI takes them) to a permissions dict."""
    out = {}
    for pair in pairs:
        area, sep, level = pair.partition("=")
        if not sep:
            raise InvalidInput("Write areas as area=read or area=edit, not %(pair)r.", field="permissions", pair=pair)
        out[area.strip()] = level.strip()
    return clean_permissions(out)


# ---------------------------------------------------------------------------- lookups

def active_membership(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, lock: bool = False) -> Membership:
    q = select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id,
                                 Membership.left_at.is_(None))
    m = session.scalar(q.with_for_update() if lock else q)
    if m is None:
        raise NotFound("That person is not a member of this organization.")
    return m


def user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(func.lower(User.email) == clean_email(email)))


@dataclass(frozen=True)
class MemberRow:
    user_id: uuid.UUID
    email: str
    name: str
    role: str
    permissions: dict[str, str]
    effective: dict[str, str]
    joined_at: dt.datetime
    active: bool
    external_id: str | None
    has_password: bool


def list_members(session: Session, org_id: uuid.UUID) -> list[MemberRow]:
    """The org's current members (not those who left), owners first."""
    rows = session.execute(select(Membership, User).join(User, User.id == Membership.user_id).where(
        Membership.org_id == org_id, Membership.left_at.is_(None)).order_by(
        func.array_position(list(ROLES), Membership.role), User.name)).all()
    return [MemberRow(u.id, u.email, u.name, m.role, m.permissions or {}, member_permissions(m.role, m.permissions),
                      m.joined_at, m.deactivated_at is None, m.external_id, bool(u.password_hash))
            for m, u in rows]


def pending_invitations(session: Session, org_id: uuid.UUID, *, now: dt.datetime | None = None) -> list[AccountToken]:
    return list(session.scalars(select(AccountToken).where(
        AccountToken.org_id == org_id, AccountToken.purpose == "invite", AccountToken.used_at.is_(None),
        AccountToken.expires_at > (now or tokens.utcnow())).order_by(AccountToken.created_at.desc())))


# ---------------------------------------------------------------------------- joining

def invite(session: Session, org_id: uuid.UUID, email: str, *, role: str = "member",
           permissions: dict[str, str] | None = None, name: str = "", actor: Actor,
           now: dt.datetime | None = None) -> tuple[AccountToken, str]:
    """A one-time invitation link to join the org with a role and areas. Returns the row and the token."""
    email, role, permissions = clean_email(email), clean_role(role), clean_permissions(permissions)
    actor.check_may_manage(role)
    if session.get(Organization, org_id) is None:
        raise NotFound("No such organization.")
    existing = user_by_email(session, email)
    if existing is not None and session.scalar(select(Membership.id).where(
            Membership.org_id == org_id, Membership.user_id == existing.id, Membership.left_at.is_(None))):
        raise Conflict("That person is already a member of this organization.")
    row, token = tokens.issue(session, "invite", email, name=clean_name(name, email), org_id=org_id, role=role,
                              permissions=permissions, created_by=actor.user_id, now=now)
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="invitation.created",
                 org_id=org_id, target_type="invitation", target_id=row.id, details={"role": role})
    return row, token


def invitation(session: Session, token: str, *, now: dt.datetime | None = None) -> tuple[tokens.Link, bool]:
    """The valid invitation of a token, and whether its email already has an account (then no new password)."""
    link = tokens.peek(session, "invite", token, now=now)
    return link, link.account_id is not None


def accept_invitation(session: Session, token: str, *, password: str | None, name: str | None = None,
                      user_id: uuid.UUID | None = None, now: dt.datetime | None = None) -> User:
    """Use an invitation once: the account is created with its password (or, if the email already has
    one, kept as it is) and the membership begins (or begins again) with the invited role and areas.

    Runs in any scope that lets the person write their own rows: the invitation's org scope with the
    person's id (`user_id`: the new account's, chosen by the caller), or their own scope for a
    platform invitation; the link itself is read and used by SECURITY DEFINER functions (tokens)."""
    link = tokens.peek(session, "invite", token, now=now)
    user = session.get(User, link.account_id) if link.account_id else None
    if link.account_id and user is None:
        raise NotFound(tokens.INVALID)  # an account this scope cannot see: not the person's
    if user is None:  # a weak password does not use up the link
        password_hash = hash_password(check_password(password or "", email=link.email))
        user = User(id=user_id or uuid.uuid4(), email=link.email, name=clean_name(name or link.name, link.email),
                    password_hash=password_hash)
        session.add(user)
        session.flush()
    tokens.consume(session, "invite", token, user_id=user.id, now=now)  # gives a platform invitation's role
    if link.org_id is not None:
        join_org(session, link.org_id, user.id, link.role or "member", link.permissions)
    elif link.platform_role:
        session.refresh(user)
    audit.record(session, actor_label="invitation", actor_user_id=user.id, action="invitation.accepted",
                 org_id=link.org_id, target_type="invitation", target_id=link.id,
                 details={"role": link.role or link.platform_role})
    return user


def join_org(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, role: str, permissions: dict,
             external_id: str | None = None) -> Membership:
    """The membership begins (or begins again after leaving); an active one is left as it is. Not audited:
    the caller records why it happened."""
    m = session.scalar(select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
                       .with_for_update())
    if m is None:
        m = Membership(org_id=org_id, user_id=user_id, role=role, permissions=permissions, external_id=external_id)
        session.add(m)
    elif m.left_at is not None:
        # Coming back after leaving: a fresh start (what was private then is gone).
        m.left_at, m.deactivated_at, m.role, m.permissions = None, None, role, permissions
        m.joined_at = tokens.utcnow()
    if external_id is not None:
        m.external_id = external_id
    session.flush()
    return m


def add_member(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, role: str = "member",
               permissions: dict[str, str] | None = None, actor: Actor) -> Membership:
    """Make an existing account a member directly (operators; people get invitations)."""
    role, permissions = clean_role(role), clean_permissions(permissions)
    actor.check_may_manage(role)
    if session.get(Organization, org_id) is None or session.get(User, user_id) is None:
        raise NotFound("No such organization or person.")
    if session.scalar(select(Membership.id).where(Membership.org_id == org_id, Membership.user_id == user_id,
                                                  Membership.left_at.is_(None))):
        raise Conflict("That person is already a member of this organization.")
    m = join_org(session, org_id, user_id, role, permissions)
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="membership.added",
                 org_id=org_id, target_type="user", target_id=user_id, details={"role": role})
    return m


# ---------------------------------------------------------------------------- roles and areas

def _owners(session: Session, org_id: uuid.UUID) -> int:
    # Locks the org's owner rows so two demotions cannot both pass the last-owner check.
    return len(session.scalars(select(Membership.id).where(
        Membership.org_id == org_id, Membership.role == "owner", Membership.left_at.is_(None))
        .with_for_update()).all())


def set_role(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, role: str, *, actor: Actor) -> Membership:
    """Change a member's role; the last owner cannot be demoted."""
    role = clean_role(role)
    m = active_membership(session, org_id, user_id, lock=True)
    if m.role == role:
        return m
    actor.check_may_manage(m.role, role)
    if m.role == "owner" and _owners(session, org_id) <= 1:
        raise Conflict("The last owner cannot be demoted: make someone else owner first.")
    before, m.role = m.role, role
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="membership.role_changed",
                 org_id=org_id, target_type="user", target_id=user_id, details={"from": before, "to": role})
    return m


def set_permissions(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, permissions: dict[str, str], *,
                    actor: Actor) -> Membership:
    """Replace a member's per-area grants (owners and admins edit every area whatever is stored)."""
    permissions = clean_permissions(permissions)
    m = active_membership(session, org_id, user_id, lock=True)
    actor.check_may_manage()
    m.permissions = permissions
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id,
                 action="membership.permissions_changed", org_id=org_id, target_type="user", target_id=user_id,
                 details={"permissions": permissions})
    return m


def set_active(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, active: bool, *, actor: Actor,
               now: dt.datetime | None = None) -> Membership:
    """Deactivate (no access, nothing forgotten) or reactivate a membership; the last active owner stays."""
    m = active_membership(session, org_id, user_id, lock=True)
    if active == (m.deactivated_at is None):
        return m
    actor.check_may_manage(m.role)
    if not active and m.role == "owner" and session.scalar(select(func.count()).select_from(Membership).where(
            Membership.org_id == org_id, Membership.role == "owner", Membership.left_at.is_(None),
            Membership.deactivated_at.is_(None))) <= 1:
        raise Conflict("The last active owner cannot be deactivated.")
    m.deactivated_at = None if active else (now or tokens.utcnow())
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id,
                 action="membership.reactivated" if active else "membership.deactivated", org_id=org_id,
                 target_type="user", target_id=user_id)
    return m


def removal_preview(session: Session, org_id: uuid.UUID, user_id: uuid.UUID) -> dict[str, int]:
    """What removing the member would forget and keep (the member-leaves rule), changing nothing."""
    m = active_membership(session, org_id, user_id)
    if m.role == "owner" and _owners(session, org_id) <= 1:
        raise Conflict("The last owner cannot be removed: make someone else owner first.")
    return member_leaves_preview(session, org_id, user_id)


def remove_member(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, actor: Actor) -> dict[str, int]:
    """Remove a member: the member-leaves forgetting rule (private memories go, shared ones stay)."""
    actor.check_may_manage(active_membership(session, org_id, user_id).role)
    return member_leaves(session, org_id, user_id, actor_label=actor.label, actor_user_id=actor.user_id)


# ---------------------------------------------------------------------------- passwords

def account_only_in(session: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> bool:
    """Whether the account is a current member of this org and of no other, with no platform role: only
    then may the org change its email or hand out a link that sets its password. Asked of a SECURITY
    DEFINER function (migration t3_sec_org_people_scope), since the org's scope does not see its
    members' other memberships; it answers for the caller's own org (or the system) only."""
    return bool(session.scalar(text("select memoria_account_only_in(:u, :o)"), {"u": user_id, "o": org_id}))


def org_reset_link(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, actor: Actor,
                   now: dt.datetime | None = None) -> str:
    """A password-reset token an org's owner or admin hands to one of its members; refused for an account
    that is also used elsewhere (that would let one org take over another org's person)."""
    m = active_membership(session, org_id, user_id)
    actor.check_may_manage(m.role)
    if not account_only_in(session, user_id, org_id):
        raise Forbidden("This account is also used outside this organization: the person resets their "
                        "password through the platform's operators.")
    return request_password_reset(session, session.get(User, user_id).email, actor=actor, now=now)


def request_password_reset(session: Session, email: str, *, actor: Actor,
                           now: dt.datetime | None = None) -> str | None:
    """A one-time reset token for the account with this email, or None when there is none (the caller
    says the same thing either way)."""
    user = user_by_email(session, email)
    if user is None:
        return None
    row, token = tokens.issue(session, "reset", user.email, user_id=user.id, created_by=actor.user_id, now=now)
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="password_reset.issued",
                 target_type="user", target_id=user.id)
    return token


def reset_password(session: Session, token: str, password: str, *, now: dt.datetime | None = None) -> User:
    """Use a reset link once to set a new password, in the account's own scope (or the system's)."""
    link = tokens.peek(session, "reset", token, now=now)
    user = session.get(User, link.account_id) if link.account_id else None
    if user is None:
        raise NotFound(tokens.INVALID)
    password = check_password(password, email=user.email)  # a weak password does not use up the link
    tokens.consume(session, "reset", token, now=now)
    user.password_hash = hash_password(password)
    audit.record(session, actor_label="password reset", actor_user_id=user.id, action="password_reset.used",
                 target_type="user", target_id=user.id)
    return user
