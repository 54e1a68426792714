"""The worker process: an RQ worker on memoria's queue, with the scheduler for delayed retries.

The model backend is loaded here, in the parent, before RQ forks a work horse per job: each horse
inherits the loaded gate and embedding models (copy-on-write) instead of loading them again (~1-5 s
per job). RQ's forking Worker is kept, not SimpleWorker: a job that crashes or hangs takes down only
its horse, and the job timeout kills it; the parent opens no database connection, so none crosses a fork.
"""
from __future__ import annotations

import logging
import time

from rq import Worker

from memory_core.queue import get_queue

log = logging.getLogger(__name__)


def preload_backend() -> None:
    """Build the configured backend and load its models now, in the process that forks the horses."""
    from memory_core.backends import get_backend

    started = time.perf_counter()
    backend = get_backend()
    warm_up = getattr(backend, "warm_up", None)
    if warm_up is not None:
        warm_up()
    log.info("backend %s loaded in %.1f s", backend.name, time.perf_counter() - started)


def run_worker(burst: bool = False) -> None:
    preload_backend()
    queue = get_queue()
    Worker([queue], connection=queue.connection).work(burst=burst, with_scheduler=True)
