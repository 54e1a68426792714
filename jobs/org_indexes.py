"""The org index job: gives each big organization its own partial HNSW and GIN indexes on memories (and on
messages, counted apart), and takes them away when it shrinks (memory_core/reading/org_indexes.py says why
and how they are used).

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
from memory_core.domain.models import JobRun, Memory, Message
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
    create = [org for org, n in sizes.items() if n >= big and not (
        len(have.get(org, {})) == 2 and all(have[org].values()))]
    drop = [org for org in have if sizes.get(org, 0) < small]
    counts = {"created": 0, "dropped": 0, "kept": len([o for o in have if o not in drop])}
    owners_create = [u for u, n in owner_sizes.items() if n >= big_owner and not (
        len(have_owners.get(u, {})) == 2 and all(have_owners[u].values()))]
    owners_drop = [u for u in have_owners if owner_sizes.get(u, 0) < small_owner]
    counts |= {"owners_created": 0, "owners_dropped": 0,
               "owners_kept": len([u for u in have_owners if u not in owners_drop and u not in owners_create])}
    messages_create = [o for o, n in message_sizes.items() if n >= big_messages and not (
        len(have_messages.get(o, {})) == 2 and all(have_messages[o].values()))]
    messages_drop = [o for o in have_messages if message_sizes.get(o, 0) < small_messages]
    counts |= {"messages_created": 0, "messages_dropped": 0,
               "messages_kept": len([o for o in have_messages if o not in messages_drop and o not in messages_create])}
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
            for user in owners_drop + owners_create:
                dropping = user in owners_drop
                statements = org_indexes.owner_drop_statements(user)
                if not dropping:
                    # (an invalid index from a failed build is dropped first; a valid one is kept, and the one
                    # missing, such as the text index of a user indexed before it existed, is built)
                    invalid = not all(have_owners.get(user, {}).values())
                    statements = (statements if invalid else []) + org_indexes.owner_create_statements(user)
                for stmt in statements:
                    conn.exec_driver_sql(stmt)
                counts["owners_dropped" if dropping else "owners_created"] += 1
                log.info("personal indexes of user %s: %s", user, "dropped" if dropping else "created")
            for org in messages_drop + messages_create:
                dropping = org in messages_drop
                statements = org_indexes.message_drop_statements(org)
                if not dropping:
                    # An invalid index from a failed build is dropped first; a valid one is kept.
                    invalid = not all(have_messages.get(org, {}).values())
                    statements = (statements if invalid else []) + org_indexes.message_create_statements(org)
                for stmt in statements:
                    conn.exec_driver_sql(stmt)
                counts["messages_dropped" if dropping else "messages_created"] += 1
                log.info("message indexes of org %s: %s", org, "dropped" if dropping else "created")
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
