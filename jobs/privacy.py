"""Privacy requests too large for one web request: executed by the worker in resumable batches."""
from __future__ import annotations

import uuid

from memory_core.adapters.db import SYSTEM, get_database
from memory_core.privacy import requests as privacy


def execute_privacy_request(request_id: str, actor_user_id: str | None) -> dict:
    """Execute (or resume) one previewed request; progress is committed batch by batch."""
    with get_database().unit_of_work(SYSTEM) as uow:
        req = privacy.execute(uow.session, uuid.UUID(request_id), uuid.UUID(actor_user_id) if actor_user_id else None)
        return {"status": req.status, "progress": {k: v for k, v in req.progress.items() if k != "subject"}}


def enqueue_execution(request_id: uuid.UUID, actor_user_id: uuid.UUID | None) -> str:
    """Queue the execution; one queued job per request at a time."""
    from memory_core.adapters.queue import get_queue

    queue = get_queue()
    job_id = f"privacy-{request_id}"
    existing = queue.fetch_job(job_id)
    if existing is not None and existing.get_status(refresh=True) in ("queued", "started", "scheduled", "deferred"):
        return job_id
    queue.enqueue(execute_privacy_request, str(request_id), str(actor_user_id) if actor_user_id else None,
                  job_id=job_id, job_timeout=6 * 3600, result_ttl=86400, failure_ttl=7 * 86400)
    return job_id
