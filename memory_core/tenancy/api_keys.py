"""Per-org API keys for the HTTP API: created by owners/admins, shown once, stored only as SHA-256."""
from __future__ import annotations

import datetime as dt
import secrets
import uuid
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from memory_core.adapters.security import sha256
from memory_core.domain import audit, clock
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import ApiKey

KEY_PREFIX = "mem_"
# last_used_at is written at most this often per key, so every request does not update a row.
LAST_USED_EVERY = dt.timedelta(minutes=1)


def _new_key() -> tuple[str, str]:
    prefix = secrets.token_hex(4)
    return f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}", f"{KEY_PREFIX}{prefix}"


def create_api_key(session: Session, org_id: uuid.UUID, name: str, *, created_by: uuid.UUID,
                   actor_label: str) -> tuple[ApiKey, str]:
    """A new key for the org: the row and the key itself, which is never stored. Does not commit."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise InvalidInput("Give the key a name of 1 to 100 characters.", field="name")
    key, prefix = _new_key()
    row = ApiKey(org_id=org_id, name=name, prefix=prefix, key_hash=sha256(key), created_by=created_by)
    session.add(row)
    session.flush()
    audit.record(session, actor_user_id=created_by, actor_label=actor_label, action="api_key.created",
                 org_id=org_id, target_type="api_key", target_id=row.id, details={"prefix": prefix})
    return row, key


def revoke_api_key(session: Session, org_id: uuid.UUID, key_id: uuid.UUID, *, revoked_by: uuid.UUID,
                   actor_label: str) -> ApiKey:
    """Revoke one of the org's keys (a key of another org is NotFound). Does not commit."""
    row = session.scalar(select(ApiKey).where(ApiKey.id == key_id, ApiKey.org_id == org_id).with_for_update())
    if row is None:
        raise NotFound("No such API key.")
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        audit.record(session, actor_user_id=revoked_by, actor_label=actor_label, action="api_key.revoked",
                     org_id=org_id, target_type="api_key", target_id=row.id, details={"prefix": row.prefix})
    return row


def list_api_keys(session: Session, org_id: uuid.UUID) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).where(ApiKey.org_id == org_id).order_by(ApiKey.created_at.desc())))


@dataclass(frozen=True)
class KeyMatch:
    """The active key a presented one matched: its id and, for an org key, its org."""
    id: uuid.UUID
    org_id: uuid.UUID | None = None


def authenticate_api_key(session: Session, presented: str) -> KeyMatch | None:
    """The active key matching `presented`, or None, in any scope (a SECURITY DEFINER function looks it
    up, migration t1_sysscope_definer_lookups). Touches last_used_at (the caller commits)."""
    if not presented.startswith(KEY_PREFIX) or len(presented) > 200:
        return None
    row = session.execute(text("select key_id, org_id from memoria_api_key_by_hash(:h, :now, :every)"),
                          {"h": sha256(presented), "now": clock.now(), "every": LAST_USED_EVERY}).first()
    return KeyMatch(row.key_id, row.org_id) if row else None
