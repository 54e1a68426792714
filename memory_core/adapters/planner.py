"""Planner settings for one statement.

Row security adds its policy (an OR over scopes, compared with settings the planner cannot see) to every
read, and the planner then estimates a handful of rows where there are thousands. For "the first N in
this order" it then believes no index scan would stop early and sorts everything the filter lets through.
Where an index in the right order exists, `sorting_disabled` makes the planner take it for one
statement: the same rows, read in order and cut at the limit.

Nested uses on one session cost nothing: only the outermost sets the setting and puts it back, so a caller
may run several such statements in one window for the price of one pair of round trips.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event, text
from sqlalchemy.orm import Session

_SORT_OFF = text("select current_setting('enable_sort'), set_config('enable_sort', 'off', true)")
_SORT_BACK = text("select set_config('enable_sort', :was, true)")
_DEPTH = "memoria.sorting_disabled"
_CUSTOM_PLANS = text("select set_config('plan_cache_mode', 'force_custom_plan', true)")
_GENERIC_PLANS = text("select set_config('plan_cache_mode', 'force_generic_plan', true)")
_AUTO_PLANS = text("select set_config('plan_cache_mode', 'auto', true)")
_PLANNED_ONCE = "memoria.planned_once"
# Statements a connection keeps prepared once `planned_once` asked for it: more than the worker's distinct
# statements (its own ~50, and a SAVEPOINT and a RELEASE text for each of up to 33 savepoints of a batch), so
# psycopg's least-recently-used cache never evicts one the next batch runs again (psycopg's default is 100;
# a batch cycling through more than that would miss every time).
PREPARED_MAX = 500


def custom_plans(session: Session) -> None:
    """The rest of the transaction plans every statement for its own values, prepared or not.

    A prepared statement that has run five times may get PostgreSQL's generic plan, one for all values: for a
    principal's reads of memories that plan ignores who is asking (which org, which partial index, how many
    rows are theirs), and at 1M memories it made a typical principal's `search` p50 36 → 222 ms
    (bench/scale.py, 2026-12-02). Writes and small lookups keep the generic plans that save their planning."""
    session.execute(_CUSTOM_PLANS)


@contextmanager
def sorting_disabled(session: Session) -> Iterator[None]:
    """Statements run inside prefer plans without a sort (one is still used where none can be avoided);
    the setting is put back after, within the transaction."""
    depth = session.info.get(_DEPTH, 0)
    if depth:
        session.info[_DEPTH] = depth + 1
        try:
            yield
        finally:
            session.info[_DEPTH] = depth
        return
    was = session.execute(_SORT_OFF).scalar_one()
    session.info[_DEPTH] = 1
    try:
        yield
    finally:
        session.info[_DEPTH] = 0
        session.execute(_SORT_BACK, {"was": was})


def planned_once(session: Session) -> None:
    """The rest of the transaction plans each statement once per connection: PostgreSQL's generic plan
    (`plan_cache_mode = force_generic_plan`) on a connection that prepares a statement at its first run.

    For the outbox worker's batches. psycopg prepares a statement at its sixth run and PostgreSQL then plans it
    for its values five more times before it settles, after comparing them, on the generic plan it had kept
    for every one of the worker's statements anyway: eleven plans per statement and connection, where row
    security's policies (expanded into every statement naming a table) make a plan cost 1-30 ms, several
    times running it. A drain job's new connections paid that for each of its ~50 statements (1.6 s of
    PostgreSQL's CPU in a 1,000-message job, 35% of its time in PostgreSQL). The connection keeps preparing at
    the first run (it serves the same statements at the next batch)."""
    raw = session.connection().connection.driver_connection
    raw.prepare_threshold = 0
    raw.prepared_max = max(raw.prepared_max, PREPARED_MAX)
    session.execute(_GENERIC_PLANS)
    session.info[_PLANNED_ONCE] = True


@contextmanager
def generic_plans(session: Session) -> Iterator[None]:
    """Statements run inside get PostgreSQL's generic plan (within the transaction; free inside `planned_once`).
    A failure inside rolls the setting back with its transaction or savepoint."""
    if session.info.get(_PLANNED_ONCE):
        yield
        return
    session.execute(_GENERIC_PLANS)
    yield
    session.execute(_AUTO_PLANS)


@event.listens_for(Session, "after_transaction_end")
def _forget_planned_once(session: Session, transaction) -> None:
    if transaction.parent is None:  # the transaction, not a savepoint, ended: so did its settings
        session.info.pop(_PLANNED_ONCE, None)
