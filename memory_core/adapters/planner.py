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

from sqlalchemy import text
from sqlalchemy.orm import Session

_SORT_OFF = text("select current_setting('enable_sort'), set_config('enable_sort', 'off', true)")
_SORT_BACK = text("select set_config('enable_sort', :was, true)")
_DEPTH = "memoria.sorting_disabled"
_CUSTOM_PLANS = text("select set_config('plan_cache_mode', 'force_custom_plan', true)")
_GENERIC_ON = text("select current_setting('plan_cache_mode'),"
                   " set_config('plan_cache_mode', 'force_generic_plan', true)")
_GENERIC_BACK = text("select set_config('plan_cache_mode', :was, true)")
_GENERIC_DEPTH = "memoria.generic_plan"


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


@contextmanager
def generic_plan(session: Session) -> Iterator[None]:
    """Statements run inside keep PostgreSQL's generic plan once the driver has prepared them (psycopg does after
    five runs on a connection), instead of being planned again at every run; the setting is put back after.

    Row security adds each policy of a table to every reference to it, and a policy that reads another table
    (audit_log's ladder arm reads memories, whose policies read trace_items...) makes a statement naming a
    table several times cost tens of milliseconds to plan: the audit log's filter lists planned in 35-85 ms and
    ran in 5 ms (2026-12-02, 200k memories, load 7-11). PostgreSQL's own choice keeps planning them, since row
    security's estimates make the generic plan look dear. Only for statements whose best plan does not depend
    on the values bound (an index probe by org), and whose partial indexes' predicates are written as literals,
    not bound parameters (a generic plan cannot match `status = $1` to `where status = 'proposed'`)."""
    if session.info.get(_GENERIC_DEPTH):  # an outer window holds it already
        yield
        return
    was = session.execute(_GENERIC_ON).scalar_one()
    session.info[_GENERIC_DEPTH] = 1
    try:
        yield
    finally:
        session.info[_GENERIC_DEPTH] = 0
        if session.in_transaction():  # else a commit inside ended the setting with its transaction
            session.execute(_GENERIC_BACK, {"was": was})
