"""Where a web process's requests spend their time, when MEMORIA_PROFILE_DIR is set (off by default).

A WSGI middleware counts, per endpoint (method and path with ids replaced by `<id>`): requests, wall
and CPU milliseconds (the request thread's own CPU), SQL statements and their milliseconds, and pooled
connection checkouts; with MEMORIA_PROFILE_CPROFILE=1 it also runs cProfile on every request. A thread
of each process writes what it has counted every second to `<dir>/requests-<pid>.json` (and
`<dir>/<pid>-<endpoint>.prof`), which `bench/api_load.py --profile` reads. Nothing of a request's
content is recorded: paths lose their ids, statements are only counted.
"""
from __future__ import annotations

import cProfile
import json
import os
import pstats
import re
import threading
import time
from collections import defaultdict
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import Pool

_ID = re.compile(r"/[0-9a-fA-F-]{32,36}(?=/|$)")
FLUSH_SECONDS = 1.0
_local = threading.local()


def endpoint_of(method: str, path: str) -> str:
    return f"{method} {_ID.sub('/<id>', path)}"


def _counting() -> dict | None:
    return getattr(_local, "counts", None)


@event.listens_for(Engine, "before_cursor_execute")
def _before(conn, cursor, statement, parameters, context, executemany):
    if (c := _counting()) is not None:
        c["started"] = time.perf_counter()


@event.listens_for(Engine, "after_cursor_execute")
def _after(conn, cursor, statement, parameters, context, executemany):
    if (c := _counting()) is not None:
        c["sql"] += 1
        c["sql_ms"] += (time.perf_counter() - c.pop("started", time.perf_counter())) * 1000


@event.listens_for(Pool, "checkout")
def _checkout(dbapi_connection, connection_record, connection_proxy):
    if (c := _counting()) is not None:
        c["checkouts"] += 1


class RequestProfile:
    """WSGI middleware: the counts above, per endpoint, written to `directory` by a thread every second."""

    FIELDS = ("requests", "wall_ms", "cpu_ms", "sql", "sql_ms", "checkouts")

    def __init__(self, app, directory: str | os.PathLike, with_cprofile: bool = False):
        self.app = app
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.with_cprofile = with_cprofile
        self.lock = threading.Lock()
        self.totals: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(self.FIELDS, 0.0))
        self.stats: dict[str, pstats.Stats] = {}
        self.writer_pid: int | None = None  # the writer thread belongs to one process (gunicorn forks)

    def __call__(self, environ, start_response):
        self._ensure_writer()
        name = endpoint_of(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""))
        _local.counts = counts = {"sql": 0, "sql_ms": 0.0, "checkouts": 0}
        profiler = cProfile.Profile() if self.with_cprofile else None
        wall, cpu = time.perf_counter(), time.thread_time()
        if profiler:
            profiler.enable()
        try:
            body = self.app(environ, start_response)
            try:
                chunks = list(body)
            finally:
                if hasattr(body, "close"):
                    body.close()
        finally:
            if profiler:
                profiler.disable()
            _local.counts = None
            spent = {"requests": 1, "wall_ms": (time.perf_counter() - wall) * 1000,
                     "cpu_ms": (time.thread_time() - cpu) * 1000, **{k: counts[k] for k in ("sql", "sql_ms",
                                                                                              "checkouts")}}
            with self.lock:
                total = self.totals[name]
                for k, v in spent.items():
                    total[k] += v
                if profiler:
                    if name in self.stats:
                        self.stats[name].add(profiler)
                    else:
                        self.stats[name] = pstats.Stats(profiler)
        return chunks

    def _ensure_writer(self) -> None:
        if self.writer_pid == os.getpid():
            return
        with self.lock:
            if self.writer_pid != os.getpid():
                self.writer_pid = os.getpid()
                self.totals.clear()
                self.stats.clear()
                threading.Thread(target=self._write_forever, daemon=True, name="request-profile").start()

    def _write_forever(self) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            self.write()

    def write(self) -> None:
        pid = os.getpid()
        with self.lock:
            totals = {k: dict(v) for k, v in self.totals.items()}
            for name, stats in self.stats.items():
                stats.dump_stats(self.directory / f"{pid}-{re.sub(r'[^A-Za-z0-9]+', '_', name)}.prof")
        tmp = self.directory / f".requests-{pid}.json"
        tmp.write_text(json.dumps(totals))
        tmp.replace(self.directory / f"requests-{pid}.json")
