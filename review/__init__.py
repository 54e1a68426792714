"""The review workflow: proposal queue domain logic (service.py) and its blueprint (views.py)."""
from flask import Blueprint

bp = Blueprint("review", __name__, url_prefix="/review")

from review import views  # noqa: E402,F401  (routes register on bp)
