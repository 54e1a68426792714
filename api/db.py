"""The API request's database sessions: one per RLS scope, one connection at a time, closed (rolled back
unless committed) at teardown (memory_core.adapters.db.RequestSessions)."""
from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from memory_core.adapters.db import SYSTEM, RequestSessions, Scope

_KEY = "memoria_api_sessions"


def db(scope: Scope = SYSTEM) -> Session:
    if _KEY not in g:
        setattr(g, _KEY, RequestSessions(current_app.extensions["memoria.db"]))
    return getattr(g, _KEY).get(scope)


def close_sessions(_exc: BaseException | None = None) -> None:
    sessions = g.pop(_KEY, None)
    if sessions is not None:
        sessions.close()
