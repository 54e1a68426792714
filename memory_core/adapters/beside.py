"""Reads run beside a session: in a transaction of their own on another pooled connection of the session's engine,
in its row-security scope, on a thread of this process, while the session's own thread goes on.

For a turn's independent reads (reading/context.py, reading/search.py): PostgreSQL runs one on one core while the
turn's thread and the other read use the other. What runs beside reads only what is committed: nothing the
session's own transaction has written and not committed. Work started beside work runs in turn, on the same
connection (a thread of the pool never waits for another, so the pool cannot fill with threads waiting for each
other). A session bound to one connection (a test's outer transaction) runs the work itself, in turn, and so
does one whose pool has no connection to spare (a pool of one).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool, Pool, QueuePool

from memory_core.adapters import threads
from memory_core.adapters.planner import KEPT_PLANS, planned_once

T = TypeVar("T")

# Threads of a process that run reads beside; each holds a pooled connection while it runs (a web process's pool
# keeps this many connections beyond one for each request thread: app.py).
THREADS = 4
# What opens a transaction as the session's would: its row-security scope and its plan mode.
_OPENING = ("scope", KEPT_PLANS)

_here = threading.local()


def beside(session: Session, work: Callable[[Session], T], *, lazy: bool = False) -> Callable[[], T]:
    """Start `work(other_session)` beside `session`; the returned function waits for its result (or raises what it
    raised). Run in turn, the work runs at once, or when its result is asked for if `lazy` (work that waits for
    something the caller's thread does first)."""
    bind = session.get_bind()
    session.connection()  # the session's own first: what is left is what work beside may take
    if getattr(_here, "beside", False) or not isinstance(bind, Engine) or not _has_room(bind.pool):
        if lazy:
            return lambda: work(session)
        done = work(session)
        return lambda: done
    info = {k: session.info[k] for k in _OPENING if k in session.info}
    return threads.pool("beside", THREADS).submit(_run, bind, info, work).result


def _has_room(pool: Pool) -> bool:
    """Whether the pool can lend one more connection now (without waiting for one to come back)."""
    if not isinstance(pool, QueuePool):
        return isinstance(pool, NullPool)  # a new connection each time; the others hold one or one a thread
    limit = pool._max_overflow  # noqa: SLF001 - QueuePool keeps its overflow limit there; -1: none
    return limit < 0 or pool.checkedout() < pool.size() + limit


def _run(bind: Engine, info: dict, work: Callable[[Session], T]) -> T:
    _here.beside = True
    with Session(bind=bind, info=info) as session:
        planned_once(session)
        try:
            return work(session)
        finally:
            session.rollback()
