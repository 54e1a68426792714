"""The worker process: an RQ worker on memoria's queue, with the scheduler for delayed retries."""
from __future__ import annotations

from rq import Worker

from memory_core.queue import get_queue


def run_worker(burst: bool = False) -> None:
    queue = get_queue()
    Worker([queue], connection=queue.connection).work(burst=burst, with_scheduler=True)
