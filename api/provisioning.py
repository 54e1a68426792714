"""The provisioning API: a host application registers its people, their roles and areas, and their
phone numbers by its own ids (org key); a platform key creates organizations. Idempotent: the same PUT
twice changes nothing the second time. An org key works in its org's row-security scope, a platform key in
its own (`platform_key_scope`); neither needs system scope."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TypeVar

from flask import current_app, g
from sqlalchemy import select
from sqlalchemy.orm import Session

from api import bp
from api.openapi import route
from api.provisioning_schemas import (
    OrganizationIn,
    OrganizationOut,
    OrganizationsOut,
    OrgKeyIn,
    OrgKeyOut,
    PeopleOut,
    PersonIn,
    PersonOut,
    PhoneIn,
    PhoneOut,
    PhonesOut,
)
from api.schemas import CountsOut
from memory_core.adapters.db import Scope, org_scope, platform_key_scope
from memory_core.domain.errors import NotFound
from memory_core.domain.models import Organization
from memory_core.tenancy import members, orgs, phones, provisioning, tokens
from memory_core.tenancy.api_keys import create_api_key
from memory_core.tenancy.members import Actor
from web.sessions import request_session as db

WRITES = (400, 401, 403, 404, 409, 422)
T = TypeVar("T")


def _org_actor() -> Actor:
    return Actor(f"api key {g.api_key_id}")


def _platform_actor() -> Actor:
    return Actor(f"platform key {g.platform_key_id}")


def _platform_key_scope(key_id: uuid.UUID) -> Scope:
    return platform_key_scope(key_id, g.platform_key_proof)


def _person(row: members.MemberRow, created: bool = False) -> PersonOut:
    return PersonOut(user_id=row.user_id, external_id=row.external_id, email=row.email, name=row.name, role=row.role,
                     permissions=row.permissions, effective_permissions=row.effective, active=row.active,
                     joined_at=row.joined_at, created=created)


def _member_row(s: Session, org_id: uuid.UUID, user_id: uuid.UUID) -> members.MemberRow:
    return next(r for r in members.list_members(s, org_id) if r.user_id == user_id)


def _phone_row(s: Session, org_id: uuid.UUID, auth_id: uuid.UUID) -> phones.PhoneRow:
    return next(r for r in phones.list_phones(s, org_id) if r.id == auth_id)


def _as_org_key(org_id: uuid.UUID, change: Callable[[Session, Actor], T]) -> tuple[Session, T]:
    """Make one change to the key's org (in its scope, audited as the key) and commit it; the session, to
    read the result back, and what the change returned."""
    s = db(org_scope(org_id))
    done = change(s, _org_actor())
    s.commit()
    return s, done


def _upsert(upsert: Callable[..., T], org_id: uuid.UUID, ref: str, body: PersonIn | PhoneIn,
            **fields) -> tuple[Session, T]:
    """Create or update a person or a phone of the key's org by the host's id (`ref`), with its per-area
    permissions and whether it is active: the PUT of people and phones alike."""
    return _as_org_key(org_id, lambda s, actor: upsert(s, org_id, ref, permissions=dict(body.permissions),
                                               active=body.active, actor=actor, **fields))


def _phone(row: phones.PhoneRow) -> PhoneOut:
    return PhoneOut(id=row.id, external_id=row.external_id, phone=row.phone, user_id=row.user_id,
                    permissions=row.permissions, active=row.active, linked=row.linked)


# ---------------------------------------------------------------------------- people (org key)

@route(bp, "/people", "GET", summary="The org's people: role, areas, host id, active", tag="provisioning",
       response=PeopleOut, errors=(401, 403))
def list_people(org_id):
    """Current members of the key's org."""
    return PeopleOut(people=[_person(r) for r in members.list_members(db(org_scope(org_id)), org_id)])


@route(bp, "/people/<ref>", "PUT", summary="Create or update a person by the host's id: account, membership, "
       "role and per-area permissions; idempotent", tag="provisioning", body=PersonIn, response=PersonOut,
       errors=WRITES)
def put_person(org_id, ref: str, body: PersonIn):
    """Upsert a person of the key's org."""
    s, done = _upsert(provisioning.upsert_person, org_id, ref, body, email=body.email, name=body.name,
                      role=body.role)
    return _person(_member_row(s, org_id, done.user.id), created=done.created)


@route(bp, "/people/<ref>/removal-preview", "GET", summary="What removing a person would forget and keep",
       tag="provisioning", response=CountsOut, errors=(401, 403, 404, 409))
