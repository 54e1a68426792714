"""Compaction after the reply: fold the older part of one conversation into its summary."""
from __future__ import annotations

import logging
import uuid

from memory_core.domain import clock
from memory_core.reading.compaction import compact_conversation
from memory_core.adapters.db import SYSTEM, get_database
from memory_core.domain.models import JobRun

log = logging.getLogger(__name__)
JOB = "compaction"


def compact_conversation_job(conversation_id: str) -> dict:
    """Compact one conversation in its own transaction; record the run. Safe to run twice."""
    db = get_database()
    with db.unit_of_work(SYSTEM) as uow:
        result = compact_conversation(uow.session, uuid.UUID(conversation_id))
        report = result.report
        counts = {"folded_messages": result.folded_messages, "kept_tokens": result.kept_tokens,
                  "added": len(report.added) if report else 0, "changed": len(report.changed) if report else 0,
                  "retired": len(report.retired) if report else 0, "rejected": len(report.rejected) if report else 0}
        uow.session.add(JobRun(job=JOB, status="ok", finished_at=clock.now(), counts=counts,
                               triggered_by=f"conversation {conversation_id}"))
        uow.commit()
    return {"compacted": result.compacted, "reason": result.reason, **counts}


def enqueue_compaction(conversation_id: uuid.UUID) -> str:
    """Queue a compaction for after the reply; one queued job per conversation at a time."""
    from memory_core.adapters.queue import get_queue

    queue = get_queue()
    job_id = f"compact-{conversation_id}"
    existing = queue.fetch_job(job_id)
    if existing is not None and existing.get_status(refresh=True) in ("queued", "scheduled", "deferred"):
        return job_id
    queue.enqueue(compact_conversation_job, str(conversation_id), job_id=job_id, retry=None,
                  result_ttl=3600, failure_ttl=7 * 86400)
    return job_id
