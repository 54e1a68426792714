"""The operator console: sign-in, the dashboard per role, and the console pages."""
from flask import Blueprint

bp = Blueprint("console", __name__)

from console import auth, home, nav  # noqa: E402,F401  (routes register on bp)
