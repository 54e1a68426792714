"""Nightly jobs: retention rules, subject sheets, job-run rows, run-now, and the cron registration."""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rq import SimpleWorker
from rq.cron import CronScheduler
from sqlalchemy import select, text, update

from jobs.retention import run_retention
from jobs.run_now import run_job_now
from jobs.schedule import SCHEDULE
from jobs.sheets import run_sheets
from memory_core.tenancy import linking
from memory_core.domain.errors import InvalidInput
from memory_core.domain.models import JobRun, LinkCode, Memory, MemorySource, Organization

ROOT = Path(__file__).resolve().parent.parent
NOW = dt.datetime.now(dt.timezone.utc)


def _age(s, memory, *, valid_to=None, created_at=None):
    values = {k: v for k, v in (("valid_to", valid_to), ("created_at", created_at)) if v is not None}
    s.execute(update(Memory).where(Memory.id == memory.id).values(**values))
    s.commit()


def _trace(s, org, days_old):
    s.execute(text("insert into memory_traces (org_id, block_text, created_at) values (:o, 'b', :at)"),
              {"o": org.id, "at": NOW - dt.timedelta(days=days_old)})
    s.commit()


@pytest.fixture
def aged(factory, system_session):
    s = system_session
    org = factory.org()
    ana = factory.member(org)
    old = factory.memory(org, attribute="a", value="old_version", status="superseded")
    _age(s, old, valid_to=NOW - dt.timedelta(days=400))
    recent = factory.memory(org, attribute="a", value="recent_version", status="superseded")
    _age(s, recent, valid_to=NOW - dt.timedelta(days=30))
    factory.memory(org, attribute="a", value="active")
    stale = factory.memory(org, attribute="b", value="stale_proposal", status="proposed", proposal_kind="confirmation")
    _age(s, stale, created_at=NOW - dt.timedelta(days=61))
    factory.memory(org, attribute="c", value="fresh_proposal", status="proposed", proposal_kind="confirmation")
    linking.create_link_code(s, ana.id, org.id)
    linking.create_link_code(s, ana.id, org.id)
    s.commit()
    s.execute(update(LinkCode).where(LinkCode.id == s.scalars(select(LinkCode.id)).first())
              .values(expires_at=NOW - dt.timedelta(hours=2)))
    s.commit()
    _trace(s, org, 100)
    _trace(s, org, 10)
    return org


def _values(s) -> set[str]:
    s.expire_all()
    return set(s.scalars(select(Memory.value)))


EXPECTED_LEFT = {"recent_version", "active", "fresh_proposal"}


def test_retention_removes_each_expired_kind_and_nothing_else(aged, system_session, database):
    s = system_session
    counts = run_retention("test", database=database)
    assert counts["superseded_versions"] == 1 and counts["stale_proposals"] == 1
    assert counts["expired_link_codes"] == 1 and counts["old_traces"] == 1
    assert _values(s) == EXPECTED_LEFT
    assert s.execute(text("select count(*) from link_codes")).scalar_one() == 1
    assert s.execute(text("select count(*) from memory_traces")).scalar_one() == 1
    run = s.scalar(select(JobRun).where(JobRun.job == "retention"))
    assert run.status == "ok" and run.finished_at >= run.started_at and run.triggered_by == "test"
    assert run.counts["superseded_versions"] == 1 and run.error is None


def test_an_org_may_tighten_a_retention_period(aged, system_session, database):
    s = system_session
    s.execute(update(Organization).where(Organization.id == aged.id).values(settings={"retention": {"superseded_days": 7}}))
    s.commit()
    run_retention("test", database=database)
    assert _values(s) == {"active", "fresh_proposal"}


def test_an_org_cannot_loosen_a_retention_period(aged, system_session, database):
    s = system_session
    s.execute(update(Organization).where(Organization.id == aged.id).values(
        settings={"retention": {"superseded_days": 5000, "trace_days": "junk"}}))
    s.commit()
    run_retention("test", database=database)
    assert _values(s) == EXPECTED_LEFT


def test_retention_twice_is_the_same_as_once(aged, system_session, database):
    run_retention("first", database=database)
    again = run_retention("second", database=database)
    assert {k: v for k, v in again.items() if k != "past_events_not_served"} == {
        "superseded_versions": 0, "stale_proposals": 0, "expired_link_codes": 0, "old_traces": 0, "login_attempts": 0}
    assert _values(system_session) == EXPECTED_LEFT


def test_two_retention_runs_at_once_are_safe(factory, system_session, database):
    s = system_session
    org = factory.org()
    s.execute(text("""insert into memories (org_id, level, category, subject, attribute, value, sentence, status, valid_to)
                      select :o, 'shared', 'company', 'org', 'a' || g, 'v', 's', 'superseded', now() - interval '2 years'
                      from generate_series(1, 600) g"""), {"o": org.id})
    s.commit()
    results, errors = [], []

    def run():
        try:
            results.append(run_retention("concurrent", database=database, batch=25))
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert sum(r["superseded_versions"] for r in results) == 600
    assert s.execute(text("select count(*) from memories")).scalar_one() == 0
    runs = s.scalars(select(JobRun).where(JobRun.job == "retention")).all()
    assert len(runs) == 2 and {r.status for r in runs} == {"ok"}


