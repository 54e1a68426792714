"""The worker process's part in a test: run every job queued so far, in this process, then return."""
from __future__ import annotations


def run_queued_jobs() -> None:
    """What `memoria worker` does with the queue, once (RQ's SimpleWorker in burst mode on the real Redis)."""
    from rq import SimpleWorker

    from memory_core.adapters.queue import get_queue

    queue = get_queue()
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
