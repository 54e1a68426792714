"""The console's "My memory" page: a signed-in person (any role) lists, edits, deletes, forgets a
subject, pauses learning and exports their own memory; nobody else's, and operators still never see
other people's personal memories."""
from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from sqlalchemy import select

from memory_core.domain.models import Memory, MemorySource, User
from tests.conftest import sign_in


class World:
    def __init__(self, factory, s):
        self.s = s
        self.org = factory.org("Talleres Demo")
        self.second = factory.org("Segunda S.L.")
        self.owner = factory.member(self.org, role="owner", name="Olga Owner")
        self.member = factory.member(self.org, permissions={"contacts": "read"}, name="Marta Member")
        factory.member(self.second, user=self.member)
        self.staff = factory.user(platform_role="staff", name="Sofía Staff")
        conv = factory.conversation(self.org, self.member)
        msg = factory.message(conv, "Me llamo Marta y soy vegetariana.")
        self.diet = factory.memory(None, level="personal", subject="self", attribute="dieta", value="vegetariana",
                                   sentence="Marta es vegetariana.", category="preference", owner=self.member)
        s.add(MemorySource(memory_id=self.diet.id, message_id=msg.id, conversation_id=conv.id))
        s.commit()
        self.note = factory.memory(self.org, level="private", subject="org", attribute="nota", value="llamar",
                                   sentence="Marta: llamar a Acme.", owner=self.member)
        self.note2 = factory.memory(self.second, level="private", subject="org", attribute="nota", value="enviar",
                                    sentence="Marta: enviar el presupuesto.", owner=self.member)
        self.shared = factory.memory(self.org, subject="org", attribute="horario", value="8 a 15",
                                     sentence="La oficina abre de 8 a 15.")
        self.owner_personal = factory.memory(None, level="personal", subject="self", attribute="hobby",
                                             value="escalada", sentence="Olga hace escalada.", category="preference",
                                             owner=self.owner)
        self.staff_personal = factory.memory(None, level="personal", subject="self", attribute="idioma",
                                             value="inglés", sentence="Sofía prefiere inglés.", category="preference",
                                             owner=self.staff)


@pytest.fixture
def w(factory, system_session):
    return World(factory, system_session)


def test_member_sees_her_memory_in_every_org_grouped_with_sources(client, w):
    sign_in(client, w.member)
    page = client.get("/my-memory").get_data(as_text=True)
    for text in ("Marta es vegetariana.", "Me llamo Marta y soy vegetariana.", "Marta: llamar a Acme.",
                 "Marta: enviar el presupuesto.", "La oficina abre de 8 a 15.", "Private in Talleres Demo",
                 "Private in Segunda S.L.", "Shared in Talleres Demo", "Shared memories belong to the organization"):
        assert text in page, text
    assert "Olga hace escalada." not in page and "Sofía prefiere inglés." not in page
    assert 'name="csrf_token"' in page and "My memory" in page
    # shared ones have no edit form
    assert f"/my-memory/{w.shared.id}/edit" not in page and f"/my-memory/{w.note.id}/edit" in page


def test_personal_memories_learnt_anywhere_show_once_with_their_sources(client, w, factory):
    """The page lists a member's personal memories from her first org's view (one transaction): one learnt in a
    conversation outside any org and one learnt in her second org still show once, each with its message."""
    for org, text, value in ((None, "Mi perro se llama Rufo.", "Rufo"), (w.second, "Corro los domingos.", "correr")):
        conv = factory.conversation(org, w.member)
        msg = factory.message(conv, text)
        m = factory.memory(None, level="personal", subject="self", attribute=f"dato_{value}", value=value,
                           sentence=f"Marta: {value}.", category="preference", owner=w.member)
        w.s.add(MemorySource(memory_id=m.id, message_id=msg.id, conversation_id=conv.id))
    w.s.commit()
    sign_in(client, w.member)
    page = client.get("/my-memory").get_data(as_text=True)
    for text in ("Mi perro se llama Rufo.", "Corro los domingos.", "Me llamo Marta y soy vegetariana."):
        assert page.count(text) == 1, text
    for sentence in ("Marta: Rufo.", "Marta: correr."):
        assert page.count(f'<strong class="my-sentence">{sentence}</strong>') == 1, sentence
    assert page.count('id="section-personal-personal"') == 1


