"""Backups (`memoria backup`, `memoria restore`): the database to one file and back into a new install, with row
security, the app's roles and the LEAKPROOF marks as they were; a database that holds anything is never a target."""
from __future__ import annotations

import dataclasses
import stat
import uuid

import psycopg
import pytest
from click.testing import CliRunner
from psycopg import sql
from sqlalchemy import make_url, select

from app import cli
from memory_core.adapters.backup import BackupError, restore
from memory_core.adapters.db import SYSTEM, Database, resolve_urls
from memory_core.adapters.migrate import libpq_url
from memory_core.domain.access import load_access, memory_visible
from memory_core.domain.models import Memory


def _memoria(*args, ok=True) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert (result.exit_code == 0) == ok, result.output
    return result.output


@pytest.fixture
def new_install(servers):
    """Settings whose DATABASE_URL names a database that does not exist yet (dropped afterwards)."""
    owner = resolve_urls(servers).owner
    name = f"memoria_restored_{uuid.uuid4().hex[:8]}"
    target = dataclasses.replace(servers, database_url=make_url(owner).set(database=name)
                                 .render_as_string(hide_password=False))
    yield target
    with psycopg.connect(libpq_url(owner, "postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def _visible_values(settings, org_id, user_id) -> set[str]:
    """What the app role, under row security, lets this member read in that install."""
    urls = resolve_urls(settings)
    db = Database(urls.app, system_url=urls.system)
    try:
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        with db.unit_of_work(access.scope()) as uow:
            return set(uow.session.scalars(select(Memory.value).where(memory_visible(access))))
    finally:
        db.dispose()


def test_a_backup_restored_into_a_new_install_reads_as_before(database, servers, factory, system_session,
                                                               new_install, tmp_path):
    org, other = factory.org(), factory.org()
    owner, stranger = factory.member(org), factory.member(other)
    factory.memory(org, subject="org", attribute="plazo_pago", value="60 días", level="shared")
    factory.memory(other, subject="org", attribute="plazo_pago", value="30 días", level="shared")
    system_session.commit()

    out = _memoria("backup", str(tmp_path / "memoria.dump"))
    dump = tmp_path / "memoria.dump"
    assert "backup written" in out and dump.is_file()
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600  # customers' data: its owner's only
    assert "already exists" in _memoria("backup", str(dump), ok=False)  # never overwritten

    before = resolve_urls(servers).owner
    revision = restore(dump, settings=new_install)
    with psycopg.connect(libpq_url(before), autocommit=True) as conn:
        assert revision == ",".join(sorted(r[0] for r in conn.execute("select version_num from alembic_version")))

    assert _visible_values(new_install, org.id, owner.id) == {"60 días"}
    assert _visible_values(new_install, other.id, stranger.id) == {"30 días"}
    with psycopg.connect(libpq_url(resolve_urls(new_install).owner), autocommit=True) as conn:
        # migrate ran after the restore: row security's match function is LEAKPROOF again (pg_dump drops the mark)
        assert conn.execute("select proleakproof from pg_proc where proname = 'ts_match_vq'").fetchone()[0] is True


def test_restore_refuses_a_database_that_holds_anything(database, tmp_path, servers):
    dump = tmp_path / "memoria.dump"
    _memoria("backup", str(dump))
    out = _memoria("restore", str(dump), ok=False)
    assert "already holds" in out and "new install" in out


def test_restore_refuses_a_file_that_is_not_a_backup_and_leaves_the_database_empty(new_install, tmp_path):
    bogus = tmp_path / "notes.dump"
    bogus.write_text("not a backup")
    with pytest.raises(BackupError, match="pg_restore failed"):
        restore(bogus, settings=new_install)
    name = make_url(new_install.database_url).database
    with psycopg.connect(libpq_url(resolve_urls(new_install).owner, "postgres"), autocommit=True) as conn:
        assert conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone() is None
