"""The one-time links people open without signing in: the first platform admin's setup, accepting an
invitation (setting a password), and resetting a password. Each link works once and expires.

No system scope: the link is read and used by SECURITY DEFINER functions keyed by its token
(memory_core.tenancy.tokens), in any scope; what its use writes is written in the person's own scope
(their account's, or the invitation's org with their id)."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from flask import flash, redirect, render_template, session, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from sqlalchemy.orm import Session
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, EqualTo, Length, Optional

from console import bp
from console.web import db, load_console_user, person_db
from memory_core.adapters.db import Scope, org_scope, person_scope
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import User
from memory_core.tenancy import members, platform, tokens
from memory_core.tenancy.passwords import MIN_LENGTH
from web.language import said

NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
# Reading a link needs no scope: memoria_link_peek answers only for its token.
ANYONE = Scope()


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


def _redeem(form: FlaskForm, scope: Scope, use: Callable[[Session], User], field: str,
            welcome: Callable[[User], Any]):
    """Use the one-time link with `use` in `scope` once the form is posted valid: commit, sign in the person
    it returns and answer `welcome(user)`. Refused input rolls back and is shown at its field (else at
    `field`); a link gone by now (used or expired meanwhile) shows the invalid-link page. None: show the
    form (again)."""
    if not form.validate_on_submit():
        return None
    s = db(scope)
    try:
        user = use(s)
    except NotFound as exc:
        s.rollback()
        return _invalid(exc)
    except (InvalidInput, Conflict) as exc:
        s.rollback()
        named = getattr(exc, "field", None)
        target = named if named in form else field
        if target in form:
            form[target].errors.append(said(exc))
        else:
            flash(said(exc), "error")
        return None
    s.commit()
    _sign_in(user)
    return welcome(user)


def _welcome(message: str, endpoint: str):
    flash(message)
    return redirect(url_for(endpoint))


@bp.route("/setup/<token>", methods=["GET", "POST"])
def setup(token: str):
    """Create the first platform administrator with the one-time setup link."""
    try:
        link = tokens.peek(db(ANYONE), "setup", token)
        if link.admin_exists:
            raise NotFound("This installation already has a platform administrator: sign in instead.")
    except NotFound as exc:
        return _invalid(exc)
    form = SetupForm()
    new_id = uuid.uuid4()  # the new account writes itself, in its own scope
    done = _redeem(form, person_scope(new_id),
                   lambda s: platform.complete_setup(s, token, form.email.data, form.name.data, form.password.data,
                                                     user_id=new_id), "email",
                   lambda _user: _welcome(gettext("Welcome: you are the platform administrator. Create the first "
                                                  "organization."), "console.platform_orgs"))
    if done is not None:
        return done
    return render_template("console/tenancy/setup.html", form=form, help=password_help()), 200, NO_STORE


@bp.route("/invitation/<token>", methods=["GET", "POST"])
def accept_invitation(token: str):
    """Accept an invitation: set a password (new account) or join with the existing account."""
    try:
        invitation, has_account = members.invitation(db(ANYONE), token)
    except NotFound as exc:
        return _invalid(exc)
    if has_account and not (current_user.is_authenticated and current_user.email.lower() == invitation.email):
        flash(gettext("This invitation is for an existing account: sign in as that person, then open the link again."))
        return redirect(url_for("console.login", next=url_for("console.accept_invitation", token=token)))
    form = JoinForm() if has_account else AcceptForm()
    # The person writes their own rows: in the invitation's org (their membership) or, for a platform
    # role, in their own scope; a new account's id is chosen here so the scope can name it.
    person = invitation.account_id or uuid.uuid4()
    scope = org_scope(invitation.org_id, person) if invitation.org_id else person_scope(person)

    def accept(s: Session) -> User:
        if has_account:
            return members.accept_invitation(s, token, password=None)
        return members.accept_invitation(s, token, password=form.password.data, name=form.name.data, user_id=person)

    def welcome(_user: User):
        if invitation.org_id:
            session["org_id"] = str(invitation.org_id)
        return _welcome(gettext("Welcome to %(org)s.", org=invitation.org_name) if invitation.org_id
                        else gettext("Welcome."), "console.home")

    done = _redeem(form, scope, accept, "password", welcome)
    if done is not None:
        return done
    return render_template("console/tenancy/invitation.html", form=form, invitation=invitation,
                           has_account=has_account, help=password_help()), 200, NO_STORE


@bp.route("/reset-password/<token>", methods=["GET", "POST"])
def reset_password(token: str):
    """Set a new password with a one-time reset link."""
    try:
        link = tokens.peek(db(ANYONE), "reset", token)
    except NotFound as exc:
        return _invalid(exc)
    form = NewPasswordForm()
    done = _redeem(form, person_scope(link.account_id), lambda s: members.reset_password(s, token, form.password.data),
                   "password", lambda _user: _welcome(gettext("Your password was changed."), "console.home"))
    if done is not None:
        return done
    return render_template("console/tenancy/reset_password.html", form=form, help=password_help()), 200, NO_STORE
