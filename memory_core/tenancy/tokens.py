"""One-time links (invitations, password resets, the first admin's setup): random, stored only as
SHA-256, expiring, used once. The clock is the caller's (`now`)."""
from __future__ import annotations

import datetime as dt
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.adapters.security import sha256
from memory_core.domain import clock
from memory_core.domain.errors import NotFound
from memory_core.domain.models import AccountToken

# How long each kind of link stays valid.
LIFETIME = {"invite": dt.timedelta(days=7), "reset": dt.timedelta(hours=1), "setup": dt.timedelta(days=1)}
# The console path that opens each kind of link.
PATHS = {"invite": "invitation", "reset": "reset-password", "setup": "setup"}
INVALID = "This link is not valid, was already used or has expired. Ask for a new one."


def utcnow() -> dt.datetime:
    """Now, from memoria's one clock (memory_core.domain.clock)."""
    return clock.now()


def issue(session: Session, purpose: str, email: str, *, now: dt.datetime | None = None,
          **fields) -> tuple[AccountToken, str]:
    """A new link of `purpose`: the row (holding only the digest) and the token, shown once. Does not commit."""
    token = secrets.token_urlsafe(32)
    now = now or utcnow()
    row = AccountToken(purpose=purpose, token_hash=sha256(token), email=email, expires_at=now + LIFETIME[purpose],
                       **fields)
    session.add(row)
    session.flush()
    return row, token


def peek(session: Session, purpose: str, token: str, *, now: dt.datetime | None = None) -> AccountToken:
    """The valid, unused link for `token` without using it; NotFound otherwise."""
    if not token or len(token) > 200:
        raise NotFound(INVALID)
    row = session.scalar(select(AccountToken).where(AccountToken.token_hash == sha256(token),
                                                    AccountToken.purpose == purpose))
    if row is None or row.used_at is not None or row.expires_at <= (now or utcnow()):
        raise NotFound(INVALID)
    return row


def consume(session: Session, purpose: str, token: str, *, now: dt.datetime | None = None) -> AccountToken:
    """Use the link once: locks its row, checks it, marks it used. NotFound if invalid, used or expired."""
    row = peek(session, purpose, token, now=now)
    row = session.scalar(select(AccountToken).where(AccountToken.id == row.id).with_for_update())
    if row.used_at is not None:
        raise NotFound(INVALID)  # used by a concurrent request between peek and lock
    row.used_at = now or utcnow()
    return row


def link(base_url: str, purpose: str, token: str) -> str:
    """The URL a person opens for a token."""
    return f"{base_url.rstrip('/')}/{PATHS[purpose]}/{token}"


_IN_PATH = re.compile(r"/(" + "|".join(PATHS.values()) + r")/[A-Za-z0-9_\-]+")


def redact(text: str) -> str:
    """The text with every one-time link's token replaced, for logs (a request line holds the path)."""
    return _IN_PATH.sub(lambda m: f"/{m.group(1)}/[redacted]", text)
