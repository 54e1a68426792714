"""API key authentication: `Authorization: Bearer <key>`, looked up by its SHA-256, scoped to its org
(a suspended org's keys answer 403); platform keys for the platform operations. An org key verified lately
by this process is not looked up again for a few seconds (api_keys.VERIFIED_FOR)."""
from __future__ import annotations

import uuid

from flask import g, request
from sqlalchemy.orm import Session

from api.errors import ApiError
from memory_core.adapters.db import Scope, org_scope
from memory_core.adapters.security import sha256
from memory_core.tenancy.api_keys import ORG, PLATFORM, VERIFIED, KeyKind, authenticate_key
from memory_core.tenancy.orgs import is_suspended
from web.sessions import request_session as db


def authenticate() -> uuid.UUID:
    """The org of the request's key; 401 for no key, a wrong key or a revoked one (same answer for all)."""
    digest = sha256(_presented())
    verified = VERIFIED.get(digest)
    if verified is None:
        s = db(Scope())  # the key is looked up by a SECURITY DEFINER function, in no scope
        found = _active_key(s, ORG, "The API key is not valid or was revoked.")
        verified = VERIFIED.put(digest, found, is_suspended(db(org_scope(found.org_id)), found.org_id))
    key = verified.key
    if verified.suspended:
        raise ApiError(403, "suspended", "This organization is suspended.")
    g.api_key_id, g.api_org_id = key.id, key.org_id
    return key.org_id


def authenticate_platform() -> uuid.UUID:
    """The platform key of the request; 401 for no key, a wrong key, a revoked one or an org key."""
    key = _active_key(db(Scope()), PLATFORM, "This operation needs a platform API key (not valid or revoked).")
    g.platform_key_id = key.id
    g.platform_key_proof = sha256(_presented())  # what opens the key's row-security scope (platform_key_scope)
    return key.id


def _active_key(s: Session, kind: KeyKind, refused: str):
    """The request's active key of `kind` (its last use saved), or 401 with `refused`."""
    key = authenticate_key(s, kind, _presented())
    if key is None:
        raise ApiError(401, "unauthorized", refused)
    s.commit()  # last_used_at
    return key


def _presented() -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, presented = header.partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        raise ApiError(401, "unauthorized", "Send an API key: Authorization: Bearer <key>.")
    return presented.strip()
