"""Privacy requests (privacy officer only): intake, verify, preview, execute with progress, receipt, export.

Intake, verification and rejection run in the officer's platform scope; the preview, the execution and the export
read every table, so the worker runs them in system scope (jobs/privacy.py) and the request's page shows each
step's state, refreshing itself (no JavaScript needed) while one is waiting or running."""
from __future__ import annotations

import json
import uuid

from flask import Response, abort, flash, redirect, render_template, request, url_for
from flask_babel import format_number, gettext
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional

from console import bp
from console.confirm import ask, confirmed
from console.services import insights, paging
from console.web import db, platform_role_required
from jobs import privacy as privacy_jobs
from memory_core.adapters.db import platform_scope
from memory_core.domain import clock, labels
from memory_core.domain.errors import InvalidInput, MemoriaError, NotFound
from memory_core.domain.vocabulary import PrivacyKind, PrivacyStatus
from memory_core.privacy import requests as privacy
from web.language import said, select_language

officer = platform_role_required("privacy_officer")


class IntakeForm(FlaskForm):
    kind = SelectField(_l("Request"), choices=[
        SelectChoice("erasure", _l("Erasure (GDPR art. 17)")),
        SelectChoice("access", _l("Access: a copy of their data (GDPR art. 15)")),
        SelectChoice("portability", _l("Portability: their data to take elsewhere (GDPR art. 20)"))])
    subject_type = SelectField(_l("Subject"), choices=[
        SelectChoice("user", _l("User (email or id)")), SelectChoice("phone", _l("Phone number")),
        SelectChoice("contact", _l("Contact (id)")), SelectChoice("conversation", _l("Conversation (id)"))])
    subject_ref = StringField(_l("Who or what"), validators=[DataRequired(), Length(max=200)])
    requested_by = StringField(_l("Who asked"), validators=[DataRequired(), Length(max=300)])
    basis = StringField(_l("Basis (leave empty for the article of the request)"),
                        validators=[Optional(), Length(max=500)])
    verification = TextAreaField(_l("Identity verification (so far)"), validators=[Length(max=2000)])


def record_name(table: str) -> str:
    """An erasure plan's table, as an officer reads it."""
    return labels.term("table", table, select_language())


@bp.context_processor
def _privacy_words():
    kind_names = {k: labels.term("privacy_kind", k, select_language()) for k in PrivacyKind}
    return {"kind_names": kind_names, "closed": privacy.CLOSED, "record_names": record_name}


class NoteForm(FlaskForm):
    note = TextAreaField(_l("Note"), validators=[DataRequired(), Length(max=2000)])


class VerifyForm(FlaskForm):
    """The note may stay empty when the verification was already written at intake."""
    note = TextAreaField(_l("Note"), validators=[Optional(), Length(max=2000)])


class ActionForm(FlaskForm):
    """Only the CSRF token: preview and execute buttons."""


def _officer_db():
    """The privacy officer's session: the platform scope, in which the database lets a privacy officer read
    and move privacy requests (migrations t1_sysscope_platform_scope, t3_sec_platform_scope)."""
    return db(platform_scope(current_user.uid))


def _request_or_404(request_id: uuid.UUID, s=None):
    req = (s or _officer_db()).get(privacy.PrivacyRequest, request_id)
    if req is None:
        abort(404)
    return req


@bp.route("/privacy", endpoint="privacy")
@officer
def privacy_requests():
    """Every request with its status and due date (search, filter, sort, pages), and the intake form."""
    return _list_page(IntakeForm())


def _list_page(form: IntakeForm, status: int = 200):
    a = request.args
    page, error = paging.Page([], None, None, 0), None
    try:
        page = insights.list_privacy_requests(_officer_db(), status=a.get("status") or None, kind=a.get("kind") or None,
                                              q=(a.get("q") or "").strip() or None, sort=a.get("sort") or "due",
                                              after=a.get("after"), before=a.get("before"))
    except MemoriaError as exc:
        error, status = said(exc), 422
    return render_template("console/privacy/list.html", requests=page.rows, page=page, args=a, error=error,
                           form=form, now=clock.now(), statuses=tuple(PrivacyStatus)), status


@bp.route("/privacy/new", methods=["POST"])
@officer
def privacy_intake():
    """Record a new request."""
    form = IntakeForm()
    if not form.validate_on_submit():
        return _list_page(form, 422)
    s = _officer_db()
    try:
        req = privacy.intake(s, kind=form.kind.data, subject_type=form.subject_type.data,
                             subject_ref=form.subject_ref.data, requested_by=form.requested_by.data,
                             basis=form.basis.data or "", verification=form.verification.data or "",
                             actor=current_user.uid)
    except (InvalidInput, NotFound) as exc:
        s.rollback()
        form.subject_ref.errors.append(said(exc))
        return _list_page(form, 422)
    s.commit()
    flash(gettext("Request recorded. Verify the requester's identity next."))
    return redirect(url_for("console.privacy_request", request_id=req.id))


@bp.route("/privacy/<uuid:request_id>")
@officer
def privacy_request(request_id: uuid.UUID):
    """One request: its steps, preview, progress and receipt."""
    req = _request_or_404(request_id)
    steps = {step: privacy_jobs.step_state(step, req.id) for step in privacy_jobs.STEPS}
    return render_template("console/privacy/detail.html", req=req, note_form=NoteForm(), action_form=ActionForm(),
                           verify_form=VerifyForm(), steps=steps, step_error=_step_error,
                           export_ready=privacy_jobs.export_ready(req.id),
                           refresh=any(st.pending for st in steps.values()),
                           totals=privacy.preview_totals(req.preview) if req.preview else None,
                           erasure_consequence=erasure_consequence(req) if req.preview else "")