def _facts(factory, org, subject, n, start=0):
    return [factory.memory(org, subject=subject, category="customer", area="contacts", attribute=f"dato_{i}",
                           value=f"valor {i}") for i in range(start, start + n)]


def test_a_subject_with_many_loose_facts_gets_one_sheet_pointing_at_them(factory, system_session, database):
    s = system_session
    org = factory.org()
    acme = factory.contact(org, name="Acme S.L.")
    facts = _facts(factory, org, f"contact:{acme.id}", 8)
    _facts(factory, org, "contact:other", 7)
    counts = run_sheets("test", database=database)
    assert counts["created"] == 1
    sheet = s.scalar(select(Memory).where(Memory.category == "sheet"))
    assert sheet.subject == f"contact:{acme.id}" and sheet.level == "shared" and sheet.area == "contacts"
    assert sheet.sentence.startswith("Acme S.L.: ") and "dato 7: valor 7" in sheet.value
    sources = set(s.scalars(select(MemorySource.source_memory_id).where(MemorySource.memory_id == sheet.id)))
    assert sources == {f.id for f in facts}
    assert s.execute(text("select count(*) from memories where category <> 'sheet' and status = 'active'")).scalar_one() == 15
    assert run_sheets("again", database=database)["unchanged"] == 1


def test_a_sheet_is_rebuilt_when_one_of_its_facts_changes_and_removed_below_the_threshold(factory, system_session, database):
    s = system_session
    org = factory.org()
    facts = _facts(factory, org, "contact:x", 8)
    run_sheets("test", database=database)
    s.execute(update(Memory).where(Memory.id == facts[0].id).values(status="superseded", valid_to=NOW))
    new = factory.memory(org, subject="contact:x", category="customer", area="contacts", attribute="dato_0",
                         value="valor nuevo")
    assert run_sheets("test", database=database)["rebuilt"] == 1
    s.expire_all()
    sheet = s.scalar(select(Memory).where(Memory.category == "sheet"))
    assert "dato 0: valor nuevo" in sheet.value and "dato 0: valor 0" not in sheet.value
    sources = set(s.scalars(select(MemorySource.source_memory_id).where(MemorySource.memory_id == sheet.id)))
    assert new.id in sources and facts[0].id not in sources
    s.execute(update(Memory).where(Memory.id.in_([f.id for f in facts[1:3]])).values(status="rejected"))
    s.commit()
    assert run_sheets("test", database=database)["removed"] == 1
    assert s.scalar(select(Memory).where(Memory.category == "sheet")) is None


def test_two_sheet_runs_at_once_make_one_sheet(factory, system_session, database):
    org = factory.org()
    _facts(factory, org, "contact:y", 9)
    errors = []
    threads = [threading.Thread(target=lambda: _safe(errors, run_sheets, "c", database=database)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert system_session.execute(text("select count(*) from memories where category = 'sheet'")).scalar_one() == 1


def _safe(errors, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except Exception as exc:
        errors.append(exc)


def test_run_now_enqueues_a_run_the_worker_records(aged, system_session, redis_conn):
    from memory_core.adapters.queue import get_queue

    job_id = run_job_now("retention", "admin@example.test via console")
    queue = get_queue()
    assert queue.fetch_job(job_id) is not None
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    run = system_session.scalar(select(JobRun).where(JobRun.job == "retention"))
    assert run is not None and run.status == "ok" and run.triggered_by == "admin@example.test via console"
    with pytest.raises(InvalidInput):
        run_job_now("drop_everything", "x")


def test_nightly_jobs_are_registered_with_the_cron():
    registered = {(f.__module__, f.__name__): cron for f, cron in SCHEDULE}
    assert registered[("jobs.retention", "run_retention")] == "15 3 * * *"
    assert registered[("jobs.sheets", "run_sheets")] == "45 3 * * *"


def test_memoria_cron_starts_and_registers_the_nightly_jobs(servers, redis_conn):
    proc = subprocess.Popen([sys.executable, "-m", "app", "cron"], cwd=ROOT, env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        names: set[str] = set()
        while time.monotonic() < deadline and not {"jobs.retention.run_retention", "jobs.sheets.run_sheets"} <= names:
            time.sleep(0.5)
            assert proc.poll() is None, "memoria cron exited"
            for sched in CronScheduler.all(redis_conn):
                if sched.pid == proc.pid:
                    names = {j.func_name for j in sched._cron_jobs}
        assert {"jobs.retention.run_retention", "jobs.sheets.run_sheets"} <= names
    finally:
        proc.terminate()
        proc.wait(timeout=30)
