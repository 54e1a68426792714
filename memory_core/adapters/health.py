"""Liveness and readiness facts: PostgreSQL, Redis, a live RQ worker, and how far learning is behind
(the age of the oldest unprocessed outbox row). Platform-wide figures only, never an org's data. Besides, whether
row security's match functions are still LEAKPROOF (adapters/leakproof.py): without it every answer is still
right, only slow for big principals, so it is reported and does not make the service unready."""
from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from sqlalchemy import text

from memory_core.adapters import leakproof
from memory_core.adapters.config import Settings, get_settings
from memory_core.adapters.outage import OUTAGE_ERRORS

log = logging.getLogger(__name__)

# A worker counts as live when it registered and its heartbeat is at most this old (RQ heartbeats
# at least every WORKER_TTL - 15 s while idle, every 30 s while a job runs: jobs.worker).
WORKER_HEARTBEAT_SECONDS = 90


@dataclass(frozen=True)
class Readiness:
    database: bool
    redis: bool
    workers: int
    pending: int | None  # unprocessed outbox rows; None when the database did not answer
    oldest_pending_at: dt.datetime | None
    checked_at: dt.datetime
    not_leakproof: tuple[str, ...] | None = None  # None when the database did not answer

    @property
    def worker(self) -> bool:
        return self.workers > 0

    @property
    def ready(self) -> bool:
        return self.database and self.redis and self.worker

    @property
    def lag_seconds(self) -> float | None:
        if self.oldest_pending_at is None:
            return None if self.pending is None else 0.0
        return max(0.0, (self.checked_at - self.oldest_pending_at).total_seconds())

    @property
    def behind(self) -> str:
        """What an operator reads: 'learning is N minutes behind'."""
        lag = self.lag_seconds
        if lag is None:
            return "learning backlog unknown (the database did not answer)"
        minutes = int(lag // 60)
        if self.pending == 0:
            return "learning is up to date"
        if minutes < 1:
            return "learning is less than a minute behind"
        return f"learning is {minutes} minute{'s' if minutes != 1 else ''} behind"

    def as_json(self) -> dict:
        status = lambda ok: "ok" if ok else "down"  # noqa: E731
        return {"ready": self.ready,
                "checks": {"database": status(self.database), "redis": status(self.redis),
                           "worker": status(self.worker),
                           "indexes": None if self.not_leakproof is None else
                           "degraded" if self.not_leakproof else "ok"},
                "outbox": {"pending": self.pending,
                           "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 1)},
                "learning": self.behind}


def readiness(database, settings: Settings | None = None, *, now: dt.datetime | None = None) -> Readiness:
    """Check each server once, each failure bounded in time (pool wait, Redis timeouts)."""
    settings = settings or get_settings()
    checked_at = now or dt.datetime.now(dt.timezone.utc)
    db_ok, pending, oldest, missing = False, None, None, None
    try:
        with database.engine.connect() as conn:
            pending, oldest = conn.execute(text("select * from memoria_outbox_backlog()")).one()
            missing = tuple(leakproof.not_leakproof(conn))
        db_ok = True
    except OUTAGE_ERRORS as exc:
        log.warning("readiness: the database is unavailable (%s)", type(exc).__name__)
    redis_ok, workers = _redis_and_workers(settings, checked_at)
    return Readiness(database=db_ok, redis=redis_ok, workers=workers, pending=pending, oldest_pending_at=oldest,
                     checked_at=checked_at, not_leakproof=missing)


def _redis_and_workers(settings: Settings, now: dt.datetime) -> tuple[bool, int]:
    from redis import Redis
    from rq import Queue, Worker

    from memory_core.adapters.queue import quick_retry, redis_url

    conn = Redis.from_url(redis_url(settings), socket_connect_timeout=2, socket_timeout=2, retry=quick_retry())
    try:
        conn.ping()
        queue = Queue(settings.queue_name, connection=conn)
        live = 0
        for worker in Worker.all(queue=queue):
            beat = worker.last_heartbeat
            if beat is not None and beat.tzinfo is None:
                beat = beat.replace(tzinfo=dt.timezone.utc)
            if beat is not None and (now - beat).total_seconds() <= WORKER_HEARTBEAT_SECONDS:
                live += 1
        return True, live
    except OUTAGE_ERRORS as exc:
        log.warning("readiness: Redis is unavailable (%s)", type(exc).__name__)
        return False, 0
    finally:
        conn.close()