def test_member_edits_her_memory_as_a_hand_edited_version(client, w):
    token = sign_in(client, w.member)
    resp = client.post(f"/my-memory/{w.diet.id}/edit", data={"csrf_token": token, "value": "vegana",
                                                             "sentence": "Marta es vegana."})
    assert resp.status_code == 303
    w.s.expire_all()
    [now] = w.s.scalars(select(Memory).where(Memory.owner_user_id == w.member.id, Memory.attribute == "dieta",
                                             Memory.status == "active")).all()
    assert (now.value, now.hand_edited, now.origin, now.level) == ("vegana", True, "console", "personal")
    assert "Marta es vegana." in client.get("/my-memory").get_data(as_text=True)


def test_htmx_edit_swaps_the_row_and_a_bad_edit_says_why(client, w):
    token = sign_in(client, w.member)
    htmx = {"HX-Request": "true", "X-CSRFToken": token}
    resp = client.post(f"/my-memory/{w.note.id}/edit", headers=htmx, data={"value": "", "sentence": "x"})
    assert resp.status_code == 200 and "The value cannot be empty." in resp.get_data(as_text=True)
    resp = client.post(f"/my-memory/{w.note.id}/edit", headers=htmx,
                       data={"value": "llamar hoy", "sentence": "Marta: llamar hoy a Acme."})
    body = resp.get_data(as_text=True)
    assert resp.status_code == 200 and body.lstrip().startswith("<li") and "llamar hoy" in body
    assert "edited by hand" in body


def test_member_deletes_her_memory_only_after_confirming(client, w):
    token = sign_in(client, w.member)
    note_id = w.note.id
    resp = client.post(f"/my-memory/{note_id}/delete", data={"csrf_token": token})
    assert resp.status_code == 200 and "Delete this memory with its versions?" in resp.get_data(as_text=True)
    assert w.s.get(Memory, note_id) is not None  # one click asks, it does not delete
    resp = client.post(f"/my-memory/{note_id}/delete", data={"csrf_token": token, "confirmed": "yes"})
    assert resp.status_code == 303
    w.s.expire_all()
    assert w.s.get(Memory, note_id) is None


def test_another_persons_or_a_shared_memory_cannot_be_edited_or_deleted(client, w):
    token = sign_in(client, w.member)
    for victim, code in ((w.owner_personal, 404), (w.staff_personal, 404), (w.shared, 403)):
        assert client.post(f"/my-memory/{victim.id}/edit", data={
            "csrf_token": token, "value": "x", "sentence": "x."}).status_code == code
        assert client.post(f"/my-memory/{victim.id}/delete", data={
            "csrf_token": token, "confirmed": "yes"}).status_code == code
    w.s.expire_all()
    assert w.s.get(Memory, w.owner_personal.id).value == "escalada"


def test_a_form_without_its_csrf_token_is_refused(client, w):
    sign_in(client, w.member)
    assert client.post(f"/my-memory/{w.note.id}/delete", data={"confirmed": "yes"}).status_code == 400
    assert client.post("/my-memory/learning", data={"paused": "1"}).status_code == 400


def test_forget_subject_removes_hers_in_every_org_and_keeps_shared(client, w):
    token = sign_in(client, w.member)
    ids = (w.note.id, w.note2.id, w.shared.id)
    resp = client.post("/my-memory/forget-subject", data={"csrf_token": token, "subject": "org"})
    assert resp.status_code == 200 and "Forget everything of yours about this subject?" in resp.get_data(as_text=True)
    resp = client.post("/my-memory/forget-subject?subject=org", data={"csrf_token": token, "confirmed": "yes"})
    assert resp.status_code == 303
    w.s.expire_all()
    assert w.s.get(Memory, ids[0]) is None and w.s.get(Memory, ids[1]) is None
    assert w.s.get(Memory, ids[2]) is not None
    resp = client.post("/my-memory/forget-subject",
                       data={"csrf_token": token, "subject": "contact:x", "confirmed": "yes"})
    assert resp.status_code == 422 and "contact:&lt;id&gt;" in resp.get_data(as_text=True)


def test_pause_and_resume_learning_from_the_page(client, w):
    token = sign_in(client, w.member)
    assert client.post("/my-memory/learning", data={"csrf_token": token, "paused": "1"}).status_code == 303
    w.s.expire_all()
    assert w.s.get(User, w.member.id).learning_paused_at is not None
    assert "Learning is paused" in client.get("/my-memory").get_data(as_text=True)
    client.post("/my-memory/learning", data={"csrf_token": token, "paused": "0"})
    w.s.expire_all()
    assert w.s.get(User, w.member.id).learning_paused_at is None


