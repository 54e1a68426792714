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
_REUSED_PLANS = text("select set_config('plan_cache_mode', 'auto', true)")


def custom_plans(session: Session) -> None:
    """The rest of the transaction plans every statement for its own values, prepared or not.

    A prepared statement that has run five times may get PostgreSQL's generic plan, one for all values: for a
    principal's reads of memories that plan ignores who is asking (which org, which partial index, how many
    rows are theirs), and at 1M memories it made a typical principal's `search` p50 36 → 222 ms
    (bench/scale.py, 2026-12-02). Writes and small lookups keep the generic plans that save their planning."""
    session.execute(_CUSTOM_PLANS)


def reused_plans(session: Session) -> None:
    """The rest of the transaction leaves PostgreSQL its own choice again (after `custom_plans`): a prepared
    statement may run on its generic plan, planned once. For reads whose plan does not depend on who asks,
    such as rows read by a list of ids (one primary key lookup each, the ownership filter applied to those
    rows): under row security planning them costs several times running them (the block's neighbours read,
    ~10 ms to plan and ~1 ms to run for a big org's principal, 2026-12-02)."""
    session.execute(_REUSED_PLANS)


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
