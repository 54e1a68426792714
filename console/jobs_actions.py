"""Run a nightly job now on the admin's own org (owners and admins), from the Jobs page."""
from __future__ import annotations

from flask import abort, flash, redirect, url_for
from flask_babel import gettext
from flask_login import current_user

from console import audit_view, bp
from console.linking import ActionForm
from console.web import org_db, org_role_required
from memory_core.domain import audit, labels
from memory_core.domain.errors import InvalidInput
from web.language import select_language


@bp.route("/jobs/run/<job_name>", methods=["POST"])
@org_role_required("owner", "admin")
def run_job(job_name: str):
    """Enqueue one run of a nightly job."""
    from jobs.run_now import run_job_now

    if not ActionForm().validate_on_submit():
        abort(400)
    try:
        job_id = run_job_now(job_name, f"{audit_view.CONSOLE_TRIGGER}{current_user.uid}",
                             org_id=current_user.org().org_id)
    except InvalidInput:
        abort(404)
    s = org_db()  # the run is the current org's: its audit row is written in that org's scope
    audit.record(s, actor_user_id=current_user.uid, actor_label="console user", action="job.run_now",
                 org_id=current_user.org().org_id, target_type="job", target_id=job_name, details={"rq_job": job_id})
    s.commit()
    flash(gettext("%(job)s queued: its run shows here when the worker finishes it.",
                  job=labels.term("job", job_name, select_language())))
    return redirect(url_for("console.jobs"))
