"""Redis and the RQ queue: from REDIS_URL, or the embedded redis-server of the data dir.

Nothing here starts a server (`memoria up` does): while Redis is down, calls fail with redis's
ConnectionError, which callers retry or answer with a 503."""
from __future__ import annotations

from functools import lru_cache

from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from memory_core.adapters.config import Settings, get_settings


def redis_url(settings: Settings | None = None) -> str:
    settings = settings or get_settings()
    if settings.redis_url:
        return settings.redis_url
    from memory_core.adapters.runtime import redis_socket

    return f"unix://{redis_socket(settings.data_dir)}"


def quick_retry() -> Retry:
    """One immediate retry (a pooled connection a Redis restart closed), not redis-py's default of ten
    with backoff, which kept each call to a Redis that is down waiting for seconds."""
    return Retry(NoBackoff(), 1)


@lru_cache(maxsize=4)
def _redis_for(url: str) -> Redis:
    # Bounded waits: a request or a job never hangs on a Redis that stopped answering. (The RQ worker
    # sets its own read timeout around its blocking dequeue.)
    return Redis.from_url(url, socket_connect_timeout=2, health_check_interval=30, retry=quick_retry())


def get_redis(settings: Settings | None = None) -> Redis:
    return _redis_for(redis_url(settings))


def get_queue(settings: Settings | None = None) -> Queue:
    settings = settings or get_settings()
    return Queue(settings.queue_name, connection=get_redis(settings))
