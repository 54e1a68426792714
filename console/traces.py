"""Traces: which memories went into each prompt, in which block, rank and score, and which were used."""
from __future__ import annotations

import uuid

from flask import abort, render_template, request
from flask_login import current_user, login_required

from console import bp
from console.operator import current_operator, parse_uuid
from console.services import insights, paging
from console.staffing import audit_platform_view, reader
from memory_core.domain.errors import MemoriaError
from web.language import said


@bp.route("/traces")
@login_required
def traces():
    """Memory traces, newest or oldest first, searched by words or person, filtered by org (staff), channel,
    conversation, date and use."""
    s, org_id, platform = reader(org_param=parse_uuid(request.args.get("org")))
    a = request.args
    page, error = paging.Page([], None, None, 0), None
    try:
        page = insights.list_traces(
            s, org_id, channel=a.get("channel") or None, conversation_id=parse_uuid(a.get("conversation")),
            date_from=insights.parse_date(a.get("from"), "from"), date_to=insights.parse_date(a.get("to"), "to"),
            after=a.get("after"), before=a.get("before"), used_only=a.get("used") == "1",
            q=(a.get("q") or "").strip() or None, oldest_first=a.get("sort") == "oldest",
            viewer=None if platform else current_operator().access)
    except MemoriaError as exc:
        error = said(exc)
    if platform:
        audit_platform_view(s, "traces", org_id, rows=len(page.rows))
    return render_template("console/traces.html", rows=page.rows, page=page, args=a, error=error, platform=platform,
                           orgs=insights.org_names(s) if platform else {},
                           channels=insights.trace_channels(s, org_id)), 422 if error else 200


@bp.route("/traces/<uuid:trace_id>")
@login_required
def trace(trace_id: uuid.UUID):
    """One assembled memory block and each memory in it."""
    s, org_id, platform = reader()
    try:
        t, items = insights.trace_detail(s, org_id, trace_id)
    except MemoriaError:
        abort(404)
    if platform:
        audit_platform_view(s, "trace", t.org_id, trace=str(t.id))
    # The block holds the person's own core facts (name, family, tone): an org admin sees which
    # memories went in and how they ranked, the full text only for their own turns; staff, audited.
    show_block = platform or t.user_id == current_user.uid
    return render_template("console/trace.html", t=t, items=items, platform=platform, show_block=show_block)
