"""People of the current org, for its owners and admins: invite with a role and areas, change roles and
per-area permissions, deactivate, give a password-reset link, remove (with a preview of what goes), and
authorize phone numbers. Every action is audited by the tenancy services. Everything runs in the org's
row-security scope (`org_db`), never the system's: what that scope may not do by itself (another org's
emails and numbers, members' private memories) SECURITY DEFINER functions answer for this org only."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import EmailField, HiddenField, SelectField, StringField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional

from console import bp
from console.forms import EmptyForm
from console.operator import is_htmx
from console.web import console_actor, one_time_link, org_db, org_role_required
from memory_core.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from memory_core.domain.vocabulary import AREAS, ROLES
from memory_core.tenancy import members, phones
from memory_core.tenancy.members import MemberRow
from web.language import lazy_term, said

LEVELS = [SelectChoice("none", _l("no access")), SelectChoice("read", _l("read")),
          SelectChoice("edit", _l("read and edit"))]


class AreasMixin:
    """One select per area of the vocabulary (fields area_<name>)."""

    @classmethod
    def with_areas(cls):
        attrs = {f"area_{a}": SelectField(lazy_term("area", a), choices=LEVELS, default="none") for a in AREAS}
        return type(cls.__name__, (cls,), attrs)

    def permissions(self) -> dict[str, str]:
        return {a: getattr(self, f"area_{a}").data for a in AREAS}


class InviteForm(AreasMixin, FlaskForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320)])
    name = StringField(_l("Name"), validators=[Optional(), Length(max=200)])
    role = SelectField(_l("Role"), choices=[SelectChoice(r, lazy_term("role", r)) for r in ROLES], default="member")


class AreasForm(AreasMixin, FlaskForm):
    pass


class RoleForm(FlaskForm):
    role = SelectField(_l("Role"), choices=[SelectChoice(r, lazy_term("role", r)) for r in ROLES],
                       validators=[DataRequired()])


class ActiveForm(FlaskForm):
    active = SelectField(choices=[SelectChoice("1", _l("active")), SelectChoice("0", _l("deactivated"))],
                         validators=[DataRequired()])


class RemoveForm(FlaskForm):
    confirm = HiddenField(validators=[DataRequired()])


class PhoneForm(AreasMixin, FlaskForm):
    phone = StringField(_l("Phone number"), validators=[DataRequired(), Length(max=32)])
    person = SelectField(_l("Person behind it"), choices=[], validate_choice=False, default="")


InviteForm, AreasForm, PhoneForm = InviteForm.with_areas(), AreasForm.with_areas(), PhoneForm.with_areas()


def _org_id() -> uuid.UUID:
    return current_user.org().org_id


def _uuid(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        abort(404)


def _person_choices(people: list[MemberRow]) -> list[tuple[str, str]]:
    return [SelectChoice("", gettext("nobody (a shared number)"))] + [
        SelectChoice(str(p.user_id), f"{p.name} ({p.email})") for p in people]


def _page(invite_form=None, phone_form=None, shown_link: str | None = None, status: int = 200):
    s, org_id = org_db(), _org_id()
    people = members.list_members(s, org_id)
    phone_form = phone_form or PhoneForm(formdata=None)
    phone_form.person.choices = _person_choices(people)
    return render_template("console/people.html", org=current_user.org(), people=people, areas=AREAS,
                           invitations=members.pending_invitations(s, org_id), phones=phones.list_phones(s, org_id),
                           invite_form=invite_form or InviteForm(formdata=None), phone_form=phone_form,
                           shown_link=shown_link), status, {"Cache-Control": "no-store"}


@bp.route("/people", methods=["GET"])
@org_role_required("owner", "admin")
def people():
    """The org's people, pending invitations and authorized phones."""
    return _page()


@bp.route("/people/invite", methods=["POST"])
@org_role_required("owner", "admin")
def people_invite():
    """Invite a person with a role and areas: the one-time link is shown once, here."""
    form = InviteForm()
    if not form.validate_on_submit():
        return _page(invite_form=form, status=400)
    s = org_db()
    try:
        _row, token = members.invite(s, _org_id(), form.email.data, role=form.role.data, name=form.name.data or "",
                                     permissions=form.permissions(), actor=console_actor())
    except (InvalidInput, Conflict, Forbidden) as exc:
        named = getattr(exc, "field", None)
        (form[named] if named in form else form.email).errors.append(said(exc))
        return _page(invite_form=form, status=400 if isinstance(exc, InvalidInput) else 409)
    s.commit()
    return _page(shown_link=one_time_link("invite", token))


def _member(user_id: str) -> MemberRow:
    uid = _uuid(user_id)
    for p in members.list_members(org_db(), _org_id()):
        if p.user_id == uid:
            return p
    abort(404)


def _person_page(person: MemberRow, *, error: str | None = None, shown_link: str | None = None, status: int = 200):
    areas_form = AreasForm(formdata=None, data={f"area_{a}": person.permissions.get(a, "none") for a in AREAS})
    return render_template("console/person.html", person=person, areas=AREAS, areas_form=areas_form,
                           role_form=RoleForm(formdata=None, role=person.role), active_form=ActiveForm(formdata=None),
                           empty_form=EmptyForm(), error=error, shown_link=shown_link), status, \
        {"Cache-Control": "no-store"}


@bp.route("/people/<user_id>", methods=["GET"])
@org_role_required("owner", "admin")
def person(user_id: str):
    """One member: role, areas, status, reset link, removal."""
    return _person_page(_member(user_id))


