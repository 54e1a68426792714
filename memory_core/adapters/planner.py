"""Planner settings for a window of statements.

Row security adds its policy (an OR over scopes, compared with settings the planner cannot see) to every
read, and the planner then estimates a handful of rows where there are thousands. For "the first N in
this order" it then believes no index scan would stop early and sorts everything the filter lets through.
Where an index in the right order exists, `sorting_disabled` makes the planner take it for one
statement: the same rows, read in order and cut at the limit.

A statement the driver has prepared may run PostgreSQL's generic plan, one for all values. For most of a
turn's reads that plan is right and saves planning, which is most of their cost under row security's
policies (`planned_once` takes it for a principal's block and search and the worker's batches); for matching
text it is not, and `custom_plans` makes those plan for their own values.

A window's settings go to PostgreSQL with the first statement run inside it, and its end with the next statement
after it (adapters.tx_settings): a window costs no round trip of its own, and nested windows of one setting nothing.
"""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from sqlalchemy import String, event, false, func, literal_column
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters import tx_settings

_PLANNED_ONCE = "memoria.planned_once"
# How many runs psycopg waits before preparing a statement (its own default), which a connection is given back
# when it returns to its pool (`planned_once` prepares at the first run until then).
PREPARE_THRESHOLD = 5
# Statements a worker batch's connection keeps prepared (`planned_once(..., keep=PREPARED_MAX)`): more than the
# worker's distinct statements (its own ~50, and a SAVEPOINT and a RELEASE text for each of up to 33 savepoints
# of a batch), so psycopg's least-recently-used cache never evicts one the next batch runs again (psycopg's
# default is 100; a batch cycling through more than that would miss every time).
PREPARED_MAX = 500
# A session whose every transaction keeps generic plans from its BEGIN (`kept_plans`): the scope's statement
# sets plan_cache_mode with the scope (adapters.db.set_scope), at no round trip of its own.
KEPT_PLANS = "memoria.kept_plans"


def _window(session: Session, name: str, value: str) -> AbstractContextManager[None]:
    """`name` is `value` for the statements run inside, within the transaction, then what it was (sent with the
    statements themselves: adapters.tx_settings)."""
    return tx_settings.window(session.connection(), name, value)


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
    if not keeps_plans(session):  # (else its transaction set it at BEGIN, with the scope)
        tx_settings.set_for_transaction(session.connection(), {"plan_cache_mode": "force_generic_plan"})


def custom_plans(session: Session) -> AbstractContextManager[None]:
    """Statements run inside plan for their own values, prepared or not.

    A kept statement that matches query text (full text, trigrams, IDs) must not run a generic plan: blind to
    the words and to who asks, at 1M memories it read every row holding a common word and made a typical
    principal's full-text statement 5-40x slower (217 vs 10 ms p50) and the trigram one 10x. The rest of a
    turn (profile, neighbours, subjects, vectors, dates) ran 3-15x faster on its generic plan, which skips
    planning the row-security policies (bench/scale.py and the per-statement comparison of 2026-12-02)."""
    return _window(session, "plan_cache_mode", "force_custom_plan")


def kept_plans(session: Session) -> Session:
    """Every transaction `session` opens from now on runs kept statements' generic plans (but for windows of
    `custom_plans`), set at its BEGIN with the row-security scope, in the same statement: no round trip.

    For the console's pages (console.web.db): measured statement by statement on a loaded org (200k memories,
    100k proposals; bench/console_plans.py), every role's page reads ran 1.5-14x faster on their generic plan
    (planning row security's policies is most of their cost: the user loader 0.3 vs 1.5 ms, a keyset page of the
    memory list 3.4 vs 7.6, the audit filter lists 1.2-3 vs 10-22), but the reads matching words (the memory
    list's search, in `custom_plans`) and those whose partial index's predicate was a bound parameter (now
    written as a `constant`)."""
    session.info[KEPT_PLANS] = True
    return session


