"""The console speaks Spanish or English: the operator's choice (remembered on the account, or in a cookie before
sign-in), else the browser's Accept-Language, else English; never both on one page."""
from __future__ import annotations

import re

import pytest

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
    def messages(catalog) -> dict:
        return {tuple(m.id) if isinstance(m.id, (list, tuple)) else m.id:
                tuple(m.string) if isinstance(m.string, (list, tuple)) else m.string for m in catalog if m.id}

    assert messages(po) == messages(mo)


# ---------------------------------------------------------------------------------- nothing mixed on one screen

# Words of the console's own text that only one language uses (case-sensitive, whole words). The walk's data
# (names, values) holds none of them, so any hit is a string left untranslated (or translated where it should not).
ENGLISH_ONLY = ("the", "and", "of", "your", "you", "with", "Save", "Delete", "Search", "Filter", "Sign out", "Dashboard",
                "Review", "Memories", "Contacts", "Settings", "Waiting", "Approve", "Reject", "Status", "Subject",
                "Value", "never", "Created", "People", "Usage", "Jobs", "Audit log", "Organization", "Open", "Clear",
                "Any", "active", "revoked", "Previous", "Next", "Since", "Kind", "Level", "Area", "Cancel", "Go back",
                "Name", "Role", "Email address", "Privacy", "Request", "current", "shared", "proposed", "contacts",
                "customer", "owner", "member", "admin", "staff")
SPANISH_ONLY = ("el", "la", "los", "las", "del", "que", "una", "para", "con", "sin", "Guardar", "Borrar", "Buscar",
                "Filtrar", "Memorias", "Ajustes", "Aprobar", "Rechazar", "Personas", "Consumo", "Tareas", "Privacidad",
                "Panel", "Cerrar sesión", "Estado", "Tema", "Nombre", "Nivel", "Área", "vigente", "compartida",
                "propuesta", "empresa", "cliente", "miembro", "propietario", "administrador", "Cancelar", "Volver",
                "Solicitud", "contactos")
VISIBLE_ATTRIBUTES = re.compile(r'\s(?:placeholder|title|aria-label)="([^"]*)"')


def visible_text(html: str) -> str:
    """What a person reads of the console's own words: the text between tags and the placeholder, title and
    aria-label attributes, less the data it shows (code, quoted values, cells marked as data)."""
    body = re.sub(r"<(script|style|code)\b.*?</\1>", " ", html, flags=re.S)
    body = re.sub(r'<(td|span|p|pre) class="(?:data|fenced)[^"]*"[^>]*>.*?</\1>', " ", body, flags=re.S)
    attributes = " ".join(VISIBLE_ATTRIBUTES.findall(body))
    text = re.sub(r"<[^>]+>", " ", body)
    return re.sub(r"\s+", " ", f"{text} {attributes}").replace("&#39;", "'").replace("&amp;", "&")


def words_of_the_other_language(html: str, language: str) -> list[str]:
    text = visible_text(html)
    other = ENGLISH_ONLY if language == "es" else SPANISH_ONLY
    return [w for w in other if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]


def assert_speaks(html: str, language: str, where: str) -> None:
    assert lang_of(html) == language, where
    assert words_of_the_other_language(html, language) == [], where


def test_the_check_finds_a_mixed_page():
    page = '<html lang="es"><body><h1>Memorias</h1><button>Save</button><input placeholder="words in the fact">'
    assert words_of_the_other_language(page, "es") == ["the", "Save"]
    assert words_of_the_other_language('<html lang="en"><p>Guardar el dato</p>', "en") == ["el", "Guardar"]


@pytest.fixture
def world(factory, system_session):
    from tests.test_route_authz import World

    return World(factory, system_session)


def _pages(app, w, role: str) -> list[str]:
    """Every console page (GET, not the API or a download) that the role may open, with its arguments."""
    from flask import url_for

    from tests.test_route_authz import ACCESS, OK

    skip = {"static", "console.my_memory_export", "console.privacy_export", "console.privacy_receipt",
            "api.openapi_document", "health.healthz", "health.readyz", "console.privacy_progress", "console.login"}
    with app.test_request_context():
        return [url_for(endpoint, **route.args(w)) for endpoint, route in ACCESS.items()
                if route.method == "GET" and endpoint not in skip and route.rule[role] == OK
                and not endpoint.startswith("api.")]


