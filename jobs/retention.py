"""Nightly retention: superseded versions older than a year, proposals nobody decided in 60 days,
expired link codes, old memory traces, stale sign-in failures; past events are counted (the reader
stops serving them at read time).

Deletes run in small batches, each its own short transaction picking rows with FOR UPDATE SKIP
LOCKED: no long locks, a second run at the same time takes other rows (or none), and running twice
is the same as running once. An org may tighten (never loosen) each period in its settings.
The periods and the rules themselves live in `memory_core/privacy/retention.py`.
"""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Delete

from memory_core.adapters.db import SYSTEM, Database, get_database
from memory_core.domain import clock
from memory_core.domain.models import JobRun
from memory_core.privacy import retention

log = logging.getLogger(__name__)
JOB = "retention"
BATCH = 1000


@contextmanager
def job_run(database: Database, job: str, triggered_by: str,
            org_id: uuid.UUID | None = None) -> Iterator[dict[str, Any]]:
    """Record a run (of one org's rows when org_id is given): a row at start, its counts and end (or
    error) at the finish."""
    with database.unit_of_work(SYSTEM) as uow:
        run = JobRun(job=job, status="running", triggered_by=triggered_by[:200], org_id=org_id)
        uow.session.add(run)
        uow.commit()
        run_id = run.id
    counts: dict[str, Any] = {}
    error = None
    try:
        yield counts
    except Exception as exc:  # recorded, then re-raised so RQ marks the job failed too
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        raise
    finally:
        with database.unit_of_work(SYSTEM) as uow:
            run = uow.session.get(JobRun, run_id)
            run.status, run.counts, run.error = ("failed" if error else "ok"), counts, error
            run.finished_at = clock.now()
            uow.commit()


def delete_in_batches(database: Database, statement: Delete, batch: int = BATCH) -> int:
    """Run a batch delete, each batch its own short transaction, until a batch comes back short."""
    total = 0
    while True:
        with database.unit_of_work(SYSTEM) as uow:
            n = uow.session.execute(statement).rowcount
            uow.commit()
        total += n
        if n < batch:
            return total


def run_retention(triggered_by: str = "schedule", *, database: Database | None = None, batch: int = BATCH,
                  org_id: uuid.UUID | None = None) -> dict[str, int]:
    """Apply every retention rule (to one org's rows when org_id is given); returns the rows removed
    per rule (also kept on the job-run row)."""
    database = database or get_database()
    now = clock.now()  # one cut-off for the whole run, from the clock that stamped the rows
    with job_run(database, JOB, triggered_by, org_id) as counts:
        for rule in retention.rules(batch, now, org_id):
            counts[rule.name] = delete_in_batches(database, rule.statement, batch)
        with database.unit_of_work(SYSTEM) as uow:
            past = retention.past_events_not_served(now.date(), org_id)
            counts["past_events_not_served"] = uow.session.execute(past).scalar_one()
        log.info("retention: %s", counts)
    return dict(counts)
