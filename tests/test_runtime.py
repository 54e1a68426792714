"""`memoria up` on the embedded default: starts PostgreSQL and Redis, shares them with a separately
started worker, and stops everything it started on Ctrl-C."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from redis import Redis
from rq import Worker

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes_using(path: Path) -> list[str]:
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if str(path) in cmd and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{p.info['pid']}: {cmd}")
    return found


def _wait_gone(path: Path, timeout: float, what: str) -> None:
    """Until no process names `path` on its command line; a timeout names the ones left."""
    try:
        _wait(lambda: not _processes_using(path), timeout, what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; still running: {_processes_using(path)}") from None


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_up_serves_demo_shares_servers_with_a_worker_and_ctrl_c_stops_them(tmp_path):
    data = tmp_path / "data"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "APP_DATABASE_URL")}
    env.update(MEMORIA_DATA_DIR=str(data), MEMORIA_QUEUE="memoria-up-test")
    up = subprocess.Popen([sys.executable, "-m", "app", "up", "--port", str(port)], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out: list[str] = []
    threading.Thread(target=lambda: out.extend(iter(up.stdout.readline, "")), daemon=True).start()
    worker = None
    try:
        def login_page():
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=2).status == 200
            except OSError:
                return False
        _wait(login_page, 300, "the console to answer")  # generous: the machine may be busy
        printed = "".join(out)
        assert f"http://127.0.0.1:{port}/" in printed
        assert "ana@demo.memoria.dev" in printed and "ana-demo-pass" in printed

        worker = subprocess.Popen([sys.executable, "-m", "app", "worker"], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        redis = Redis(unix_socket_path=str(data / "redis" / "redis.sock"))
        # up's own worker and the separate one, on the one Redis
        _wait(lambda: len(Worker.all(connection=redis)) >= 2, 300, "two workers on one Redis")
        postmasters = [p for p in _processes_using(data / "pg") if "postgres -D" in p]
        assert len(postmasters) == 1, postmasters
        redis_servers = [p for p in _processes_using(data / "redis") if "redis-server" in p]
        assert len(redis_servers) == 1, redis_servers
    finally:
        if worker is not None:  # the separate worker goes first: it found the servers running and leaves them
            worker.terminate()
            worker.wait(timeout=300)
        up.send_signal(signal.SIGINT)
        up.wait(timeout=300)
    _wait_gone(data, 120, "every server of up's to stop")


def test_embedded_postgres_gets_the_configured_page_cache(tmp_path):
    """A server started in a new data dir runs with the configured shared_buffers, and keeps it when
    another process attaches to it."""
    from memory_core.adapters.runtime import start_postgres

    def shared_buffers(handle) -> str:
        import psycopg

        with psycopg.connect(handle.uri.replace("postgresql+psycopg://", "postgresql://", 1)) as conn:
            return conn.execute("show shared_buffers").fetchone()[0]

    pg = start_postgres(tmp_path, shared_buffers="192MB")
    try:
        assert pg.started_here and shared_buffers(pg) == "192MB"
        # A second process attaching to the running server changes nothing.
        out = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                              "from memory_core.adapters.runtime import start_postgres; "
                              "h = start_postgres(Path(sys.argv[1]), shared_buffers='256MB'); print(h.started_here)",
                              str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert out.stdout.strip() == "False", out.stderr
        assert shared_buffers(pg) == "192MB"
    finally:
        pg.stop()


def test_a_worker_with_no_servers_running_stops_at_once_saying_how_to_start_them():
    """Only `memoria up` starts the embedded servers: a worker on an empty data dir says so and exits."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memoria-noservers-") as data:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "APP_DATABASE_URL")}
        env["MEMORIA_DATA_DIR"] = data
        done = subprocess.run([sys.executable, "-m", "app", "worker"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode != 0
        assert "PostgreSQL is not running" in done.stderr and "memoria up" in done.stderr
        assert not (Path(data) / "pg" / "postmaster.pid").exists()


def test_library_code_never_starts_a_server(tmp_path):
    """A request thread or a job that finds no server gets an error, and no server appears."""
    import dataclasses

    import redis as redis_lib

    from memory_core.adapters.config import get_settings
    from memory_core.adapters.db import resolve_urls
    from memory_core.adapters.queue import get_redis
    from memory_core.adapters.runtime import ServerNotRunning

    settings = dataclasses.replace(get_settings(), data_dir=tmp_path, database_url=None, redis_url=None)
    with pytest.raises(ServerNotRunning, match="memoria up"):
        resolve_urls(settings)
    with pytest.raises(redis_lib.exceptions.ConnectionError):
        get_redis(settings).ping()
    assert not _processes_using(tmp_path)


def _memoria(args: list[str], data: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a `memoria` command on the embedded servers of `data` (no configured servers)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "APP_DATABASE_URL")}
    env.update(MEMORIA_DATA_DIR=str(data), MEMORIA_QUEUE="memoria-eval-test")
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def _small_search_dataset(tmp_path: Path) -> str:
    from tests.test_eval_search import SMALL

    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL), encoding="utf-8")
    return str(path)


