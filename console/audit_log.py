"""The audit log: every operator action, searchable, append-only (nothing here can change it)."""
from __future__ import annotations

from flask import abort, render_template, request
from flask_login import login_required

from console import bp
from console.operator import parse_uuid
from console.staffing import audit_platform_view, reader
from memory_core.domain.errors import MemoriaError
from review import insights


@bp.route("/audit")
@login_required
def audit():
    """Search the audit log."""
    s, org_id, platform = reader(privacy=True, org_param=parse_uuid(request.args.get("org")))
    a = request.args
    rows, nxt, error = [], None, None
    try:
        before = insights.parse_cursor(a.get("before"), "before")
    except MemoriaError as exc:
        abort(400, str(exc))
    try:
        rows, nxt = insights.search_audit(
            s, org_id, q=(a.get("q") or "").strip() or None, action=a.get("action") or None,
            date_from=insights.parse_date(a.get("from"), "from"), date_to=insights.parse_date(a.get("to"), "to"),
            before=before)
    except MemoriaError as exc:
        error = str(exc)
    if platform:
        audit_platform_view(s, "audit", org_id, rows=len(rows))
    return render_template("console/audit.html", rows=rows, next_before=nxt, args=a, error=error, platform=platform,
                           orgs=insights.org_names(s) if platform else {},
                           actions=insights.audit_actions(s, org_id)), 422 if error else 200
