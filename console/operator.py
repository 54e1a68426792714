"""The signed-in org operator as the domain sees them: their access rebuilt from the database now."""
from __future__ import annotations

import uuid

from flask import abort, request
from flask_login import current_user

from console.services.proposals import Operator
from console.web import actor_label, org_db
from memory_core.domain.access import load_access
from web.language import select_language


def current_operator():
    """The operator in their current org; 403 when they have no access any more."""
    org = current_user.org()
    if org is None:
        abort(403)
    access = load_access(org_db(), org.org_id, user_id=current_user.uid)
    if access is None:
        abort(403)
    return Operator(access=access, label=actor_label(), name=current_user.name, lang=select_language())


def parse_uuid(raw: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(raw)) if raw else None
    except ValueError:
        return None


def is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"

