"""Provisioning by the host application's own ids: idempotent upserts of people (account + membership
with role and areas), authorized phones and organizations. Calling twice with the same input changes
nothing the second time. Nothing here commits.

An org key may create accounts for new emails, never take over an existing account: an email that
already has an account outside this org is refused (that person is invited instead), because a key
acting for a person reads that person's personal memories.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from memory_core.domain import audit
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import Membership, Organization, PhoneAuthorization, User
from memory_core.domain.phones import normalise_phone
from memory_core.tenancy import members
from memory_core.tenancy.members import Actor
from memory_core.tenancy.orgs import clean_org_name, create_org
from memory_core.tenancy.phones import authorize_phone, revoke_phone


def clean_ref(ref: str, field: str = "external_id") -> str:
    ref = (ref or "").strip()
    if not ref or len(ref) > 200 or "\x00" in ref or not ref.isprintable():
        raise InvalidInput("Give an id of 1 to 200 printable characters.", field=field)
    try:
        ref.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("Give an id of valid UTF-8.", field=field) from None
    return ref


@dataclass(frozen=True)
class Upserted:
    membership: Membership
    user: User
    created: bool


def membership_by_ref(session: Session, org_id: uuid.UUID, ref: str, *, lock: bool = False) -> Membership | None:
    q = select(Membership).where(Membership.org_id == org_id, Membership.external_id == clean_ref(ref))
    return session.scalar(q.with_for_update() if lock else q)


def upsert_person(session: Session, org_id: uuid.UUID, ref: str, *, email: str, name: str = "", role: str = "member",
                  permissions: dict[str, str] | None = None, active: bool = True, actor: Actor) -> Upserted:
    """The person the host knows as `ref` in this org: account and membership made to match."""
    ref, email = clean_ref(ref), members.clean_email(email)
    role, permissions = members.clean_role(role), members.clean_permissions(permissions)
    m = membership_by_ref(session, org_id, ref, lock=True)
    created = False
    if m is None:
        user = members.user_by_email(session, email)  # in the org's scope: found only if it was ever a member
        if user is None:
            user = _new_member(session, org_id, email, members.clean_name(name, email), role, permissions, ref)
            audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="user.created",
                         org_id=org_id, target_type="user", target_id=user.id, details={"by": "provisioning"})
            created = True
        else:
            existing = session.scalar(select(Membership).where(Membership.org_id == org_id,
                                                               Membership.user_id == user.id))
            if existing is None or existing.left_at is not None:
                raise Conflict("That email belongs to an existing account: invite the person instead.")
            if existing.external_id not in (None, ref):
                raise Conflict("That person is already provisioned under another id.")
    else:
        user = session.get(User, m.user_id)
    joining = m is None and created or m is not None and m.left_at is not None
    m = members.join_org(session, org_id, user.id, role, permissions, external_id=ref)
    if joining:
        audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="membership.added",
                     org_id=org_id, target_type="user", target_id=user.id, details={"role": role, "by": "provisioning"})
    if user.email != email or (name and user.name != name):
        _rename(session, org_id, user, email, name)
    members.set_role(session, org_id, user.id, role, actor=actor)
    if (m.permissions or {}) != permissions:
        members.set_permissions(session, org_id, user.id, permissions, actor=actor)
    members.set_active(session, org_id, user.id, active, actor=actor)
    return Upserted(m, user, created)


def _new_member(session: Session, org_id: uuid.UUID, email: str, name: str, role: str, permissions: dict[str, str],
                ref: str) -> User:
    """A new account (no password) made a member of the org at once, by a SECURITY DEFINER function (the
    org's scope neither sees other orgs' people nor creates accounts); Conflict when the email has one."""
    user_id = session.scalar(text("select memoria_add_new_member(:o, :e, :n, :r, cast(:p as jsonb), :x)"),
                             {"o": org_id, "e": email, "n": name, "r": role, "p": json.dumps(permissions), "x": ref})
    if user_id is None:
        raise Conflict("That email belongs to an existing account: invite the person instead.")
    return session.get(User, user_id)


def _rename(session: Session, org_id: uuid.UUID, user: User, email: str, name: str) -> None:
    # Only an account this org alone holds: another org's (or the platform's) person is not the key's to change.
    # A SECURITY DEFINER function checks and writes it (the org's scope sees no other org's emails).
    outcome = session.scalar(text("select memoria_rename_account(:o, :u, :e, :n)"),
                             {"o": org_id, "u": user.id, "e": email, "n": members.clean_name(name, email) if name
                              else user.name})
    if outcome == "elsewhere":
        raise Conflict("This account is also used elsewhere; its email and name cannot be changed here.")
    if outcome == "taken":
        raise Conflict("Another account already has that email.")
    session.refresh(user)


def remove_person(session: Session, org_id: uuid.UUID, ref: str, *, actor: Actor) -> dict[str, int]:
    """The member-leaves rule for the person the host knows as `ref`."""
    m = membership_by_ref(session, org_id, ref)
    if m is None or m.left_at is not None:
        raise NotFound("No such person in this organization.")
    return members.remove_member(session, org_id, m.user_id, actor=actor)


def upsert_phone(session: Session, org_id: uuid.UUID, ref: str, *, phone: str, person_ref: str | None = None,
                 permissions: dict[str, str] | None = None, active: bool = True, actor: Actor) -> PhoneAuthorization:
    """The number the host knows as `ref`: authorized (for the person `person_ref`, if given) or revoked."""
    ref = clean_ref(ref)
    user_id = None
    if person_ref is not None:
        m = membership_by_ref(session, org_id, person_ref)
        if m is None or m.left_at is not None:
            raise NotFound("No such person in this organization.")
        user_id = m.user_id
    current = session.scalar(select(PhoneAuthorization).where(PhoneAuthorization.org_id == org_id,
                                                              PhoneAuthorization.external_id == ref))
    if current is not None and not active:
        return revoke_phone(session, org_id, current.id, actor=actor)
    if current is not None and current.phone != normalise_phone(phone):
        revoke_phone(session, org_id, current.id, actor=actor)
        current.external_id = None  # the id moves to the new number
        session.flush()
    wanted = members.clean_permissions(permissions)
    if (current is not None and current.phone == normalise_phone(phone) and current.revoked_at is None
            and current.user_id == user_id and (current.permissions or {}) == wanted):
        return current  # nothing changes: no audit row either
    auth = authorize_phone(session, org_id, phone, user_id=user_id, permissions=wanted, actor=actor,
                           external_id=ref)
    if not active:
        revoke_phone(session, org_id, auth.id, actor=actor)
    return auth


def phone_by_ref(session: Session, org_id: uuid.UUID, ref: str) -> PhoneAuthorization:
    auth = session.scalar(select(PhoneAuthorization).where(PhoneAuthorization.org_id == org_id,
                                                           PhoneAuthorization.external_id == clean_ref(ref)))
    if auth is None:
        raise NotFound("No such authorized number.")
    return auth


def upsert_org(session: Session, ref: str, *, name: str, owner_email: str | None = None, owner_name: str = "",
               actor: Actor) -> tuple[Organization, bool, str | None]:
    """The org the host knows as `ref`: (org, created, owner invitation token when just created)."""
    ref = clean_ref(ref)
    org = session.scalar(select(Organization).where(Organization.external_id == ref).with_for_update())
    if org is None:
        org, invitation = create_org(session, name, owner_email=owner_email, owner_name=owner_name, actor=actor,
                                     external_id=ref)
        return org, True, invitation[1] if invitation else None
    name = clean_org_name(name)
    if org.name != name:
        org.name = name
        audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="org.renamed",
                     org_id=org.id, target_type="org", target_id=org.id)
    return org, False, None
