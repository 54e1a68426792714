"""Create the database if needed and bring its schema to the latest Alembic revision."""
from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from psycopg import sql
from sqlalchemy import create_engine, make_url
from sqlalchemy.pool import NullPool

from memory_core.adapters import leakproof
from memory_core.adapters.config import Settings, get_settings
from memory_core.adapters.db import APP_ROLE, WORKER_ROLE, resolve_urls
from memory_core.adapters.security import platform_scope_key

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger(__name__)


def alembic_config(owner_url: str) -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", owner_url.replace("%", "%%"))
    return cfg


def libpq_url(url: str, database: str | None = None, *, with_password: bool = True) -> str:
    """`url` (SQLAlchemy's form) as libpq takes it, for psycopg and PostgreSQL's programs; `database` instead of
    its own, and without its password where that goes elsewhere (a program's environment)."""
    u = make_url(url).set(drivername="postgresql")
    if database:
        u = u.set(database=database)
    if not with_password:
        u = u.set(password=None)
    return u.render_as_string(hide_password=False)


def ensure_database(owner_url: str) -> None:
    name = make_url(owner_url).database
    with psycopg.connect(libpq_url(owner_url, "postgres"), autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone():
            conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))


def migrate(settings: Settings | None = None) -> str:
    """Upgrade to every head and mark row security's functions LEAKPROOF again (adapters/leakproof.py);
    returns the owner URL used."""
    settings = settings or get_settings()
    urls = resolve_urls(settings)
    ensure_database(urls.owner)
    command.upgrade(alembic_config(urls.owner), "heads")
    passwords = {APP_ROLE: settings.app_db_password, WORKER_ROLE: settings.worker_db_password}
    with psycopg.connect(libpq_url(urls.owner), autocommit=True) as conn:
        for role, password in passwords.items():
            if password:
                conn.execute(sql.SQL("alter role {} password {}").format(sql.Identifier(role), sql.Literal(password)))
        # The platform scope's proof key, from the server secret (rewritten when the secret changes).
        conn.execute("insert into memoria_keys (name, key) values ('platform_scope', %s) "
                     "on conflict (name) do update set key = excluded.key", (platform_scope_key(settings),))
    _mark_leakproof(urls.owner)
    return urls.owner


def _mark_leakproof(owner_url: str) -> None:
    engine = create_engine(owner_url, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            missing = leakproof.mark(conn)
    finally:
        engine.dispose()
    if missing:
        log.warning("full-text, trigram and name-word conditions cannot use their indexes under row security "
                    "(every answer stays correct, a big org's searches read its whole range): a superuser must "
                    "run, in this database: %s", " ".join(leakproof.statements(missing)))
