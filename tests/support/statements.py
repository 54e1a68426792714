"""What a piece of code sent to PostgreSQL, and how PostgreSQL would run it: for tests that check a read's plan."""
from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from psycopg import pq
from sqlalchemy import event


@contextmanager
def _each_statement(engine, record: Callable) -> Iterator[None]:
    """`record(conn, statement, parameters)` for each statement `engine` sends while the block runs."""
    def capture(conn, cursor, statement, parameters, context, executemany):
        record(conn, statement, parameters)

    event.listen(engine, "before_cursor_execute", capture)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", capture)


@contextmanager
def sent_statements(engine, keep: Callable[[str], bool] = lambda statement: True) -> Iterator[list[tuple]]:
    """The (statement, parameters) pairs `engine` sends while the block runs, those `keep` accepts, in order."""
    sent: list[tuple] = []

    def record(conn, statement, parameters):
        if keep(statement):
            sent.append((statement, parameters))

    with _each_statement(engine, record):
        yield sent


@contextmanager
def connection_of_each_statement(engine) -> Iterator[list[tuple[int, str]]]:
    """(its connection's id, statement) for each statement `engine` sends while the block runs, in order: which
    reads ran on the session's own connection and which beside it (adapters.beside)."""
    sent: list[tuple[int, str]] = []

    def record(conn, statement, parameters):
        sent.append((id(conn.connection.dbapi_connection), statement))

    with _each_statement(engine, record):
        yield sent


@contextmanager
def settings_seen(engine, names: tuple[str, ...], keep: Callable[[str], bool] = lambda statement: True, *,
                  on=None) -> Iterator[list[tuple[str, dict[str, str]]]]:
    """The statements `engine` sends while the block runs (those `keep` accepts; `on`: only those on this
    SQLAlchemy Connection, not the reads run beside it), each with the values of the settings `names` as
    PostgreSQL holds them when it receives the statement (read on the same connection, after memoria's own
    settings went before it)."""
    seen: list[tuple[str, dict[str, str]]] = []
    read = "select " + ", ".join("current_setting(%s)" for _ in names)
    only = on.connection.dbapi_connection if on is not None else None

    def record(conn, statement, parameters):
        if keep(statement) and only in (None, conn.connection.dbapi_connection):
            with conn.connection.dbapi_connection.cursor() as own:
                seen.append((statement, dict(zip(names, own.execute(read, list(names)).fetchone(), strict=True))))

    with _each_statement(engine, record):
        yield seen


@contextmanager
def round_trips(connection) -> Iterator[list[list[str]]]:
    """What the client asks PostgreSQL on `connection` (a SQLAlchemy Connection) while the block runs: per round
    trip, the statements it prepares ("prepare <sql>") and runs ("run <sql>"), from libpq's own trace of the
    protocol. The SQL is as the trace quotes it."""
    trips: list[list[str]] = []
    dbapi = connection.connection.dbapi_connection
    raw = dbapi.pgconn
    with tempfile.TemporaryFile() as trace:
        raw.trace(trace.fileno())
        raw.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield trips
        finally:
            raw.untrace()
            trace.seek(0)
            prepared: dict[str, str] = {}
            asked: list[str] = []
            parsed = ""
            for line in trace.read().decode(errors="replace").splitlines():
                if line.count("\t") < 2:
                    continue  # a statement's text goes on over lines
                direction, _, message = line.split("\t", 2)
                kind, _, rest = message.partition("\t")
                kind, rest = kind.strip(), rest.strip()
                if direction == "F" and kind == "Query":
                    asked.append("run " + rest.strip('"'))
                elif direction == "F" and kind == "Parse":
                    name, _, sql = rest[1:].partition('" "')
                    parsed = prepared[name] = sql
                    if name:
                        asked.append("prepare " + sql)
                elif direction == "F" and kind == "Bind":
                    name = rest.split('"')[3]
                    asked.append("run " + (prepared.get(name, f"\0{name}") if name else parsed))
                elif direction == "B" and kind == "ReadyForQuery":
                    trips.append(asked)
                    asked = []
            if any(a.startswith("run \0") for trip in trips for a in trip):  # prepared before the block
                idle = dbapi.info.transaction_status == pq.TransactionStatus.IDLE  # (the block may have committed)
                with dbapi.cursor() as own:
                    prepared |= dict(own.execute("select name, statement from pg_prepared_statements").fetchall())
                if idle:
                    dbapi.commit()  # (a rollback would make psycopg forget what the connection prepared)
                trips[:] = [[f"run {prepared.get(a[5:], '?')}" if a.startswith("run \0") else a for a in trip]
                            for trip in trips]


def plan_of(connection, statement: str, parameters) -> str:
    """EXPLAIN of a captured statement on `connection`, as one text."""
    return "\n".join(r[0] for r in connection.exec_driver_sql("EXPLAIN " + statement, parameters))


def generic_plan_of(connection, statement: str) -> str:
    """EXPLAIN (GENERIC_PLAN) of a captured statement on `connection`: the plan PostgreSQL keeps for a prepared
    statement once it plans it for any parameter values (its parameters become $1, $2...)."""
    names: list[str] = []

    def number(match):
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    # A literal percent sign stays doubled: psycopg reads the statement for placeholders and halves it.
    numbered = re.sub(r"%\((\w+)\)s", number, statement)
    return "\n".join(r[0] for r in connection.exec_driver_sql("EXPLAIN (GENERIC_PLAN) " + numbered))


def generic_plan_by_index(database, statement: str) -> str:
    """`generic_plan_of` in a system unit of work with sequential scans off: a test's tables are so small that
    PostgreSQL would read them whole, whatever indexes a big table's plan would use."""
    from sqlalchemy import text

    from memory_core.adapters.db import SYSTEM

    with database.unit_of_work(SYSTEM) as uow:
        connection = uow.session.connection()
        connection.execute(text("set local enable_seqscan = off"))
        return generic_plan_of(connection, statement)