def test_export_downloads_her_memory_as_json_and_nobody_elses(client, w):
    sign_in(client, w.member)
    resp = client.get("/my-memory/export.json")
    assert resp.status_code == 200 and "attachment" in resp.headers["Content-Disposition"]
    data = json.loads(resp.get_data(as_text=True))
    values = {m["value"] for sec in data["sections"] for g in sec["subjects"] for m in g["memories"]}
    assert {"vegetariana", "llamar", "enviar", "8 a 15"} <= values
    assert "escalada" not in values and "inglés" not in values
    assert data["person"]["user_id"] == str(w.member.id)


def test_staff_without_an_org_sees_only_their_personal_memory(client, w):
    sign_in(client, w.staff)
    page = client.get("/my-memory").get_data(as_text=True)
    assert "Sofía prefiere inglés." in page and "Marta" not in page and "Olga" not in page


def test_operators_still_never_see_other_peoples_personal_memories(client, w):
    sign_in(client, w.owner)
    assert "Marta es vegetariana." not in client.get("/memories?status=").get_data(as_text=True)
    assert client.get(f"/memories/{w.diet.id}").status_code == 404
    assert client.get(f"/memories/{w.note.id}").status_code == 404
    page = client.get("/my-memory").get_data(as_text=True)
    assert "Olga hace escalada." in page and "Marta es vegetariana." not in page and "Marta: llamar" not in page


class _Forms(HTMLParser):
    """The page's forms as a browser submits them: action and hidden inputs; `options`: each select's values."""

    def __init__(self):
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []
        self.depth, self._select = 0, None
        self.options: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.depth += 1
            self.forms.append((a.get("action"), {}))
        elif self.depth and tag == "input" and a.get("type") == "hidden":
            self.forms[-1][1][a["name"]] = a["value"]
        elif self.depth and tag == "select":
            self._select = a["name"]
        elif self.depth and tag == "option" and self._select:
            self.options.setdefault(self._select, []).append(a["value"])
        assert self.depth <= 1, "a form inside a form"

    def handle_endtag(self, tag):
        if tag == "form":
            self.depth -= 1
        elif tag == "select":
            self._select = None


def test_the_pages_confirmation_forms_as_rendered_delete_a_row_and_forget_a_subject(client, w):
    """What a person clicks without JavaScript: a row's “Delete…” then “Delete for good”, and the forget-subject
    form's “Forget for good” (a confirmation inside the form that holds the subject)."""
    sign_in(client, w.member)
    note2, diet, note, shared = w.note2.id, w.diet.id, w.note.id, w.shared.id
    parser = _Forms()
    parser.feed(client.get("/my-memory").get_data(as_text=True))
    forms = dict(parser.forms)
    delete = forms[f"/my-memory/{note2}/delete"]
    assert delete["confirmed"] == "yes" and delete["csrf_token"]
    assert client.post(f"/my-memory/{note2}/delete", data=delete).status_code == 303
    forget = forms["/my-memory/forget-subject"]
    assert forget["confirmed"] == "yes" and forget["csrf_token"] and parser.options["subject"] == ["self", "org"]
    # "You": her personal memories, which each of her orgs' views sees too (this request used to wait forever on
    # its own lock there)
    assert client.post("/my-memory/forget-subject", data={**forget, "subject": "self"}).status_code == 303
    w.s.expire_all()
    assert w.s.get(Memory, note2) is None and w.s.get(Memory, diet) is None
    assert w.s.get(Memory, note) is not None and w.s.get(Memory, shared) is not None


@pytest.mark.parametrize("language, shown", [("en", "from Aug 1, 2027 to Aug 15, 2027"),
                                             ("es", "del 1 ago 2027 al 15 ago 2027")])
def test_an_event_that_spans_days_shows_its_first_and_last_day(client, factory, system_session, w, language, shown):
    import datetime as dt

    w.member.ui_locale = language
    system_session.commit()
    factory.memory(None, level="personal", subject="self", attribute="evento_2027-08-01", value="vacaciones",
                   sentence="Marta está de vacaciones.", category="event", owner=w.member,
                   event_date=dt.date(2027, 8, 1), event_until=dt.date(2027, 8, 15))
    sign_in(client, w.member)
    page = client.get("/my-memory").get_data(as_text=True)
    assert shown in page
