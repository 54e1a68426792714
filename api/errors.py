"""JSON errors for every 4xx/5xx of the API: {"error": {"code", "message", "field"}}."""
from __future__ import annotations

from flask import jsonify

from memory_core.domain.errors import MemoriaError
from web.errors import http_status


class ApiError(Exception):
    """An error answered as JSON with its status; `field` names the offending input when there is one."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field
        self.headers = headers or {}


def from_domain(exc: MemoriaError) -> ApiError:
    status, code = http_status(exc)
    return ApiError(status, code, str(exc), getattr(exc, "field", None))


def error_response(err: ApiError):
    response = jsonify({"error": {"code": err.code, "message": err.message, "field": err.field}})
    response.status_code = err.status
    for k, v in err.headers.items():
        response.headers[k] = v
    if err.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="memoria"'
    return response


HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "payload_too_large", 415: "unsupported_media_type",
              422: "invalid_input", 429: "rate_limited", 500: "internal_error", 503: "unavailable"}
