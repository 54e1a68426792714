"""The console's API-key pages, one for each kind of key (an org's keys, platform keys): list, create (the key
shown once after a redirect, so a reload creates nothing) and revoke, every action audited by the domain."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from sqlalchemy.orm import Session
from wtforms import StringField
from wtforms.validators import DataRequired, Length

from console import shown_once
from console.forms import EmptyForm
from console.web import console_actor
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.tenancy.api_keys import KeyKind, issue_key, list_keys, revoke_key
from web.language import said

NO_STORE = {"Cache-Control": "no-store"}


class KeyForm(FlaskForm):
    name = StringField(_l("Name"), validators=[DataRequired(), Length(max=100)])


@dataclass(frozen=True)
class KeyPages:
    """The routes' bodies for one kind of key; the routes (and their role checks) stay with their blueprint."""
    kind: KeyKind
    endpoint: str                                   # the list page, where create and revoke redirect
    template: str
    session: Callable[[], Session]                  # the request's session in the right scope
    org_id: Callable[[], uuid.UUID | None]          # the owning org, for an org's keys
    context: Callable[[], dict] = dict              # what else the template shows
    headers: dict[str, str] = field(default_factory=dict)  # sent with every page

    def page(self, form: KeyForm | None = None, new_key: str | None = None, status: int = 200):
        keys = list_keys(self.session(), self.kind, self.org_id())
        html = render_template(self.template, form=form or KeyForm(formdata=None), keys=keys, new_key=new_key,
                               revoke_form=EmptyForm(), **self.context())
        return html, status, {**self.headers, **NO_STORE} if new_key else self.headers

    def show(self):
        """The keys; right after creating one (`?shown=<nonce>`), the new key, shown this once."""
        nonce = request.args.get("shown", "")
        if not nonce:
            return self.page()
        key = shown_once.take(self.kind.name, nonce)
        if key is None:
            flash(gettext("A new key is shown only once. If it was not copied, revoke it and create another."), "error")
            return redirect(url_for(self.endpoint))
        return self.page(new_key=key)

    def create(self):
        """Create a key, then redirect to the page that shows it once. The key is never stored in the database
        nor put in the session cookie: only in Redis, for its creator, until shown."""
        form = KeyForm()
        if not form.validate_on_submit():
            return self.page(form, status=400)
        s = self.session()
        try:
            _row, key = issue_key(s, self.kind, form.name.data, actor=console_actor(), org_id=self.org_id())
        except InvalidInput as exc:
            form.name.errors.append(said(exc))
            return self.page(form, status=400)
        s.commit()
        return redirect(url_for(self.endpoint, shown=shown_once.stash(self.kind.name, key))), 303

    def revoke(self, key_id: str):
        """Revoke a key (404 for one not of this kind and owner): requests with it answer 401 from now on."""
        if not EmptyForm().validate_on_submit():
            abort(400)
        try:
            kid = uuid.UUID(key_id)
        except ValueError:
            abort(404)
        s = self.session()
        try:
            row = revoke_key(s, self.kind, kid, actor=console_actor(), org_id=self.org_id())
        except NotFound:
            abort(404)
        s.commit()
        flash(gettext("Key %(prefix)s… revoked.", prefix=row.prefix))
        return redirect(url_for(self.endpoint))
