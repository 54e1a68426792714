"""Database connections, the row-level-security scope of each transaction, and the unit of work.

Three URLs: the owner URL runs migrations; the app URL connects as `memoria_app`, a role without
SUPERUSER or BYPASSRLS, so PostgreSQL enforces the ownership rule a second time; the system URL
connects as `memoria_worker` (a member of memoria_app), the only role whose "system" scope the
policies honour: memoria_app may set memoria.mode to 'system' and then sees nothing. A Database
opens system-scope sessions on the system URL, and refuses them when it has none. The web's narrower
ways around system scope: SECURITY DEFINER functions for pre-sign-in lookups and the "platform" mode
for staff and privacy officers (migrations t1_sysscope_*). Every transaction
starts by setting its scope (`memoria.mode`, org, user, phone, readable areas) with set_config(...,
true), from `session.info["scope"]`, sent before its first statement with any other setting it needs then
(adapters.tx_settings). No scope set means mode "none": the policies show nothing.

A fourth, optional URL (DATABASE_READ_URL) reaches the app role on a hot standby: `Database.reader`
opens sessions there for reads that may be a few milliseconds old (the memory block's memories,
search, the console's lists); without it, readers are ordinary sessions on the primary.
"""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import psycopg
from psycopg.pq import ConnStatus, DiagnosticField, ExecStatus, TransactionStatus
from sqlalchemy import create_engine, event, make_url
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from memory_core.adapters import (
    tx_settings,
    vector_binary,  # noqa: F401 - its dumper must exist before any connection
)
from memory_core.adapters.config import Settings, get_settings
from memory_core.adapters.planner import keeps_plans, prepare_as_usual
from memory_core.adapters.pool_ping import ping_when_idle
from memory_core.adapters.security import platform_proof

log = logging.getLogger(__name__)

# The longest a statement of a request's transaction (any scope but the worker's system scope) waits for a row or
# table lock before it fails with 55P03 (an OperationalError: the web answers 503 with Retry-After). Without it a
# request that met a lock held by a long worker batch, or by another of its own transactions, held its thread and
# connection for good; the worker's system scope takes no lock it would wait for (SKIP LOCKED claims, try-locks).
LOCK_TIMEOUT = "10s"

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
DB_NAME = "memoria"


@dataclass(frozen=True)
class Scope:
    """What a transaction may see, as row-level security reads it."""
    mode: str = "none"  # none | principal | ladder | org | platform | platform_key | system
    org_id: uuid.UUID | None = None
    user_id: uuid.UUID | None = None
    phone: str | None = None
    read_areas: tuple[str, ...] = ()
    # platform scope: the signed-in session's proof (platform_scope); platform_key scope: the SHA-256 of
    # the key the request presented (platform_key_scope)
    proof: str = ""

    def settings(self) -> dict[str, str]:
        return {
            "memoria.mode": self.mode,
            "memoria.org_id": str(self.org_id) if self.org_id else "",
            "memoria.user_id": str(self.user_id) if self.user_id else "",
            "memoria.phone": self.phone or "",
            "memoria.read_areas": ",".join(self.read_areas),
            "memoria.proof": self.proof,
            "lock_timeout": "0" if self.mode == "system" else LOCK_TIMEOUT,
        }


SYSTEM = Scope(mode="system")


def org_scope(org_id: uuid.UUID, user_id: uuid.UUID | None = None) -> Scope:
    """An operator working on one org: its shared rows, its proposals, and the operator's own rows."""
    return Scope(mode="org", org_id=org_id, user_id=user_id)


def platform_scope(user_id: uuid.UUID, session_version: int | None = None,
                   settings: Settings | None = None) -> Scope:
    """A staff member or privacy officer reading across orgs: only the tables their platform role may read
    (migration t1_sysscope_platform_scope), only while the database holds that role for them, and only
    with the proof of their live session (`session_version`; migration t3_sec_links_platform_proof).
    Without it the scope shows nothing: the web adds it for the signed-in person (web.sessions)."""
    if session_version is None:
        return Scope(mode="platform", user_id=user_id)
    return Scope(mode="platform", user_id=user_id, proof=platform_proof(user_id, session_version, settings))


