"""Settings (owner/admin): memory mode, the memory block's language, the org's exclusion list, retention."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from console import bp
from console.services import org_settings
from console.web import actor_label, org_db, org_role_required
from memory_core.domain.errors import MemoriaError
from memory_core.privacy import retention
from web.errors import status_of
from web.language import said


@bp.route("/settings")
@org_role_required("owner", "admin")
def settings():
    """The org's settings page."""
    return _page({}, {})


@bp.route("/settings/mode", methods=["POST"])
@org_role_required("owner", "admin")
def settings_mode():
    """Switch the memory mode."""
    mode = request.form.get("memory_mode", "")
    return _change(lambda s, actor, org_id: org_settings.set_memory_mode(s, actor, org_id, mode),
                   gettext("Memory mode saved."))


@bp.route("/settings/language", methods=["POST"])
@org_role_required("owner", "admin")
def settings_language():
    """Fix the language of the memory block, or leave it to each conversation."""
    return _change(lambda s, actor, org_id: org_settings.set_block_language(s, actor, org_id,
                                                                        request.form.get("language", "")),
                   gettext("Memory block language saved."))


@bp.route("/settings/retention", methods=["POST"])
@org_role_required("owner", "admin")
def settings_retention():
    """Tighten retention."""
    return _change(lambda s, actor, org_id: org_settings.set_retention(s, actor, org_id, request.form),
                   gettext("Retention saved."))


@bp.route("/settings/exclusions", methods=["POST"])
@org_role_required("owner", "admin")
def settings_exclusion_add():
    """Add a rule to the org's exclusion list."""
    f = request.form
    return _change(lambda s, actor, org_id: org_settings.add_exclusion(
        s, actor, org_id, kind=f.get("kind", ""), name=f.get("name", ""), pattern=f.get("pattern", ""),
        description=f.get("description", "")), "Rule added: nothing matching it will be learnt.")


@bp.route("/settings/exclusions/<uuid:exclusion_id>", methods=["POST"])
@org_role_required("owner", "admin")
def settings_exclusion_change(exclusion_id: uuid.UUID):
    """Turn one of the org's rules on or off, or remove it."""
    remove = request.form.get("op") == "remove"
    return _change(lambda s, actor, org_id: org_settings.toggle_exclusion(s, actor, org_id, exclusion_id,
                                                                          remove=remove),
                   gettext("Rule removed.") if remove else gettext("Rule updated."))


def _change(action, done: str):
    s, org = org_db(), current_user.org()
    try:
        action(s, (current_user.uid, actor_label()), org.org_id)
    except MemoriaError as exc:
        s.rollback()
        if status_of(exc) == 404:
            abort(404)
        return _page({getattr(exc, "field", None) or "form": said(exc)}, request.form, status_of(exc))
    s.commit()
    flash(done)
    return redirect(url_for("console.settings")), 303


# retention.ORG_LABELS, marked here so that the catalog has them (the domain holds no translations).
_RETENTION_MSGIDS = (_l("Keep superseded versions for (days)"), _l("Remove proposals nobody decided after (days)"))


def _page(errors: dict, form, code: int = 200):
    data = org_settings.org_settings(org_db(), current_user.org().org_id)
    return render_template("console/settings.html", d=data, errors=errors, form=form,
                           labels={k: gettext(v) for k, v in retention.ORG_LABELS.items()},
                           defaults=retention.DEFAULTS), code
