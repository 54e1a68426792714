"""The audit log: every operator action, searchable, append-only (nothing here can change it)."""
from __future__ import annotations

from flask import render_template, request
from flask_login import current_user, login_required

from console import audit_view, bp
from console.operator import parse_uuid
from console.services import insights, paging
from console.staffing import audit_platform_view, reader
from memory_core.domain.errors import MemoriaError
from web.language import said


@bp.route("/audit")
@login_required
def audit():
    """Search the audit log."""
    s, org_id, platform = reader(privacy=True, org_param=parse_uuid(request.args.get("org")))
    a = request.args
    page, error = paging.Page([], None, None, 0), None
    q = (a.get("q") or "").strip() or None
    try:
        page = insights.search_audit(
            s, org_id, q=q, action=a.get("action") or None, who=parse_uuid(a.get("who")),
            q_actor_ids=audit_view.actor_ids_matching(s, q) if q and len(q) <= 200 else None,
            date_from=insights.parse_date(a.get("from"), "from"), date_to=insights.parse_date(a.get("to"), "to"),
            after=a.get("after"), before=a.get("before"), oldest_first=a.get("sort") == "oldest")
    except MemoriaError as exc:
        error = said(exc)
    if platform:
        audit_platform_view(s, "audit", org_id, rows=len(page.rows))
    lists = audit_view.filters(s, org_id, page.rows)
    entries = audit_view.present(s, page.rows, may_open_privacy=current_user.platform_role == "privacy_officer",
                                 found=lists.people)
    return render_template("console/audit.html", entries=entries, page=page, args=a, error=error,
                           platform=platform, orgs=insights.org_names(s) if platform else {},
                           actions=lists.actions, action_name=audit_view.action_name,
                           actors=lists.actors), 422 if error else 200
