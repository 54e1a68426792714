"""API key authentication: `Authorization: Bearer <key>`, looked up by its SHA-256, scoped to its org."""
from __future__ import annotations

import uuid

from flask import g, request

from api.errors import ApiError
from memory_core.adapters.db import SYSTEM
from memory_core.tenancy.api_keys import authenticate_api_key
from web.sessions import request_session as db


def authenticate() -> uuid.UUID:
    """The org of the request's key; 401 for no key, a wrong key or a revoked one (same answer for all)."""
    header = request.headers.get("Authorization", "")
    scheme, _, presented = header.partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        raise ApiError(401, "unauthorized", "Send an API key: Authorization: Bearer <key>.")
    s = db(SYSTEM)
    key = authenticate_api_key(s, presented.strip())
    if key is None:
        raise ApiError(401, "unauthorized", "The API key is not valid or was revoked.")
    s.commit()  # last_used_at
    g.api_key_id, g.api_org_id = key.id, key.org_id
    return key.org_id