def keeps_plans(session: Session) -> bool:
    """Whether `session`'s transactions open with generic plans (`kept_plans`)."""
    return bool(session.info.get(KEPT_PLANS))


def constant(value: str) -> ColumnElement[str]:
    """`value` written into the statement, not bound: a generic plan, made for any bound values, still proves a
    partial index's predicate on it (`where status = 'active'`), which `status = $1` never does. Only for the
    code's own constants (a status, a level), never for a value a user typed."""
    if "'" in value:
        raise ValueError(value)
    return literal_column(f"'{value}'", String)


def generic_plan_window(session: Session) -> AbstractContextManager[None]:
    """Statements run inside keep PostgreSQL's generic plan once the driver has prepared them (psycopg does after
    five runs on a connection), instead of being planned again at every run; the setting is put back after.

    For the console's statements whose best plan does not depend on the values bound (an index probe by org)
    and whose partial indexes' predicates are written as literals, not bound parameters (a generic plan cannot
    match `status = $1` to `where status = 'proposed'`). The audit log's policy reads memories, whose policies
    read trace_items...: its filter lists (four references to audit_log) planned in 35-85 ms and ran in 5 ms
    (200k memories, load 7-11, 2026-12-02), and PostgreSQL's own choice kept planning them."""
    if session.info.get(_PLANNED_ONCE) or keeps_plans(session):
        return nullcontext()  # the whole transaction already does (`planned_once`, `kept_plans`)
    return _window(session, "plan_cache_mode", "force_generic_plan")


def planned_once(session: Session, *, keep: int | None = None) -> None:
    """The rest of the transaction plans each statement once per connection: PostgreSQL's generic plan
    (`generic_plans`) on a connection that prepares a statement at its first run, until it returns to its pool
    (`prepare_as_usual`); what it prepared stays prepared for its later transactions. `keep`: the connection
    keeps at least this many statements prepared from now on.

    psycopg prepares a statement at its sixth run, and until then row security's policies (expanded into every
    statement naming a table) are planned at every run: 1-30 ms a statement, several times running it.
    For the outbox worker's batches (`keep=PREPARED_MAX`): PostgreSQL then planned each statement for its values
    five more times before it settled, after comparing them, on the generic plan it had kept for every one of
    the worker's statements anyway; a drain job's new connections paid eleven plans for each of its ~50
    statements (1.2-1.5 s of PostgreSQL's time in a 1,000-message drain, a third of it). For a principal's
    block and search: a connection's first five blocks planned every statement (the profile read 11-22 ms
    instead of 1-2), which made the slowest twentieth of typical principals' blocks at 1M memories (p95 30-45
    vs 22-30 ms, bench/turn_profile.py, 2026-12-04)."""
    raw = session.connection().connection.driver_connection
    raw.prepare_threshold = 0
    if keep is not None:
        raw.prepared_max = max(raw.prepared_max, keep)
    generic_plans(session)
    session.info[_PLANNED_ONCE] = True


def prepare_as_usual(dbapi_connection, _record=None) -> None:
    """A connection back in its pool (the engine's checkin listener) prepares a statement at psycopg's usual
    run again: `planned_once` asked for the first run for one transaction's statements, not for whatever the
    connection serves next (a console page's lists, whose text changes with their number of items, would fill
    its cache of prepared statements)."""
    if dbapi_connection is not None:
        dbapi_connection.prepare_threshold = PREPARE_THRESHOLD


@event.listens_for(Session, "after_transaction_end")
def _forget_planned_once(session: Session, transaction) -> None:
    if transaction.parent is None:  # the transaction, not a savepoint, ended: so did its settings
        session.info.pop(_PLANNED_ONCE, None)


def out_of_index_reach(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    """`condition` as coalesce(condition, false): the same rows (WHERE keeps only true), but no index can serve
    it, so the planner reads the rows by the statement's other conditions (a primary key, a join's key) and
    filters them, where matching an ownership rule's arms against indexes made it read every row of the owner
    or the org."""
    return func.coalesce(condition, false())