def platform_key_scope(key_id: uuid.UUID, key_hash: str) -> Scope:
    """A platform API key (the provisioning API's organizations): it may create, rename and list organizations
    and create their keys while the key is active, and only with `key_hash`, the SHA-256 of the key the
    request presented, as its proof (migration t3_sec_org_people_scope): a key's id alone opens nothing."""
    return Scope(mode="platform_key", user_id=key_id, proof=key_hash)


def person_scope(user_id: uuid.UUID) -> Scope:
    """A signed-in person outside any org: their own rows, their memberships and the orgs they belong to."""
    return Scope(mode="principal", user_id=user_id)


# One statement sets every setting of a scope for the rest of the transaction (built once).
def set_scope(connection, scope: Scope, *, kept_plans: bool = False) -> None:
    """Give the connection's current transaction `scope` (row security reads it at every statement); with
    `kept_plans`, generic plans too (planner.kept_plans). Sent with the transaction's next statement, before it
    (adapters.tx_settings)."""
    values = scope.settings()
    if kept_plans:
        values["plan_cache_mode"] = "force_generic_plan"
    tx_settings.set_for_transaction(connection, values)


def commit_without_waiting_for_disk(session: Session) -> None:
    """`session`'s transaction commits without waiting for its WAL to reach the disk (synchronous_commit off):
    for a transaction whose writes may be lost in a crash of PostgreSQL itself, never corrupted (the last few
    hundred milliseconds' commits; wal_writer_delay), and are worth no fsync on a turn's path: a memory block's
    trace and the agent's report of what it used. Messages, memories and every operator action commit as usual."""
    tx_settings.set_for_transaction(session.connection(), {"synchronous_commit": "off"})


@event.listens_for(Session, "after_begin")
def _apply_scope(session: Session, transaction, connection) -> None:
    if transaction.nested:
        return  # a savepoint inherits its transaction's settings
    set_scope(connection, session.info.get("scope", Scope()), kept_plans=keeps_plans(session))


@dataclass(frozen=True)
class Urls:
    owner: str
    app: str
    system: str
    read: str | None = None


def resolve_urls(settings: Settings | None = None) -> Urls:
    """The owner and app URLs: from DATABASE_URL, or from the embedded server running in the data dir.

    Never starts a server (`memoria up` does, or `runtime.start_servers` in a command that runs
    alone): raises `runtime.ServerNotRunning` when the embedded one is not running."""
    settings = settings or get_settings()
    if settings.database_url:
        owner = _psycopg(settings.database_url)
    else:
        from memory_core.adapters.runtime import attach_postgres

        owner = make_url(attach_postgres(settings.data_dir)).set(database=DB_NAME).render_as_string(hide_password=False)
    if settings.app_database_url:
        app = _psycopg(settings.app_database_url)
    else:
        app = make_url(owner).set(username=APP_ROLE, password=settings.app_db_password)
        app = app.render_as_string(hide_password=False)
    if settings.worker_database_url:
        system = _psycopg(settings.worker_database_url)
    else:
        system = make_url(owner).set(username=WORKER_ROLE, password=settings.worker_db_password)
        system = system.render_as_string(hide_password=False)
    read = _psycopg(settings.database_read_url) if settings.database_read_url else None
    return Urls(owner=owner, app=app, system=system, read=read)


def _psycopg(url: str) -> str:
    u = make_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    return u.render_as_string(hide_password=False)


