"""Sign in, sign out, pick the org to work in."""
from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from flask import abort, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext
from flask_login import current_user, login_required, login_user, logout_user

from console import bp
from console.forms import EmptyForm, LoginForm, OrgSwitchForm
from console.web import db, load_console_user, person_db
from memory_core.adapters.db import Scope
from memory_core.domain import audit
from memory_core.domain.errors import InvalidCredentials, TooManyAttempts
from memory_core.tenancy.accounts import authenticate, revoke_sessions
from web.language import said


@bp.route("/login", methods=["GET", "POST"])
def login():
    """Sign-in form."""
    if current_user.is_authenticated:
        return redirect(url_for("console.home"))
    form = LoginForm()
    if form.validate_on_submit():
        try:
            user_id = authenticate(db(Scope()), form.email.data, form.password.data, request.remote_addr or "unknown")
        except (InvalidCredentials, TooManyAttempts) as exc:
            form.password.errors.append(said(exc))
            return render_template("console/login.html", form=form), 429 if isinstance(exc, TooManyAttempts) else 200
        session.clear()
        s = person_db(user_id)
        login_user(load_console_user(s, user_id))
        audit.record(s, actor_user_id=user_id, actor_label="console sign-in", action="console.login")
        s.commit()
        return redirect(safe_next(request.args.get("next")) or url_for("console.home"))
    return render_template("console/login.html", form=form)


def safe_next(target: str | None) -> str | None:
    """Only same-site relative paths: never redirect to another host after sign-in.

    Browsers drop tabs and newlines from a URL and read a backslash as a slash, so "/%09/evil.com"
    means "//evil.com"; any whitespace or control character (a CR/LF would also split the header)
    refuses the target."""
    if not target or any(c.isspace() or not c.isprintable() or c == "\\" for c in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return None
    return target


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    """Sign out."""
    if not EmptyForm().validate_on_submit():
        abort(400)
    s = person_db(current_user.uid)
    revoke_sessions(s, current_user.uid)
    s.commit()
    logout_user()
    session.clear()
    flash(gettext("Signed out."))
    return redirect(url_for("console.login"))


@bp.route("/org", methods=["POST"])
@login_required
def switch_org():
    """Work in another of the user's orgs."""
    form = OrgSwitchForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        org_id = uuid.UUID(form.org_id.data)
    except ValueError:
        abort(400)
    if current_user.org(org_id) is None:
        abort(403)
    session["org_id"] = str(org_id)
    return redirect(url_for("console.home"))
