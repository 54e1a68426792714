"""Platform administration: organizations (create with the owner's invitation, size and activity,
suspend), platform roles (grant staff, privacy officer, platform admin) and platform API keys.

Every page works in the platform admin's platform scope (`admin_db`): the database lets a platform admin
read and write exactly these (migration t3_sec_platform_scope), never an org's data."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import EmailField, SelectField, StringField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional

from console import bp
from console.key_pages import KeyPages
from console.web import console_actor, db, one_time_link, platform_role_required
from memory_core.adapters.db import platform_scope
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.tenancy import orgs, platform
from memory_core.tenancy.api_keys import PLATFORM
from web.language import lazy_term, said

NO_STORE = {"Cache-Control": "no-store"}


def admin_db():
    """The signed-in platform admin's session, in their platform scope."""
    return db(platform_scope(current_user.uid))


class OrgForm(FlaskForm):
    name = StringField(_l("Name"), validators=[DataRequired(), Length(max=200)])
    owner_email = EmailField(_l("Owner's email"), validators=[DataRequired(), Length(max=320)])
    owner_name = StringField(_l("Owner's name"), validators=[Optional(), Length(max=200)])


class SuspendForm(FlaskForm):
    suspend = SelectField(choices=[SelectChoice("1", _l("suspend")), SelectChoice("0", _l("restore"))],
                          validators=[DataRequired()])


class RoleGrantForm(FlaskForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320)])
    role = SelectField(_l("Platform role"), choices=[
        *(SelectChoice(r, lazy_term("role", r)) for r in ("staff", "privacy_officer", "platform_admin")),
        SelectChoice("", _l("none"))],
                       validate_choice=True)


# ---------------------------------------------------------------------------- organizations

def _orgs_page(form=None, shown_link=None, status=200):
    return render_template("console/platform/orgs.html", orgs=orgs.list_orgs(admin_db()),
                           form=form or OrgForm(formdata=None),
                           suspend_form=SuspendForm(formdata=None), shown_link=shown_link), status, NO_STORE


@bp.route("/platform/orgs", methods=["GET"])
@platform_role_required("platform_admin")
def platform_orgs():
    """Every organization with its size and activity."""
    return _orgs_page()


@bp.route("/platform/orgs", methods=["POST"])
@platform_role_required("platform_admin")
def platform_org_create():
    """Create an organization and its owner's one-time invitation (the link is shown once)."""
    form = OrgForm()
    if not form.validate_on_submit():
        return _orgs_page(form, status=400)
    s = admin_db()
    try:
        _org, (_row, token) = orgs.create_org(s, form.name.data, owner_email=form.owner_email.data,
                                              owner_name=form.owner_name.data or "", actor=console_actor())
    except (InvalidInput, Conflict) as exc:
        s.rollback()
        named = {"email": "owner_email"}.get(getattr(exc, "field", None), getattr(exc, "field", None))
        (form[named] if named in form else form.name).errors.append(said(exc))
        return _orgs_page(form, status=400)
    s.commit()
    return _orgs_page(shown_link=one_time_link("invite", token))


@bp.route("/platform/orgs/<org_id>/suspend", methods=["POST"])
@platform_role_required("platform_admin")
def platform_org_suspend(org_id: str):
    """Suspend or restore an organization."""
    form = SuspendForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        oid = uuid.UUID(org_id)
    except ValueError:
        abort(404)
    s = admin_db()
    try:
        org = orgs.set_suspended(s, oid, form.suspend.data == "1", actor=console_actor())
    except NotFound:
        abort(404)
    s.commit()
    flash(gettext("%(org)s is suspended.", org=org.name) if org.suspended_at
          else gettext("%(org)s is active again.", org=org.name))
    return redirect(url_for("console.platform_orgs"))


# ---------------------------------------------------------------------------- platform roles

def _people_page(form=None, shown_link=None, status=200):
    return render_template("console/platform/people.html", people=platform.platform_people(admin_db()),
                           form=form or RoleGrantForm(formdata=None), shown_link=shown_link), status, NO_STORE


@bp.route("/platform/people", methods=["GET"])
@platform_role_required("platform_admin")
def platform_people():
    """Who holds a platform role."""
    return _people_page()


@bp.route("/platform/people", methods=["POST"])
@platform_role_required("platform_admin")
def platform_role_set():
    """Grant (or take away) a platform role; an email without an account gets an invitation link."""
    form = RoleGrantForm()
    if not form.validate_on_submit():
        return _people_page(form, status=400)
    s = admin_db()
    try:
        token = platform.grant_or_invite(s, form.email.data, form.role.data or None, actor=console_actor())
    except (InvalidInput, Conflict) as exc:
        s.rollback()
        form.email.errors.append(said(exc))
        return _people_page(form, status=400 if isinstance(exc, InvalidInput) else 409)
    s.commit()
    if token:
        return _people_page(shown_link=one_time_link("invite", token))
    flash(gettext("Platform role saved."))
    return redirect(url_for("console.platform_people"))


# ---------------------------------------------------------------------------- platform API keys

KEYS = KeyPages(PLATFORM, "console.platform_keys", "console/platform/keys.html", session=admin_db,
                org_id=lambda: None, headers=NO_STORE)


@bp.route("/platform/keys", methods=["GET"])
@platform_role_required("platform_admin")
def platform_keys():
    """Platform API keys (they may create organizations over the API); right after creating one, the new key,
    shown this once."""
    return KEYS.show()


@bp.route("/platform/keys", methods=["POST"])
@platform_role_required("platform_admin")
def platform_key_create():
    """Create a platform key, then redirect to the page that shows it once (a reload creates nothing)."""
    return KEYS.create()


@bp.route("/platform/keys/<key_id>/revoke", methods=["POST"])
@platform_role_required("platform_admin")
def platform_key_revoke(key_id: str):
    """Revoke a platform key."""
    return KEYS.revoke(key_id)
