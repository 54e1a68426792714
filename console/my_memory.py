"""My memory: the signed-in person's own memory (any role): list, edit, delete, forget a subject, pause
learning, export. Every read runs in the person's own row-security scope, one per org, so nobody
reaches another person's personal memories from here."""
from __future__ import annotations

import json
import uuid

from flask import Response, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext, ngettext
from flask_login import current_user, login_required
from sqlalchemy.orm import Session

from console import bp
from console.confirm import ask, confirmed
from console.operator import is_htmx
from console.web import actor_label, db
from memory_core.domain.access import Access, Principal, member_access
from memory_core.domain.errors import Forbidden, MemoriaError, NotFound
from memory_core.privacy import my_memory
from web.errors import status_of
from web.language import said, select_language


def _views(*, personal_apart: bool = True) -> list[tuple[Session, Access]]:
    """The person's own memory as seen from each place: personal first, then each of their orgs.
    `personal_apart=False` (the page's list): a person with an org has no org-less view; their first org's view
    lists the personal memories too (a principal scope with an org sees them by the same personal arm of
    memory_visible), so the page is one transaction, the user loader's, moved to that org's scope."""
    personal = Access(Principal(user_id=current_user.uid), None)
    views = [] if current_user.orgs and not personal_apart else [(db(personal.scope()), personal)]
    for o in current_user.orgs:  # the active memberships the user loader read for this request
        access = member_access(current_user.uid, o.org_id, o.role, o.permissions)
        views.append((db(access.scope()), access))
    return views


def _locate(memory_id: uuid.UUID) -> tuple[Session, Access]:
    """The view in which this memory is the person's own; 404 when it is nobody's they may see,
    403 when it is a shared one (theirs to see, not to change)."""
    for s, access in _views():
        try:
            my_memory.get_own(s, access, memory_id)
            return s, access
        except NotFound:
            continue
        except Forbidden:
            abort(403)
    abort(404)


def shared_note() -> str:
    """my_memory.SHARED_ONLY_SEEN in the page's language."""
    return gettext("Shared memories belong to the organization: they are listed here to see, not to change (whoever "
                   "may edit their area changes them in the organization's memories).")


def _page(errors: dict | None = None, form=None, status: int = 200):
    views = _views(personal_apart=False)
    sections = my_memory.person_sections(views, lang=select_language(),
                                         org_names={o.org_id: o.org_name for o in current_user.orgs})
    paused = current_user.learning_paused_at  # as the user loader read it, this request (my_memory.paused_since)
    subjects = {g.subject: g.label for sec in sections if sec.editable for g in sec.groups}
    return render_template("console/my_memory.html", sections=sections, paused=paused, errors=errors or {},
                           form=form or {}, subjects=subjects, shared_note=shared_note()), status


def _done(message: str):
    flash(message)
    return redirect(url_for("console.my_memory_page")), 303


@bp.route("/my-memory")
@login_required
def my_memory_page():
    """What memoria knows about me, grouped by where it applies and by subject."""
    return _page()


@bp.route("/my-memory/<uuid:memory_id>/edit", methods=["POST"])
@login_required
def my_memory_edit(memory_id: uuid.UUID):
    """Correct one of my memories: a new hand-edited version."""
    s, access = _locate(memory_id)
    try:
        row = my_memory.edit_own(s, access, memory_id, request.form.get("value", ""),
                                 request.form.get("sentence", ""), actor_label=actor_label(), origin="console")
    except MemoriaError as exc:
        s.rollback()
        if is_htmx():  # 200 so htmx swaps the row in with the message next to the form
            m = my_memory.get_own(s, access, memory_id)
            return render_template("console/_my_memory_item.html", i=my_memory.item(s, access, m), error=said(exc),
                                   form=request.form)
        return _page({memory_id: said(exc)}, request.form, status_of(exc))
    s.commit()
    if is_htmx():
        return render_template("console/_my_memory_item.html", i=my_memory.item(s, access, row),
                               message=gettext("Saved as a new version, marked edited by hand."), form={})
    return _done(gettext("Saved as a new version, marked edited by hand."))


@bp.route("/my-memory/<uuid:memory_id>/delete", methods=["POST"])
@login_required
def my_memory_delete(memory_id: uuid.UUID):
    """Delete one of my memories with its older versions (after a confirmation)."""
    s, access = _locate(memory_id)
    if not confirmed():
        return ask(action=url_for("console.my_memory_delete", memory_id=memory_id),
                   question=gettext("Delete this memory with its versions?"),
                   consequence=gettext("“%(sentence)s” and every older version of it are deleted for good; the "
                                       "assistant stops using it.",
                                       sentence=my_memory.get_own(s, access, memory_id).sentence),
                   button=gettext("Delete for good"), back=url_for("console.my_memory_page"))
    n = my_memory.delete_own(s, access, memory_id, actor_label=actor_label())
    s.commit()
    message = gettext("Deleted.") if n == 1 else ngettext("Deleted, with its %(num)d older version.",
                                                          "Deleted, with its %(num)d older versions.", n - 1)
    if is_htmx():
        return render_template("console/_my_memory_gone.html", message=message)
    return _done(message)


@bp.route("/my-memory/forget-subject", methods=["POST"])
@login_required
def my_memory_forget_subject():
    """Forget everything of mine about one subject, in every org (after a confirmation)."""
    subject = request.form.get("subject") or request.args.get("subject") or ""
    try:
        subject = my_memory.check_subject(subject)
    except MemoriaError as exc:
        return _page({"forget": said(exc)}, request.form, status_of(exc))
    if not confirmed():
        return ask(action=url_for("console.my_memory_forget_subject", subject=subject),
                   question=gettext("Forget everything of yours about this subject?"),
                   consequence=gettext("Your personal and private memories about it, with their older versions, are "
                                       "deleted for good in every organization. Shared facts stay."),
                   button=gettext("Forget for good"), back=url_for("console.my_memory_page"))
    n, views = 0, _views()  # the personal view first
    for i, (s, access) in enumerate(views):
        n += my_memory.forget_subject(s, access, subject, actor_label=actor_label(), personal=i == 0)
    for s, _ in views:
        s.commit()
    return _done(ngettext("Forgot %(num)d memory row about it.", "Forgot %(num)d memory rows about it.", n) if n
                 else gettext("Nothing of yours was about it."))


@bp.route("/my-memory/learning", methods=["POST"])
@login_required
def my_memory_learning():
    """Pause or resume learning from my messages."""
    paused = request.form.get("paused")
    if paused not in ("0", "1"):
        abort(400)
    s, access = _views()[0]
    my_memory.set_learning_paused(s, access.principal, paused == "1", actor_label=actor_label())
    s.commit()
    return _done(gettext("Learning paused: nothing new is learnt from your messages until you resume it.")
                 if paused == "1" else gettext("Learning resumed."))


@bp.route("/my-memory/export.json")
@login_required
def my_memory_export():
    """Everything on this page, with older versions, as a JSON download."""
    body = json.dumps(my_memory.export(_views()), indent=2, ensure_ascii=False)
    return Response(body, mimetype="application/json", headers={
        "Content-Disposition": 'attachment; filename="my-memory.json"', "Cache-Control": "no-store"})
