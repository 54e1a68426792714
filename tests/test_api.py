"""The agent HTTP API: keys, org scoping, validation, and each endpoint against the real app and database."""
from __future__ import annotations

import datetime as dt
import json
import re
import uuid

import pytest
from sqlalchemy import func, select, update

from memory_core.backends.local_compactor import LocalCompactor
from memory_core.domain import clock
from memory_core.domain.models import (
    ApiKey,
    AuditLog,
    Contact,
    Conversation,
    Document,
    Membership,
    Memory,
    Message,
    Organization,
)
from memory_core.domain.vocabulary import AREAS
from memory_core.reading.compaction import Limits, compact_conversation
from memory_core.tenancy import orgs
from memory_core.tenancy.api_keys import ORG, VERIFIED_FOR, create_api_key, revoke_key
from memory_core.tenancy.members import Actor
from tests.conftest import csrf_from, login
from tests.factories import PASSWORD


@pytest.fixture
def world(factory, system_session):
    """Two orgs, each with an owner and an API key."""
    a, b = factory.org("Sumalos Demo"), factory.org("Panadería Ruiz")
    ana = factory.member(a, role="owner", email="ana@example.test")
    luis = factory.member(b, role="owner", email="luis@example.test")
    _, key_a = create_api_key(system_session, a.id, "bot", created_by=ana.id, actor_label="test")
    _, key_b = create_api_key(system_session, b.id, "bot", created_by=luis.id, actor_label="test")
    system_session.commit()
    return {"a": a, "b": b, "ana": ana, "luis": luis, "key_a": key_a, "key_b": key_b}


def call(client, method, path, key, body=None, **kw):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if body is not None:
        kw["data"] = json.dumps(body)
        kw["content_type"] = "application/json"
    return client.open("/api/v1" + path, method=method, headers=headers, **kw)


def ingest_body(user, text, **kw):
    return {"channel": "web", "conversation": kw.pop("conversation", "chat-1"),
            "external_id": kw.pop("external_id", f"m-{uuid.uuid4()}"), "user_id": str(user.id), "role": "user",
            "text": text, **kw}


def turn_body(user, text, **kw):
    """A POST /turns body: the person's message, which names no role (it is the person's)."""
    body = ingest_body(user, text, **kw)
    del body["role"]
    return body


def _error(resp, status, code=None):
    assert resp.status_code == status, resp.get_data(as_text=True)
    err = resp.get_json()["error"]
    assert set(err) == {"code", "message", "field"} and err["message"]
    if code:
        assert err["code"] == code
    return err


def test_no_key_a_wrong_key_and_a_revoked_key_are_all_401(client, world, system_session):
    body = {"user_id": str(world["ana"].id), "query": "frenos"}
    _error(call(client, "POST", "/search", None, body), 401, "unauthorized")
    _error(call(client, "POST", "/search", "mem_deadbeef_nope", body), 401, "unauthorized")
    key = system_session.scalar(select(ApiKey).where(ApiKey.org_id == world["a"].id))
    key.revoked_at = dt.datetime.now(dt.timezone.utc)
    system_session.commit()
    _error(call(client, "POST", "/search", world["key_a"], body), 401, "unauthorized")


def test_a_key_revoked_by_this_process_is_refused_at_once(client, world, system_session):
    body = {"user_id": str(world["ana"].id), "query": "frenos"}
    assert call(client, "POST", "/search", world["key_a"], body).status_code == 200  # verified, remembered
    key = system_session.scalar(select(ApiKey).where(ApiKey.org_id == world["a"].id))
    revoke_key(system_session, ORG, key.id, actor=Actor("test"), org_id=world["a"].id)
    system_session.commit()
    _error(call(client, "POST", "/search", world["key_a"], body), 401, "unauthorized")
    assert call(client, "POST", "/search", world["key_b"], body | {"user_id": str(world["luis"].id)}).status_code == 200


def test_a_key_revoked_by_another_process_is_refused_within_the_documented_seconds(client, world, system_session):
    body = {"user_id": str(world["ana"].id), "query": "frenos"}
    with clock.use(clock.FixedClock(dt.datetime.now(dt.timezone.utc))) as fixed:
        assert call(client, "POST", "/search", world["key_a"], body).status_code == 200
        # Another process (the console of another server) revokes it: this one is not told.
        system_session.execute(update(ApiKey).where(ApiKey.org_id == world["a"].id).values(revoked_at=func.now()))
        system_session.commit()
        fixed.advance(VERIFIED_FOR - dt.timedelta(milliseconds=1))
        assert call(client, "POST", "/search", world["key_a"], body).status_code == 200  # within the bound
        fixed.advance(dt.timedelta(milliseconds=1))
        _error(call(client, "POST", "/search", world["key_a"], body), 401, "unauthorized")


