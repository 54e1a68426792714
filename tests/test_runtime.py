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
    _wait(lambda: not _processes_using(data), 120, "every server of up's to stop")


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
    _wait(lambda: not _processes_using(data), 30, "the servers the command started to stop")  # ...and stopped it


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
    _wait(lambda: not _processes_using(data), 30, "the test's own server to stop")


def test_a_server_slow_to_stop_is_stopped_at_once_and_stopping_never_raises(tmp_path, monkeypatch):
    """A fast stop that does not finish in its time falls back to an immediate stop; stopping a server
    that is already gone is not an error either (a test run must not turn red at teardown)."""
    from memory_core.adapters import runtime

    pg = runtime.start_postgres(tmp_path)
    rd = runtime.start_redis(tmp_path)
    monkeypatch.setattr(runtime, "PG_STOP_WAIT", 0)  # no time at all for the fast stop
    assert pg.stop() and rd.stop()
    _wait(lambda: not _processes_using(tmp_path), 30, "both servers to stop")
    assert pg.stop() and rd.stop()  # already stopped: nothing raised
