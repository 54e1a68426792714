"""The request's database sessions, one per row-security scope, closed (rolled back unless committed)
when the request ends."""
from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from memory_core.adapters.db import SYSTEM, Database, Scope

_KEY = "memoria_sessions"


def database() -> Database:
    return current_app.extensions["memoria.db"]


def request_session(scope: Scope = SYSTEM) -> Session:
    """The request's session in a given scope; opened on first use, closed at teardown."""
    sessions = g.setdefault(_KEY, {})
    if scope not in sessions:
        sessions[scope] = database().session(scope)
    return sessions[scope]


def close_sessions(_exc: BaseException | None = None) -> None:
    """Teardown: roll back whatever was not committed and close every session of the request."""
    for s in g.pop(_KEY, {}).values():
        s.rollback()
        s.close()
