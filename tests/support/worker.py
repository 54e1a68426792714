"""The worker process's part in a test: run every job queued so far, in this process, then return; or be a live
worker while a block runs."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def run_queued_jobs() -> None:
    """What `memoria worker` does with the queue, once (RQ's SimpleWorker in burst mode on the real Redis)."""
    from rq import SimpleWorker

    from memory_core.adapters.queue import get_queue

    queue = get_queue()
    SimpleWorker([queue], connection=queue.connection).work(burst=True)


@contextmanager
def live_worker(settings) -> Iterator[None]:
    """A worker registered and heartbeating on the real Redis while the block runs (what /readyz looks for)."""
    from rq import Worker

    from memory_core.adapters.queue import get_queue

    queue = get_queue(settings)
    worker = Worker([queue], connection=queue.connection)
    worker.register_birth()
    worker.heartbeat()
    try:
        yield
    finally:
        worker.register_death()
