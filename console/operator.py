"""The signed-in org operator as the domain sees them: their access rebuilt from the database now."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import abort, request
from flask_login import current_user
from sqlalchemy.orm import Session

from console.services.proposals import Operator
from console.web import actor_label, org_db
from memory_core.domain.access import member_access
from memory_core.domain.errors import MemoriaError
from web.errors import status_of
from web.language import select_language

T = TypeVar("T")


def current_operator():
    """The operator in their current org; 403 when they have no access any more. Their role and permissions are
    the active membership (of an org not suspended) that the user loader read from the database for this request."""
    org = current_user.org()
    if org is None:
        abort(403)
    access = member_access(current_user.uid, org.org_id, org.role, org.permissions)
    return Operator(access=access, label=actor_label(), name=current_user.name, lang=select_language())


def or_abort(call: Callable[..., T], *args) -> T:
    """`call(*args)`; a domain error (not found, forbidden...) aborts the request with its HTTP status."""
    try:
        return call(*args)
    except MemoriaError as exc:
        abort(status_of(exc))


@dataclass(frozen=True)
class Done:
    """An operator's action, committed: the session and operator it ran with, and what it returned."""
    session: Session
    op: Operator
    result: Any


def act(action: Callable[[Session, Operator], Any], refused: Callable[[Session, Operator, MemoriaError, int], Any]):
    """Run `action(session, operator)` in the operator's org and commit: Done. A domain refusal rolls back;
    403 and 404 abort (nothing to show), anything else answers `refused(session, operator, error, status)`."""
    op, s = current_operator(), org_db()
    try:
        result = action(s, op)
    except MemoriaError as exc:
        s.rollback()
        code = status_of(exc)
        if code in (403, 404):
            abort(code)
        return refused(s, op, exc, code)
    s.commit()
    return Done(s, op, result)


def parse_uuid(raw: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(raw)) if raw else None
    except ValueError:
        return None


def is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"