def _engine(url: str, **pool) -> Engine:
    """An engine whose transactions that wrote nothing end by COMMIT instead of ROLLBACK.

    psycopg forgets a connection's prepared statements at every ROLLBACK, and most units of work only
    read and end by rolling back: every statement was then parsed and rewritten with row security's
    policies afresh each time. A transaction that wrote nothing (PostgreSQL assigned it no transaction id)
    commits to the same effect and keeps them; one that wrote, or failed, rolls back. The statements that
    match a query's text still plan each run for its words (`planner.custom_plans`)."""
    engine = create_engine(url, **pool)
    rollback, quote = engine.dialect.do_rollback, engine.dialect.identifier_preparer.quote

    def do_rollback(connection) -> None:
        raw = getattr(connection, "dbapi_connection", connection)
        if raw.info.transaction_status == TransactionStatus.INTRANS:
            with raw.cursor() as cursor:
                wrote = cursor.execute(_WROTE).fetchone()[0]
            if not wrote:
                raw.commit()
                return
        rollback(connection)

    def do_rollback_to_savepoint(connection, name: str) -> None:
        # psycopg takes a ROLLBACK TO SAVEPOINT sent through a cursor for a ROLLBACK and forgets every prepared
        # statement (in case the savepoint dropped an object a statement names; nothing here runs DDL inside
        # one): sent on the libpq connection itself, the statements stay prepared (a prepared statement is not
        # transactional), so the rest of a worker's batch after a message that failed or stepped aside for
        # another worker does not parse and plan every statement again.
        raw, statement = connection.connection.driver_connection, f"ROLLBACK TO SAVEPOINT {quote(name)}"
        with raw.lock:
            result = raw.pgconn.exec_(statement.encode())
        if result.status != ExecStatus.COMMAND_OK:  # raised as SQLAlchemy raises what a cursor failed
            sqlstate = (result.error_field(DiagnosticField.SQLSTATE) or b"08006").decode()
            error = psycopg.errors.lookup(sqlstate)(result.get_error_message())
            gone = raw.pgconn.status != ConnStatus.OK
            if gone:
                connection.invalidate(error)
            raise DBAPIError.instance(statement, None, error, psycopg.Error, connection_invalidated=gone)

    engine.dialect.do_rollback = do_rollback
    engine.dialect.do_rollback_to_savepoint = do_rollback_to_savepoint
    event.listen(engine, "checkin", prepare_as_usual)
    ping_when_idle(engine)  # instead of pool_pre_ping (adapters.pool_ping)
    return engine


# Whether the transaction has written anything: PostgreSQL assigns a transaction id at the first write
# (and at nextval), never to one that only reads.
_WROTE = "select pg_current_xact_id_if_assigned() is not null"


class SystemScopeUnavailable(PermissionError):
    """This process has no connection as the worker role, so it cannot work in system scope."""


class Database:
    """Sessions on the app role, system-scope sessions on the worker role when given its URL, and read
    sessions on a standby when given its URL."""

    def __init__(self, app_url: str, *, system_url: str | None = None, read_url: str | None = None,
                 pool_size: int = 5, max_overflow: int = 10, pool_timeout: float = 30):
        # pool_timeout: a caller waits at most this long for a connection, then gets sqlalchemy's
        # TimeoutError (the web answers 503 with Retry-After) instead of waiting forever.
        # No pool_pre_ping: a connection is pinged at checkout only after sitting idle (adapters.pool_ping).
        # pool_use_lifo: the connection used last is the next one handed out, so a process that is not busy keeps
        # working on the few connections whose statements are prepared and whose PostgreSQL backends have the
        # catalog and the principal's pages at hand; first in, first out handed each turn the connection idle the
        # longest, and every pooled connection prepared every statement of a principal (a big org's name the org).
        pool = {"pool_size": pool_size, "max_overflow": max_overflow, "pool_timeout": pool_timeout,
                "pool_use_lifo": True}
        self.engine: Engine = _engine(app_url, **pool)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.system_engine: Engine | None = None
        self._system_sessions = None
        if system_url:
            self.system_engine = _engine(system_url, **pool)
            self._system_sessions = sessionmaker(self.system_engine, expire_on_commit=False)
        self.read_engine: Engine | None = _engine(read_url, **pool) if read_url else None
        self._read_sessions = sessionmaker(self.read_engine, expire_on_commit=False) if read_url else None

    def session(self, scope: Scope) -> Session:
        if scope.mode == "system":
            if self._system_sessions is None:
                raise SystemScopeUnavailable("system scope needs the worker role's connection")
            s = self._system_sessions()
        else:
            s = self._sessions()
        s.info["scope"] = scope
        return s

    def reader(self, scope: Scope) -> Session:
        """A session for reads that may lag the primary by a few milliseconds: on the standby when
        DATABASE_READ_URL is set (read-only there), else an ordinary session."""
        if self._read_sessions is None or scope.mode == "system":
            return self.session(scope)
        s = self._read_sessions()
        s.info["scope"] = scope
        return s

    @contextmanager
    def unit_of_work(self, scope: Scope) -> Iterator[UnitOfWork]:
        uow = UnitOfWork(self.session(scope))
        try:
            yield uow
        finally:
            uow.close()

    def dispose(self) -> None:
        for engine in (self.engine, self.system_engine, self.read_engine):
            if engine is not None:
                engine.dispose()


