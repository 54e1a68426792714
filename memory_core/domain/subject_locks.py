"""Subject locks: two writers learning about one subject at once take turns, and never deadlock.

A fact is written under a lock on its subject key (org, level, owner, subject: the rows the one-active-row
index compares), a transaction-scoped advisory lock taken before the subject's active rows are read:
without it both writers see no active row and the second trips the index instead of superseding.

The worker learns a whole batch of messages in one transaction, so it may hold several subjects at once,
and two batches that meet the same subjects in opposite orders would each wait for the other (PostgreSQL
then kills one with "deadlock detected"). A session that `step_aside` was called on never waits while it
holds a subject: a lock it cannot take at once raises `SubjectBusy`, the worker rolls back that message's
savepoint (which releases what the message took) and leaves it, and the rest of its conversation, for its
next claim. The first subject of a transaction is waited for, as it holds none anyone waits for, so the
oldest message of a claim always goes through. No wait ever happens while holding: no cycle can form.
"""
from __future__ import annotations

import uuid

from sqlalchemy import String, bindparam, event, func, literal_column, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from memory_core.adapters.rows import rows as read_rows
from memory_core.domain.errors import SubjectBusy

_HELD = "memoria.subject_locks.held"
_STEP_ASIDE = "memoria.subject_locks.step_aside"


def subject_key(org_id: uuid.UUID | None, level: str, owner_user_id: uuid.UUID | None, owner_phone: str | None,
                subject: str) -> str:
    """The lock key of a fact's subject; a personal fact follows its owner across orgs, so it has no org."""
    org = org_id if org_id is not None and level != "personal" else ""
    return f"{org}:{level}:{owner_user_id or owner_phone or ''}:{subject}"


def step_aside(session: Session) -> None:
    """From now on this session never waits for a subject while it holds another: it raises SubjectBusy."""
    session.info[_STEP_ASIDE] = True


def holds_subjects(session: Session) -> bool:
    """This session steps aside and holds a subject (it may have been released by a savepoint rollback
    since: over-reporting only makes it step aside once too often)."""
    return bool(session.info.get(_STEP_ASIDE) and session.info.get(_HELD))


# Built once, run on the session's connection: the worker takes a lock for every fact, and building the
# statement, its cache key and the ORM's execution cost more than the lock (~40% of the ladder's read of a subject).
_LOCK_ID = func.hashtextextended(bindparam("key", type_=String), literal_column("0"))
_WAIT = select(func.pg_advisory_xact_lock(_LOCK_ID))
_TRY = select(func.pg_try_advisory_xact_lock(_LOCK_ID))


def lock_subject(session: Session, key: str) -> None:
    """Hold the subject `key` until the transaction ends (or its savepoint rolls back). Taking a lock this
    transaction holds again is free and never waits."""
    if holds_subjects(session):
        if not read_rows(session, _TRY, {"key": key}).scalar():
            raise SubjectBusy("another worker is writing about this subject")
    else:
        read_rows(session, _WAIT, {"key": key})
    session.info.setdefault(_HELD, set()).add(key)


@event.listens_for(Session, "after_transaction_end")
def _forget_held(session: Session, transaction) -> None:
    if transaction.parent is None:  # the transaction, not a savepoint, ended: PostgreSQL released them all
        session.info.pop(_HELD, None)


def nowait(session: Session) -> bool:
    """Whether row locks taken now must not wait (FOR UPDATE NOWAIT): see `holds_subjects`."""
    return holds_subjects(session)


def is_busy(exc: BaseException) -> bool:
    """A SubjectBusy, or a FOR UPDATE NOWAIT that found a row locked."""
    if isinstance(exc, SubjectBusy):
        return True
    return isinstance(exc, OperationalError) and getattr(exc.orig, "sqlstate", None) == "55P03"
