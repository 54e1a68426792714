"""API keys: owners and admins create them (the key is shown once) and revoke them; every action audited."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import StringField
from wtforms.validators import DataRequired, Length

from console import bp, shown_once
from console.forms import EmptyForm
from console.web import actor_label, org_db, org_role_required
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.tenancy.api_keys import create_api_key, list_api_keys, revoke_api_key
from web.language import said


class ApiKeyForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=100)])


def _page(form: ApiKeyForm, new_key: str | None = None, status: int = 200):
    org = current_user.org()
    keys = list_api_keys(org_db(), org.org_id)
    return render_template("console/api_keys.html", form=form, keys=keys, new_key=new_key,
                           revoke_form=EmptyForm(), org=org), status


@bp.route("/api-keys", methods=["GET"])
@org_role_required("owner", "admin")
def api_keys():
    """The org's API keys; right after creating one, the new key, shown this once."""
    nonce = request.args.get("shown", "")
    if not nonce:
        return _page(ApiKeyForm())
    key = shown_once.take("api-key", nonce)
    if key is None:
        flash(gettext("A new key is shown only once. If it was not copied, revoke it and create another."), "error")
        return redirect(url_for("console.api_keys"))
    page, _ = _page(ApiKeyForm(), new_key=key)
    return page, 200, {"Cache-Control": "no-store"}


@bp.route("/api-keys", methods=["POST"])
@org_role_required("owner", "admin")
def create_key():
    """Create a key, then redirect to the page that shows it once (a reload creates nothing). The key is never
    stored in the database nor put in the session cookie: only in Redis, for its creator, until shown."""
    form = ApiKeyForm()
    if not form.validate_on_submit():
        return _page(form, status=400)
    s = org_db()
    try:
        _row, key = create_api_key(s, current_user.org().org_id, form.name.data, created_by=current_user.uid,
                                   actor_label=actor_label())
    except InvalidInput as exc:
        form.name.errors.append(said(exc))
        return _page(form, status=400)
    s.commit()
    return redirect(url_for("console.api_keys", shown=shown_once.stash("api-key", key))), 303


@bp.route("/api-keys/<key_id>/revoke", methods=["POST"])
@org_role_required("owner", "admin")
def revoke_key(key_id: str):
    """Revoke a key: requests with it answer 401 from now on."""
    if not EmptyForm().validate_on_submit():
        abort(400)
    try:
        kid = uuid.UUID(key_id)
    except ValueError:
        abort(404)
    s = org_db()
    try:
        row = revoke_api_key(s, current_user.org().org_id, kid, revoked_by=current_user.uid,
                             actor_label=actor_label())
    except NotFound:
        abort(404)
    s.commit()
    flash(gettext("Key %(prefix)s… revoked.", prefix=row.prefix))
    return redirect(url_for("console.api_keys"))
