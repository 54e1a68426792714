"""The probes: thin views over memory_core.adapters.health."""
from __future__ import annotations

from flask import current_app, jsonify

from health import bp
from memory_core.adapters.health import readiness
from memory_core.adapters.outage import RETRY_AFTER_SECONDS


@bp.route("/healthz")
def healthz():
    """Liveness: the web process answers (it checks no server, so an outage never restarts it)."""
    return jsonify({"status": "ok"})


@bp.route("/readyz")
def readyz():
    """Readiness: 200 when PostgreSQL, Redis and a worker are up, else 503; the outbox lag either way."""
    state = readiness(current_app.extensions["memoria.db"], current_app.config["MEMORIA_SETTINGS"])
    response = jsonify(state.as_json())
    if not state.ready:
        response.status_code = 503
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response.headers["Cache-Control"] = "no-store"
    return response
