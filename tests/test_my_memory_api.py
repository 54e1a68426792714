"""A person's own memory over the API (/api/v1/me/...), for the person the org key acts for: list,
edit, delete, forget a subject, pause and resume, export; never another person's memory."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from memory_core.domain.models import AuditLog, Memory, MemorySource, User
from memory_core.tenancy.api_keys import create_api_key


class World:
    def __init__(self, factory, s):
        self.org = factory.org("Talleres Ana")
        other = factory.org("Otra S.L.")
        self.ana = factory.member(self.org, permissions={"contacts": "read"}, name="Ana Ruiz")
        self.bea = factory.member(self.org, role="owner", name="Bea Gil")
        self.outsider = factory.member(other, role="owner")
        garcia = factory.contact(self.org, "Talleres García S.L.")
        self.garcia = f"contact:{garcia.id}"
        self.conv = factory.conversation(self.org, self.ana)
        msg = factory.message(self.conv, "Me llamo Ana y prefiero que me escribas por email.")
        self.name = factory.memory(None, level="personal", subject="self", attribute="nombre", value="Ana",
                                   category="person", owner=self.ana, author_user_id=self.ana.id)
        self.pref = factory.memory(None, level="personal", subject="self", attribute="canal_preferido",
                                   value="email", category="preference", owner=self.ana, author_user_id=self.ana.id)
        for m in (self.name, self.pref):
            factory._save(MemorySource(memory_id=m.id, message_id=msg.id, conversation_id=self.conv.id))
        self.private = factory.memory(self.org, level="private", subject=self.garcia, attribute="contacto",
                                      value="Luis", category="customer", area="contacts", owner=self.ana)
        self.shared = factory.memory(self.org, subject="org", attribute="horario", value="8 a 15")
        self.shared_garcia = factory.memory(self.org, subject=self.garcia, attribute="plazo_pago", value="60 días",
                                            area="contacts", category="customer")
        self.hidden_area = factory.memory(self.org, subject="org", attribute="iban_propio", value="ES00",
                                          area="invoices")
        self.bea_personal = factory.memory(None, level="personal", subject="self", attribute="nombre", value="Bea",
                                           category="person", owner=self.bea)
        self.bea_private = factory.memory(self.org, level="private", subject=self.garcia, attribute="contacto",
                                          value="Pepe", category="customer", area="contacts", owner=self.bea)
        self.other_org = factory.memory(other, subject="org", attribute="horario", value="9 a 18")
        _, self.key = create_api_key(s, self.org.id, "host", created_by=self.bea.id, actor_label="test")
        s.commit()

    def headers(self):
        return {"Authorization": f"Bearer {self.key}"}


@pytest.fixture
def w(factory, system_session):
    return World(factory, system_session)


def _ids(listing, kind):
    return {m["id"] for sec in listing["sections"] if sec["kind"] == kind
            for g in sec["subjects"] for m in g["memories"]}


def test_person_lists_their_memories_grouped_with_sources_and_never_anothers(client, w):
    r = client.get(f"/api/v1/me/memories?user_id={w.ana.id}", headers=w.headers())
    assert r.status_code == 200
    body = r.get_json()
    assert [s["kind"] for s in body["sections"]] == ["personal", "private", "shared"]
    assert _ids(body, "personal") == {str(w.name.id), str(w.pref.id)}
    assert _ids(body, "private") == {str(w.private.id)}
    assert _ids(body, "shared") == {str(w.shared.id), str(w.shared_garcia.id)}  # not the invoices fact she may not read, not org B's
    personal, private, shared = body["sections"]
    assert personal["editable"] and private["editable"] and not shared["editable"]
    assert private["org_name"] == "Talleres Ana" and personal["org_id"] is None
    [me] = personal["subjects"]
    assert me["subject"] == "self" and me["label"] == "You"
    name = next(m for m in me["memories"] if m["attribute"] == "nombre")
    [source] = name["sources"]
    assert source["excerpt"].startswith("Me llamo Ana") and source["conversation_id"] == str(w.conv.id)
    assert name["created_at"] and name["valid_from"] and name["editable"] is True
    assert [g["label"] for g in shared["subjects"]] == ["Talleres Ana", "Talleres García S.L."]
    [garcia] = private["subjects"]
    assert garcia["label"] == "Talleres García S.L."
    everything = r.get_data(as_text=True)
    assert "Bea" not in everything and "Pepe" not in everything and "9 a 18" not in everything


def test_person_edits_their_own_memory_as_a_new_hand_edited_version(client, w, system_session):
    r = client.patch(f"/api/v1/me/memories/{w.pref.id}", headers=w.headers(),
                     json={"user_id": str(w.ana.id), "value": "WhatsApp", "sentence": "Prefiere WhatsApp."})
    assert r.status_code == 200, r.get_json()
    out = r.get_json()
    assert out["hand_edited"] is True and out["replaces"] == str(w.pref.id) and out["value"] == "WhatsApp"
    system_session.expire_all()
    new, old = system_session.get(Memory, out["id"]), system_session.get(Memory, w.pref.id)
    assert (new.status, new.hand_edited, new.origin, new.level, new.owner_user_id) == (
        "active", True, "api", "personal", w.ana.id)
    assert old.status == "superseded" and old.superseded_by == new.id
    listing = client.get(f"/api/v1/me/memories?user_id={w.ana.id}", headers=w.headers()).get_json()
    assert out["id"] in _ids(listing, "personal") and str(w.pref.id) not in _ids(listing, "personal")
    assert system_session.scalar(select(func.count()).select_from(AuditLog).where(
        AuditLog.action == "memory.edited", AuditLog.target_id == out["id"])) == 1


def test_deleting_the_conversation_a_hand_edited_memory_came_from_keeps_the_edited_memory(client, w,
                                                                                          system_session):
    edited = client.patch(f"/api/v1/me/memories/{w.pref.id}", headers=w.headers(),
                          json={"user_id": str(w.ana.id), "value": "WhatsApp", "sentence": "Prefiere WhatsApp."})
    edited_id, name_id = edited.get_json()["id"], w.name.id
    r = client.delete(f"/api/v1/conversations/{w.conv.id}", headers=w.headers())
    assert r.status_code == 200
    system_session.expire_all()
    kept = system_session.get(Memory, edited_id)
    assert kept is not None and kept.status == "active" and kept.value == "WhatsApp"
    # the memory nobody edited, learnt only from that conversation, went with it
    assert system_session.get(Memory, name_id) is None


def test_person_deletes_their_own_memory_with_every_version(client, w, system_session):
    edited = client.patch(f"/api/v1/me/memories/{w.pref.id}", headers=w.headers(),
                          json={"user_id": str(w.ana.id), "value": "WhatsApp", "sentence": "Prefiere WhatsApp."})
    r = client.delete(f"/api/v1/me/memories/{edited.get_json()['id']}?user_id={w.ana.id}", headers=w.headers())
    assert r.status_code == 200 and r.get_json() == {"counts": {"memories_removed": 2}}
    system_session.expire_all()
    assert system_session.scalar(select(func.count()).select_from(Memory).where(
        Memory.owner_user_id == w.ana.id, Memory.attribute == "canal_preferido")) == 0


def test_shared_memories_can_be_seen_but_not_changed_and_the_answer_says_so(client, w, system_session):
    r = client.patch(f"/api/v1/me/memories/{w.shared.id}", headers=w.headers(),
                     json={"user_id": str(w.ana.id), "value": "7 a 14", "sentence": "Abre de 7 a 14."})
    assert r.status_code == 403 and "Shared memories belong to the organization" in r.get_json()["error"]["message"]
    r = client.delete(f"/api/v1/me/memories/{w.shared.id}?user_id={w.ana.id}", headers=w.headers())
    assert r.status_code == 403
    system_session.expire_all()
    assert system_session.get(Memory, w.shared.id).value == "8 a 15"


def test_another_persons_memory_cannot_be_edited_deleted_or_exported(client, w, system_session):
    for victim in (w.bea_personal, w.bea_private, w.other_org, w.hidden_area):
        r = client.patch(f"/api/v1/me/memories/{victim.id}", headers=w.headers(),
                         json={"user_id": str(w.ana.id), "value": "x", "sentence": "x."})
        assert r.status_code == 404, victim.attribute
        r = client.delete(f"/api/v1/me/memories/{victim.id}?user_id={w.ana.id}", headers=w.headers())
        assert r.status_code == 404, victim.attribute
    exported = client.get(f"/api/v1/me/memories/export?user_id={w.ana.id}", headers=w.headers())
    assert "Bea" not in exported.get_data(as_text=True) and "Pepe" not in exported.get_data(as_text=True)
    # someone the key's org does not know: nothing to list or export
    for path in ("/api/v1/me/memories", "/api/v1/me/memories/export"):
        assert client.get(f"{path}?user_id={w.outsider.id}", headers=w.headers()).status_code == 404
    system_session.expire_all()
    assert system_session.get(Memory, w.bea_private.id).value == "Pepe"


def test_forget_subject_removes_their_own_memories_about_it_and_keeps_the_orgs(client, w, system_session):
    shared_about_garcia, private_id = w.shared_garcia.id, w.private.id
    r = client.post("/api/v1/me/memories/forget-subject", headers=w.headers(),
                    json={"user_id": str(w.ana.id), "subject": w.garcia})
    assert r.status_code == 200 and r.get_json() == {"counts": {"memories_removed": 1}}
    system_session.expire_all()
    assert system_session.get(Memory, private_id) is None
    assert system_session.get(Memory, w.bea_private.id) is not None  # Bea's note about García is hers
    assert system_session.get(Memory, shared_about_garcia) is not None
    r = client.post("/api/v1/me/memories/forget-subject", headers=w.headers(),
                    json={"user_id": str(w.ana.id), "subject": "self"})
    assert r.get_json()["counts"]["memories_removed"] == 2
    assert system_session.get(Memory, w.bea_personal.id) is not None


def test_export_is_a_json_download_with_older_versions(client, w):
    client.patch(f"/api/v1/me/memories/{w.pref.id}", headers=w.headers(),
                 json={"user_id": str(w.ana.id), "value": "WhatsApp", "sentence": "Prefiere WhatsApp."})
    r = client.get(f"/api/v1/me/memories/export?user_id={w.ana.id}", headers=w.headers())
    assert r.status_code == 200 and r.mimetype == "application/json"
    assert "attachment" in r.headers["Content-Disposition"]
    body = r.get_json()
    assert body["person"]["user_id"] == str(w.ana.id) and body["exported_at"]
    personal = next(s for s in body["sections"] if s["kind"] == "personal")
    pref = next(m for g in personal["subjects"] for m in g["memories"] if m["attribute"] == "canal_preferido")
    assert pref["value"] == "WhatsApp" and pref["hand_edited"]
    assert [v["value"] for v in pref["older_versions"]] == ["email"]


def test_pause_and_resume_are_stored_on_the_person(client, w, system_session):
    r = client.put("/api/v1/me/learning", headers=w.headers(), json={"user_id": str(w.ana.id), "paused": True})
    assert r.status_code == 200 and r.get_json()["paused"] is True and r.get_json()["paused_since"]
    system_session.expire_all()
    assert system_session.get(User, w.ana.id).learning_paused_at is not None
    listing = client.get(f"/api/v1/me/memories?user_id={w.ana.id}", headers=w.headers()).get_json()
    assert listing["learning_paused_at"] is not None
    r = client.put("/api/v1/me/learning", headers=w.headers(), json={"user_id": str(w.ana.id), "paused": False})
    assert r.get_json() == {"paused": False, "paused_since": None}
    assert client.get(f"/api/v1/me/learning?user_id={w.ana.id}", headers=w.headers()).get_json()["paused"] is False
    actions = system_session.scalars(select(AuditLog.action).where(AuditLog.target_id == str(w.ana.id))
                                     .order_by(AuditLog.id)).all()
    assert actions == ["learning.paused", "learning.resumed"]


@pytest.mark.parametrize("method, path, body, field", [
    ("patch", "/api/v1/me/memories/{pref}", {"user_id": "{ana}", "value": " ", "sentence": "x"}, "value"),
    ("patch", "/api/v1/me/memories/{pref}", {"user_id": "{ana}", "value": "email", "sentence": "canal_preferido: email"},
     "value"),  # nothing changed
    ("patch", "/api/v1/me/memories/{pref}", {"value": "x", "sentence": "x"}, None),  # nobody named
    ("post", "/api/v1/me/memories/forget-subject", {"user_id": "{ana}", "subject": "contact:nope"}, "subject"),
    ("put", "/api/v1/me/learning", {"user_id": "{ana}", "paused": "maybe"}, "paused"),
])
def test_bad_input_is_a_clear_422(client, w, method, path, body, field):
    fill = {"pref": w.pref.id, "ana": w.ana.id}
    body = {k: v.format(**fill) if isinstance(v, str) else v for k, v in body.items()}
    r = getattr(client, method)(path.format(**fill), headers=w.headers(), json=body)
    assert r.status_code == 422, r.get_json()
    err = r.get_json()["error"]
    assert err["message"] and (field is None or err["field"] == field)


def test_a_number_without_an_account_cannot_pause(client, w, factory):
    factory.phone(w.org, "+34600111222")
    r = client.put("/api/v1/me/learning", headers=w.headers(), json={"phone": "+34600111222", "paused": True})
    assert r.status_code == 422 and "account" in r.get_json()["error"]["message"]


def test_the_python_client_drives_every_my_memory_call_against_the_real_app(live_server, w):
    from client.memoria_client import ApiError, MemoriaClient

    client, ana = MemoriaClient(live_server, w.key, max_retries=0), str(w.ana.id)
    listing = client.my_memories(user_id=ana)
    assert [s["kind"] for s in listing["sections"]] == ["personal", "private", "shared"]
    edited = client.edit_my_memory(str(w.pref.id), value="WhatsApp", sentence="Prefiere WhatsApp.", user_id=ana)
    assert edited["hand_edited"] and edited["replaces"] == str(w.pref.id)
    assert client.delete_my_memory(edited["id"], user_id=ana) == 2
    assert client.forget_my_subject(w.garcia, user_id=ana) == 1
    assert client.set_my_learning(True, user_id=ana)["paused"] is True
    assert client.my_learning(user_id=ana)["paused"] is True
    exported = client.export_my_memories(user_id=ana)
    assert exported["learning_paused_at"] and exported["person"]["user_id"] == ana
    with pytest.raises(ApiError) as exc:
        client.delete_my_memory(str(w.bea_private.id), user_id=ana)
    assert exc.value.status == 404
