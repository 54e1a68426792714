"""Domain exceptions to HTTP statuses, in one table, used by every edge (console, review, API)."""
from __future__ import annotations

from memory_core.domain.errors import Conflict, Forbidden, InvalidInput, InvalidSentAt, NotFound, TooManyAttempts

# (exception class, status, the API's error code); the first matching class wins.
DOMAIN_STATUSES: tuple[tuple[type[Exception], int, str], ...] = (
    (NotFound, 404, "not_found"),
    (Forbidden, 403, "forbidden"),
    (InvalidSentAt, 400, "invalid_sent_at"),  # before InvalidInput, its parent
    (InvalidInput, 422, "invalid_input"),
    (Conflict, 409, "conflict"),
    (TooManyAttempts, 429, "rate_limited"),
)
BAD_REQUEST = (400, "bad_request")


def http_status(exc: Exception) -> tuple[int, str]:
    """The status and error code for a domain exception; 400 for any other."""
    for cls, status, code in DOMAIN_STATUSES:
        if isinstance(exc, cls):
            return status, code
    return BAD_REQUEST


def status_of(exc: Exception) -> int:
    return http_status(exc)[0]
