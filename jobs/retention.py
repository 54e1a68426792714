"""Nightly retention: superseded versions older than a year, proposals nobody decided in 60 days,
expired link codes, old memory traces, stale sign-in failures; past events are counted (the reader
stops serving them at read time).

Deletes run in small batches, each its own short transaction picking rows with FOR UPDATE SKIP
LOCKED: no long locks, a second run at the same time takes other rows (or none), and running twice
is the same as running once. An org may tighten (never loosen) each period in its settings.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from sqlalchemy import text

from memory_core.domain import clock
from memory_core.adapters.db import SYSTEM, Database, get_database
from memory_core.domain.models import JobRun

log = logging.getLogger(__name__)
JOB = "retention"
BATCH = 1000
SUPERSEDED_DAYS = 365  # a superseded version is restorable for a year
PROPOSAL_DAYS = 60  # a proposal nobody decided in 60 days is dropped
TRACE_DAYS = 90  # memory traces (what went into each prompt) are kept this long by default
LINK_CODE_GRACE = dt.timedelta(hours=1)  # expired codes stay an hour: the per-user code limit counts them
LOGIN_ATTEMPT_DAYS = 1  # failed sign-ins only matter for the 15-minute rate limit


def _days(setting: str, var: str) -> str:
    """The period in days: the platform default, or the org's own (settings["retention"][key], as the
    console's settings page stores it) when shorter and a well-formed integer."""
    value = f"o.settings #>> '{{retention,{setting}}}'"
    return (f"make_interval(days => least(:{var}, coalesce(case when {value} ~ '^[0-9]{{1,5}}$' "
            f"then ({value})::int end, :{var})))")


# rule -> (table, pick query returning ids to delete; :batch and the day parameters bound). {org} is
# empty for a platform-wide run, else the condition that keeps the run to one org (:org_id).
RULES: dict[str, tuple[str, str]] = {
    "superseded_versions": ("memories", f"""
        select m.id from memories m left join organizations o on o.id = m.org_id
        where m.status = 'superseded' and m.valid_to < :now - {_days('superseded_days', 'superseded_days')} {{org}}
        order by m.valid_to limit :batch for update of m skip locked"""),
    "stale_proposals": ("memories", f"""
        select m.id from memories m left join organizations o on o.id = m.org_id
        where m.status = 'proposed' and m.created_at < :now - {_days('proposal_days', 'proposal_days')} {{org}}
        order by m.created_at limit :batch for update of m skip locked"""),
    "expired_link_codes": ("link_codes", """
        select id from link_codes where expires_at < :now - make_interval(secs => :link_grace) {org}
        limit :batch for update skip locked"""),
    "old_traces": ("memory_traces", f"""
        select t.id from memory_traces t left join organizations o on o.id = t.org_id
        where t.created_at < :now - {_days('trace_days', 'trace_days')} {{org}}
        order by t.created_at limit :batch for update of t skip locked"""),
    # Sign-in failures belong to no org: only a platform-wide run removes them.
    "login_attempts": ("login_attempts", """
        select id from login_attempts where at < :now - make_interval(days => :login_days)
        limit :batch for update skip locked"""),
}


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


def delete_in_batches(database: Database, table: str, pick: str, params: dict[str, Any], batch: int = BATCH) -> int:
    """Delete what `pick` selects, a batch per short transaction, until nothing is left."""
    total = 0
    sql = text(f"delete from {table} where id in ({pick})")
    while True:
        with database.unit_of_work(SYSTEM) as uow:
            n = uow.session.execute(sql, {**params, "batch": batch}).rowcount
            uow.commit()
        total += n
        if n < batch:
            return total


def run_retention(triggered_by: str = "schedule", *, database: Database | None = None, batch: int = BATCH,
                  superseded_days: int = SUPERSEDED_DAYS, proposal_days: int = PROPOSAL_DAYS,
                  trace_days: int = TRACE_DAYS, org_id: uuid.UUID | None = None) -> dict[str, int]:
    """Apply every retention rule (to one org's rows when org_id is given); returns the rows removed
    per rule (also kept on the job-run row)."""
    database = database or get_database()
    now = clock.now()  # one cut-off for the whole run, from the clock that stamped the rows
    params = {"superseded_days": superseded_days, "proposal_days": proposal_days, "trace_days": trace_days,
              "link_grace": LINK_CODE_GRACE.total_seconds(), "login_days": LOGIN_ATTEMPT_DAYS, "now": now,
              "org_id": org_id}
    with job_run(database, JOB, triggered_by, org_id) as counts:
        for rule, (table, pick) in RULES.items():
            if org_id is not None and "{org}" not in pick:
                continue
            alias = "m." if " m " in pick else "t." if " t " in pick else ""
            pick = pick.replace("{org}", f"and {alias}org_id = :org_id" if org_id is not None else "")
            used = {k: v for k, v in params.items() if f":{k}" in pick}
            counts[rule] = delete_in_batches(database, table, pick, used, batch)
        with database.unit_of_work(SYSTEM) as uow:
            # Not deleted: a past event is history. The reader stops serving it; this counts them.
            counts["past_events_not_served"] = uow.session.execute(text(
                "select count(*) from memories where status = 'active' and category = 'event' "
                "and event_date < :today and (cast(:org_id as uuid) is null or org_id = :org_id)"),
                {"today": now.date(), "org_id": org_id}).scalar_one()
        log.info("retention: %s", counts)
    return dict(counts)