def test_an_org_suspended_by_another_process_is_refused_within_the_documented_seconds(client, world,
                                                                                       system_session):
    body = {"user_id": str(world["ana"].id), "query": "frenos"}
    with clock.use(clock.FixedClock(dt.datetime.now(dt.timezone.utc))) as fixed:
        assert call(client, "POST", "/search", world["key_a"], body).status_code == 200
        system_session.execute(update(Organization).where(Organization.id == world["a"].id)
                               .values(suspended_at=func.now()))
        system_session.commit()
        fixed.advance(VERIFIED_FOR)
        _error(call(client, "POST", "/search", world["key_a"], body), 403, "suspended")
        # Restored here: answered at once again.
        orgs.set_suspended(system_session, world["a"].id, False, actor=Actor("test"))
        system_session.commit()
        assert call(client, "POST", "/search", world["key_a"], body).status_code == 200


def test_keys_are_stored_only_as_a_hash(world, system_session):
    stored = system_session.scalars(select(ApiKey)).all()
    assert len(stored) == 2
    for row in stored:
        assert world["key_a"] not in (row.key_hash, row.prefix) and len(row.key_hash) == 64
        assert world["key_a"].startswith(row.prefix) or world["key_b"].startswith(row.prefix)


def test_another_orgs_people_and_ids_answer_404_like_missing_ones(client, world, factory):
    conv = factory.conversation(world["b"], world["luis"])
    contact = factory.contact(world["b"])
    key = world["key_a"]
    missing = _error(call(client, "POST", "/search", key, {"user_id": str(uuid.uuid4()), "query": "x"}), 404)
    foreign = _error(call(client, "POST", "/search", key, {"user_id": str(world["luis"].id), "query": "x"}), 404)
    assert missing == foreign
    _error(call(client, "DELETE", f"/conversations/{conv.id}", key), 404)
    _error(call(client, "DELETE", f"/contacts/{contact.id}", key), 404)
    _error(call(client, "DELETE", f"/memberships/{world['luis'].id}", key), 404)
    _error(call(client, "POST", "/link-codes", key, {"user_id": str(world["luis"].id)}), 404)
    _error(call(client, "POST", f"/conversations/{conv.id}/retrieve", key,
                {"user_id": str(world["ana"].id), "query": "x"}), 404)
    _error(call(client, "DELETE", "/conversations/not-a-uuid", key), 404)


def test_ingest_is_idempotent_and_takes_edits_and_deletes(client, world, system_session):
    ana, key = world["ana"], world["key_a"]
    body = ingest_body(ana, "Talleres García paga a 60 días, no a 30.", external_id="wa-1")
    first = call(client, "POST", "/messages", key, body)
    assert first.status_code == 200 and first.get_json()["stored"] is True
    again = call(client, "POST", "/messages", key, body).get_json()
    assert again["duplicate"] is True and again["message_id"] == first.get_json()["message_id"]
    assert system_session.scalar(select(func.count()).select_from(Message)) == 1

    edited = call(client, "POST", "/messages", key, {**body, "text": "Talleres García paga a 90 días.",
                                                     "event": "edited"}).get_json()
    assert edited["stored"] is True
    system_session.expire_all()
    assert system_session.scalar(select(Message.text)) == "Talleres García paga a 90 días."
    call(client, "POST", "/messages", key, {**body, "text": "", "event": "deleted"})
    system_session.expire_all()
    assert system_session.scalar(select(Message.deleted_at)) is not None


def test_a_conversation_id_used_by_another_org_is_a_separate_conversation(client, world):
    theirs = call(client, "POST", "/messages", world["key_b"], ingest_body(world["luis"], "hola", conversation="shared-id"))
    mine = call(client, "POST", "/messages", world["key_a"], ingest_body(world["ana"], "hola", conversation="shared-id"))
    assert mine.status_code == 200 and mine.get_json()["conversation_id"] != theirs.get_json()["conversation_id"]


