"""The agent HTTP API (/api/v1): JSON, authenticated by org API keys (no cookies, so no CSRF)."""
from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api/v1")

from api import provisioning, views  # noqa: E402,F401  (routes register on bp)
from web.sessions import close_sessions  # noqa: E402

bp.teardown_request(close_sessions)
