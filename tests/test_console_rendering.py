"""The console's pages render byte for byte what they rendered before their templates' shortcuts: the cached
translations (web.language.template_gettext), the per-request URL shapes (web.urls.template_url_for) and the cached
days, moments, counts and attribute names (web.language's filters) give the same HTML as Flask-Babel's own gettext,
format_date, format_datetime and format_decimal and Flask's url_for, in Spanish and in English, with escaped values,
CSRF tokens and every row's links."""
from __future__ import annotations

import re

import flask_babel
import pytest
from flask import url_for

from memory_core.domain import labels
from memory_core.domain.models import MemorySource
from tests.conftest import csrf_from, sign_in
from web.language import select_language

TRICKY = 'Acme <b>"paga"</b> & 100% a 60 días'


@pytest.fixture
def world(factory, system_session):
    org = factory.org("Talleres <Demo> & Cía")
    admin = factory.member(org, role="admin", name="Ana <Admin>")
    member = factory.member(org, permissions={"contacts": "edit"}, name="Marta Member")
    contact = factory.contact(org, name="Cliente <i>Uno</i> S.L.")
    conv = factory.conversation(org, member)
    msg = factory.message(conv, f"Apunta: {TRICKY}")
    shared = factory.memory(org, subject=f"contact:{contact.id}", attribute="plazo_pago", value=TRICKY,
                            sentence=f"{TRICKY}.", area="contacts", category="customer")
    system_session.add(MemorySource(memory_id=shared.id, message_id=msg.id, conversation_id=conv.id))
    system_session.commit()
    factory.memory(org, level="private", subject="org", attribute="nota", value="llamar <hoy>",
                   sentence="Marta: llamar <hoy> & 50%.", owner=member)
    factory.memory(None, level="personal", subject="self", attribute="dieta", value="vegetariana",
                   sentence="Marta es \"vegetariana\".", category="preference", owner=member)
    for i, kind in enumerate(("confirmation", "low_permission", "bank_account")):
        factory.memory(org, subject=f"contact:{contact.id}", attribute=f"p{i}", value=f"{TRICKY} {i}",
                       sentence=f"Propuesta {i}: {TRICKY}", area="contacts", status="proposed",
                       proposal_kind=kind, proposal_rule="test", author_user_id=member.id)
    return {"admin": admin, "member": member, "contact": contact}


PAGES = ("/", "/my-memory", "/review/", "/review/?state=decided", "/memories", "/contacts", "/contacts/{contact}")
ADMIN_PAGES = ("/audit", "/jobs", "/traces", "/usage")
FILTERS = ("day", "when", "number", "attribute_label")


def _as_flask_did(app):
    """Put back what the app had before: Jinja's newstyle gettext over Flask-Babel's catalogs, Flask's url_for and
    Flask-Babel's format_date for every day."""
    saved = {k: app.jinja_env.globals[k] for k in ("_", "gettext", "ngettext", "url_for")}
    saved_filters = {k: app.jinja_env.filters[k] for k in FILTERS}
    app.jinja_env.filters.update({
        "day": lambda value: flask_babel.format_date(value, "medium") if value else "—",
        "when": lambda value: flask_babel.format_datetime(value, "medium") if value else "—",
        "number": lambda value, digits=0: "—" if value is None else flask_babel.format_decimal(
            value, format=f"#,##0.{'0' * digits}" if digits else "#,##0"),
        "attribute_label": lambda value: labels.attribute(value, select_language())})
    app.jinja_env.install_gettext_callables(
        gettext=lambda s: flask_babel.get_translations().ugettext(s),
        ngettext=lambda s, p, n: flask_babel.get_translations().ungettext(s, p, n), newstyle=True)
    app.jinja_env.globals["_"] = app.jinja_env.globals["gettext"]
    app.jinja_env.globals["url_for"] = url_for
    return saved, saved_filters


def _comparable(html: str) -> str:
    # The CSRF token is signed with the time: the same token, a different signature from one second to the next.
    return re.sub(r'(name="csrf_token" (?:type="hidden" )?value="|<meta name="csrf-token" content=")[^"]+"',
                  r'\1TOKEN"', html)


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("role", ["admin", "member"])
def test_pages_render_the_same_as_with_flask_babel_and_url_for(app, world, role, language):
    client = app.test_client()
    token = sign_in(client, world[role])
    page = client.post("/language", data={"language": language, "csrf_token": token}, follow_redirects=True)
    assert f'<html lang="{language}">' in page.get_data(as_text=True)
    paths = [p.format(contact=world["contact"].id) for p in PAGES + (ADMIN_PAGES if role == "admin" else ())]
    fast = {p: client.get(p) for p in paths}
    saved, saved_filters = _as_flask_did(app)
    try:
        slow = {p: client.get(p) for p in paths}
    finally:
        app.jinja_env.globals.update(saved)
        app.jinja_env.filters.update(saved_filters)
    for p in paths:
        assert fast[p].status_code == slow[p].status_code == 200, p
        html = fast[p].get_data(as_text=True)
        assert _comparable(html) == _comparable(slow[p].get_data(as_text=True)), p
        assert "<b>" not in html and "&lt;b&gt;" in html or "Acme" not in html, p  # values escaped
        csrf_from(html)
    review = fast["/review/"].get_data(as_text=True)
    assert ("Aprobar" if language == "es" else "Approve") in review
    proposals = re.findall(r'action="/review/([0-9a-f-]{36})/approve"', review)
    assert proposals and all(f'href="/review/{p}"' in review for p in proposals)


def test_a_row_url_is_the_one_flask_builds(app, world):
    """Every id lands in its own row's URL, never the previous row's (the shape is per endpoint, the id per call)."""
    from web.urls import template_url_for

    ids = [world["admin"].id, world["member"].id, world["contact"].id]
    with app.test_request_context("/"):
        for endpoint, name in (("console.person", "user_id"), ("console.contact", "contact_id")):
            assert [template_url_for(endpoint, **{name: i}) for i in ids] == [url_for(endpoint, **{name: i})
                                                                              for i in ids]
        assert template_url_for("console.contacts", q="a b&c") == url_for("console.contacts", q="a b&c")
        # an id beside the page's filters (the same on every row): each row's id in its own URL
        org = str(world["admin"].id)
        assert [template_url_for("console.traces", conversation=i, org=org) for i in ids] == [
            url_for("console.traces", conversation=i, org=org) for i in ids]
        assert [template_url_for("console.traces", conversation=i, org=None) for i in ids] == [
            url_for("console.traces", conversation=i, org=None) for i in ids]
        assert template_url_for("static", filename="console.css") == url_for("static", filename="console.css")
