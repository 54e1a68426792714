"""The nightly schedule, run by exactly one `rq cron` process (`memoria cron`, started by `memoria up`).

Times are UTC. Each entry: (job function, cron expression).
"""
from __future__ import annotations

from collections.abc import Callable

from rq.cron import CronScheduler

from jobs.org_indexes import run_org_indexes  # noqa: E402
from jobs.outbox import drain_outbox_periodic  # noqa: E402
from jobs.retention import run_retention  # noqa: E402
from jobs.sheets import run_sheets  # noqa: E402
from memory_core.adapters.config import get_settings
from memory_core.adapters.queue import get_redis

SCHEDULE: list[tuple[Callable[[], object], str]] = [
    # The outbox safety net: a lost kick or a failed message waiting for its backoff.
    (drain_outbox_periodic, "* * * * *"),
    # Nightly retention (superseded versions, stale proposals, link codes, traces), then subject sheets.
    (run_retention, "15 3 * * *"),
    (run_sheets, "45 3 * * *"),
    # Big orgs get (and small ones lose) their own partial vector and text indexes.
    (run_org_indexes, "15 4 * * *"),
]


def run_cron() -> None:
    settings = get_settings()
    scheduler = CronScheduler(connection=get_redis(settings))
    for func, cron in SCHEDULE:
        scheduler.register(func, queue_name=settings.queue_name, cron=cron)
    scheduler.start()
