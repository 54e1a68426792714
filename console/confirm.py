"""Irreversible actions take two steps: the button opens a question saying what will happen, and only a form that
carries `confirmed=yes` acts. A form posted without it (an old page, a script) gets the question as a page, so
nothing irreversible ever happens on one click, with or without JavaScript."""
from __future__ import annotations

from flask import render_template, request


def confirmed() -> bool:
    return request.form.get("confirmed") == "yes"


def ask(*, action: str, question: str, consequence: str, button: str, back: str, danger: bool = True):
    """The confirmation as a page of its own (the no-JavaScript and stray-POST path)."""
    return render_template("console/confirm.html", action=action, question=question, consequence=consequence,
                           button=button, back=back, danger=danger)
