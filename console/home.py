"""The dashboard: what the signed-in person has to look at, per role."""
from __future__ import annotations

from flask import render_template
from flask_login import current_user, login_required

from console import bp
from console.forms import OrgSwitchForm


@bp.route("/")
@login_required
def home():
    """Dashboard per role."""
    return render_template("console/home.html", org=current_user.org(), switch_form=OrgSwitchForm())
