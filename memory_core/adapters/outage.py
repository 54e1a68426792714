"""Which failures mean a server is unavailable for now: PostgreSQL or Redis down or restarting, or no
pooled connection within the bounded wait. The web answers them 503 with Retry-After (ingest is
idempotent, so a client may simply retry); anything else stays a bug, answered 500."""
from __future__ import annotations

import redis.exceptions
from sqlalchemy import exc as sa_exc

from memory_core.adapters.runtime import ServerNotRunning

# Seconds a client is asked to wait before retrying.
RETRY_AFTER_SECONDS = 5

# Connection refused or dropped, the server shutting down, a dead pooled connection
# (OperationalError / InterfaceError), the pool's bounded wait (TimeoutError), and Redis likewise.
OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError,
    redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ServerNotRunning,
)


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, OUTAGE_ERRORS) or (isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated)


def describe(exc: BaseException) -> str:
    """What failed, for the log: the exception's type, never a URL or a statement's parameters."""
    return "database" if isinstance(exc, (sa_exc.SQLAlchemyError, ServerNotRunning)) else "redis"


def transaction_lost(exc: BaseException) -> bool:
    """The connection under a transaction is gone (a restart, a failover, a cut), and the transaction with it: nothing
    more can run in it, and no row of it is to blame. PendingRollbackError: a statement after such a loss."""
    return (isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated) or isinstance(
        exc, sa_exc.PendingRollbackError)
