"""The nightly schedule, run by exactly one `rq cron` process (`memoria cron`, started by `memoria up`).

Times are UTC. Each entry: (job function, cron expression).
"""
from __future__ import annotations

from typing import Callable

from rq.cron import CronScheduler

from memory_core.config import get_settings
from memory_core.queue import get_redis

SCHEDULE: list[tuple[Callable[[], object], str]] = []


def run_cron() -> None:
    settings = get_settings()
    scheduler = CronScheduler(connection=get_redis(settings))
    for func, cron in SCHEDULE:
        scheduler.register(func, queue_name=settings.queue_name, cron=cron)
    scheduler.start()
