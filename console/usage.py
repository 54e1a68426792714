"""Usage: model calls and cost per day, purpose and model, with a chart."""
from __future__ import annotations

from flask import render_template, request
from flask_login import login_required

from console import bp
from console.operator import parse_uuid
from console.services import insights
from console.staffing import audit_platform_view, reader
from memory_core.domain.errors import MemoriaError
from web.language import said, select_language


@bp.route("/usage")
@login_required
def usage():
    """Usage ledger summary and a daily cost chart."""
    s, org_id, platform = reader(org_param=parse_uuid(request.args.get("org")))
    a = request.args
    try:
        u, error = insights.usage(s, org_id, since=insights.parse_date(a.get("since"), "since"),
                                  until=insights.parse_date(a.get("until"), "until"), lang=select_language()), None
    except MemoriaError as exc:
        u, error = insights.usage(s, org_id, lang=select_language()), said(exc)
    if platform:
        audit_platform_view(s, "usage", org_id, since=u.since.isoformat(), until=u.until.isoformat())
    return render_template("console/usage.html", u=u, args=a, error=error, platform=platform,
                           orgs=insights.org_names(s) if platform else {}), 422 if error else 200
