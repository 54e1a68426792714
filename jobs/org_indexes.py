"""The org index job: gives each big organization its own partial HNSW and GIN indexes on memories,
and takes them away when it shrinks (memory_core/reading/org_indexes.py says why and how they are used).

Counting runs in system scope as the worker role; the DDL needs the table's owner and runs outside any
transaction (CREATE/DROP INDEX CONCURRENTLY: the table stays writable while an index builds), on the
owner's URL (DATABASE_URL, or the embedded server's). A build that failed leaves an invalid index: the
next run drops it and builds it again. Nightly, and `memoria` runs it on demand; safe to run twice.
"""
from __future__ import annotations

import logging

from sqlalchemy import create_engine, func, select

from memory_core.adapters.config import get_settings
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls
from memory_core.domain import clock
from memory_core.domain.models import JobRun, Memory
from memory_core.reading import org_indexes

log = logging.getLogger(__name__)
JOB = "org_indexes"


def refresh_org_indexes(settings=None, *, big: int = org_indexes.BIG_ORG_MEMORIES,
                        small: int = org_indexes.SMALL_ORG_MEMORIES) -> dict[str, int]:
    """Create the indexes of orgs with at least `big` active memories, drop those of orgs below `small`:
    counts of created, dropped and kept orgs."""
    settings = settings or get_settings()
    db = get_database(settings)
    with db.unit_of_work(SYSTEM) as uow:
        sizes = dict(uow.session.execute(
            select(Memory.org_id, func.count()).where(Memory.org_id.isnot(None), Memory.status == "active")
            .group_by(Memory.org_id).having(func.count() >= min(big, small))).all())
        have = org_indexes.existing(uow.session)
    create = [org for org, n in sizes.items() if n >= big and not (
        len(have.get(org, {})) == 2 and all(have[org].values()))]
    drop = [org for org in have if sizes.get(org, 0) < small]
    counts = {"created": 0, "dropped": 0, "kept": len([o for o in have if o not in drop])}
    engine = create_engine(resolve_urls(settings).owner, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            for org in drop + create:
                if org in create and have.get(org):
                    # A half-built (invalid) index from a failed run: build it again from nothing.
                    for stmt in org_indexes.drop_statements(org):
                        conn.exec_driver_sql(stmt)
                statements = org_indexes.drop_statements(org) if org in drop else org_indexes.create_statements(org)
                for stmt in statements:
                    conn.exec_driver_sql(stmt)
                counts["dropped" if org in drop else "created"] += 1
                log.info("org indexes of %s: %s", org, "dropped" if org in drop else "created")
    finally:
        engine.dispose()
    org_indexes.forget_cache()
    with db.unit_of_work(SYSTEM) as uow:
        uow.session.add(JobRun(job=JOB, status="ok", finished_at=clock.now(), counts=counts))
        uow.commit()
    return counts


def run_org_indexes() -> dict[str, int]:
    """The nightly RQ job."""
    return refresh_org_indexes()