def _step_error(state: privacy_jobs.StepState) -> str:
    """How a step the worker ran ended badly, in the page's language."""
    if state.error:
        return gettext(state.error, **(state.values or {}))
    return gettext("It failed and was retried; try again, or ask an operator to look at the worker's log.") \
        if state.failed else ""


@bp.route("/privacy/<uuid:request_id>/progress")
@officer
def privacy_progress(request_id: uuid.UUID):
    """The execution progress (htmx partial, polled while running)."""
    return render_template("console/privacy/_progress.html", req=_request_or_404(request_id))


def _step(request_id: uuid.UUID, call, done: str, form_cls=ActionForm):
    form = form_cls()
    if not form.validate_on_submit():
        flash(gettext("Please fill in the note.") if form_cls is NoteForm else gettext("The form expired; try again."),
              "error")
        return redirect(url_for("console.privacy_request", request_id=request_id))
    s = _officer_db()
    try:
        message = call(s, form)
        s.commit()
        flash(message if isinstance(message, str) else done)
    except MemoriaError as exc:
        s.rollback()
        flash(said(exc), "error")
        if isinstance(exc, NotFound):
            abort(404)
    return redirect(url_for("console.privacy_request", request_id=request_id))


@bp.route("/privacy/<uuid:request_id>/verify", methods=["POST"])
@officer
def privacy_verify(request_id: uuid.UUID):
    """Note how the identity was verified."""
    return _step(request_id, lambda s, f: privacy.verify(s, request_id, f.note.data or "", current_user.uid),
                 gettext("Identity verification noted. Preview the request next."), VerifyForm)


@bp.route("/privacy/<uuid:request_id>/reject", methods=["POST"])
@officer
def privacy_reject(request_id: uuid.UUID):
    """Reject the request, with the reason."""
    return _step(request_id, lambda s, f: privacy.reject(s, request_id, f.note.data, current_user.uid),
                 gettext("Request rejected."), NoteForm)


@bp.route("/privacy/<uuid:request_id>/preview", methods=["POST"])
@officer
def privacy_preview(request_id: uuid.UUID):
    """Count what the request touches, before anything happens (on the worker: it reads every table)."""
    def queue(_s, _form):
        _request_or_404(request_id)
        privacy_jobs.enqueue("preview", request_id, current_user.uid)
    return _step(request_id, queue, gettext("Preparing the preview: this page shows it when it is ready."))


@bp.route("/privacy/<uuid:request_id>/execute", methods=["POST"])
@officer
def privacy_execute(request_id: uuid.UUID):
    """Execute the previewed request (an erasure after a confirmation) on the worker, in resumable batches."""
    req = _request_or_404(request_id)
    if req.kind == "erasure" and req.preview and not confirmed():
        return ask(action=url_for("console.privacy_execute", request_id=request_id),
                   question=gettext("Execute this erasure?"), consequence=erasure_consequence(req),
                   button=gettext("Erase for good"),
                   back=url_for("console.privacy_request", request_id=request_id))

    def run(_s, _form):
        privacy_jobs.enqueue("execute", request_id, current_user.uid)
    return _step(request_id, run, gettext("Execution queued: it runs in batches on the worker; progress shows below."))


def erasure_consequence(req) -> str:
    totals = privacy.preview_totals(req.preview)
    return gettext("This deletes %(delete)s rows, anonymises %(anonymise)s and keeps %(keep)s under legal hold. It "
                   "cannot be undone.", delete=format_number(totals["delete"]),
                   anonymise=format_number(totals["anonymise"]), keep=format_number(totals["keep"]))


@bp.route("/privacy/<uuid:request_id>/receipt.json")
@officer
def privacy_receipt(request_id: uuid.UUID):
    """The receipt as a JSON download (counts and timestamps, no erased data)."""
    req = _request_or_404(request_id)
    if not req.receipt:
        abort(404)
    body = json.dumps(req.receipt, indent=2, ensure_ascii=False)
    return Response(body, mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="receipt-{req.id}.json"', "Cache-Control": "no-store"})


@bp.route("/privacy/<uuid:request_id>/export", methods=["POST"])
@officer
def privacy_export_prepare(request_id: uuid.UUID):
    """Have the worker build the export (everything stored about the subject); audited when built."""
    def queue(_s, _form):
        _request_or_404(request_id)
        privacy_jobs.enqueue("export", request_id, current_user.uid, select_language())
    return _step(request_id, queue, gettext("Preparing the export: this page offers it when it is ready."))


@bp.route("/privacy/<uuid:request_id>/export.zip")
@officer
def privacy_export(request_id: uuid.UUID):
    """The export the worker built, as a ZIP of JSON files, a readable summary and spreadsheets. Audited."""
    s = _officer_db()
    _request_or_404(request_id, s)
    data = privacy_jobs.take_export(request_id)
    if data is None:
        flash(gettext("No export is waiting (one waits an hour after it is built): prepare it again."), "error")
        return redirect(url_for("console.privacy_request", request_id=request_id))
    privacy.export_downloaded(s, request_id, current_user.uid)
    s.commit()
    return Response(data, mimetype="application/zip", headers={
        "Content-Disposition": f'attachment; filename="export-{request_id}.zip"', "Cache-Control": "no-store"})