@pytest.mark.parametrize("role", ["owner", "admin", "member", "staff", "privacy", "platform"])
def test_every_console_page_speaks_one_language_for_each_role(app, world, role):
    client = app.test_client()
    home = login(client, world.users[role].email, PASSWORD).get_data(as_text=True)
    pages = _pages(app, world, role)
    assert len(pages) >= 5
    mixed = {}
    for language in ("en", "es"):
        switch(client, home, language)
        for path in pages + ["/no-such-page"]:
            resp = client.get(path)
            assert resp.status_code in (200, 404), (path, resp.status_code)
            html = resp.get_data(as_text=True)
            assert lang_of(html) == language, path
            if found := words_of_the_other_language(html, language):
                mixed[f"{language} {path}"] = found
    assert mixed == {}


def test_sign_in_and_one_time_link_pages_speak_the_browser_language(client):
    for language in ("en", "es"):
        for path in ("/login", "/setup/made-up-token", "/no-such-page"):
            html = client.get(path, headers={"Accept-Language": language}).get_data(as_text=True)
            assert_speaks(html, language, f"{language} {path}")


def test_dates_and_amounts_are_written_the_way_each_language_writes_them(app, factory, system_session):
    import datetime as dt

    from memory_core.domain.models import JobRun

    org = factory.org()
    admin = factory.member(org, role="admin")
    system_session.add(JobRun(job="retention", status="ok", org_id=org.id, counts={"removed": 1234},
                              started_at=dt.datetime(2026, 12, 1, 17, 5, tzinfo=dt.timezone.utc)))
    system_session.commit()
    client = app.test_client()
    home = login(client, admin.email, PASSWORD).get_data(as_text=True)
    english = client.get("/jobs").get_data(as_text=True)
    assert "Dec 1, 2026, 5:05:00" in english and "1,234" in english
    switch(client, home, "es")
    spanish = client.get("/jobs").get_data(as_text=True)
    assert "1 dic 2026, 17:05:00" in spanish and "1234" in spanish.replace(".", "")
    assert "Retención" in spanish and "Retention" not in spanish


def test_a_failed_sign_in_says_so_in_the_page_language(client, factory):
    user = factory.user()
    page = client.get("/login", headers={"Accept-Language": "es"}).get_data(as_text=True)
    resp = client.post("/login", data={"email": user.email, "password": "wrong", "csrf_token": csrf_from(page)},
                       headers={"Accept-Language": "es"})
    html = resp.get_data(as_text=True)
    assert "El email o la contraseña no son correctos." in html
    assert_speaks(html, "es", "failed sign-in")


def test_a_domain_message_with_a_value_is_translated_and_filled_in(client, factory, system_session):
    """"Use at least 12 characters." comes from the domain with its number: a Spanish page says it in Spanish."""
    from memory_core.tenancy import tokens

    user = factory.user()
    _row, token = tokens.issue(system_session, "reset", user.email, user_id=user.id)
    system_session.commit()
    es = {"Accept-Language": "es"}
    form = client.get(f"/reset-password/{token}", headers=es).get_data(as_text=True)
    weak = client.post(f"/reset-password/{token}", headers=es,
                       data={"csrf_token": csrf_from(form), "password": "short", "confirm": "short"})
    html = weak.get_data(as_text=True)
    assert "Usa al menos 12 caracteres." in html
    assert_speaks(html, "es", "reset with a short password")


def test_the_notice_after_a_failed_htmx_action_is_in_the_page_language(client):
    """console.js reads its words from the page: a failed approval says so in Spanish on a Spanish page."""
    es = client.get("/login", headers={"Accept-Language": "es"}).get_data(as_text=True)
    assert 'data-error409="Alguien lo ha cambiado mientras tanto; recarga la página."' in es
    assert 'data-error-other="La acción ha fallado (%s). No se ha cambiado nada."' in es
    en = client.get("/login", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert 'data-error-other="The action failed (%s). Nothing was changed."' in en
