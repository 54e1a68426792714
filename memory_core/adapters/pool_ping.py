"""Ping a pooled connection before use only when it has sat idle, not at every checkout.

SQLAlchemy's `pool_pre_ping` sends `select 1` at every checkout: a web request takes a connection once per
row-security scope, so a console page paid one to three extra round trips for it, and under load each round trip
waits for the database process to be scheduled. A connection checked in moments ago by this process is as alive
as the ping would say; one idle longer than `IDLE_SECONDS` (a database restart, an idle-session timeout or a
firewall may have dropped it meanwhile) is pinged as before, and a dead one is replaced before the caller sees
it. A connection that dies within those seconds fails its first statement instead: that request answers 503
(web.errors) and SQLAlchemy, seeing a disconnect, recycles the whole pool, so the next request reconnects.
"""
from __future__ import annotations

import time

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

IDLE_SECONDS = 2.0
_IDLE_SINCE = "memoria_idle_since"


def ping_when_idle(engine: Engine, idle_seconds: float = IDLE_SECONDS) -> None:
    """Give `engine`'s pool the ping-after-idle check (create the engine without pool_pre_ping)."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_connection, record) -> None:
        if record is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, proxy) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < idle_seconds:
            return  # a new connection, or one this process used moments ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as e:  # any failure: the pool discards it and checks out another (up to 3 tries)
            raise exc.DisconnectionError("connection failed its ping after sitting idle") from e
