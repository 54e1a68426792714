"""Console sign-in with rate limiting by account and by client address.

Three limits, each counted in login_attempts within WINDOW: an account from one address
(MAX_FAILURES: what a person who forgot their password meets), one address across accounts
(MAX_PER_ADDRESS: password spraying), and one account across addresses (MAX_PER_ACCOUNT: guessing
from many addresses; high enough that one attacker cannot lock a person out). An attempt takes its
slot before the password is checked, under an advisory lock per key, so concurrent attempts never
get more checks than the limits allow. An unknown email costs a password check too.
"""
from __future__ import annotations

import datetime as dt
import secrets
import uuid
from functools import lru_cache

from sqlalchemy import delete, func, or_, select, text, update
from sqlalchemy.orm import Session

from memory_core.adapters.security import hash_password, verify_password
from memory_core.domain import clock
from memory_core.domain.errors import InvalidCredentials, TooManyAttempts
from memory_core.domain.models import LoginAttempt, User

MAX_FAILURES = 5  # an account from one address ...
MAX_PER_ADDRESS = 20  # one address, any accounts ...
MAX_PER_ACCOUNT = 50  # one account, any addresses ...
WINDOW = dt.timedelta(minutes=15)  # ... within this window


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    """A hash to check an unknown email's password against, so it costs what a known one costs."""
    return hash_password(secrets.token_urlsafe(16))


def email_key(email: str) -> str:
    """The rate-limit key of an account (erasure deletes it and every key that starts with it)."""
    return f"email:{email.strip().lower()}"


def authenticate(session: Session, email: str, password: str, address: str) -> User:
    """The user with these credentials; raises TooManyAttempts or InvalidCredentials. Commits."""
    email = email.strip().lower()
    account = email_key(email)
    limits = {f"{account} from {address}": MAX_FAILURES, f"addr:{address}": MAX_PER_ADDRESS,
              account: MAX_PER_ACCOUNT}
    since = clock.now() - WINDOW
    for key in sorted(limits):  # one order: two attempts never wait on each other's locks crosswise
        session.execute(text("select pg_advisory_xact_lock(hashtext(:k))"), {"k": "memoria.login:" + key})
    counts = dict(session.execute(select(LoginAttempt.key, func.count()).where(
        LoginAttempt.key.in_(limits), LoginAttempt.at > since).group_by(LoginAttempt.key)).all())
    if any(counts.get(key, 0) >= limit for key, limit in limits.items()):
        session.rollback()
        raise TooManyAttempts("Too many failed sign-ins. Wait 15 minutes and try again.")
    slots = [LoginAttempt(key=k) for k in limits]
    session.add_all(slots)
    session.commit()  # the slots are taken (and the locks released) before the slow password check
    user = session.scalar(select(User).where(func.lower(User.email) == email))
    if not verify_password((user.password_hash if user else None) or _dummy_hash(), password) or user is None:
        raise InvalidCredentials("Wrong email or password.")
    session.execute(delete(LoginAttempt).where(or_(LoginAttempt.id.in_([s.id for s in slots]),
                                                   LoginAttempt.key == f"{account} from {address}")))
    session.commit()
    return user


def revoke_sessions(session: Session, user_id: uuid.UUID) -> None:
    """Every console session of the user stops working (sign-out). Does not commit."""
    session.execute(update(User).where(User.id == user_id).values(session_version=User.session_version + 1))
