"""The request's database sessions, one per row-security scope, holding one pooled connection at a time
(memory_core.adapters.db.RequestSessions), closed (rolled back unless committed) when the request ends."""
from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from memory_core.adapters.db import Database, RequestSessions, Scope

_KEY = "memoria_sessions"


def database() -> Database:
    return current_app.extensions["memoria.db"]


def request_session(scope: Scope) -> Session:
    """The request's session in a given scope; opened on first use, closed at teardown. No default: every
    use of system scope in the web process is written out (the aim is that none is left)."""
    if _KEY not in g:
        setattr(g, _KEY, RequestSessions(database()))
    return getattr(g, _KEY).get(scope)


def close_sessions(_exc: BaseException | None = None) -> None:
    """Teardown: roll back whatever was not committed and close every session of the request; never raises."""
    sessions = g.pop(_KEY, None)
    if sessions is not None:
        sessions.close()
