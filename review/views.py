"""Review queue pages and actions. Every action works as a plain form post and as an htmx row swap."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import login_required

from console.operator import current_operator, is_htmx, parse_uuid
from console.services import proposals
from console.web import org_db, org_read_db
from memory_core.domain.errors import MemoriaError
from memory_core.domain.vocabulary import Status
from review import bp, service
from web.errors import status_of


@bp.route("/")
@login_required
def queue():
    """Pending proposals with filters and counts per kind; or, with state=decided, the decisions taken."""
    op, s = current_operator(), org_read_db()
    args = request.args
    decided = args.get("state") == "decided"
    try:
        if decided:
            result = service.list_decided(s, op, before=args.get("before"))
        else:
            result = service.list_queue(s, op, kind=args.get("kind") or None, area=args.get("area") or None,
                                        q=(args.get("q") or "").strip()[:200] or None, after=args.get("after"))
    except MemoriaError as exc:
        flash(str(exc), "error")
        return redirect(url_for("review.queue"))
    return render_template("review/queue.html", queue=result, args=args, kinds=proposals.KIND_LABELS, op=op,
                           decided=decided)


@bp.route("/<uuid:proposal_id>")
@login_required
def detail(proposal_id: uuid.UUID):
    """One proposal: its source messages, the before/after diff, the rule, and the decisions."""
    op, s = current_operator(), org_db()
    try:
        d = service.detail(s, op, proposal_id)
    except MemoriaError as exc:
        abort(status_of(exc))
    return render_template("review/detail.html", d=d, op=op, errors={}, form=request.form)


@bp.route("/<uuid:proposal_id>/approve", methods=["POST"])
@login_required
def approve(proposal_id: uuid.UUID):
    """Approve; a bank account needs the account typed again."""
    return _decide(proposal_id, lambda s, op: service.approve(
        s, op, proposal_id, typed_account=request.form.get("confirm_account")), "Approved.")


@bp.route("/<uuid:proposal_id>/edit", methods=["POST"])
@login_required
def edit(proposal_id: uuid.UUID):
    """Edit the value and sentence, then approve."""
    return _decide(proposal_id, lambda s, op: service.approve(
        s, op, proposal_id, value=request.form.get("value", ""), sentence=request.form.get("sentence", "")),
        "Edited and approved.")


@bp.route("/<uuid:proposal_id>/reject", methods=["POST"])
@login_required
def reject(proposal_id: uuid.UUID):
    """Reject with a reason."""
    return _decide(proposal_id, lambda s, op: service.reject(s, op, proposal_id, request.form.get("reason", "")),
                   "Rejected.")


@bp.route("/bulk", methods=["POST"])
@login_required
def bulk():
    """Approve or reject the selected non-bank proposals."""
    op, s = current_operator(), org_db()
    ids = [i for i in (parse_uuid(x) for x in request.form.getlist("ids")) if i]
    try:
        result = service.bulk(s, op, request.form.get("action", ""), ids, request.form.get("reason", ""))
    except MemoriaError as exc:
        flash(str(exc), "error")
        return redirect(url_for("review.queue")), 303
    s.commit()
    verb = "Approved" if request.form.get("action") == "approve" else "Rejected"
    flash(f"{verb} {len(result.done)} proposal(s)." + (
        f" Skipped {len(result.skipped)}: {result.skipped[0][1]}" if result.skipped else ""))
    return redirect(url_for("review.queue")), 303


def _decide(proposal_id, action, done_message: str):
    op, s = current_operator(), org_db()
    try:
        proposal = action(s, op)
    except MemoriaError as exc:
        s.rollback()
        code = status_of(exc)
        if code in (403, 404):
            abort(code)
        return _error(s, op, proposal_id, exc, code)
    s.commit()
    if proposal.status == Status.PROPOSED:  # a member confirmed where she may only read: an editor shares it
        done_message = f"Confirmed: someone who may edit {proposal.area} will share it."
    if is_htmx():  # the row, and the counters out of band so they agree with the queue
        return render_template("review/_decided.html", r=service.queue_row(s, op, proposal), message=done_message,
                               counts=proposals.pending_counts(s, op), kinds=proposals.KIND_LABELS, op=op)
    flash(f"{done_message} {proposal.sentence}")
    return redirect(url_for("review.queue")), 303


def _error(s, op, proposal_id, exc, code):
    """Show what went wrong where the person acted: the row (htmx) or the detail page with the form."""
    try:
        if is_htmx():
            p = service.get_proposal(s, op, proposal_id)
            # 200 so htmx swaps the row in and the message shows next to the buttons.
            return render_template("review/_row.html", r=service.queue_row(s, op, p), error=str(exc))
        d = service.detail(s, op, proposal_id)
    except MemoriaError as again:
        abort(status_of(again))
    return render_template("review/detail.html", d=d, op=op, errors={getattr(exc, "field", None) or "form": str(exc)},
                           form=request.form), code
