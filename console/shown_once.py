"""A secret shown once after a redirect (POST/redirect/GET, so a reload creates nothing): it waits in Redis for
its creator only, a few minutes, and is deleted when shown. It never enters the database or the session cookie."""
from __future__ import annotations

import secrets

from flask_login import current_user

from memory_core.adapters.queue import get_redis

TTL_SECONDS = 300


def _key(kind: str, nonce: str) -> str:
    return f"memoria:console:shown-once:{kind}:{current_user.uid}:{nonce[:64]}"


def stash(kind: str, value: str) -> str:
    """Keep `value` for the next page; returns the nonce that page takes it with."""
    nonce = secrets.token_urlsafe(16)
    get_redis().set(_key(kind, nonce), value, ex=TTL_SECONDS)
    return nonce


def take(kind: str, nonce: str) -> str | None:
    """The value, once: None when it was already shown, expired, or stashed by someone else."""
    value = get_redis().getdel(_key(kind, nonce))
    return value.decode() if isinstance(value, bytes) else value
