"""Contacts: the customers and suppliers this person may read, each with its memories and proposals."""
from __future__ import annotations

import uuid

from flask import render_template, request
from flask_login import login_required

from console import bp
from console.operator import current_operator, or_abort
from console.services import curation, paging
from console.services.proposals import kind_labels
from console.web import org_db, org_read_db
from memory_core.domain.errors import MemoriaError
from memory_core.domain.vocabulary import ContactKind
from web.language import said, select_language


@bp.route("/contacts")
@login_required
def contacts():
    """Contacts list: search, filter by kind, sort, pages both ways."""
    op, s, a = current_operator(), org_read_db(), request.args
    q = (a.get("q") or "").strip() or None
    page, error = paging.Page([], None, None, 0), None
    try:
        page = curation.list_contacts(s, op, q, kind=a.get("kind") or None, sort=a.get("sort") or "name",
                                      after=a.get("after"), before=a.get("before"))
    except MemoriaError as exc:
        error = said(exc)
    return render_template("console/contacts.html", rows=page.rows, page=page, args=a, q=q or "", error=error,
                           kinds=tuple(ContactKind), facts_cap=curation.FACTS_CAP), 422 if error else 200


@bp.route("/contacts/<uuid:contact_id>")
@login_required
def contact(contact_id: uuid.UUID):
    """One contact: every memory about it and its pending proposals."""
    page = or_abort(curation.contact_page, org_db(), current_operator(), contact_id)
    return render_template("console/contact.html", page=page, kinds=kind_labels(select_language()))