@pytest.mark.parametrize("raw, status, code", [
    (json.dumps({"text": "a\x00b"}), 400, "invalid_text"),
    (b'{"text": "caf\xe9"}', 400, "invalid_utf8"),
    ('{"text": "\\ud800"}', 400, "invalid_text"),
    ("{not json", 400, "invalid_json"),
    ('{"text": NaN}', 400, "invalid_json"),
])
def test_bad_text_is_refused_and_nothing_is_stored(client, world, system_session, raw, status, code):
    base = ingest_body(world["ana"], "x")
    if isinstance(raw, str) and raw.startswith('{"text"'):
        raw = raw.replace('{"text"', json.dumps({k: v for k, v in base.items() if k != "text"})[:-1] + ', "text"', 1)
    elif isinstance(raw, bytes):
        raw = json.dumps({k: v for k, v in base.items() if k != "text"})[:-1].encode() + b', "text": "caf\xe9"}'
    resp = client.post("/api/v1/messages", data=raw, content_type="application/json",
                       headers={"Authorization": f"Bearer {world['key_a']}"})
    err = _error(resp, status, code)
    if code == "invalid_text":
        assert err["field"] == "text"
    assert system_session.scalar(select(func.count()).select_from(Message)) == 0


def test_limits_on_text_body_size_and_media_type(client, world, system_session):
    key = world["key_a"]
    err = _error(call(client, "POST", "/messages", key, ingest_body(world["ana"], "x" * 20_001)), 422, "invalid_input")
    assert err["field"] == "text"
    big = json.dumps(ingest_body(world["ana"], "x")) + " " * (600 * 1024)
    _error(client.post("/api/v1/messages", data=big, content_type="application/json",
                       headers={"Authorization": f"Bearer {key}"}), 413, "payload_too_large")
    _error(client.post("/api/v1/messages", data="text=hola", content_type="application/x-www-form-urlencoded",
                       headers={"Authorization": f"Bearer {key}"}), 415)
    err = _error(call(client, "POST", "/messages", key, {**ingest_body(world["ana"], "x"), "colour": "red"}), 422)
    assert err["field"] == "colour"
    assert system_session.scalar(select(func.count()).select_from(Message)) == 0


def test_unknown_endpoints_and_methods_answer_json(client, world):
    _error(call(client, "GET", "/nothing-here", world["key_a"]), 404, "not_found")
    _error(call(client, "GET", "/messages", world["key_a"]), 405, "method_not_allowed")


def _compacted_conversation(factory, system_session, org, user):
    conv = factory.conversation(org, user)
    t0 = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone.utc)
    texts = ["El CIF de Talleres García es B12345678.", "Anotado el CIF B12345678.",
             "La factura de frenos es de 1.250,00 € con fecha 15/03/2026.",
             "Seguimos con otros temas de la semana: proveedores y horarios del taller."]
    for i, t in enumerate(texts):
        factory.message(conv, t, role="assistant" if i == 1 else "user", created_at=t0 + dt.timedelta(minutes=i))
    compact_conversation(system_session, conv.id, compactor=LocalCompactor(), limits=Limits(30, 400))
    system_session.commit()
    return conv


def test_retrieve_returns_the_exact_messages_a_summary_point_cites_to_the_owner_only(
        client, world, factory, system_session):
    org, ana = world["a"], world["ana"]
    conv = _compacted_conversation(factory, system_session, org, ana)
    history = call(client, "GET", f"/conversations/{conv.id}/history?user_id={ana.id}", world["key_a"])
    assert history.status_code == 200
    h = history.get_json()
    assert "[p1]" in h["summary"] and h["covered_until"] and len(h["messages"]) == 1
    point = next(p for p in h["points"] if "1.250,00" in p["text"])
    resp = call(client, "POST", f"/conversations/{conv.id}/retrieve", world["key_a"],
                {"user_id": str(ana.id), "point_id": point["id"]})
    assert resp.status_code == 200
    got = resp.get_json()
    assert [m["text"] for m in got["messages"]] == ["La factura de frenos es de 1.250,00 € con fecha 15/03/2026."]
    assert got["point"]["id"] == point["id"]
    by_search = call(client, "POST", f"/conversations/{conv.id}/retrieve", world["key_a"],
                     {"user_id": str(ana.id), "query": "B12345678"}).get_json()
    assert len(by_search["messages"]) == 2 and all("B12345678" in m["text"] for m in by_search["messages"])

    # another member of the same org who may read everything still does not get this conversation
    carlos = factory.member(org, role="admin")
    _error(call(client, "POST", f"/conversations/{conv.id}/retrieve", world["key_a"],
                {"user_id": str(carlos.id), "point_id": point["id"]}), 404)
    _error(call(client, "GET", f"/conversations/{conv.id}/history?user_id={carlos.id}", world["key_a"]), 404)


