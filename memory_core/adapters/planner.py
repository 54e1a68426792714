"""Planner settings for a window of statements.

Row security adds its policy (an OR over scopes, compared with settings the planner cannot see) to every
read, and the planner then estimates a handful of rows where there are thousands. For "the first N in
this order" it then believes no index scan would stop early and sorts everything the filter lets through.
Where an index in the right order exists, `sorting_disabled` makes the planner take it for one
statement: the same rows, read in order and cut at the limit.

A statement the driver has prepared may run PostgreSQL's generic plan, one for all values. For most of a
turn's reads that plan is right and saves planning, which is most of their cost under row security's
policies (`generic_plans` takes it for a principal's block and search); for matching text it is not, and
`custom_plans` makes those plan for their own values.

Nested windows of one setting on one session cost nothing: only the outermost sets it and puts it back, so a
caller may run several such statements in one window for the price of one pair of round trips.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import text
from sqlalchemy.orm import Session

_SET = text("select current_setting(:name), set_config(:name, :value, true)")
_BACK = text("select set_config(:name, :was, true)")


@contextmanager
def _window(session: Session, name: str, value: str) -> Iterator[None]:
    """`name` is `value` for the statements run inside, within the transaction, then what it was."""
    depth_key = f"memoria.window.{name}"
    depth = session.info.get(depth_key, 0)
    if depth:
        session.info[depth_key] = depth + 1
        try:
            yield
        finally:
            session.info[depth_key] = depth
        return
    was = session.execute(_SET, {"name": name, "value": value}).scalar_one()
    session.info[depth_key] = 1
    try:
        yield
    finally:
        session.info[depth_key] = 0
        session.execute(_BACK, {"name": name, "was": was})


def sorting_disabled(session: Session) -> AbstractContextManager[None]:
    """Statements run inside prefer plans without a sort (one is still used where none can be avoided)."""
    return _window(session, "enable_sort", "off")


def generic_plans(session: Session) -> None:
    """The rest of the transaction runs a kept statement's generic plan from its first run (but for windows of
    `custom_plans`).

    Most of a principal's turn costs PostgreSQL planning, not running: row security's policies make every
    statement's plan large (hundreds of subplans). A prepared statement's generic plan is made once per
    connection. At 1M memories, for a typical principal and for the big org, the block's reads ran 3-15x faster
    on it (profile 1.2 vs 7.7 ms, neighbours 0.8 vs 13.8, subjects 0.5 vs 4.9, vectors 0.6 vs 3.0; the big
    org's vectors 4.8 vs 16.3), but PostgreSQL's own choice (after five runs it compares estimated costs) kept
    planning the profile and the vector reads every time (bench/scale.py and the per-statement comparison of
    2026-12-02)."""
    session.execute(_SET, {"name": "plan_cache_mode", "value": "force_generic_plan"})


def custom_plans(session: Session) -> AbstractContextManager[None]:
    """Statements run inside plan for their own values, prepared or not.

    A kept statement that matches query text (full text, trigrams, IDs) must not run a generic plan: blind to
    the words and to who asks, at 1M memories it read every row holding a common word and made a typical
    principal's full-text statement 5-40x slower (217 vs 10 ms p50) and the trigram one 10x. The rest of a
    turn (profile, neighbours, subjects, vectors, dates) ran 3-15x faster on its generic plan, which skips
    planning the row-security policies (bench/scale.py and the per-statement comparison of 2026-12-02)."""
    return _window(session, "plan_cache_mode", "force_custom_plan")
