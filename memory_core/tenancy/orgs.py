"""Organizations: created by a platform admin (or a platform API key) with their owner's invitation,
listed with their size and activity, suspended and restored. Nothing here commits."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from memory_core.domain import audit
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import AccountToken, Organization
from memory_core.tenancy import api_keys, tokens
from memory_core.tenancy.members import Actor, clean_email, invite


def clean_org_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise InvalidInput("Give the organization a name of 1 to 200 characters.", field="name")
    return name


def create_org(session: Session, name: str, *, owner_email: str | None, owner_name: str = "", actor: Actor,
               external_id: str | None = None, now: dt.datetime | None = None
               ) -> tuple[Organization, tuple[AccountToken, str] | None]:
    """A new organization and, when an owner email is given, the owner's one-time invitation."""
    org = Organization(name=clean_org_name(name), external_id=external_id)
    session.add(org)
    session.flush()
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="org.created",
                 org_id=org.id, target_type="org", target_id=org.id)
    invitation = None
    if owner_email:
        invitation = invite(session, org.id, clean_email(owner_email), role="owner", name=owner_name, actor=actor,
                            now=now)
    return org, invitation


@dataclass(frozen=True)
class OrgRow:
    id: uuid.UUID
    name: str
    created_at: dt.datetime
    suspended_at: dt.datetime | None
    members: int
    messages_30d: int
    last_message_at: dt.datetime | None
    external_id: str | None


def list_orgs(session: Session, *, now: dt.datetime | None = None) -> list[OrgRow]:
    """Every org with its size (current members) and activity (messages in 30 days, last message).

    The counts come from `memoria_org_activity` (migration t3_sec_platform_scope), which answers a platform
    admin's scope or the worker's connection and reads no org data into the caller's scope."""
    since = (now or tokens.utcnow()) - dt.timedelta(days=30)
    counts = {r.org_id: r for r in session.execute(
        text("select org_id, members, messages_since, last_message_at from memoria_org_activity(:since)"),
        {"since": since})}
    rows = []
    for o in session.scalars(select(Organization).order_by(Organization.name)):
        c = counts.get(o.id)
        rows.append(OrgRow(o.id, o.name, o.created_at, o.suspended_at, c.members if c else 0,
                           c.messages_since if c else 0, c.last_message_at if c else None, o.external_id))
    return rows


def set_suspended(session: Session, org_id: uuid.UUID, suspended: bool, *, actor: Actor,
                  now: dt.datetime | None = None) -> Organization:
    """Suspend an org (its API keys and console pages stop working; nothing is deleted) or restore it."""
    org = session.get(Organization, org_id, with_for_update=True)
    if org is None:
        raise NotFound("No such organization.")
    if suspended == (org.suspended_at is not None):
        return org
    api_keys.VERIFIED.forget(org_id=org.id)
    org.suspended_at = (now or tokens.utcnow()) if suspended else None
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id,
                 action="org.suspended" if suspended else "org.restored", org_id=org.id, target_type="org",
                 target_id=org.id)
    return org


def is_suspended(session: Session, org_id: uuid.UUID) -> bool:
    return session.scalar(select(Organization.suspended_at.is_not(None)).where(Organization.id == org_id)) is True
