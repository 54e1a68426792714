"""Link WhatsApp: a member asks for a one-time code (shown once), and may adopt what their number
said before it was linked."""
from __future__ import annotations

from collections import Counter

from flask import abort, current_app, flash, make_response, redirect, render_template, url_for
from flask_babel import gettext
from flask_login import current_user, login_required
from flask_wtf import FlaskForm

from console import bp
from console.web import db, org_db, person_db
from memory_core.domain.errors import Conflict, Forbidden, TooManyAttempts
from memory_core.domain.models import User
from memory_core.tenancy import linking
from web.language import said


class ActionForm(FlaskForm):
    """Only the CSRF token."""


def _page(issued=None, status: int = 200):
    s = person_db(current_user.uid)
    phone = s.get(User, current_user.uid).phone
    history = linking.pre_link_history(s, current_user.uid)
    number = current_app.config["MEMORIA_SETTINGS"].whatsapp_number
    resp = make_response(render_template("console/link_whatsapp.html", org=current_user.org(), phone=phone,
                                         history=history, issued=issued, form=ActionForm(), number=number,
                                         wa_digits="".join(ch for ch in number or "" if ch.isdigit())), status)
    resp.headers["Cache-Control"] = "no-store"  # the code is shown once: never from a cache
    return resp


@bp.route("/link-whatsapp")
@login_required
def link_whatsapp():
    """The linked number, a button for a code, and the pre-link history."""
    return _page()


@bp.route("/link-whatsapp/code", methods=["POST"])
@login_required
def link_whatsapp_code():
    """Issue a code for the current org and show it once."""
    org = current_user.org()
    if org is None or not ActionForm().validate_on_submit():
        abort(403 if org is None else 400)
    s = org_db()  # the member's code in their current org: no system scope
    try:
        issued = linking.issue_link_code(s, current_user.uid, org.org_id)
    except (Forbidden, TooManyAttempts) as exc:
        flash(said(exc), "error")
        return _page(status=429 if isinstance(exc, TooManyAttempts) else 403)
    s.commit()
    return _page(issued)


@bp.route("/link-whatsapp/adopt", methods=["POST"])
@login_required
def link_whatsapp_adopt():
    """Adopt the linked number's earlier memories and messages: the person's own choice."""
    if not ActionForm().validate_on_submit():
        abort(400)
    own = person_db(current_user.uid)
    phone = own.get(User, current_user.uid).phone
    counts: Counter[str] = Counter()
    try:
        # The person's own scope with their number, one org (one transaction) at a time: no system scope.
        for scope in linking.adoption_scopes(own, current_user.uid, phone or ""):
            s = db(scope)
            counts.update(linking.adopt_pre_link_history(s, current_user.uid, phone or "", actor=current_user.uid))
            s.commit()
    except (Conflict, Forbidden) as exc:
        flash(said(exc), "error")
        return redirect(url_for("console.link_whatsapp"))
    flash(gettext("Adopted %(memories)d memories and %(messages)d messages from your number.",
                  memories=counts["memories"], messages=counts["messages"]))
    return redirect(url_for("console.link_whatsapp"))
