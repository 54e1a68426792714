"""Jobs: the nightly and on-demand job runs, with their counts and errors."""
from __future__ import annotations

from flask import render_template, request
from flask_login import login_required

from console import bp
from console.services import insights
from console.staffing import reader
from memory_core.adapters.health import readiness
from web.sessions import database


@bp.route("/jobs")
@login_required
def jobs():
    """Recent job runs: staff see every run, an org admin the runs of their own org."""
    s, org_id, platform = reader()
    job = request.args.get("job") or None
    org_id = None if platform else org_id
    return render_template("console/jobs.html", runs=insights.job_runs(s, job, org_id=org_id, platform=platform),
                           names=insights.job_names(s, org_id=org_id, platform=platform),
                           job=job, platform=platform, health=readiness(database()))
