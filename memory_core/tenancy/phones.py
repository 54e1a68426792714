"""Authorized phone numbers of an org: with the person behind them (if any) and their permissions.

A number with a person speaks for that person only once the person linked it from the phone itself
(linking.py); until then it has no access. A number never gets more than its person (access.weaker).
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.domain import audit
from memory_core.domain.access import user_of_phone
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import PhoneAuthorization, User
from memory_core.domain.phones import normalise_phone
from memory_core.tenancy import tokens
from memory_core.tenancy.members import Actor, active_membership, clean_permissions


def authorize_phone(session: Session, org_id: uuid.UUID, phone: str, *, user_id: uuid.UUID | None = None,
                    permissions: dict[str, str] | None = None, actor: Actor,
                    external_id: str | None = None) -> PhoneAuthorization:
    """Authorize a number in the org (again, if it was revoked), optionally for one of its members."""
    phone = normalise_phone(phone)
    if phone is None:
        raise InvalidInput("Give the phone number.", field="phone")
    permissions = clean_permissions(permissions)
    if user_id is not None:
        active_membership(session, org_id, user_id)
        holder = user_of_phone(session, phone)  # maybe another org's person, invisible in the org's scope
        if holder is not None and holder != user_id:
            raise Conflict("That number is linked to another person's account.")
    auth = session.scalar(select(PhoneAuthorization).where(
        PhoneAuthorization.org_id == org_id, PhoneAuthorization.phone == phone).with_for_update())
    if auth is not None and external_id is not None and auth.external_id not in (None, external_id):
        raise Conflict("That number is already authorized in this organization under another id.")
    if auth is None:
        auth = PhoneAuthorization(org_id=org_id, phone=phone)
        session.add(auth)
    auth.user_id, auth.permissions, auth.revoked_at = user_id, permissions, None
    if external_id is not None:
        auth.external_id = external_id
    session.flush()
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="phone.authorized",
                 org_id=org_id, target_type="phone_authorization", target_id=auth.id,
                 details={"with_person": user_id is not None, "permissions": permissions})
    return auth


def revoke_phone(session: Session, org_id: uuid.UUID, auth_id: uuid.UUID, *, actor: Actor,
                 now: dt.datetime | None = None) -> PhoneAuthorization:
    """The number stops speaking in the org (its history stays)."""
    auth = session.scalar(select(PhoneAuthorization).where(
        PhoneAuthorization.id == auth_id, PhoneAuthorization.org_id == org_id).with_for_update())
    if auth is None:
        raise NotFound("No such authorized number.")
    if auth.revoked_at is None:
        auth.revoked_at = now or tokens.utcnow()
        audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="phone.revoked",
                     org_id=org_id, target_type="phone_authorization", target_id=auth.id)
    return auth


@dataclass(frozen=True)
class PhoneRow:
    id: uuid.UUID
    phone: str
    user_id: uuid.UUID | None
    person: str | None
    permissions: dict[str, str]
    active: bool
    linked: bool
    external_id: str | None


def list_phones(session: Session, org_id: uuid.UUID) -> list[PhoneRow]:
    rows = session.execute(select(PhoneAuthorization, User).outerjoin(User, User.id == PhoneAuthorization.user_id)
                           .where(PhoneAuthorization.org_id == org_id).order_by(PhoneAuthorization.created_at)).all()
    return [PhoneRow(a.id, a.phone, a.user_id, u.name if u else None, a.permissions or {}, a.revoked_at is None,
                     bool(u and u.phone == a.phone), a.external_id) for a, u in rows]
