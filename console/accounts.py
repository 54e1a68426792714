"""The one-time links people open without signing in: the first platform admin's setup, accepting an
invitation (setting a password), and resetting a password. Each link works once and expires."""
from __future__ import annotations

from flask import flash, redirect, render_template, session, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, EqualTo, Length, Optional

from console import bp
from console.web import db, load_console_user, person_db
from memory_core.adapters.db import SYSTEM
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import Organization
from memory_core.tenancy import members, platform, tokens
from memory_core.tenancy.passwords import MIN_LENGTH
from web.language import said

NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
def password_help() -> str:
    return gettext("At least %(num)s characters; not a common password.", num=MIN_LENGTH)


class NewPasswordForm(FlaskForm):
    password = PasswordField(_l("Password"), validators=[DataRequired(), Length(max=200)])
    confirm = PasswordField(_l("Repeat the password"),
                            validators=[DataRequired(), EqualTo("password", _l("The passwords differ."))])


class SetupForm(NewPasswordForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320)])
    name = StringField(_l("Name"), validators=[DataRequired(), Length(max=200)])


class AcceptForm(NewPasswordForm):
    name = StringField(_l("Your name"), validators=[Optional(), Length(max=200)])


class JoinForm(FlaskForm):
    """Accepting with an account that already exists: no new password."""


def _sign_in(user) -> None:
    logout_user()
    session.clear()
    login_user(load_console_user(person_db(user.id), user.id))


def _invalid(exc: Exception):
    return render_template("console/tenancy/link_invalid.html", message=said(exc)), 404, NO_STORE


@bp.route("/setup/<token>", methods=["GET", "POST"])
def setup(token: str):
    """Create the first platform administrator with the one-time setup link."""
    s = db(SYSTEM)
    try:
        platform_ready = platform.has_platform_admin(s)
        if platform_ready:
            raise NotFound("This installation already has a platform administrator: sign in instead.")
        tokens.peek(s, "setup", token)
    except NotFound as exc:
        return _invalid(exc)
    form = SetupForm()
    if form.validate_on_submit():
        try:
            user = platform.complete_setup(s, token, form.email.data, form.name.data, form.password.data)
        except (InvalidInput, Conflict, NotFound) as exc:
            s.rollback()
            named = getattr(exc, "field", None)
            (form[named] if named in form else form.email).errors.append(said(exc))
        else:
            s.commit()
            _sign_in(user)
            flash(gettext("Welcome: you are the platform administrator. Create the first organization."))
            return redirect(url_for("console.platform_orgs"))
    return render_template("console/tenancy/setup.html", form=form, help=password_help()), 200, NO_STORE


@bp.route("/invitation/<token>", methods=["GET", "POST"])
def accept_invitation(token: str):
    """Accept an invitation: set a password (new account) or join with the existing account."""
    s = db(SYSTEM)
    try:
        invitation, has_account = members.invitation(s, token)
    except NotFound as exc:
        return _invalid(exc)
    org = s.get(Organization, invitation.org_id) if invitation.org_id else None
    if has_account and not (current_user.is_authenticated and current_user.email.lower() == invitation.email):
        flash(gettext("This invitation is for an existing account: sign in as that person, then open the link again."))
        return redirect(url_for("console.login", next=url_for("console.accept_invitation", token=token)))
    form = JoinForm() if has_account else AcceptForm()
    if form.validate_on_submit():
        try:
            user = members.accept_invitation(s, token, password=None if has_account else form.password.data,
                                             name=None if has_account else form.name.data)
        except (InvalidInput, NotFound) as exc:
            s.rollback()
            if isinstance(exc, NotFound):
                return _invalid(exc)
            form.password.errors.append(said(exc))
        else:
            s.commit()
            _sign_in(user)
            if invitation.org_id:
                session["org_id"] = str(invitation.org_id)
            flash(gettext("Welcome to %(org)s.", org=org.name) if org else gettext("Welcome."))
            return redirect(url_for("console.home"))
    return render_template("console/tenancy/invitation.html", form=form, invitation=invitation, org=org,
                           has_account=has_account, help=password_help()), 200, NO_STORE


@bp.route("/reset-password/<token>", methods=["GET", "POST"])
def reset_password(token: str):
    """Set a new password with a one-time reset link."""
    s = db(SYSTEM)
    try:
        tokens.peek(s, "reset", token)
    except NotFound as exc:
        return _invalid(exc)
    form = NewPasswordForm()
    if form.validate_on_submit():
        try:
            user = members.reset_password(s, token, form.password.data)
        except (InvalidInput, NotFound) as exc:
            s.rollback()
            if isinstance(exc, NotFound):
                return _invalid(exc)
            form.password.errors.append(said(exc))
        else:
            s.commit()
            _sign_in(user)
            flash(gettext("Your password was changed."))
            return redirect(url_for("console.home"))
    return render_template("console/tenancy/reset_password.html", form=form, help=password_help()), 200, NO_STORE