def person_removal_preview(org_id, ref: str):
    """The member-leaves rule, counted, nothing changed."""
    s = db(org_scope(org_id))
    m = provisioning.membership_by_ref(s, org_id, ref)
    if m is None or m.left_at is not None:
        raise NotFound("No such person in this organization.")
    return CountsOut(counts=members.removal_preview(s, org_id, m.user_id))


@route(bp, "/people/<ref>", "DELETE", summary="Remove a person from the org: their private memories go, what "
       "they shared stays", tag="provisioning", response=CountsOut, errors=(401, 403, 404, 409))
def delete_person(org_id, ref: str):
    """The member-leaves forgetting rule for the host's person."""
    _s, counts = _as_org_key(org_id, lambda s, actor: provisioning.remove_person(s, org_id, ref, actor=actor))
    return CountsOut(counts=counts)


# ---------------------------------------------------------------------------- phones (org key)

@route(bp, "/phones", "GET", summary="The org's authorized phone numbers", tag="provisioning", response=PhonesOut,
       errors=(401, 403))
def list_phones(org_id):
    """Authorized (and revoked) numbers of the key's org."""
    return PhonesOut(phones=[_phone(r) for r in phones.list_phones(db(org_scope(org_id)), org_id)])


@route(bp, "/phones/<ref>", "PUT", summary="Authorize a phone number by the host's id, with the person behind "
       "it (if any) and its permissions; idempotent", tag="provisioning", body=PhoneIn, response=PhoneOut,
       errors=WRITES)
def put_phone(org_id, ref: str, body: PhoneIn):
    """Upsert an authorized number of the key's org."""
    s, auth = _upsert(provisioning.upsert_phone, org_id, ref, body, phone=body.phone, person_ref=body.person)
    return _phone(_phone_row(s, org_id, auth.id))


@route(bp, "/phones/<ref>", "DELETE", summary="Revoke an authorized phone number", tag="provisioning",
       response=PhoneOut, errors=(401, 403, 404))
def delete_phone(org_id, ref: str):
    """The number stops speaking in the org."""
    s, auth = _as_org_key(org_id, lambda s, actor: phones.revoke_phone(
        s, org_id, provisioning.phone_by_ref(s, org_id, ref).id, actor=actor))
    return _phone(_phone_row(s, org_id, auth.id))


# ---------------------------------------------------------------------------- organizations (platform key)

def _organization(org: Organization, created: bool = False, members_count: int | None = None,
                  invitation: str | None = None) -> OrganizationOut:
    url = tokens.link(current_app.config["MEMORIA_SETTINGS"].base_url, "invite", invitation) if invitation else None
    return OrganizationOut(id=org.id, external_id=org.external_id, name=org.name, created=created,
                           suspended=org.suspended_at is not None, members=members_count, owner_invitation_url=url)


@route(bp, "/organizations", "GET", summary="Every organization with its size (platform key)",
       tag="platform", response=OrganizationsOut, auth="platform", errors=(401,))
def list_organizations(platform_key_id):
    """Orgs, for a platform key."""
    s = db(_platform_key_scope(platform_key_id))
    return OrganizationsOut(organizations=[
        OrganizationOut(id=r.id, external_id=r.external_id, name=r.name, suspended=r.suspended_at is not None,
                        members=r.members) for r in orgs.list_orgs(s)])


@route(bp, "/organizations/<ref>", "PUT", summary="Create (or rename) an organization by the host's id, with "
       "its owner's one-time invitation (platform key); idempotent", tag="platform", body=OrganizationIn,
       response=OrganizationOut, auth="platform", errors=(400, 401, 409, 422))
def put_organization(platform_key_id, ref: str, body: OrganizationIn):
    """Upsert an org for a platform key."""
    s = db(_platform_key_scope(platform_key_id))
    org, created, invitation = provisioning.upsert_org(s, ref, name=body.name, owner_email=body.owner_email,
                                                       owner_name=body.owner_name, actor=_platform_actor())
    s.commit()
    return _organization(org, created, invitation=invitation)


@route(bp, "/organizations/<ref>/api-keys", "POST", summary="A new API key for an organization (platform key); "
       "shown once", tag="platform", body=OrgKeyIn, response=OrgKeyOut, status=201, auth="platform",
       errors=(400, 401, 404, 422))
def create_organization_key(platform_key_id, ref: str, body: OrgKeyIn):
    """An org key the host then provisions people with."""
    s = db(_platform_key_scope(platform_key_id))
    org = s.scalar(select(Organization).where(Organization.external_id == provisioning.clean_ref(ref)))
    if org is None:
        raise NotFound("No such organization.")
    row, key = create_api_key(s, org.id, body.name, created_by=None, actor_label=_platform_actor().label)
    s.commit()
    return OrgKeyOut(id=row.id, prefix=row.prefix, key=key)