def test_after_reply_queues_a_compaction_only_past_the_threshold(client, world, factory, redis_conn):
    from memory_core.adapters.queue import get_queue

    conv = factory.conversation(world["a"], world["ana"], channel="whatsapp", phone=None)
    factory.message(conv, "hola")
    url = f"/conversations/{conv.id}/after-reply"
    small = call(client, "POST", url, world["key_a"], {"user_id": str(world["ana"].id), "prompt_tokens": 15_999})
    assert small.get_json() == {"compaction": "not_needed"}
    big = call(client, "POST", url, world["key_a"], {"user_id": str(world["ana"].id), "prompt_tokens": 16_000})
    assert big.get_json() == {"compaction": "queued"}
    assert get_queue().count == 1


def test_search_finds_what_the_principal_may_see(client, world, factory):
    factory.memory(world["a"], subject="org", attribute="horario", value="de 9 a 14",
                   sentence="La oficina abre de 9 a 14.", area="general")
    factory.memory(world["b"], subject="org", attribute="horario", value="de 8 a 20",
                   sentence="La panadería abre de 8 a 20.", area="general")
    resp = call(client, "POST", "/search", world["key_a"],
                {"user_id": str(world["ana"].id), "query": "horario oficina", "kinds": ["memory"]})
    assert resp.status_code == 200
    snippets = [h["snippet"] for h in resp.get_json()["hits"]]
    assert "La oficina abre de 9 a 14." in snippets and "La panadería abre de 8 a 20." not in snippets


def test_link_code_for_a_member(client, world):
    resp = call(client, "POST", "/link-codes", world["key_a"], {"user_id": str(world["ana"].id)})
    assert resp.status_code == 201
    body = resp.get_json()
    assert len(body["code"]) == 6 and body["expires_at"]


def test_forgetting_endpoints_act_within_the_keys_org(client, world, factory, system_session):
    org, key = world["a"], world["key_a"]
    contact = factory.contact(org)
    contact_id = contact.id
    factory.memory(org, subject=f"contact:{contact.id}", attribute="plazo_pago", value="60 días", area="contacts",
                   category="customer")
    resp = call(client, "DELETE", f"/contacts/{contact.id}", key)
    assert resp.status_code == 200 and resp.get_json()["counts"]["facts_removed"] == 1
    assert system_session.scalar(select(func.count()).select_from(Contact).where(Contact.id == contact_id)) == 0

    conv = factory.conversation(org, world["ana"])
    conv_id = conv.id
    factory.message(conv, "hola")
    assert call(client, "DELETE", f"/conversations/{conv_id}", key).status_code == 200
    assert system_session.scalar(select(func.count()).select_from(Conversation)
                                 .where(Conversation.id == conv_id)) == 0

    marta = factory.member(org, permissions={"contacts": "read"})
    assert call(client, "DELETE", f"/memberships/{marta.id}", key).status_code == 200
    system_session.expire_all()
    assert system_session.scalar(select(Membership.left_at).where(Membership.user_id == marta.id)) is not None
    _error(call(client, "DELETE", f"/memberships/{marta.id}", key), 409, "conflict")
    actions = set(system_session.scalars(select(AuditLog.action)))
    assert {"contact.deleted", "conversation.deleted", "membership.ended"} <= actions


def test_host_records_are_indexed_and_removed_by_kind_and_reference(client, world, factory, system_session):
    key = world["key_a"]
    foreign_contact = factory.contact(world["b"])
    doc = {"kind": "invoice", "external_ref": "F-2026/031", "title": "Factura frenos",
           "text": "Reparación de frenos, 1.250,00 €", "tax_id": "B12345678", "doc_date": "2026-03-15"}
    resp = call(client, "PUT", "/documents", key, doc)
    assert resp.status_code == 200
    again = call(client, "PUT", "/documents", key, {**doc, "title": "Factura frenos (rectificada)"})
    assert again.get_json()["id"] == resp.get_json()["id"]
    _error(call(client, "PUT", "/documents", key, {**doc, "contact_id": str(foreign_contact.id)}), 404)
    _error(call(client, "PUT", "/documents", key, {**doc, "visibility": "private_in_org"}), 422)
    removed = call(client, "DELETE", "/documents?kind=invoice&external_ref=F-2026/031", key).get_json()
    assert removed == {"removed": True}
    assert system_session.scalar(select(func.count()).select_from(Document)) == 0


# ---------------------------------------------------------------------------- the console page

