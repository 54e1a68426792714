"""The operator console: sign-in, the dashboard per role, and the console pages."""
from flask import Blueprint

bp = Blueprint("console", __name__)

from console import (  # noqa: E402,F401  (routes register on bp)  # noqa: E402,F401  # noqa: E402,F401  # noqa: E402,F401
    accounts,
    api_keys,  # noqa: E402,F401
    audit_log,
    auth,
    contacts,
    home,
    jobs_actions,
    jobs_page,
    language,
    linking,
    memories,
    my_memory,
    nav,
    people,
    platform_admin,
    privacy,
    settings,
    traces,
    usage,
)