class UnitOfWork:
    """Owns one transaction: rolls back unless commit() was called."""

    def __init__(self, session: Session):
        self.session = session

    def commit(self) -> None:
        self.session.commit()

    def rollback(self) -> None:
        self.session.rollback()

    def close(self) -> None:
        self.session.rollback()
        self.session.close()


@event.listens_for(Session, "after_flush")
def _mark_written(session: Session, _flush_context) -> None:
    session.info["written"] = True


@event.listens_for(Session, "after_transaction_end")
def _clear_written(session: Session, transaction) -> None:
    if transaction.parent is None:
        session.info.pop("written", None)


def has_uncommitted_writes(session: Session) -> bool:
    return bool(session.info.get("written") or session.new or session.dirty or session.deleted)


class RequestSessions:
    """A web request's sessions, one per row-security scope, holding one connection at a time per server.

    A request often reads in one scope and then another (the API key and the person in system scope,
    then the person's rows in theirs). Opening a scope's session first ends the read-only transaction
    of the others (committed, so what they loaded stays usable), so the request holds one pooled
    connection, not one per scope: a pool as large as the server's threads then never starves. A
    session with uncommitted writes keeps its transaction (the view commits it, or teardown rolls it
    back). `close` never raises: after a database outage the connection may already be dead."""

    def __init__(self, database: Database):
        self.database = database
        self.sessions: dict[tuple[Scope, bool], Session] = {}

    def get(self, scope: Scope, *, read: bool = False) -> Session:
        """The request's session in `scope`; `read`: its reader (on the standby when there is one)."""
        read = read and self.database.read_engine is not None and scope.mode != "system"
        key = (scope, read)  # without a standby a reader is the scope's one session
        if key not in self.sessions:
            for other in self.sessions.values():
                if other.in_transaction() and not has_uncommitted_writes(other):
                    other.commit()
            self.sessions[key] = self.database.reader(scope) if read else self.database.session(scope)
        return self.sessions[key]

    def has(self, scope: Scope) -> bool:
        """Whether the request has opened its primary session in `scope`."""
        return (scope, False) in self.sessions

    def move(self, session_scope: Scope, scope: Scope) -> Session:
        """The request's session in `session_scope`, moved to `scope` within its transaction (one connection,
        one commit) when it has written nothing and the request has no session in `scope` yet; else the
        session in `scope` as `get` gives it. For a read in one scope that decides the next one (the key's
        org read for the person's access, then the person's own work): the caller must have opened the
        session itself, since whoever else holds it would then work in `scope`."""
        key, old = (scope, False), (session_scope, False)
        session = self.sessions.get(old)
        if key in self.sessions or session is None or has_uncommitted_writes(session):
            return self.get(scope)
        del self.sessions[old]
        session.info["scope"] = scope
        if session.in_transaction():
            set_scope(session.connection(), scope)
        self.sessions[key] = session
        return session

    def close(self) -> None:
        for s in self.sessions.values():
            try:
                s.rollback()
            except Exception:  # noqa: BLE001 - a dead connection: the pool discards it
                log.warning("rollback at teardown failed; the connection is discarded", exc_info=True)
            try:
                s.close()
            except Exception:  # noqa: BLE001
                log.warning("closing a session at teardown failed", exc_info=True)
        self.sessions.clear()


@lru_cache(maxsize=4)
def _database_for(url: str, system_url: str, read_url: str | None) -> Database:
    return Database(url, system_url=system_url, read_url=read_url)


def get_database(settings: Settings | None = None) -> Database:
    """The process-wide Database for the configured app and worker URLs (one pool each per process)."""
    urls = resolve_urls(settings)
    return _database_for(urls.app, urls.system, urls.read)
