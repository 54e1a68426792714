"""Passwords and keyed digests. Passwords use werkzeug's scrypt hashing; codes and keys are stored
only as HMAC or SHA-256 digests."""
from __future__ import annotations

import hashlib
import hmac

from werkzeug.security import check_password_hash, generate_password_hash

from memory_core.adapters.config import Settings, get_settings
from memory_core.adapters.runtime import read_or_create_secret


def hash_password(password: str) -> str:
    return generate_password_hash(password, method="scrypt")


def verify_password(password_hash: str | None, password: str) -> bool:
    return bool(password_hash) and check_password_hash(password_hash, password)


def secret(name: str, settings: Settings | None = None) -> str:
    """A server secret from the environment, or generated once in the data dir (0600)."""
    settings = settings or get_settings()
    value = {"flask_secret_key": settings.secret_key, "link_code_key": settings.link_code_key}.get(name)
    return value or read_or_create_secret(settings.data_dir, name)


def platform_scope_key(settings: Settings | None = None) -> str:
    """The key of the platform scope's proof (migration t3_sec_links_platform_proof), derived from the
    server secret; `memoria migrate` stores it where only the worker role reads it."""
    return keyed_digest(secret("flask_secret_key", settings), "memoria platform scope")


def platform_proof(user_id, session_version: int, settings: Settings | None = None) -> str:
    """What lets a signed-in staff member's session enter the platform scope: an HMAC of their id and
    session version, which the database recomputes (an SQL injection cannot, without the key)."""
    return keyed_digest(platform_scope_key(settings), f"{user_id}.{session_version}")


def keyed_digest(key: str, value: str) -> str:
    return hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()
