"""The dashboard: what the signed-in person has to look at, per role."""
from __future__ import annotations

from flask import render_template
from flask_login import current_user, login_required

from console import bp
from console.forms import OrgSwitchForm
from console.operator import current_operator
from console.services import insights
from console.services.proposals import kind_labels, pending_counts
from console.web import db, org_db
from memory_core.adapters.db import platform_scope
from memory_core.domain.access import memory_visible
from web.language import select_language


@bp.route("/")
@login_required
def home():
    """Dashboard per role."""
    org, d = current_user.org(), insights.Dashboard()
    if org is not None:
        op, s = current_operator(), org_db()
        d.pending = pending_counts(s, op)
        d.learnt_24h = insights.learnt_since(s, org.org_id, memory_visible(op.access))
        if op.access.is_admin:
            d.jobs = insights.job_runs(s, limit=5, org_id=org.org_id)
            d.cost_month, d.calls_month = insights.month_cost(s, org.org_id)
    elif current_user.platform_role == "staff":
        s = db(platform_scope(current_user.uid))
        d.jobs = insights.job_runs(s, limit=5, platform=True)
        d.cost_month, d.calls_month = insights.month_cost(s, None)
        d.orgs = len(insights.org_names(s))
    elif current_user.platform_role == "privacy_officer":
        d.open_privacy = insights.open_privacy_requests(db(platform_scope(current_user.uid)))
    return render_template("console/home.html", org=org, d=d, kinds=kind_labels(select_language()),
                           switch_form=OrgSwitchForm())
