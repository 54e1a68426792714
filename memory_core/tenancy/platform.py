"""The platform: its first administrator (a one-time setup link on an empty install) and platform roles
(platform admin, staff, privacy officer). Platform API keys are in memory_core.tenancy.api_keys."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from memory_core.adapters.security import hash_password
from memory_core.domain import audit
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import User
from memory_core.domain.vocabulary import PLATFORM_ROLES
from memory_core.tenancy import tokens
from memory_core.tenancy.members import Actor, clean_email, clean_name, user_by_email
from memory_core.tenancy.passwords import check_password


def has_users(session: Session) -> bool:
    return bool(session.scalar(select(exists().where(User.id.is_not(None)))))


def issue_setup_link(session: Session, *, now: dt.datetime | None = None) -> str:
    """A one-time token to create the first platform admin; refused once the install has any user."""
    if has_users(session):
        raise Conflict("This installation already has accounts: sign in, or use `memoria admin create`.")
    _row, token = tokens.issue(session, "setup", "", platform_role="platform_admin", now=now)
    audit.record(session, actor_label="memoria command", action="setup.link_issued")
    return token


def create_user(session: Session, email: str, name: str, password: str | None, *, platform_role: str | None = None,
                actor: Actor, user_id: uuid.UUID | None = None) -> User:
    """A new account (no org), with the id `user_id` when given. A password is checked; None leaves the
    account to a reset link."""
    email = clean_email(email)
    if platform_role is not None and platform_role not in PLATFORM_ROLES:
        raise InvalidInput("The platform role must be one of %(roles)s.", field="platform_role",
                           roles=", ".join(PLATFORM_ROLES))
    if user_by_email(session, email) is not None:
        raise Conflict("An account with that email already exists.")
    user = User(id=user_id or uuid.uuid4(), email=email, name=clean_name(name, email), platform_role=platform_role,
                password_hash=hash_password(check_password(password, email=email)) if password else None)
    session.add(user)
    session.flush()
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="user.created",
                 target_type="user", target_id=user.id, details={"platform_role": platform_role})
    return user


def complete_setup(session: Session, token: str, email: str, name: str, password: str, *,
                   user_id: uuid.UUID | None = None, now: dt.datetime | None = None) -> User:
    """Use the setup link once: the first platform admin (id `user_id` when given). Refused if a platform
    admin exists by then. Runs in the new account's own scope (or the system's): the link is read and
    used by SECURITY DEFINER functions (tokens), and the account audits its own creation."""
    link = tokens.peek(session, "setup", token, now=now)
    check_password(password, email=email)
    if link.admin_exists:
        raise Conflict("A platform administrator already exists: sign in instead.")
    user_id = user_id or uuid.uuid4()
    user = create_user(session, email, name, password, actor=Actor("setup link", user_id=user_id), user_id=user_id)
    tokens.consume(session, "setup", token, user_id=user.id, email=user.email, now=now)  # makes it platform admin
    session.refresh(user)
    return user


def set_platform_role(session: Session, user_id: uuid.UUID, role: str | None, *, actor: Actor) -> User:
    """Grant a platform role (or take it away with None); the last platform admin keeps theirs."""
    if role is not None and role not in PLATFORM_ROLES:
        raise InvalidInput("The platform role must be one of %(roles)s.", field="platform_role",
                           roles=", ".join(PLATFORM_ROLES))
    user = session.get(User, user_id, with_for_update=True)
    if user is None:
        raise NotFound("No such person.")
    if user.platform_role == role:
        return user
    if user.platform_role == "platform_admin" and session.scalar(select(func.count()).select_from(User).where(
            User.platform_role == "platform_admin")) <= 1:
        raise Conflict("The last platform administrator cannot lose that role.")
    before, user.platform_role = user.platform_role, role
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="platform_role.changed",
                 target_type="user", target_id=user.id, details={"from": before, "to": role})
    return user


def grant_or_invite(session: Session, email: str, role: str | None, *, actor: Actor) -> str | None:
    """Give the account with this email a platform role (None takes it away); an email without an
    account gets a one-time invitation with the role instead, whose token is returned."""
    user = user_by_email(session, email)
    if user is not None:
        set_platform_role(session, user.id, role, actor=actor)
        return None
    if role is None:
        raise InvalidInput("No account has that email.", field="email")
    if role not in PLATFORM_ROLES:
        raise InvalidInput("The platform role must be one of %(roles)s.", field="platform_role",
                           roles=", ".join(PLATFORM_ROLES))
    row, token = tokens.issue(session, "invite", clean_email(email), platform_role=role, created_by=actor.user_id)
    audit.record(session, actor_label=actor.label, actor_user_id=actor.user_id, action="invitation.created",
                 target_type="invitation", target_id=row.id, details={"platform_role": role})
    return token


def platform_people(session: Session) -> list[User]:
    """Everyone holding a platform role."""
    return list(session.scalars(select(User).where(User.platform_role.is_not(None)).order_by(User.email)))