def test_owner_creates_a_key_shown_once_and_revokes_it(client, world, system_session):
    login(client, "ana@example.test", PASSWORD)
    page = client.get("/api-keys")
    assert page.status_code == 200
    created = client.post("/api-keys",
                          data={"name": "WhatsApp bot", "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert created.status_code == 303  # redirect after the POST: a reload creates nothing
    shown = client.get(created.headers["Location"])
    html = shown.get_data(as_text=True)
    assert shown.status_code == 200 and shown.headers["Cache-Control"] == "no-store"
    key = html.split('<code class="fenced" id="new-key-value">')[1].split("</code>")[0]
    assert key.startswith("mem_") and 'data-copy="#new-key-value"' in html
    reload = client.get(created.headers["Location"], follow_redirects=True).get_data(as_text=True)
    assert key not in reload and "shown only once" in reload
    assert key not in client.get("/api-keys").get_data(as_text=True)
    assert system_session.scalar(select(func.count()).select_from(ApiKey).where(ApiKey.name == "WhatsApp bot")) == 1
    body = {"user_id": str(world["ana"].id), "query": "x"}
    assert call(client, "POST", "/search", key, body).status_code == 200

    row = system_session.scalar(select(ApiKey).where(ApiKey.name == "WhatsApp bot"))
    page = client.get("/api-keys").get_data(as_text=True)
    # without the CSRF token the revoke is refused
    assert client.post(f"/api-keys/{row.id}/revoke").status_code == 400
    client.post(f"/api-keys/{row.id}/revoke", data={"csrf_token": csrf_from(page)})
    _error(call(client, "POST", "/search", key, body), 401)
    actions = system_session.scalars(select(AuditLog.action).where(AuditLog.target_id == str(row.id))).all()
    assert sorted(actions) == ["api_key.created", "api_key.revoked"]


def test_members_cannot_manage_keys_and_nobody_revokes_another_orgs_key(client, world, factory, system_session):
    factory.member(world["a"], email="marta@example.test", permissions={a: "read" for a in AREAS})
    login(client, "marta@example.test", PASSWORD)
    assert client.get("/api-keys").status_code == 403
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    login(client, "ana@example.test", PASSWORD)
    other = system_session.scalar(select(ApiKey).where(ApiKey.org_id == world["b"].id))
    page = client.get("/api-keys").get_data(as_text=True)
    assert client.post(f"/api-keys/{other.id}/revoke", data={"csrf_token": csrf_from(page)}).status_code == 404
    system_session.expire_all()
    assert system_session.get(ApiKey, other.id).revoked_at is None


# ---------------------------------------------------------------------------- the memory block and remember

def test_context_returns_the_block_its_memory_ids_and_a_trace_to_report_usage_on(client, world, factory):
    org, ana, key = world["a"], world["ana"], world["key_a"]
    contact = factory.contact(org)
    term = factory.memory(org, subject=f"contact:{contact.id}", attribute="plazo_pago", value="60 días",
                          sentence="Talleres García paga a 60 días.", area="contacts", category="customer")
    conv = call(client, "POST", "/messages", key, ingest_body(ana, "Factura a Talleres García los frenos")).get_json()
    resp = call(client, "POST", "/context", key, {"user_id": str(ana.id), "message": "Factura a Talleres García",
                                                  "conversation_id": conv["conversation_id"]})
    assert resp.status_code == 200
    block = resp.get_json()
    assert "60 días" in block["text"] and str(term.id) in block["memory_ids"] and block["trace_id"]
    used = call(client, "POST", f"/traces/{block['trace_id']}/used", key, {"memory_ids": [str(term.id)]})
    assert used.get_json() == {"marked": 1}
    # another org's key cannot touch that trace
    _error(call(client, "POST", f"/traces/{block['trace_id']}/used", world["key_b"],
                {"memory_ids": [str(term.id)]}), 404)
    # nor assemble on that conversation for its own people
    _error(call(client, "POST", "/context", world["key_b"], {"user_id": str(world["luis"].id), "message": "x",
                                                             "conversation_id": conv["conversation_id"]}), 404)

    subjects = call(client, "POST", "/memories/for-subjects", key,
                    {"user_id": str(ana.id), "subjects": [str(contact.id)]}).get_json()
    assert [m["value"] for m in subjects["memories"][f"contact:{contact.id}"]] == ["60 días"]
    assert "<<<60 días>>>" in subjects["text"]


def test_a_turn_stores_the_persons_message_and_returns_its_block_and_a_retry_stores_nothing_twice(
        client, world, factory, system_session):
    from memory_core.domain.models import MemoryTrace

    org, ana, key = world["a"], world["ana"], world["key_a"]
    contact = factory.contact(org)
    term = factory.memory(org, subject=f"contact:{contact.id}", attribute="plazo_pago", value="60 días",
                          sentence="Talleres García paga a 60 días.", area="contacts", category="customer")
    body = turn_body(ana, "Factura a Talleres García los frenos", conversation="wa-ana", external_id="m-1")
    first = call(client, "POST", "/turns", key, body)
    assert first.status_code == 200, first.get_data(as_text=True)
    turn = first.get_json()
    message, block = turn["message"], turn["context"]
    assert message["stored"] and message["queued"] and not message["duplicate"]
    assert "60 días" in block["text"] and str(term.id) in block["memory_ids"]
    stored = system_session.get(Message, uuid.UUID(message["message_id"]))
    assert (stored.role, stored.text, str(stored.conversation_id)) == (
        "user", "Factura a Talleres García los frenos", message["conversation_id"])
    trace = system_session.get(MemoryTrace, uuid.UUID(block["trace_id"]))
    assert trace.message_id == stored.id and str(trace.conversation_id) == message["conversation_id"]

    again = call(client, "POST", "/turns", key, body).get_json()  # the host retried after a timeout
    assert again["message"]["duplicate"] and again["message"]["message_id"] == message["message_id"]
    assert "60 días" in again["context"]["text"]
    assert system_session.scalar(select(func.count()).select_from(Message)
                                 .where(Message.conversation_id == stored.conversation_id)) == 1

    # the same checks as POST /messages: a person of another org is not found, a role is not the host's to set
    _error(call(client, "POST", "/turns", world["key_b"], body | {"external_id": "m-2"}), 404)
    _error(call(client, "POST", "/turns", key, body | {"external_id": "m-3", "role": "assistant"}), 422)
    assert system_session.scalar(select(func.count()).select_from(Message)
                                 .where(Message.external_id.in_(["m-2", "m-3"]))) == 0


def test_a_turns_message_is_embedded_once_for_its_block_and_its_search_and_a_secret_never(
        client, world, database, system_session):
    from jobs.outbox import drain_batch
    from memory_core.backends import get_backend
    from memory_core.domain.models import UsageLedger

    ana, key = world["ana"], world["key_a"]

    def turn(external_id, text):
        body = turn_body(ana, text, conversation="web-ana", external_id=external_id)
        return uuid.UUID(call(client, "POST", "/turns", key, body).get_json()["message"]["message_id"])

    plain = turn("m-1", "Los frenos de la furgoneta chirrían otra vez")
    secret = turn("m-2", "Mi tarjeta es 4111 1111 1111 1111, cárgalo ahí")
    backend = get_backend()

    def stored():
        system_session.expire_all()
        return {m.id: m for m in system_session.scalars(select(Message).where(Message.id.in_([plain, secret])))}

    before_the_worker = stored()
    assert before_the_worker[plain].embed_model == backend.embed_model
    assert before_the_worker[plain].embedding is not None
    while drain_batch(database, backend) is not None:  # the worker learns from both
        pass
    after = stored()
    assert "4111" not in after[secret].text and after[secret].embedding is None  # no model saw the card
    embeds = system_session.scalars(select(UsageLedger.message_id).where(UsageLedger.purpose == "embed",
                                                                        UsageLedger.message_id.in_([plain, secret])))
    assert list(embeds) == [plain]  # embedded at the turn, not again by the worker
    hits = call(client, "POST", "/search", key, {"user_id": str(ana.id), "query": "furgoneta chirría",
                                                 "kinds": ["message"]}).get_json()["hits"]
    assert [h["id"] for h in hits][:1] == [str(plain)]


@pytest.mark.parametrize("path", ["/turns", "/context", "/search"])
def test_a_secret_in_the_persons_message_or_search_never_reaches_the_embedding_model(client, world, path, monkeypatch):
    from memory_core.backends import get_backend

    embedded = []
    embedder = type(get_backend().embedder)
    real = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda self, texts: embedded.extend(texts) or real(self, texts))
    text = "Mi tarjeta es 4111 1111 1111 1111, cárgale ahí la factura de Talleres García"
    body = turn_body(world["ana"], text, conversation="web-ana")
    if path == "/context":
        body = {"user_id": str(world["ana"].id), "message": text}
    if path == "/search":
        body = {"user_id": str(world["ana"].id), "query": text}
    resp = call(client, "POST", path, world["key_a"], body)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert embedded and not any("4111" in t for t in embedded), embedded  # the query still was embedded


def test_a_temporary_turn_gets_its_block_and_stores_nothing(client, world, factory, system_session):
    from memory_core.domain.models import MemoryTrace

    term = factory.memory(world["a"], attribute="plazo_pago", value="60 días", sentence="Talleres García paga a 60 días.")
    body = turn_body(world["ana"], "¿A cuántos días paga Talleres García?", conversation="tmp-1", temporary=True)
    traces = system_session.scalar(select(func.count()).select_from(MemoryTrace))
    turn = call(client, "POST", "/turns", world["key_a"], body).get_json()
    assert turn["message"]["temporary"] and turn["message"]["message_id"] is None
    assert str(term.id) in turn["context"]["memory_ids"] and turn["context"]["trace_id"] is None
    assert system_session.scalar(select(func.count()).select_from(Message)
                                 .where(Message.external_id == body["external_id"])) == 0
    assert system_session.scalar(select(func.count()).select_from(MemoryTrace)) == traces


def test_a_turn_with_a_link_code_answers_with_the_link_reply_and_no_block(client, world, system_session):
    code = call(client, "POST", "/link-codes", world["key_a"], {"user_id": str(world["ana"].id)}).get_json()["code"]
    turn = call(client, "POST", "/turns", world["key_a"], {
        "channel": "whatsapp", "conversation": "wa-34611222333", "external_id": "wamid-1", "phone": "+34611222333",
        "text": f"VINCULAR {code}"}).get_json()
    assert turn["message"]["link_request"] and turn["message"]["reply"] and turn["context"] is None
    system_session.expire_all()
    assert system_session.scalar(select(func.count()).select_from(Message)
                                 .where(Message.external_id == "wamid-1")) == 0  # never stored


def test_the_reply_reports_the_memories_it_used_in_the_same_call(client, world, factory, system_session):
    from memory_core.domain.models import TraceItem

    org, ana, key = world["a"], world["ana"], world["key_a"]
    term = factory.memory(org, attribute="plazo_pago", value="60 días", sentence="Talleres García paga a 60 días.")
    body = turn_body(ana, "¿A cuántos días paga Talleres García?", conversation="web-ana")
    block = call(client, "POST", "/turns", key, body).get_json()["context"]
    assert str(term.id) in block["memory_ids"]

    def reply(external_id, used, role="assistant"):
        return call(client, "POST", "/messages", key, ingest_body(
            ana, "Paga a 60 días.", conversation="web-ana", external_id=external_id, used=used) | {"role": role})

    # a trace of another org is not found, and the reply is not stored with it: the host sends it again
    other = factory.member(world["b"], role="owner")
    other_block = call(client, "POST", "/context", world["key_b"], {"user_id": str(other.id), "message": "hola"})
    _error(reply("r-1", {"trace_id": other_block.get_json()["trace_id"] or str(uuid.uuid4()),
                         "memory_ids": [str(term.id)]}), 404)
    # used goes with the assistant's reply only
    _error(reply("r-2", {"trace_id": block["trace_id"], "memory_ids": [str(term.id)]}, role="user"), 422)
    assert system_session.scalar(select(func.count()).select_from(Message)
                                 .where(Message.external_id.in_(["r-1", "r-2"]))) == 0

    done = reply("r-3", {"trace_id": block["trace_id"], "memory_ids": [str(term.id)]})
    assert done.status_code == 200 and done.get_json()["stored"] and done.get_json()["marked"] == 1
    used = system_session.scalars(select(TraceItem.memory_id).where(
        TraceItem.trace_id == uuid.UUID(block["trace_id"]), TraceItem.used.is_(True))).all()
    assert used == [term.id]
    assert system_session.scalar(select(Message.role).where(Message.external_id == "r-3")) == "assistant"


def test_a_blocks_trace_and_the_usage_report_commit_without_waiting_for_the_disk_and_messages_do_wait(
        client, world, factory, app):
    """A turn's trace and its usage report are observability a crash of PostgreSQL may lose (never corrupt): their
    commits do not wait for an fsync. The person's messages always do."""
    from tests.support.statements import settings_seen

    org, ana, key = world["a"], world["ana"], world["key_a"]
    factory.memory(org, attribute="plazo_pago", value="60 días", sentence="Talleres García paga a 60 días.")
    engine = app.extensions["memoria.db"].engine
    with settings_seen(engine, ("synchronous_commit",)) as seen:
        conv = call(client, "POST", "/messages", key, ingest_body(ana, "¿A cuántos días paga Talleres García?"))
        block = call(client, "POST", "/context", key, {"user_id": str(ana.id), "message": "Talleres García",
                                                       "conversation_id": conv.get_json()["conversation_id"]})
        assert call(client, "POST", f"/traces/{block.get_json()['trace_id']}/used", key,
                    {"memory_ids": block.get_json()["memory_ids"]}).get_json()["marked"] >= 1
    by_write = {}
    for statement, values in seen:
        writes = re.findall(r"(?:INSERT INTO|UPDATE) (messages|memory_traces|trace_items)\b", statement)
        if "memoria_store_trace(" in statement:  # the trace and its items in one call (migration v4)
            writes += ["memory_traces", "trace_items"]
        for write in writes:
            by_write.setdefault(write, set()).add(values["synchronous_commit"])
    assert by_write == {"messages": {"on"}, "memory_traces": {"off"}, "trace_items": {"off"}}, by_write


def test_remember_says_what_happened_and_why(client, world, factory, system_session):
    ana, key = world["ana"], world["key_a"]
    learnt = call(client, "POST", "/remember", key, {"user_id": str(ana.id), "fact": {
        "subject": "self", "attribute": "tono", "value": "tú", "sentence": "Prefiere que le tuteen.",
        "category": "preference"}})
    assert learnt.status_code == 200, learnt.get_data(as_text=True)
    body = learnt.get_json()
    assert body["outcome"] == "learnt" and body["writes"][0]["level"] == "personal"
    refused = call(client, "POST", "/remember", key, {"user_id": str(ana.id),
                                                      "text": "Mi contraseña del banco es Tr0ub4dor&3"}).get_json()
    assert refused["outcome"] == "refused" and refused["policy"] == "secret" and refused["reason"]
    assert system_session.scalar(select(func.count()).select_from(Memory).where(
        Memory.value.contains("Tr0ub4dor"))) == 0
    _error(call(client, "POST", "/remember", key, {"user_id": str(ana.id), "text": "x", "fact": {
        "subject": "self", "attribute": "tono", "value": "tú", "sentence": "s", "category": "preference"}}), 422)


def test_remember_keeps_an_event_s_last_day_and_refuses_one_before_its_first(client, world, system_session):
    ana, key = world["ana"], world["key_a"]
    event = {"subject": "self", "attribute": "vacaciones", "value": "del 3 al 10 de julio",
             "sentence": "Está de vacaciones del 3 al 10 de julio.", "category": "event", "event_date": "2027-07-03"}
    learnt = call(client, "POST", "/remember", key, {"user_id": str(ana.id), "fact": {**event,
                                                                                     "event_until": "2027-07-10"}})
    assert learnt.status_code == 200, learnt.get_data(as_text=True)
    assert system_session.scalar(select(Memory.event_until).where(Memory.attribute.startswith("vacaciones"))) == \
        dt.date(2027, 7, 10)
    refused = call(client, "POST", "/remember", key, {"user_id": str(ana.id), "fact": {
        **event, "attribute": "viaje", "event_until": "2027-07-01"}})
    _error(refused, 422)
    assert "event_until" in refused.get_data(as_text=True)
    assert system_session.scalar(select(func.count()).select_from(Memory).where(Memory.attribute.startswith("viaje"))) == 0
    too_long = call(client, "POST", "/remember", key, {"user_id": str(ana.id), "fact": {
        **event, "attribute": "viaje", "event_until": "2028-07-03"}})  # a year: no event, no span to search by
    _error(too_long, 422)
    assert "183 days" in too_long.get_data(as_text=True)
    assert system_session.scalar(select(func.count()).select_from(Memory).where(Memory.attribute.startswith("viaje"))) == 0


def test_a_user_with_someone_elses_number_or_a_former_member_is_nobody(client, world, factory, system_session):
    org, key = world["a"], world["key_a"]
    pablo = factory.member(org, phone="+34622000111")
    factory.phone(org, "+34622000111", user=pablo)
    body = {"user_id": str(world["ana"].id), "phone": "+34622000111", "query": "x"}
    _error(call(client, "POST", "/search", key, body), 404)
    assert call(client, "POST", "/search", key, {**body, "user_id": str(pablo.id)}).status_code == 200
    assert call(client, "POST", "/search", key, {"phone": "+34622000111", "query": "x"}).status_code == 200
    membership = system_session.scalar(select(Membership).where(Membership.user_id == pablo.id))
    membership.left_at = dt.datetime.now(dt.timezone.utc)
    system_session.commit()
    _error(call(client, "POST", "/search", key, {"user_id": str(pablo.id), "query": "x"}), 404)
    _error(call(client, "POST", "/messages", key, ingest_body(pablo, "sigo aquí")), 404)