def _small_gate_dataset(tmp_path: Path) -> str:
    from tests.test_eval_gate import LINES

    path = tmp_path / "gate.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in LINES[:2]), encoding="utf-8")
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["search", "gate"])
def test_an_eval_command_stops_the_servers_it_started(tmp_path, command):
    data = tmp_path / "data"
    dataset = (_small_search_dataset if command == "search" else _small_gate_dataset)(tmp_path)
    done = _memoria(["eval", command, "--dataset", dataset, "--json"], data, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["n"] >= 2
    assert (data / "pg").exists()  # it did start the embedded PostgreSQL...
    try:
        _wait_gone(data, 30, "the servers the command started to stop")  # ...and stopped it
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nthe command's log:\n{done.stderr[-4000:]}") from None


@pytest.mark.slow
def test_an_eval_command_leaves_running_the_server_it_found_running(tmp_path):
    from memory_core.adapters.runtime import start_postgres

    data = tmp_path / "data"
    pg = start_postgres(data)
    try:
        postmasters = [p for p in _processes_using(data / "pg") if "postgres -D" in p]
        done = _memoria(["eval", "search", "--dataset", _small_search_dataset(tmp_path), "--json", "--no-baselines"],
                        data, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        assert [p for p in _processes_using(data / "pg") if "postgres -D" in p] == postmasters
    finally:
        pg.stop()
    _wait_gone(data, 30, "the test's own server to stop")


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as a user of its own only when memoria runs as root")
def test_a_server_stops_even_once_its_data_dir_is_no_longer_open_to_the_servers_user(tmp_path):
    """Run as root, the embedded PostgreSQL runs as a user of its own. pytest makes its temporary root private again
    whenever another session starts: `pg_ctl stop`, run as that user, could not reach the data dir, and the server
    was left running."""
    from memory_core.adapters import runtime

    outer = tmp_path / "outer"
    pg = runtime.start_postgres(outer / "data")
    outer.chmod(0o700)
    try:
        assert pg.stop()
        _wait_gone(outer, 30, "the server to stop")
    finally:
        outer.chmod(0o755)


def test_a_server_slow_to_stop_is_stopped_at_once_and_stopping_never_raises(tmp_path, monkeypatch):
    """A fast stop that does not finish in its time falls back to an immediate stop; stopping a server
    that is already gone is not an error either (a test run must not turn red at teardown)."""
    from memory_core.adapters import runtime

    pg = runtime.start_postgres(tmp_path)
    rd = runtime.start_redis(tmp_path)
    monkeypatch.setattr(runtime, "PG_STOP_WAIT", 0)  # no time at all for the fast stop
    assert pg.stop() and rd.stop()
    _wait_gone(tmp_path, 30, "both servers to stop")
    assert pg.stop() and rd.stop()  # already stopped: nothing raised


def _postmaster_pid(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().split()[0])


def _select_one(uri: str) -> int:
    import psycopg

    with psycopg.connect(uri.replace("postgresql+psycopg://", "postgresql://", 1), connect_timeout=10) as conn:
        return conn.execute("select 1").fetchone()[0]


@pytest.mark.slow
def test_during_an_operators_pg_ctl_restart_the_server_reads_as_running_or_stopped_and_never_fails(tmp_path):
    """`pg_ctl restart` removes postmaster.pid, then the new server writes it a few lines at a time. What
    `memoria up` checks twice a second (is it running? its URI) must read that as running or not
    running, never raise: `up` once died of it, stopping everything it ran. Attaching waits for the
    restarted server to accept connections."""
    from memory_core.adapters.runtime import ServerNotRunning, attach_postgres, postgres_running, start_postgres
    from tests.test_faults import restart_postgres

    pg = start_postgres(tmp_path)
    failures: list[str] = []
    seen: set[bool] = set()
    done = threading.Event()

    def watch():
        while not done.is_set():
            try:
                seen.add(postgres_running(tmp_path))
                attach_postgres(tmp_path)
            except ServerNotRunning:
                pass  # between the old server's exit and the new one's first line
            except Exception as exc:  # noqa: BLE001 - what the test looks for
                failures.append(repr(exc)[:300])
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        pids = [_postmaster_pid(tmp_path / "pg")]
        for _ in range(3):
            restart_postgres(tmp_path / "pg")
            pids.append(_postmaster_pid(tmp_path / "pg"))
    finally:
        done.set()
        watcher.join()
        assert not failures, failures[:3]
        assert len(set(pids)) == 4 and True in seen  # three real restarts, watched throughout
        assert postgres_running(tmp_path) and _select_one(attach_postgres(tmp_path)) == 1
        pg.stop()


@pytest.mark.slow
def test_a_postgresql_that_crashed_is_started_again(tmp_path):
    """After the server was SIGKILLed, starting it again (what `memoria up` does on seeing it gone)
    starts a new server in the same data dir, which serves; before, the first start's handle, cached
    by the library for the data dir, was handed back and nothing ran."""
    from memory_core.adapters.runtime import postgres_running, start_postgres

    pg = start_postgres(tmp_path)
    try:
        crashed = _postmaster_pid(tmp_path / "pg")
        os.kill(crashed, signal.SIGKILL)
        _wait_gone(tmp_path / "pg", 60, "the killed server and its backends to be gone")
        assert not postgres_running(tmp_path)
        again = start_postgres(tmp_path)
        assert again.started_here and postgres_running(tmp_path)
        assert _postmaster_pid(tmp_path / "pg") != crashed
        assert _select_one(again.uri) == 1
    finally:
        pg.stop()


@pytest.mark.slow
def test_lock_files_left_behind_whose_pid_is_now_another_programs_do_not_stop_a_start(tmp_path):
    """A container stopped uncleanly and started again: postmaster.pid (and the socket's lock) name a pid that now
    belongs to another program. Starting the server starts it; before, the library took the live pid for a running
    server, started nothing, and the next step found no server."""
    from memory_core.adapters.runtime import postgres_running, start_postgres

    pgdata = tmp_path / "pg"
    pg = start_postgres(tmp_path)
    left = {lock: lock.read_text() for lock in [pgdata / "postmaster.pid", *pgdata.glob(".s.PGSQL.*.lock")]}
    pid = str(_postmaster_pid(pgdata))
    assert pg.stop() and not postgres_running(tmp_path)
    other = subprocess.Popen(["sleep", "300"])
    again = None
    try:
        for lock, content in left.items():
            lock.write_text(content.replace(pid, str(other.pid), 1))
        assert not postgres_running(tmp_path)  # a live pid, but not a PostgreSQL
        again = start_postgres(tmp_path)
        assert again.started_here and postgres_running(tmp_path) and _select_one(again.uri) == 1
    finally:
        other.kill()
        other.wait()
        if again is not None:
            again.stop()