def _change(user_id: str, form: FlaskForm, change) -> tuple:
    """Validate the form, run one tenancy change, commit, back to the person (or their page with the error)."""
    target = _member(user_id)
    if not form.validate_on_submit():
        return _person_page(target, error=gettext("Check the form and try again."), status=400)
    s = org_db()
    try:
        change(s, target)
    except (InvalidInput, Conflict, Forbidden) as exc:
        s.rollback()
        status = 400 if isinstance(exc, InvalidInput) else 403 if isinstance(exc, Forbidden) else 409
        return _person_page(_member(user_id), error=said(exc), status=status)
    s.commit()
    flash(gettext("Saved."))
    return redirect(url_for("console.person", user_id=user_id))


@bp.route("/people/<user_id>/role", methods=["POST"])
@org_role_required("owner", "admin")
def person_role(user_id: str):
    """Change a member's role (the last owner stays owner)."""
    form = RoleForm()
    return _change(user_id, form, lambda s, t: members.set_role(s, _org_id(), t.user_id, form.role.data,
                                                                 actor=console_actor()))


@bp.route("/people/<user_id>/areas", methods=["POST"])
@org_role_required("owner", "admin")
def person_areas(user_id: str):
    """Set a member's per-area permissions."""
    form = AreasForm()
    return _change(user_id, form, lambda s, t: members.set_permissions(s, _org_id(), t.user_id, form.permissions(),
                                                                        actor=console_actor()))


@bp.route("/people/<user_id>/active", methods=["POST"])
@org_role_required("owner", "admin")
def person_active(user_id: str):
    """Deactivate (no access, nothing forgotten) or reactivate a member."""
    form = ActiveForm()
    return _change(user_id, form, lambda s, t: members.set_active(s, _org_id(), t.user_id, form.active.data == "1",
                                                                   actor=console_actor()))


@bp.route("/people/<user_id>/reset-link", methods=["POST"])
@org_role_required("owner", "admin")
def person_reset_link(user_id: str):
    """A one-time password-reset link for the member, shown once, to hand over."""
    target = _member(user_id)
    if not EmptyForm().validate_on_submit():
        abort(400)
    s = org_db()
    try:
        token = members.org_reset_link(s, _org_id(), target.user_id, actor=console_actor())
    except Forbidden as exc:
        s.rollback()
        return _person_page(target, error=said(exc), status=403)
    s.commit()
    return _person_page(target, shown_link=one_time_link("reset", token))


@bp.route("/people/<user_id>/remove", methods=["GET"])
@org_role_required("owner", "admin")
def person_remove_preview(user_id: str):
    """What removing the member forgets and keeps, and the button that does it."""
    target = _member(user_id)
    try:
        preview = members.removal_preview(org_db(), _org_id(), target.user_id)
    except Conflict as exc:
        return _person_page(target, error=said(exc), status=409)
    return render_template("console/person_remove.html", person=target, preview=preview,
                           form=RemoveForm(formdata=None, confirm="remove"))


@bp.route("/people/<user_id>/remove", methods=["POST"])
@org_role_required("owner", "admin")
def person_remove(user_id: str):
    """Remove the member: the member-leaves forgetting rule."""
    target = _member(user_id)
    form = RemoveForm()
    if not form.validate_on_submit() or form.confirm.data != "remove":
        abort(400)
    s = org_db()
    try:
        counts = members.remove_member(s, _org_id(), target.user_id, actor=console_actor())
    except (Conflict, Forbidden) as exc:
        s.rollback()
        return _person_page(target, error=said(exc), status=409 if isinstance(exc, Conflict) else 403)
    s.commit()
    flash(gettext("%(name)s was removed: %(removed)d private memories deleted, %(kept)d shared ones kept.",
                  name=target.name, removed=counts["private_removed"], kept=counts["shared_kept"]))
    return redirect(url_for("console.people"))


@bp.route("/phones", methods=["POST"])
@org_role_required("owner", "admin")
def phone_authorize():
    """Authorize a phone number, for a member or for nobody, with its areas."""
    form = PhoneForm()
    if not form.validate_on_submit():
        return _page(phone_form=form, status=400)
    person_id = _uuid(form.person.data) if form.person.data else None
    s = org_db()
    try:
        phones.authorize_phone(s, _org_id(), form.phone.data, user_id=person_id, permissions=form.permissions(),
                               actor=console_actor())
    except (InvalidInput, Conflict, NotFound) as exc:
        s.rollback()
        form.phone.errors.append(said(exc))
        return _page(phone_form=form, status=400 if isinstance(exc, InvalidInput) else 409)
    s.commit()
    flash(gettext("Number authorized."))
    return redirect(url_for("console.people"))


@bp.route("/phones/<auth_id>/revoke", methods=["POST"])
@org_role_required("owner", "admin")
def phone_revoke(auth_id: str):
    """The number stops speaking in the org."""
    if not EmptyForm().validate_on_submit():
        abort(400)
    s = org_db()
    try:
        auth = phones.revoke_phone(s, _org_id(), _uuid(auth_id), actor=console_actor())
    except NotFound:
        abort(404)
    s.commit()
    if is_htmx():
        row = next(r for r in phones.list_phones(s, _org_id()) if r.id == auth.id)
        return render_template("console/tenancy/_phone_row.html", ph=row)
    flash(gettext("Number revoked."))
    return redirect(url_for("console.people"))
