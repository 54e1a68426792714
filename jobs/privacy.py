"""A privacy request's heavy steps, run by the worker in system scope: the preview (counts in every table), the
execution (an erasure in resumable batches, or an access request's delivery) and the export ZIP.

The console only enqueues them and shows their state (`step_state`, `export_ready`): the web process cannot
enter system scope. A failure is logged and retried (three times, after 30 s, 2 min and 10 min, by the
worker's scheduler); a refusal of the domain (the request moved on meanwhile) is final and shown to the
officer until they start another step. The export waits in Redis for an hour (it never enters the
database), and is dropped once the request is closed."""
from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from rq import Retry
from sqlalchemy.orm import Session

from memory_core.adapters.db import SYSTEM, get_database
from memory_core.domain.errors import MemoriaError
from memory_core.privacy import requests as privacy

log = logging.getLogger(__name__)

EXPORT_TTL = 3600  # seconds an export ZIP waits in Redis for the officer to download it
PENDING = ("queued", "started", "scheduled", "deferred")
RETRY_AFTER = [30, 120, 600]


def _uuid(value: str | None) -> uuid.UUID | None:
    return uuid.UUID(value) if value else None


def _export_key(request_id: uuid.UUID | str) -> str:
    return f"memoria:privacy-export:{request_id}"


def _run(step: str, request_id: str, work: Callable[[Session], dict]) -> dict:
    """One step in system scope; a domain refusal is the job's final answer (`error`), anything else is
    logged and raised, so RQ retries it."""
    try:
        with get_database().unit_of_work(SYSTEM) as uow:
            return work(uow.session)
    except MemoriaError as exc:
        log.warning("privacy %s of request %s refused: %s", step, request_id, exc)
        return {"error": getattr(exc, "template", None) or str(exc), "values": getattr(exc, "values", None) or {}}
    except Exception:
        log.exception("privacy %s of request %s failed; RQ retries it", step, request_id)
        raise


def preview_privacy_request(request_id: str, actor_user_id: str | None) -> dict:
    """Count what the request touches in every table, and store the counts on the request."""
    def work(s):
        req = privacy.preview(s, uuid.UUID(request_id), _uuid(actor_user_id))
        s.commit()
        return {"status": req.status, "totals": privacy.preview_totals(req.preview)}
    return _run("preview", request_id, work)


def execute_privacy_request(request_id: str, actor_user_id: str | None) -> dict:
    """Execute (or resume) one previewed request; progress is committed batch by batch. A closed request's
    export is dropped."""
    def work(s):
        req = privacy.execute(s, uuid.UUID(request_id), _uuid(actor_user_id))
        if req.status in privacy.CLOSED:
            _redis().delete(_export_key(request_id))
        return {"status": req.status, "progress": {k: v for k, v in req.progress.items() if k != "subject"}}
    return _run("execution", request_id, work)


def export_privacy_request(request_id: str, actor_user_id: str | None, lang: str = "en") -> dict:
    """Build the export ZIP (audited) and keep it in Redis for EXPORT_TTL seconds."""
    def work(s):
        data = privacy.export_zip(s, uuid.UUID(request_id), _uuid(actor_user_id), lang)
        s.commit()
        _redis().set(_export_key(request_id), data, ex=EXPORT_TTL)
        return {"bytes": len(data)}
    return _run("export", request_id, work)


STEPS: dict[str, Callable[..., dict]] = {"preview": preview_privacy_request, "execute": execute_privacy_request,
                                         "export": export_privacy_request}


def _job_id(step: str, request_id: uuid.UUID | str) -> str:
    return f"privacy-{step}-{request_id}"


def enqueue(step: str, request_id: uuid.UUID, actor_user_id: uuid.UUID | None, *args) -> str:
    """Queue one step of a request; a step already queued or running is not queued twice."""
    queue = _queue()
    job_id = _job_id(step, request_id)
    existing = queue.fetch_job(job_id)
    if existing is not None and existing.get_status(refresh=True) in PENDING:
        return job_id
    for other in STEPS:  # how an earlier step ended is old news once the officer moves on
        done = queue.fetch_job(_job_id(other, request_id))
        if done is not None and done.get_status(refresh=True) not in PENDING:
            done.delete()
    queue.enqueue(STEPS[step], str(request_id), str(actor_user_id) if actor_user_id else None, *args,
                  job_id=job_id, job_timeout=6 * 3600, result_ttl=86400, failure_ttl=7 * 86400,
                  retry=Retry(max=len(RETRY_AFTER), interval=RETRY_AFTER))
    return job_id


def enqueue_execution(request_id: uuid.UUID, actor_user_id: uuid.UUID | None) -> str:
    return enqueue("execute", request_id, actor_user_id)


@dataclass(frozen=True)
class StepState:
    """What the console says about a step: waiting or running, or how its last run ended badly."""
    pending: bool = False
    failed: bool = False
    error: str | None = None  # the domain's refusal: its English template (web.language translates it) ...
    values: dict | None = None  # ... and the values it is filled with


def step_state(step: str, request_id: uuid.UUID) -> StepState:
    job = _queue().fetch_job(_job_id(step, request_id))
    if job is None:
        return StepState()
    status = job.get_status(refresh=True)
    if status in PENDING:
        return StepState(pending=True)
    if status == "failed":
        return StepState(failed=True)
    result = job.return_value()
    if isinstance(result, dict) and result.get("error"):
        return StepState(error=result["error"], values=result.get("values") or {})
    return StepState()


def export_ready(request_id: uuid.UUID) -> bool:
    return bool(_redis().exists(_export_key(request_id)))


def take_export(request_id: uuid.UUID) -> bytes | None:
    """The export ZIP, while it waits (it stays until it expires or the request closes)."""
    return _redis().get(_export_key(request_id))


def _queue():
    from memory_core.adapters.queue import get_queue

    return get_queue()


def _redis():
    from memory_core.adapters.queue import get_redis

    return get_redis()
