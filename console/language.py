"""The language switch: in the header and on the sign-in page, for anyone; saved on the account when signed in."""
from __future__ import annotations

from flask import abort, redirect, url_for
from flask_login import current_user

from console import bp
from console.auth import safe_next
from console.forms import LanguageForm
from console.web import actor_label, db
from memory_core.domain.access import Access, Principal
from memory_core.tenancy.preferences import set_console_language
from web.language import chosen, remember


@bp.route("/language", methods=["POST"])
def set_language():
    """Read the console in Spanish or English from now on."""
    form = LanguageForm()
    if not form.validate_on_submit():
        abort(400)
    language = chosen(form.language.data)
    if language is None:
        abort(400)
    if current_user.is_authenticated:
        s = db(Access(Principal(user_id=current_user.uid), None).scope())
        set_console_language(s, current_user.uid, language, actor_label=actor_label())
        s.commit()
    return remember(redirect(safe_next(form.next.data) or url_for("console.home")), language)

