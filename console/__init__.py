"""The operator console: sign-in, the dashboard per role, and the console pages."""
from flask import Blueprint

bp = Blueprint("console", __name__)

from console import auth, home, nav  # noqa: E402,F401  (routes register on bp)
from console import memories, contacts, traces, usage, audit_log, settings, jobs_page  # noqa: E402,F401
from console import api_keys  # noqa: E402,F401
from console import privacy, linking, jobs_actions, my_memory  # noqa: E402,F401
