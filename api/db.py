"""The API request's database sessions, one per RLS scope, closed (rolled back unless committed) at teardown."""
from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from memory_core.adapters.db import SYSTEM, Scope

_KEY = "memoria_api_sessions"


def db(scope: Scope = SYSTEM) -> Session:
    sessions = g.setdefault(_KEY, {})
    if scope not in sessions:
        sessions[scope] = current_app.extensions["memoria.db"].session(scope)
    return sessions[scope]


def close_sessions(_exc: BaseException | None = None) -> None:
    for s in g.pop(_KEY, {}).values():
        s.rollback()
        s.close()
