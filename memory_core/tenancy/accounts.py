"""Console sign-in with rate limiting by email and by client address."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from memory_core.domain.errors import InvalidCredentials, TooManyAttempts
from memory_core.domain.models import LoginAttempt, User
from memory_core.adapters.security import verify_password

MAX_FAILURES = 5  # per email and per address ...
WINDOW = dt.timedelta(minutes=15)  # ... within this window


def authenticate(session: Session, email: str, password: str, address: str) -> User:
    """The user with these credentials; raises TooManyAttempts or InvalidCredentials. Commits."""
    email = email.strip().lower()
    keys = [f"email:{email}", f"addr:{address}"]
    since = func.now() - WINDOW
    failures = session.scalar(select(func.count()).select_from(LoginAttempt)
                              .where(LoginAttempt.key.in_(keys), LoginAttempt.at > since))
    if failures >= MAX_FAILURES:
        raise TooManyAttempts("Too many failed sign-ins. Wait 15 minutes and try again.")
    user = session.scalar(select(User).where(func.lower(User.email) == email))
    if user is None or not verify_password(user.password_hash, password):
        session.add_all([LoginAttempt(key=k) for k in keys])
        session.commit()
        raise InvalidCredentials("Wrong email or password.")
    session.execute(delete(LoginAttempt).where(LoginAttempt.key == keys[0]))
    session.commit()
    return user


def revoke_sessions(session: Session, user_id: uuid.UUID) -> None:
    """Every console session of the user stops working (sign-out). Does not commit."""
    session.execute(update(User).where(User.id == user_id).values(session_version=User.session_version + 1))
