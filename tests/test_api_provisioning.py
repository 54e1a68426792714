"""The provisioning API: a platform key creates an org and its key; the org key provisions people,
roles, areas and phones by the host's own ids (idempotently); then the agent ingests and reads for them."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from jobs.outbox import drain_batch
from memory_core.backends import get_backend
from memory_core.domain.models import AuditLog, Memory
from memory_core.tenancy import orgs, platform
from memory_core.tenancy.api_keys import PLATFORM, issue_key
from memory_core.tenancy.members import Actor


def call(client, method, path, key, body=None):
    kw = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.open("/api/v1" + path, method=method, headers=headers, **kw)


@pytest.fixture
def platform_key(system_session):
    root = platform.create_user(system_session, "root@example.test", "Root", "a long and unusual passphrase",
                                platform_role="platform_admin", actor=Actor("memoria command"))
    _row, key = issue_key(system_session, PLATFORM, "host", actor=Actor("console platform admin", root.id))
    system_session.commit()
    return key


def _ok(resp, status=200):
    assert resp.status_code == status, resp.get_data(as_text=True)
    return resp.get_json()


def test_onboarding_through_the_api_then_the_agent_ingests_and_reads(client, platform_key, database, system_session):
    org = _ok(call(client, "PUT", "/organizations/acme-1", platform_key,
                   {"name": "Acme", "owner_email": "olga@example.test", "owner_name": "Olga"}))
    assert org["created"] and "/invitation/" in org["owner_invitation_url"]
    again = _ok(call(client, "PUT", "/organizations/acme-1", platform_key, {"name": "Acme"}))
    assert again["id"] == org["id"] and not again["created"] and again["owner_invitation_url"] is None
    key = _ok(call(client, "POST", "/organizations/acme-1/api-keys", platform_key, {"name": "host"}), 201)["key"]

    admin = _ok(call(client, "PUT", "/people/u-1", key, {"email": "ada@example.test", "name": "Ada", "role": "admin"}))
    member = _ok(call(client, "PUT", "/people/u-2", key, {"email": "max@example.test", "name": "Max",
                                                           "permissions": {"contacts": "read"}}))
    assert admin["created"] and admin["effective_permissions"]["company"] == "edit"
    assert member["effective_permissions"] == {"contacts": "read", "general": "read"}
    same = _ok(call(client, "PUT", "/people/u-2", key, {"email": "max@example.test", "name": "Max",
                                                         "permissions": {"contacts": "read"}}))
    assert not same["created"] and same["user_id"] == member["user_id"]
    shop = _ok(call(client, "PUT", "/phones/shop", key, {"phone": "+34600111222", "permissions": {"contacts": "read"}}))
    assert shop["active"] and shop["user_id"] is None
    assert {p["external_id"] for p in _ok(call(client, "GET", "/people", key))["people"]} == {"u-1", "u-2"}
    assert [p["phone"] for p in _ok(call(client, "GET", "/phones", key))["phones"]] == ["+34600111222"]

    # the agent, with the same key, for those people
    for person, text in ((admin, "Me llamo Ada"), (member, "Me llamo Max")):
        _ok(call(client, "POST", "/messages", key, {"channel": "web", "conversation": f"c-{person['user_id']}",
                                                     "external_id": f"m-{person['user_id']}", "role": "user",
                                                     "user_id": person["user_id"], "text": text}))
    _ok(call(client, "POST", "/messages", key, {"channel": "whatsapp", "conversation": "wa-shop", "external_id": "w-1",
                                                 "role": "user", "phone": "+34600111222", "text": "Hola, buenos días"}))
    backend = get_backend()
    while drain_batch(database, backend) is not None:
        pass
    block = _ok(call(client, "POST", "/context", key, {"user_id": admin["user_id"], "message": "¿Cómo me llamo?"}))
    assert "Ada" in block["text"] and "Max" not in block["text"]
    block = _ok(call(client, "POST", "/context", key, {"user_id": member["user_id"], "message": "¿Cómo me llamo?"}))
    assert "Max" in block["text"] and "Ada" not in block["text"]
    hits = _ok(call(client, "POST", "/search", key, {"phone": "+34600111222", "query": "buenos días"}))["hits"]
    assert hits and hits[0]["kind"] == "message"

    # deactivate: no access, nothing forgotten; remove: the member-leaves rule
    _ok(call(client, "PUT", "/people/u-2", key, {"email": "max@example.test", "active": False}))
    assert call(client, "POST", "/context", key, {"user_id": member["user_id"], "message": "x"}).status_code == 404
    assert _ok(call(client, "GET", "/people/u-1/removal-preview", key))["counts"]["private_removed"] == 0
    assert _ok(call(client, "DELETE", "/people/u-1", key))["counts"]["numbers_revoked"] == 0
    assert call(client, "DELETE", "/people/u-1", key).status_code == 404
    assert not _ok(call(client, "DELETE", "/phones/shop", key))["active"]
    actions = set(system_session.scalars(select(AuditLog.action)))
    assert {"org.created", "invitation.created", "api_key.created", "user.created", "membership.added",
            "phone.authorized", "membership.deactivated", "membership.ended", "phone.revoked"} <= actions
    assert system_session.scalar(select(Memory.value).where(Memory.subject == "self").limit(1))


def test_an_org_key_cannot_create_orgs_and_a_platform_key_cannot_act_in_an_org(client, platform_key):
    _ok(call(client, "PUT", "/organizations/o-1", platform_key, {"name": "Uno"}))
    key = _ok(call(client, "POST", "/organizations/o-1/api-keys", platform_key, {"name": "k"}), 201)["key"]
    assert call(client, "PUT", "/organizations/o-2", key, {"name": "Dos"}).status_code == 401
    assert call(client, "GET", "/people", platform_key).status_code == 401
    assert call(client, "POST", "/organizations/nope/api-keys", platform_key, {"name": "k"}).status_code == 404


def test_a_suspended_orgs_key_is_refused(client, platform_key, system_session):
    org = _ok(call(client, "PUT", "/organizations/o-1", platform_key, {"name": "Uno"}))
    key = _ok(call(client, "POST", "/organizations/o-1/api-keys", platform_key, {"name": "k"}), 201)["key"]
    import uuid

    orgs.set_suspended(system_session, uuid.UUID(org["id"]), True, actor=Actor("console platform admin"))
    system_session.commit()
    resp = call(client, "GET", "/people", key)
    assert resp.status_code == 403 and resp.get_json()["error"]["code"] == "suspended"


def test_provisioning_refuses_bad_input_with_a_message(client, platform_key):
    _ok(call(client, "PUT", "/organizations/o-1", platform_key, {"name": "Uno", "owner_email": "ana@example.test"}))
    key = _ok(call(client, "POST", "/organizations/o-1/api-keys", platform_key, {"name": "k"}), 201)["key"]
    resp = call(client, "PUT", "/people/u-1", key, {"email": "x@example.test", "permissions": {"nowhere": "read"}})
    assert resp.status_code == 422 and resp.get_json()["error"]["field"].startswith("permissions")
    resp = call(client, "PUT", "/phones/p-1", key, {"phone": "+34600111222", "person": "nobody"})
    assert resp.status_code == 404
    _ok(call(client, "PUT", "/people/u-1", key, {"email": "x@example.test", "role": "owner"}))
    resp = call(client, "PUT", "/people/u-1", key, {"email": "x@example.test", "role": "member"})
    assert resp.status_code == 409 and "last owner" in resp.get_json()["error"]["message"]


def test_the_client_provisions_through_the_real_app(app, platform_key):
    import threading

    from werkzeug.serving import make_server

    from client.memoria_client import MemoriaClient

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        host = MemoriaClient(url, platform_key)
        assert host.upsert_organization("org 1.a", name="Uno")["created"]
        org = MemoriaClient(url, host.create_organization_key("org 1.a", "bot"))
        person = org.upsert_person("p 1", email="eva@example.test", permissions={"contacts": "read"})
        phone = org.upsert_phone("t 1", phone="+34600111222", person="p 1", permissions={"contacts": "read"})
        assert phone["user_id"] == person["user_id"] and not phone["linked"]
        assert [p["external_id"] for p in org.list_people()] == ["p 1"]
        assert org.removal_preview("p 1") == {"private_removed": 0, "shared_kept": 0, "numbers_revoked": 1}
        assert org.remove_person("p 1")["numbers_revoked"] == 1
        assert [o["name"] for o in host.list_organizations()] == ["Uno"]
    finally:
        server.shutdown()
        thread.join(timeout=10)
