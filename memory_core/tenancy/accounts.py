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

from sqlalchemy import text, update
from sqlalchemy.orm import Session

from memory_core.adapters.security import hash_password, verify_password
from memory_core.domain import clock
from memory_core.domain.errors import InvalidCredentials, TooManyAttempts
from memory_core.domain.models import User

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


def authenticate(session: Session, email: str, password: str, address: str) -> uuid.UUID:
    """The id of the user with these credentials, in any scope; raises TooManyAttempts or InvalidCredentials.

    Commits."""
    email = email.strip().lower()
    account = email_key(email)
    limits = {f"{account} from {address}": MAX_FAILURES, f"addr:{address}": MAX_PER_ADDRESS,
              account: MAX_PER_ACCOUNT}
    now = clock.now()
    # The limiter and the account lookup are SECURITY DEFINER functions (migration
    # t1_sysscope_definer_lookups): the web process signs people in without system scope.
    slots = session.execute(text("select memoria_sign_in_slots(:keys, :limits, :since, :now)"), {
        "keys": list(limits), "limits": list(limits.values()), "since": now - WINDOW, "now": now}).scalar_one()
    if slots is None:
        session.rollback()
        raise TooManyAttempts("Too many failed sign-ins. Wait 15 minutes and try again.")
    session.commit()  # the slots are taken (and the locks released) before the slow password check
    found = session.execute(text("select user_id, password_hash from memoria_sign_in_account(:e)"),
                            {"e": email}).first()
    if not verify_password((found.password_hash if found else None) or _dummy_hash(), password) or found is None:
        raise InvalidCredentials("Wrong email or password.")
    session.execute(text("select memoria_sign_in_clear(:ids, :key)"),
                    {"ids": slots, "key": f"{account} from {address}"})
    session.commit()
    return found.user_id


def revoke_sessions(session: Session, user_id: uuid.UUID) -> None:
    """Every console session of the user stops working (sign-out). Does not commit."""
    session.execute(update(User).where(User.id == user_id).values(session_version=User.session_version + 1))
