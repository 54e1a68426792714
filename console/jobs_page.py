"""Jobs: the nightly and on-demand job runs, with their counts and errors."""
from __future__ import annotations

from flask import render_template, request
from flask_login import login_required

from console import audit_view, bp
from console.services import insights, paging
from console.staffing import reader
from memory_core.adapters.health import readiness
from memory_core.domain.errors import MemoriaError
from web.language import said
from web.sessions import database


@bp.route("/jobs")
@login_required
def jobs():
    """Job runs (search, filter, sort, pages both ways): staff see every run, an org admin their org's runs."""
    s, org_id, platform = reader()
    a = request.args
    org_id = None if platform else org_id
    page, error = paging.Page([], None, None, 0), None
    try:
        page = insights.list_job_runs(s, org_id=org_id, platform=platform, job=a.get("job") or None,
                                      status=a.get("status") or None, q=(a.get("q") or "").strip() or None,
                                      oldest_first=a.get("sort") == "oldest", after=a.get("after"),
                                      before=a.get("before"))
    except MemoriaError as exc:
        error = said(exc)
    return render_template("console/jobs.html", runs=page.rows, page=page, args=a, error=error,
                           triggers=audit_view.job_triggers(s, page.rows),
                           names=insights.job_names(s, org_id=org_id, platform=platform),
                           statuses=insights.JOB_STATUSES, job=a.get("job"), platform=platform,
                           health=readiness(database())), 422 if error else 200
