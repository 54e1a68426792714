"""Memories: browse and search, a memory's versions and sources, restore, edit, pin, delete."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import login_required
from sqlalchemy import select

from console import bp
from console.confirm import ask, confirmed
from console.operator import current_operator, is_htmx, parse_uuid
from console.services import curation
from console.web import org_db, org_read_db
from memory_core.domain.access import contact_visible
from memory_core.domain.errors import MemoriaError
from memory_core.domain.models import Contact
from memory_core.domain.vocabulary import AREAS, MEMORY_CATEGORIES, STATUSES
from web.errors import status_of


@bp.route("/memories")
@login_required
def memories():
    """Browse and search the memories this person may see."""
    op, s = current_operator(), org_read_db()
    a = request.args
    f = curation.MemoryFilters(q=(a.get("q") or "").strip() or None, subject=a.get("subject") or None,
                               contact_id=parse_uuid(a.get("contact")), owner=a.get("owner") or None,
                               level=a.get("level") or None, area=a.get("area") or None,
                               category=a.get("category") or None, status=a.get("status", "active") or None)
    try:
        page = curation.list_memories(s, op, f, after=a.get("after"), before=a.get("before"),
                                      oldest_first=a.get("sort") == "oldest")
        error = None
    except MemoriaError as exc:
        page, error = curation.MemoryPage([], None), str(exc)
    contacts = s.execute(select(Contact.id, Contact.name).where(contact_visible(op.access))
                         .order_by(Contact.name).limit(500)).all()
    return render_template("console/memories.html", page=page, args=a, error=error, contacts=contacts,
                           levels=("private", "shared"), areas=AREAS, categories=MEMORY_CATEGORIES,
                           statuses=STATUSES), 422 if error else 200


@bp.route("/memories/<uuid:memory_id>")
@login_required
def memory(memory_id: uuid.UUID):
    """One memory: its versions (who, when, from which message, superseded by what) and actions."""
    op, s = current_operator(), org_db()
    try:
        d = curation.memory_detail(s, op, memory_id)
    except MemoriaError as exc:
        abort(status_of(exc))
    return _page(d)


@bp.route("/memories/<uuid:memory_id>/restore", methods=["POST"])
@login_required
def memory_restore(memory_id: uuid.UUID):
    """Restore this old version as a new current one (after a confirmation)."""
    if not confirmed():
        d = _detail_or_abort(memory_id)
        if not d.may_restore:
            abort(403)
        return ask(action=url_for("console.memory_restore", memory_id=memory_id), question="Restore this version?",
                   consequence=restore_consequence(d, memory_id), button="Restore this version",
                   back=url_for("console.memory", memory_id=memory_id), danger=False)
    return _act(memory_id, lambda s, op: curation.restore(s, op, memory_id), "Version restored.")


@bp.route("/memories/<uuid:memory_id>/edit", methods=["POST"])
@login_required
def memory_edit(memory_id: uuid.UUID):
    """Correct the memory by hand (a new, hand-edited version)."""
    f = request.form
    return _act(memory_id, lambda s, op: curation.edit(s, op, memory_id, f.get("value", ""), f.get("sentence", ""),
                                                       typed_account=f.get("confirm_account")),
                                                       "Saved as a new version.")


@bp.route("/memories/<uuid:memory_id>/pin", methods=["POST"])
@login_required
def memory_pin(memory_id: uuid.UUID):
    """Pin or unpin."""
    pinned = request.form.get("pinned") == "1"
    return _act(memory_id, lambda s, op: curation.set_pinned(s, op, memory_id, pinned),
                "Pinned." if pinned else "Unpinned.")


@bp.route("/memories/<uuid:memory_id>/delete", methods=["POST"])
@login_required
def memory_delete(memory_id: uuid.UUID):
    """Delete the memory and its older versions (after a confirmation)."""
    if not confirmed():
        d = _detail_or_abort(memory_id)
        if not d.may_change:
            abort(403)
        return ask(action=url_for("console.memory_delete", memory_id=memory_id),
                   question="Delete this memory with its versions?", consequence=delete_consequence(d),
                   button="Delete for good", back=url_for("console.memory", memory_id=memory_id))
    op, s = current_operator(), org_db()
    try:
        n = curation.delete_memory(s, op, memory_id)
    except MemoriaError as exc:
        abort(status_of(exc))
    s.commit()
    flash(f"Deleted the memory and its {n - 1} older version(s)." if n > 1 else "Deleted the memory.")
    return redirect(url_for("console.memories")), 303


def delete_consequence(d) -> str:
    n = len(d.versions)
    return (f"This deletes {n} version{'s' if n != 1 else ''} of this fact, with their sources. "
            "It cannot be undone.")


def restore_consequence(d, version_id) -> str:
    old = next((v.memory for v in d.versions if v.memory.id == version_id), None)
    now = f"the current value «{d.current.value}» is kept as an older version" if d.current else "it becomes current"
    value = f"«{old.value}»" if old else "this value"
    return f"Makes {value} current again as a new version; {now}."


def _page(d, errors=None, form=None):
    return render_template("console/memory.html", d=d, errors=errors or {}, form=form or {},
                           delete_consequence=delete_consequence(d), restore_consequence=restore_consequence)


def _detail_or_abort(memory_id):
    try:
        return curation.memory_detail(org_db(), current_operator(), memory_id)
    except MemoriaError as exc:
        abort(status_of(exc))


def _act(memory_id, action, done: str):
    op, s = current_operator(), org_db()
    try:
        row = action(s, op)
    except MemoriaError as exc:
        s.rollback()
        code = status_of(exc)
        if code in (403, 404):
            abort(code)
        try:
            d = curation.memory_detail(s, op, memory_id)
        except MemoriaError as again:
            abort(status_of(again))
        field = getattr(exc, "field", None)
        return _page(d, errors={field if field in ("value", "sentence", "confirm_account") else "form": str(exc)},
                     form=request.form), code
    s.commit()
    flash(done)
    target = url_for("console.memory", memory_id=row.id)
    if is_htmx():
        return "", 204, {"HX-Redirect": target}
    return redirect(target), 303
