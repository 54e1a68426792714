"""What a piece of code sent to PostgreSQL, and how PostgreSQL would run it: for tests that check a read's plan."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import event


@contextmanager
def sent_statements(engine, keep: Callable[[str], bool] = lambda statement: True) -> Iterator[list[tuple]]:
    """The (statement, parameters) pairs `engine` sends while the block runs, those `keep` accepts, in order."""
    sent: list[tuple] = []

    def capture(conn, cursor, statement, parameters, context, executemany):
        if keep(statement):
            sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", capture)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", capture)


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

    numbered = re.sub(r"%\((\w+)\)s", number, statement).replace("%%", "%")
    return "\n".join(r[0] for r in connection.exec_driver_sql("EXPLAIN (GENERIC_PLAN) " + numbered))
