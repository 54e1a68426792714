"""API keys for the HTTP API, of two kinds with one rule: an org's keys (created by its owners/admins or a
platform key; every request is limited to the org) and platform keys (created by a platform admin; they may
create organizations). A key is shown once and stored only as SHA-256 with a short prefix to recognise it;
creating and revoking one is audited. No function here commits: the caller's unit of work does."""
from __future__ import annotations

import datetime as dt
import secrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from memory_core.adapters.security import sha256
from memory_core.domain import audit, clock
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import ApiKey, PlatformApiKey
from memory_core.tenancy.members import Actor

# last_used_at is written at most this often per key, so every request does not update a row.
LAST_USED_EVERY = dt.timedelta(minutes=1)
# An org key verified by a process is trusted by it for this long without asking the database again: a key
# revoked (or an org suspended) in another process is refused within this bound, at once in the process
# that did it (VerifiedKeys.forget). See docs/decisions.md, 2026-12-02.
VERIFIED_FOR = dt.timedelta(seconds=5)


@dataclass(frozen=True)
class KeyKind:
    """Who owns a kind of key: its table, the text its keys start with, and its name in the audit log."""
    name: str                               # audit actions are "<name>.created" / "<name>.revoked"
    model: type[ApiKey] | type[PlatformApiKey]
    key_prefix: str
    target_type: str
    per_org: bool                           # an org owns each key (and its queries filter by org)
    lookup: str                             # the SECURITY DEFINER function that finds an active key by hash


ORG = KeyKind("api_key", ApiKey, "mem_", "api_key", per_org=True,
              lookup="select key_id, org_id from memoria_api_key_by_hash(:h, :now, :every)")
PLATFORM = KeyKind("platform_key", PlatformApiKey, "memp_", "platform_api_key", per_org=False,
                   lookup="select key_id, null::uuid as org_id from memoria_platform_key_by_hash(:h, :now, :every)")


def _owned(kind: KeyKind, org_id: uuid.UUID | None) -> dict:
    if kind.per_org and org_id is None:
        raise ValueError(f"An {kind.name} belongs to an org: give its org_id.")
    return {"org_id": org_id} if kind.per_org else {}


def issue_key(session: Session, kind: KeyKind, name: str, *, actor: Actor,
              org_id: uuid.UUID | None = None) -> tuple[ApiKey | PlatformApiKey, str]:
    """A new key of `kind` (for `org_id` when an org owns it): the row and the key itself, never stored."""
    owner = _owned(kind, org_id)
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise InvalidInput("Give the key a name of 1 to 100 characters.", field="name")
    prefix = kind.key_prefix + secrets.token_hex(4)
    key = f"{prefix}_{secrets.token_urlsafe(32)}"
    row = kind.model(name=name, prefix=prefix, key_hash=sha256(key), created_by=actor.user_id, **owner)
    session.add(row)
    session.flush()
    audit.record(session, actor_user_id=actor.user_id, actor_label=actor.label, action=f"{kind.name}.created",
                 org_id=org_id, target_type=kind.target_type, target_id=row.id, details={"prefix": prefix})
    return row, key


def revoke_key(session: Session, kind: KeyKind, key_id: uuid.UUID, *, actor: Actor,
               org_id: uuid.UUID | None = None) -> ApiKey | PlatformApiKey:
    """Revoke a key of `kind` (for an org's key, one of that org's: another org's is NotFound)."""
    row = session.scalar(select(kind.model).filter_by(id=key_id, **_owned(kind, org_id)).with_for_update())
    if row is None:
        raise NotFound("No such API key.")
    VERIFIED.forget(key_id=row.id)
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        audit.record(session, actor_user_id=actor.user_id, actor_label=actor.label, action=f"{kind.name}.revoked",
                     org_id=org_id, target_type=kind.target_type, target_id=row.id, details={"prefix": row.prefix})
    return row


def list_keys(session: Session, kind: KeyKind, org_id: uuid.UUID | None = None) -> list[ApiKey | PlatformApiKey]:
    """The keys of `kind` (an org's only, for an org's keys), newest first, revoked ones too."""
    return list(session.scalars(select(kind.model).filter_by(**_owned(kind, org_id))
                                .order_by(kind.model.created_at.desc())))


@dataclass(frozen=True)
class KeyMatch:
    """The active key a presented one matched: its id and, for an org key, its org."""
    id: uuid.UUID
    org_id: uuid.UUID | None = None


def authenticate_key(session: Session, kind: KeyKind, presented: str) -> KeyMatch | None:
    """The active key of `kind` matching `presented`, or None, in any scope (a SECURITY DEFINER function
    looks it up, migration t1_sysscope_definer_lookups). Touches last_used_at (the caller commits)."""
    if not presented.startswith(kind.key_prefix) or len(presented) > 200:
        return None
    row = session.execute(text(kind.lookup), {"h": sha256(presented), "now": clock.now(),
                                              "every": LAST_USED_EVERY}).first()
    return KeyMatch(row.key_id, row.org_id) if row else None


@dataclass(frozen=True)
class Verified:
    """What a request needs to know of its org key: the key and whether its org is suspended."""
    key: KeyMatch
    suspended: bool
    at: dt.datetime


class VerifiedKeys:
    """The org keys this process verified in the last VERIFIED_FOR, by the SHA-256 of the key (never the key),
    so an agent's every call does not open a transaction to look its key up. Only active keys are kept (a
    wrong key is looked up every time), at most `size` of them, the least recently used dropped first."""

    def __init__(self, size: int = 1024):
        self.size = size
        self._entries: OrderedDict[str, Verified] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, digest: str) -> Verified | None:
        now = clock.now()
        with self._lock:
            found = self._entries.get(digest)
            if found is None:
                return None
            if not found.at <= now < found.at + VERIFIED_FOR:  # expired, or the clock went back
                del self._entries[digest]
                return None
            self._entries.move_to_end(digest)
            return found

    def put(self, digest: str, key: KeyMatch, suspended: bool) -> Verified:
        verified = Verified(key, suspended, clock.now())
        with self._lock:
            self._entries[digest] = verified
            self._entries.move_to_end(digest)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return verified

    def forget(self, *, key_id: uuid.UUID | None = None, org_id: uuid.UUID | None = None) -> None:
        """Drop a revoked key, or every key of an org whose suspension changed (all of them: neither given)."""
        with self._lock:
            for digest, v in list(self._entries.items()):
                if (key_id is None and org_id is None) or v.key.id == key_id or (
                        org_id is not None and v.key.org_id == org_id):
                    del self._entries[digest]


VERIFIED = VerifiedKeys()


def create_api_key(session: Session, org_id: uuid.UUID, name: str, *, created_by: uuid.UUID | None,
                   actor_label: str) -> tuple[ApiKey, str]:
    """A new key of the org: `issue_key` for ORG, the actor given by id and audit label."""
    return issue_key(session, ORG, name, org_id=org_id, actor=Actor(actor_label, created_by))

