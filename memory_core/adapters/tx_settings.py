"""A transaction's settings (`set_config(name, value, true)`), sent with the next statement that runs.

Row security reads each transaction's scope from settings, and the planner reads its own from them
(`enable_sort`, `plan_cache_mode`, the search's knobs). Each change was a round trip of its own: a memory block
set its scope, then generic plans, then sorting off, put sorting back after its first reads, then set the
search's knobs, five statements that returned nothing the block needed. Now a change is only recorded on the
connection, and every change since the last statement goes to PostgreSQL in one statement, sent right before
the next one (every Engine's `before_cursor_execute`, as SQLAlchemy's own recipe for per-connection state does).
The scope is set before the transaction's first statement as it was, and a window that ends where the next one
begins costs one statement, not two; a window with no statement inside costs none.

Two kinds of value: the transaction's own (`set_for_transaction`: the scope, generic plans, the search's knobs),
kept until it ends; and a window's (`window`), which puts back what the transaction had before it, read from the
server in the same statement that first changes it. A rollback to a savepoint undoes what was set inside it: the
values the server held as the savepoint began are remembered, and what differs from them is sent again.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

_KEY = "memoria.settings"
_NAME = re.compile(r"[a-z_]+(\.[a-z_]+)?")


@dataclass
class _Settings:
    """One transaction's settings on one connection."""
    own: dict[str, str] = field(default_factory=dict)  # the transaction's values (set_for_transaction)
    windows: dict[str, str] = field(default_factory=dict)  # the open windows' values, over `own`
    before: dict[str, str] = field(default_factory=dict)  # what a window's setting was before it first changed
    sent: dict[str, str] = field(default_factory=dict)  # what the server holds now
    changed: bool = False  # whether anything above changed since the last statement
    at_savepoints: list[dict[str, str]] = field(default_factory=list)  # `sent` as each open savepoint began

    def changes(self) -> list[tuple[str, str, bool]]:
        """(name, value, whether what it was must be read first: a window's first change) of each to send."""
        out = []
        for name in {**self.own, **self.windows, **self.sent, **self.before}:
            value = self.windows.get(name, self.own.get(name, self.before.get(name)))
            read_first = name in self.windows and name not in self.own and name not in self.before
            if read_first or (value is not None and self.sent.get(name) != value):
                out.append((name, value, read_first))
        return out


def _of(connection: Connection) -> _Settings:
    found = connection.info.get(_KEY)
    if found is None:
        found = connection.info[_KEY] = _Settings()
    return found


def set_for_transaction(connection: Connection, values: dict[str, str]) -> None:
    """`values` hold for the rest of the transaction on `connection` (but inside windows of the same names)."""
    state = _of(connection)
    state.own.update(values)
    state.changed = True


@contextmanager
def window(connection: Connection, name: str, value: str) -> Iterator[None]:
    """`name` is `value` for the statements run inside, then what it was. Nested windows of one name cost
    nothing more: the inner one puts back the outer one's value."""
    state = _of(connection)
    outer = state.windows.get(name)
    state.windows[name] = value
    state.changed = True
    try:
        yield
    finally:
        if outer is None:
            state.windows.pop(name, None)
        else:
            state.windows[name] = outer
        state.changed = True


@lru_cache(maxsize=256)
def _statement(changes: tuple[tuple[str, bool], ...]) -> str:
    parts = []
    for name, read_first in changes:
        if not _NAME.fullmatch(name):
            raise ValueError(name)
        if read_first:
            parts.append(f"current_setting('{name}')")
        parts.append(f"set_config('{name}', %s, true)")
    return "select " + ", ".join(parts)


@event.listens_for(Engine, "before_cursor_execute")
def _before_statement(conn: Connection, cursor, statement, parameters, context, executemany) -> None:
    state = conn.info.get(_KEY)
    if state is not None and state.changed:
        _send(conn, state)


def _send(conn: Connection, state: _Settings) -> None:
    state.changed = False
    changes = state.changes()
    if not changes:
        return
    sql = _statement(tuple((name, read_first) for name, _, read_first in changes))
    with conn.connection.dbapi_connection.cursor() as own:
        row = iter(own.execute(sql, [value for _, value, _ in changes]).fetchone())
    for name, value, read_first in changes:
        if read_first:
            state.before[name] = next(row)
        next(row)  # what set_config returns: the value
        state.sent[name] = value


@event.listens_for(Engine, "begin")
def _fresh(conn: Connection) -> None:
    conn.info[_KEY] = _Settings()


@event.listens_for(Engine, "savepoint")
def _savepoint(conn: Connection, name) -> None:
    state = conn.info.get(_KEY)
    if state is not None:
        if state.changed:
            _send(conn, state)  # before the SAVEPOINT, as its own statement would have sent them
        state.at_savepoints.append(dict(state.sent))  # (SQLAlchemy names it after this event: savepoints nest)


@event.listens_for(Engine, "release_savepoint")
def _released(conn: Connection, name, context) -> None:
    state = conn.info.get(_KEY)
    if state is not None and state.at_savepoints:
        state.at_savepoints.pop()


@event.listens_for(Engine, "rollback_savepoint")
def _undone(conn: Connection, name, context) -> None:
    if conn.invalidated:
        return  # the connection was lost, and its transaction with it
    state = conn.info.get(_KEY)
    if state is not None:
        # The server holds again what it held as the savepoint began; the next statement sends what differs.
        state.sent = state.at_savepoints.pop() if state.at_savepoints else {}
        state.changed = True
