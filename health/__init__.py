"""Health probes for supervisors and load balancers: /healthz (the process answers) and /readyz (it can
serve: PostgreSQL, Redis, a live worker, and how far learning is behind). Public, platform-wide facts
only: nothing of any org."""
from flask import Blueprint

bp = Blueprint("health", __name__)

from health import views  # noqa: E402,F401  (routes register on bp)
