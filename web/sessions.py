"""The request's database sessions, one per row-security scope, holding one pooled connection at a time
(memory_core.adapters.db.RequestSessions), closed (rolled back unless committed) when the request ends.

Reads that may lag by a few milliseconds (`request_read_session`) go to the hot standby when
DATABASE_READ_URL is set. A browser that has just changed something reads the primary for a few
seconds, so an operator always sees their own change on the page the action redirects to."""
from __future__ import annotations

from flask import Response, current_app, g, request
from flask import session as cookie
from flask_login import current_user
from sqlalchemy.orm import Session

from memory_core.adapters.db import Database, RequestSessions, Scope, platform_scope
from memory_core.domain import clock

_KEY = "memoria_sessions"
_WROTE_AT = "wrote_at"
READ_OWN_WRITES_SECONDS = 10


def database() -> Database:
    return current_app.extensions["memoria.db"]


def _sessions() -> RequestSessions:
    if _KEY not in g:
        setattr(g, _KEY, RequestSessions(database()))
    return getattr(g, _KEY)


def request_session(scope: Scope) -> Session:
    """The request's session in a given scope; opened on first use, closed at teardown. No default: every
    use of system scope in the web process is written out (the aim is that none is left). A platform
    scope gets the signed-in person's session proof here, the one place that knows the session."""
    return _sessions().get(_with_session_proof(scope))


def has_request_session(scope: Scope) -> bool:
    """Whether the request already has its (primary) session in `scope`."""
    return _sessions().has(_with_session_proof(scope))


def move_request_session(session_scope: Scope, scope: Scope) -> Session:
    """The request's session in `session_scope`, which the caller opened, moved to `scope` in the same
    transaction (RequestSessions.move)."""
    return _sessions().move(_with_session_proof(session_scope), _with_session_proof(scope))


def _with_session_proof(scope: Scope) -> Scope:
    """The platform scope of the signed-in person, with their live session's proof (else unchanged: a
    platform scope naming anyone else sees nothing)."""
    if scope.mode != "platform" or scope.proof or not current_user or not current_user.is_authenticated:
        return scope
    if getattr(current_user, "uid", None) != scope.user_id:
        return scope
    return platform_scope(scope.user_id, current_user.session_version, current_app.config.get("MEMORIA_SETTINGS"))


def request_read_session(scope: Scope) -> Session:
    """The request's reader in `scope`: the standby when configured, unless this browser wrote lately."""
    wrote_at = cookie.get(_WROTE_AT)
    if isinstance(wrote_at, int) and clock.now().timestamp() - wrote_at < READ_OWN_WRITES_SECONDS:
        return request_session(scope)
    return _sessions().get(_with_session_proof(scope), read=True)


def remember_writes(response: Response) -> Response:
    """After a browser's successful POST: read the primary for a while (only when a standby is in use)."""
    if request.method == "POST" and response.status_code < 400 and database().read_engine is not None:
        cookie[_WROTE_AT] = int(clock.now().timestamp())
    return response


def close_sessions(_exc: BaseException | None = None) -> None:
    """Teardown: roll back whatever was not committed and close every session of the request; never raises."""
    sessions = g.pop(_KEY, None)
    if sessions is not None:
        sessions.close()
