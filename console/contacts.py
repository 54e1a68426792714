"""Contacts: the customers and suppliers this person may read, each with its memories and proposals."""
from __future__ import annotations

import uuid

from flask import abort, render_template, request
from flask_login import login_required

from console import bp
from console.operator import current_operator
from console.services import curation
from console.services.proposals import KIND_LABELS
from console.web import org_db, org_read_db
from memory_core.domain.errors import MemoriaError
from web.errors import status_of


@bp.route("/contacts")
@login_required
def contacts():
    """Contacts list with a search box."""
    op, s = current_operator(), org_read_db()
    q = (request.args.get("q") or "").strip() or None
    try:
        rows, error = curation.list_contacts(s, op, q), None
    except MemoriaError as exc:
        rows, error = [], str(exc)
    return render_template("console/contacts.html", rows=rows, q=q or "", error=error), 422 if error else 200


@bp.route("/contacts/<uuid:contact_id>")
@login_required
def contact(contact_id: uuid.UUID):
    """One contact: every memory about it and its pending proposals."""
    op, s = current_operator(), org_db()
    try:
        page = curation.contact_page(s, op, contact_id)
    except MemoriaError as exc:
        abort(status_of(exc))
    return render_template("console/contact.html", page=page, kinds=KIND_LABELS)
