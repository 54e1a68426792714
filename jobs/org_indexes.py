"""The org index job: gives each big organization its own partial HNSW and GIN indexes on memories (and on
messages, counted apart), and takes them away when it shrinks (memory_core/reading/org_indexes.py says why
and how they are used).

Counting runs in system scope as the worker role; the DDL needs the table's owner and runs outside any
transaction (CREATE/DROP INDEX CONCURRENTLY: the table stays writable while an index builds), on the
owner's URL (DATABASE_URL, or the embedded server's). A build that failed leaves an invalid index: the
next run drops it and builds it again. Then each indexed org's common words are listed again (and those of an org
without indexes cleared). Nightly, and `memoria` runs it on demand; safe to run twice.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import create_engine, func, select, text, update
from sqlalchemy.orm import Session

from memory_core.adapters.config import get_settings
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls
from memory_core.domain import clock
from memory_core.domain.models import JobRun, Memory, Message, Organization
from memory_core.reading import org_indexes

log = logging.getLogger(__name__)
JOB = "org_indexes"


def refresh_org_indexes(settings=None, *, big: int = org_indexes.BIG_ORG_MEMORIES,
                        small: int = org_indexes.SMALL_ORG_MEMORIES, big_owner: int = org_indexes.BIG_OWNER_MEMORIES,
                        small_owner: int = org_indexes.SMALL_OWNER_MEMORIES,
                        big_messages: int = org_indexes.BIG_ORG_MESSAGES,
                        small_messages: int = org_indexes.SMALL_ORG_MESSAGES) -> dict[str, int]:
    """Create the indexes of orgs with at least `big` active memories, drop those of orgs below `small`; the
    same for users' personal memories (`big_owner`, `small_owner`) and for orgs' messages (`big_messages`,
    `small_messages`): counts of created, dropped and kept orgs, of users (owners_*) and of orgs' message
    indexes (messages_*)."""
    settings = settings or get_settings()
    db = get_database(settings)
    with db.unit_of_work(SYSTEM) as uow:
        sizes = dict(uow.session.execute(
            select(Memory.org_id, func.count()).where(Memory.org_id.isnot(None), Memory.status == "active")
            .group_by(Memory.org_id).having(func.count() >= min(big, small))).all())
        have = org_indexes.existing(uow.session)
        owner_sizes = dict(uow.session.execute(
            select(Memory.owner_user_id, func.count()).where(
                Memory.owner_user_id.isnot(None), Memory.level == "personal", Memory.status == "active")
            .group_by(Memory.owner_user_id).having(func.count() >= min(big_owner, small_owner))).all())
        have_owners = org_indexes.existing_owners(uow.session)
        message_sizes = dict(uow.session.execute(
            select(Message.org_id, func.count()).where(Message.org_id.isnot(None), Message.deleted_at.is_(None))
            .group_by(Message.org_id).having(func.count() >= min(big_messages, small_messages))).all())
        have_messages = org_indexes.existing_message_orgs(uow.session)
    plans = [_plan("", sizes, have, big, small, org_indexes.create_statements, org_indexes.drop_statements),
             _plan("owners_", owner_sizes, have_owners, big_owner, small_owner,
                   org_indexes.owner_create_statements, org_indexes.owner_drop_statements),
             _plan("messages_", message_sizes, have_messages, big_messages, small_messages,
                   org_indexes.message_create_statements, org_indexes.message_drop_statements)]
    counts: dict[str, int] = {}
    engine = create_engine(resolve_urls(settings).owner, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            for prefix, kept, steps in plans:
                counts |= {f"{prefix}created": 0, f"{prefix}dropped": 0, f"{prefix}kept": kept}
                for key, statements, action in steps:
                    for stmt in statements:
                        conn.exec_driver_sql(stmt)
                    counts[f"{prefix}{action}"] += 1
                    log.info("%s indexes of %s: %s", prefix.rstrip("_") or "org", key, action)
    finally:
        engine.dispose()
    org_indexes.forget_cache()
    with db.unit_of_work(SYSTEM) as uow:
        counts["common_words"] = _list_common_words(uow.session, sizes)
        uow.session.add(JobRun(job=JOB, status="ok", finished_at=clock.now(), counts=counts))
        uow.commit()
    return counts


def _list_common_words(session: Session, sizes: dict) -> int:
    """List the common words of every org with its own indexes (reading/org_indexes.py), and clear those of the
    orgs without; how many orgs have theirs listed."""
    indexed = org_indexes.indexed_orgs(session)
    for org in indexed:
        session.execute(text(org_indexes.common_words_statement(org, sizes.get(org, 0))))
    session.execute(update(Organization).where(Organization.common_words.isnot(None),
                                               Organization.id.notin_(indexed)).values(common_words=None))
    return len(indexed)


def run_org_indexes() -> dict[str, int]:
    """The nightly RQ job."""
    return refresh_org_indexes()


def _plan(prefix: str, sizes: dict, have: dict[object, dict[str, bool]], big: int, small: int,
          create: Callable[[object], list[str]], drop: Callable[[object], list[str]]
          ) -> tuple[str, int, list[tuple[object, list[str], str]]]:
    """One kind of index (an org's, a user's personal, an org's messages): (prefix, how many are kept, and for
    each org or user to change, its statements and "created" or "dropped"). A key below `small` loses its
    indexes; one at `big` or more gets those it lacks, an invalid one (a failed build's) dropped first and built
    again; a valid one is kept (CREATE ... IF NOT EXISTS)."""
    steps = [(key, drop(key), "dropped") for key in have if sizes.get(key, 0) < small]
    for key, n in sizes.items():
        if n >= big and not (len(have.get(key, {})) == 2 and all(have[key].values())):
            invalid = not all(have.get(key, {}).values())
            steps.append((key, (drop(key) if invalid else []) + create(key), "created"))
    changed = {key for key, _, _ in steps}
    return prefix, len([key for key in have if key not in changed]), steps
