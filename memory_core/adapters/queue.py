"""Redis and the RQ queue: from REDIS_URL, or the embedded redis-server (started if needed)."""
from __future__ import annotations

from functools import lru_cache

from redis import Redis
from rq import Queue

from memory_core.adapters.config import Settings, get_settings


def redis_url(settings: Settings | None = None) -> str:
    settings = settings or get_settings()
    if settings.redis_url:
        return settings.redis_url
    from memory_core.adapters.runtime import start_redis

    return start_redis(settings.data_dir).url


@lru_cache(maxsize=4)
def _redis_for(url: str) -> Redis:
    return Redis.from_url(url)


def get_redis(settings: Settings | None = None) -> Redis:
    return _redis_for(redis_url(settings))


def get_queue(settings: Settings | None = None) -> Queue:
    settings = settings or get_settings()
    return Queue(settings.queue_name, connection=get_redis(settings))
