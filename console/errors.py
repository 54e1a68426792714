"""Error pages of the console: what happened, in words, with the navigation and a way back."""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import render_template, request, url_for
from flask_babel import lazy_gettext as _l
from werkzeug.exceptions import HTTPException

MESSAGES = {
    403: (_l("You may not open this page"), _l("Your role in this organization does not allow it. If you think it "
                                               "should, ask an owner or admin of your organization.")),
    404: (_l("Page not found"), _l("It may have been deleted, or the link is wrong.")),
    405: (_l("That did not work"), _l("This page cannot be used that way. Go back and use its buttons.")),
}


def _back() -> str:
    """The page the person came from, if it is one of ours; else the dashboard."""
    ref = urlsplit(request.referrer or "")
    local = ref.path.startswith("/") and not ref.path.startswith(("//", "/\\"))
    if ref.netloc == request.host and local and ref.path != request.path:
        return ref.path + (f"?{ref.query}" if ref.query else "")
    return url_for("console.home")


def error_page(exc: HTTPException):
    title, text = MESSAGES.get(exc.code, (exc.name, exc.description or ""))
    return render_template("console/error.html", code=exc.code, title=title, text=text, back=_back()), exc.code
