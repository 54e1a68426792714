"""Run a nightly job now, from the console's Jobs page: enqueued on the worker's queue like the cron does."""
from __future__ import annotations

import uuid
from collections.abc import Callable

from jobs.retention import run_retention
from jobs.sheets import run_sheets
from memory_core.domain.errors import InvalidInput

# The jobs an admin may start by hand; each takes `triggered_by`, recorded on its job-run row.
RUNNABLE: dict[str, Callable[..., object]] = {"retention": run_retention, "sheets": run_sheets}


def run_job_now(job_name: str, triggered_by: str, org_id: uuid.UUID | None = None) -> str:
    """Enqueue one run of `job_name` (on one org's rows when org_id is given); returns the RQ job id."""
    from memory_core.adapters.queue import get_queue

    func = RUNNABLE.get(job_name)
    if func is None:
        raise InvalidInput(f"Unknown job {job_name!r}; one of: {', '.join(sorted(RUNNABLE))}.", field="job")
    job = get_queue().enqueue(func, triggered_by=triggered_by[:200], org_id=org_id, job_timeout=3600, result_ttl=86400,
                              failure_ttl=7 * 86400)
    return job.id
