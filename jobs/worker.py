"""The worker process: an RQ worker on memoria's queue, with the scheduler for delayed retries.

The model backend is loaded here, in the parent, before RQ forks a work horse per job: each horse
inherits the loaded gate and embedding models (copy-on-write) instead of loading them again (~1-5 s
per job), and that heap is frozen out of the garbage collector (`freeze_heap`) so the horses keep
sharing it. RQ's forking Worker is kept, not SimpleWorker: a job that crashes or hangs takes down only
its horse, and the job timeout kills it; the parent opens no database connection, so none crosses a fork.

Redis going away does not end the process: RQ's loop gives up on an unhandled Redis error, and
`run_worker` then connects again with backoff (1 s doubling to 30 s), logging each attempt, until a
stop is asked for (SIGTERM/SIGINT: the job at hand finishes first).
"""
from __future__ import annotations

import logging
import signal
import time

import redis.exceptions
from rq import Worker

from memory_core.adapters.heap import freeze_heap
from memory_core.adapters.queue import get_queue

log = logging.getLogger(__name__)

# RQ's registration expires this long after the last heartbeat; idle, it heartbeats every
# WORKER_TTL - 15 s, so /readyz sees a dead worker within about a minute.
WORKER_TTL = 60
RECONNECT_FIRST_SECONDS = 1
RECONNECT_MAX_SECONDS = 30
# A worker that ran this long before losing Redis starts its backoff again from the first step.
RECONNECT_RESET_SECONDS = 60
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class MemoriaWorker(Worker):
    """RQ's forking worker that remembers whether it was asked to stop (or only lost Redis)."""

    stop_asked = False

    def request_stop(self, signum, frame):
        self.stop_asked = True
        super().request_stop(signum, frame)


def preload_backend() -> None:
    """Build the configured backend and load its models now, in the process that forks the horses."""
    from memory_core.backends import get_backend

    started = time.perf_counter()
    backend = get_backend()
    warm_up = getattr(backend, "warm_up", None)
    if warm_up is not None:
        warm_up()
    log.info("backend %s loaded in %.1f s", backend.name, time.perf_counter() - started)
    preload_code()
    freeze_heap()


def preload_code() -> None:
    """Import the worker's code and configure the ORM mappers once, here, instead of in every horse.
    Opens no database connection."""
    from sqlalchemy.orm import configure_mappers

    import jobs.outbox  # noqa: F401
    import memory_core.domain.models  # noqa: F401
    import memory_core.learning.pipeline  # noqa: F401

    configure_mappers()


def catch_up() -> None:
    """Queue one drain as the worker (re)connects: kicks sent while Redis or the worker was away were
    lost, and the outbox, not the queue, is what remembers the work."""
    from jobs.outbox import enqueue_drain

    enqueue_drain(force=True)


def run_worker(burst: bool = False, *, sleep=time.sleep) -> None:
    """Work the queue until asked to stop (or, with `burst`, until it is empty), reconnecting to Redis
    with backoff whenever it goes away."""
    preload_backend()
    delay = RECONNECT_FIRST_SECONDS
    while True:
        queue = get_queue()
        worker = MemoriaWorker([queue], connection=queue.connection, worker_ttl=WORKER_TTL)
        started = time.monotonic()
        try:
            if not burst:
                catch_up()
            worker.work(burst=burst, with_scheduler=True)
            if worker.stop_asked or burst:
                return
            lost = "RQ's loop ended"
        except REDIS_DOWN as exc:
            if worker.stop_asked:
                return
            lost = type(exc).__name__
        if time.monotonic() - started > RECONNECT_RESET_SECONDS:
            delay = RECONNECT_FIRST_SECONDS
        log.warning("worker lost Redis (%s); reconnecting in %d s", lost, delay)
        if not _backoff(sleep, delay):
            return
        delay = min(RECONNECT_MAX_SECONDS, delay * 2)


class _StopAsked(Exception):
    pass


def _backoff(sleep, seconds: float) -> bool:
    """Wait before reconnecting; False when SIGTERM/SIGINT came meanwhile (RQ's own handlers, still
    installed, would report the shutdown to the Redis that is away)."""
    def stop(_signum, _frame):
        raise _StopAsked

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        sleep(seconds)
        return True
    except _StopAsked:
        log.info("worker stopping while Redis is away")
        return False
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
