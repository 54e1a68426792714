"""One-time links (invitations, password resets, the first admin's setup): random, stored only as
SHA-256, expiring, used once. The clock is the caller's (`now`)."""
from __future__ import annotations

import datetime as dt
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
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


@dataclass(frozen=True)
class Link:
    """A valid, unused link as its page and its use need it (read by `memoria_link_peek`, migration
    t3_sec_links_web_scopes, so a person who is not signed in opens it without system scope).

    `account_id`: the account it applies to (a reset's; the account an invitation's email already
    has); `admin_exists`: for a setup link, whether a platform administrator exists by now."""
    id: uuid.UUID
    purpose: str
    email: str
    name: str
    org_id: uuid.UUID | None
    org_name: str | None
    role: str | None
    permissions: dict[str, Any]
    platform_role: str | None
    account_id: uuid.UUID | None
    admin_exists: bool | None


def peek(session: Session, purpose: str, token: str, *, now: dt.datetime | None = None) -> Link:
    """The valid, unused link for `token` without using it, in any scope; NotFound otherwise."""
    if not token or len(token) > 200:
        raise NotFound(INVALID)
    row = session.execute(text("select * from memoria_link_peek(:p, :t, :now)"),
                          {"p": purpose, "t": token, "now": now or utcnow()}).one_or_none()
    if row is None:
        raise NotFound(INVALID)
    return Link(row.link_id, purpose, row.email, row.name, row.org_id, row.org_name, row.role,
                row.permissions or {}, row.platform_role, row.account_id, row.admin_exists)


def consume(session: Session, purpose: str, token: str, *, user_id: uuid.UUID | None = None,
            email: str | None = None, now: dt.datetime | None = None) -> uuid.UUID:
    """Use the link once, in the caller's transaction and any scope, recording the account it made
    (`user_id`; a setup link also its `email`) and giving that account the link's platform role, if any
    (only system scope may give one, so the function does). Returns its id; NotFound if invalid, used (also by a
    concurrent request) or expired, or, for a setup link, once a platform administrator exists."""
    if not token or len(token) > 200:
        raise NotFound(INVALID)
    found = session.scalar(text("select memoria_link_use(:p, :t, :now, :u, :e)"),
                           {"p": purpose, "t": token, "now": now or utcnow(), "u": user_id, "e": email})
    if found is None:
        raise NotFound(INVALID)
    return found


def link(base_url: str, purpose: str, token: str) -> str:
    """The URL a person opens for a token."""
    return f"{base_url.rstrip('/')}/{PATHS[purpose]}/{token}"


_IN_PATH = re.compile(r"/(" + "|".join(PATHS.values()) + r")/[A-Za-z0-9_\-]+")


def redact(text: str) -> str:
    """The text with every one-time link's token replaced, for logs (a request line holds the path)."""
    return _IN_PATH.sub(lambda m: f"/{m.group(1)}/[redacted]", text)
