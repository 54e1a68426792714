"""What every console view shares: the request's database session, the signed-in user, role checks."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import wraps

from flask import abort, current_app, g, request
from flask import session as flask_session
from flask_babel import lazy_gettext as _l
from flask_login import LoginManager, UserMixin, current_user, login_required
from sqlalchemy import select, true
from sqlalchemy.orm import Session

from memory_core.adapters.db import Scope, org_scope, person_scope
from memory_core.adapters.planner import kept_plans
from memory_core.domain.models import Membership, Organization, User
from web.sessions import (
    close_sessions,
    database,
    has_request_session,
    move_request_session,
    request_read_session,
    request_session,
)

# The person scope in which this request's user loader read the signed-in user, while nobody else holds that
# session: the first other scope a view asks for continues its transaction (one connection, one BEGIN and
# COMMIT and one scope statement less a page) instead of committing it and opening another.
_LOADER_SCOPE = "memoria_loader_scope"


def db(scope: Scope) -> Session:
    """The request's session in `scope` (web.sessions.request_session); the first one a view asks for after the
    user loader is the loader's own session, moved to `scope` within its read-only transaction. Its transactions
    run kept statements' generic plans (planner.kept_plans: set with the scope, no round trip)."""
    loader = g.pop(_LOADER_SCOPE, None)
    if loader is not None and loader != scope and has_request_session(loader):
        return move_request_session(loader, scope)
    return kept_plans(request_session(scope))


@dataclass(frozen=True)
class OrgRole:
    org_id: uuid.UUID
    org_name: str
    role: str
    permissions: dict


class ConsoleUser(UserMixin):
    def __init__(self, user: User, orgs: list[OrgRole]):
        self.uid = user.id
        self.email = user.email
        self.name = user.name
        self.platform_role = user.platform_role
        self.ui_locale = user.ui_locale
        self.session_version = user.session_version
        self.learning_paused_at = user.learning_paused_at  # My memory shows it (read with the user, not again)
        self.orgs = orgs

    def get_id(self) -> str:
        """What the session cookie holds: the user and their session version, so that bumping the
        version in the database (sign-out, password or role change) voids every copy of the cookie."""
        return f"{self.uid}.{self.session_version}"

    @property
    def is_staff(self) -> bool:
        return self.platform_role == "staff"

    @property
    def is_privacy_officer(self) -> bool:
        return self.platform_role == "privacy_officer"

    @property
    def is_platform_admin(self) -> bool:
        return self.platform_role == "platform_admin"

    def org(self, org_id: uuid.UUID | None = None) -> OrgRole | None:
        """The org the user works in now: the one picked, else the first."""
        wanted = org_id or _picked_org()
        for o in self.orgs:
            if wanted is None or o.org_id == wanted:
                return o
        return self.orgs[0] if self.orgs and org_id is None else None


def actor_label() -> str:
    """How the audit log names the signed-in operator: by role, never by email or name, because the
    log is append-only and must hold nothing an erasure would have to remove (actor_user_id links)."""
    org = current_user.org()
    role = current_user.platform_role or (org.role if org else "user")
    return f"console {role.replace('_', ' ')}"


def _picked_org() -> uuid.UUID | None:
    raw = flask_session.get("org_id")
    try:
        return uuid.UUID(raw) if raw else None
    except ValueError:
        return None


def _current_org_scope() -> Scope:
    """The signed-in user's current org as a row-security scope (mode "org"); 403 without one."""
    org = current_user.org()
    if org is None:
        abort(403)
    return org_scope(org.org_id, current_user.uid)


def org_db() -> Session:
    """A session scoped to the signed-in user's current org (RLS mode "org")."""
    return db(_current_org_scope())


def person_db(user_id: uuid.UUID) -> Session:
    """A session in the person's own row-security scope (no org): what sign-in and the user loader read."""
    return db(person_scope(user_id))


def org_read_db() -> Session:
    """Like org_db, for a list page's reads: on the standby when DATABASE_READ_URL is set (a few
    milliseconds behind, except right after this operator's own change; web.sessions)."""
    if database().read_engine is None:
        return db(_current_org_scope())  # the primary's session all the same, maybe the loader's moved
    return kept_plans(request_read_session(_current_org_scope()))


def load_console_user(session: Session, user_id: uuid.UUID) -> ConsoleUser | None:
    """The person and their active orgs, read in their own scope (`person_db`) or the system's."""
    # One statement (every page loads the user: a round trip less): the user, with each active membership
    # of an org not suspended joined on, or once with none.
    active = (select(Membership.org_id, Membership.role, Membership.permissions, Organization.name)
              .join(Organization, Organization.id == Membership.org_id)
              .where(Membership.user_id == user_id, Membership.left_at.is_(None),
                     Membership.deactivated_at.is_(None), Organization.suspended_at.is_(None)).subquery())
    rows = session.execute(select(User, active.c.org_id, active.c.name, active.c.role, active.c.permissions)
                           .outerjoin(active, true()).where(User.id == user_id)
                           .order_by(active.c.name, active.c.org_id)).all()
    if not rows:
        return None
    orgs = [OrgRole(org_id, name, role, permissions or {}) for _, org_id, name, role, permissions in rows
            if org_id is not None]
    return ConsoleUser(rows[0][0], orgs)


def init_login(app) -> None:
    manager = LoginManager(app)
    manager.login_view = "console.login"
    manager.login_message = _l("Please sign in to continue.")
    manager.session_protection = "strong"

    @manager.user_loader
    def _load(session_id: str):
        uid, _, version = session_id.partition(".")
        try:
            uid, version = uuid.UUID(uid), int(version)
        except ValueError:
            return None
        user = load_console_user(person_db(uid), uid)
        if user is None or user.session_version != version:
            return None
        g.setdefault(_LOADER_SCOPE, person_scope(uid))
        return user

    app.teardown_appcontext(close_sessions)


def org_role_required(*roles: str):
    """The signed-in user must hold one of `roles` in their current org (owner, admin, member)."""
    def decorator(view):
        @wraps(view)
        @login_required
        def wrapped(*args, **kwargs):
            org = current_user.org()
            if org is None or org.role not in roles:
                abort(403)
            return view(*args, **kwargs)
        return wrapped
    return decorator


def platform_role_required(*roles: str):
    """The signed-in user must hold one of the platform roles (platform_admin, staff, privacy_officer)."""
    def decorator(view):
        @wraps(view)
        @login_required
        def wrapped(*args, **kwargs):
            if current_user.platform_role not in roles:
                abort(403)
            return view(*args, **kwargs)
        return wrapped
    return decorator


def console_actor():
    """The signed-in operator as a tenancy Actor (audit label, id, and their role in the current org)."""
    from memory_core.tenancy.members import Actor

    org = current_user.org()
    return Actor(actor_label(), current_user.uid, org_role=org.role if org else None)


def one_time_link(purpose: str, token: str) -> str:
    """The URL of a one-time link: on MEMORIA_PUBLIC_URL when set, else on the address of this request."""

    from memory_core.tenancy.tokens import link

    settings = current_app.config["MEMORIA_SETTINGS"]
    return link(settings.public_url or request.host_url, purpose, token)
