"""The console speaks Spanish or English: the operator's choice (remembered on the account, or in a cookie before
sign-in), else the browser's Accept-Language, else English; never both on one page."""
from __future__ import annotations

import re

from tests.conftest import csrf_from, login
from tests.factories import PASSWORD


def lang_of(html: str) -> str:
    return re.search(r'<html lang="([a-z]+)"', html).group(1)


def switch(client, html: str, language: str, next_path: str = "/"):
    return client.post("/language", data={"language": language, "next": next_path, "csrf_token": csrf_from(html)},
                       follow_redirects=True)


def test_sign_in_page_follows_the_browser_and_falls_back_to_english(client):
    assert lang_of(client.get("/login").get_data(as_text=True)) == "en"
    spanish = client.get("/login", headers={"Accept-Language": "es-ES,es;q=0.9,en;q=0.5"}).get_data(as_text=True)
    assert lang_of(spanish) == "es"
    assert lang_of(client.get("/login", headers={"Accept-Language": "fr-FR"}).get_data(as_text=True)) == "en"


def test_switch_before_sign_in_is_kept_in_a_cookie(client):
    page = client.get("/login").get_data(as_text=True)
    after = switch(client, page, "es", "/login")
    assert lang_of(after.get_data(as_text=True)) == "es"
    assert lang_of(client.get("/login", headers={"Accept-Language": "en"}).get_data(as_text=True)) == "es"


def test_switch_without_csrf_token_is_refused(client):
    assert client.post("/language", data={"language": "es"}).status_code == 400


def test_unknown_language_is_refused(client):
    page = client.get("/login").get_data(as_text=True)
    assert client.post("/language", data={"language": "fr", "csrf_token": csrf_from(page)}).status_code == 400


def test_switch_is_remembered_across_sign_out_and_sign_in_on_another_browser(app, factory):
    org = factory.org()
    user = factory.member(org, role="admin")
    first = app.test_client()
    home = login(first, user.email, PASSWORD).get_data(as_text=True)
    assert lang_of(home) == "en"
    assert lang_of(switch(first, home, "es").get_data(as_text=True)) == "es"
    page = first.get("/").get_data(as_text=True)
    first.post("/logout", data={"csrf_token": csrf_from(page)})

    other = app.test_client()  # another browser: no cookie, an English one
    assert lang_of(other.get("/login", headers={"Accept-Language": "en"}).get_data(as_text=True)) == "en"
    again = login(other, user.email, PASSWORD)
    assert lang_of(again.get_data(as_text=True)) == "es"


def test_switch_returns_to_the_page_it_was_used_on_and_never_off_site(app, factory):
    org = factory.org()
    user = factory.member(org, role="admin")
    client = app.test_client()
    home = login(client, user.email, PASSWORD).get_data(as_text=True)
    resp = client.post("/language", data={"language": "es", "next": "/memories", "csrf_token": csrf_from(home)})
    assert resp.status_code == 302 and resp.headers["Location"].endswith("/memories")
    resp = client.post("/language", data={"language": "en", "next": "//evil.example/", "csrf_token": csrf_from(home)})
    assert resp.status_code == 302 and "evil" not in resp.headers["Location"]


def test_committed_spanish_catalog_is_compiled_from_its_po_and_complete():
    """The .mo is committed (a fresh clone needs no build step): it must say what the .po says, every msgid
    translated, so a string added to a template without a translation fails here."""
    from pathlib import Path

    from babel.messages.mofile import read_mo
    from babel.messages.pofile import read_po

    folder = Path(__file__).resolve().parent.parent / "translations" / "es" / "LC_MESSAGES"
    with open(folder / "messages.po", "rb") as f:
        po = read_po(f)
    with open(folder / "messages.mo", "rb") as f:
        mo = read_mo(f)
    untranslated = [m.id for m in po if m.id and not (all(m.string) if isinstance(m.string, tuple) else m.string)]
    assert untranslated == []
    assert {m.id: m.string for m in po if m.id} == {m.id: m.string for m in mo if m.id}
