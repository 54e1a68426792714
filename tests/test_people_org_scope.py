"""An org's owners, admins and API key manage its people and phones in the org's row-security scope: the
web and API work with no connection as the worker role (system scope refused), and org A's operator or
key never reads or changes org B's people, through the console, the API, or raw SQL in A's scope."""
from __future__ import annotations

import json
import re
import uuid

import pytest
from sqlalchemy import select, text

from memory_core.adapters.db import org_scope
from memory_core.domain.models import AccountToken, AuditLog, Membership, Memory, PhoneAuthorization, User
from memory_core.tenancy.api_keys import create_api_key
from tests.conftest import csrf_from, sign_in


def _post(client, url, token, **data):
    return client.post(url, data={"csrf_token": token, **data})


def call(client, method, path, key, body=None):
    kw = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
    return client.open("/api/v1" + path, method=method, headers={"Authorization": f"Bearer {key}"}, **kw)


def _ok(resp, status=200):
    assert resp.status_code == status, resp.get_data(as_text=True)
    return resp.get_json()


def _two_orgs(factory):
    """Org A with its owner, and org B with a member, her private memory and her number."""
    a, b = factory.org("Acme"), factory.org("Beta")
    owner = factory.member(a, role="owner", name="Olga")
    bea = factory.member(b, name="Bea", email="bea@beta.test")
    factory.member(b, role="owner")
    factory.memory(b, level="private", owner=bea, attribute="nota", value="b-secret", category="person")
    b_phone = factory.phone(b, "+34600999888", user=bea)
    return a, b, owner, bea, b_phone


# ---------------------------------------------------------------------------- the console

def test_org_owner_manages_people_and_phones_in_the_console_without_system_scope(web_only, factory,
                                                                                   system_session):
    org = factory.org()
    owner = factory.member(org, role="owner", name="Olga")
    leo = factory.member(org, name="Leo", phone="+34600111333")
    factory.memory(org, level="private", owner=leo, attribute="nota", value="x", category="person")
    factory.memory(org, level="shared", attribute="horario", value="9-14", author_user_id=leo.id)
    client = web_only.test_client()
    token = sign_in(client, owner)

    page = client.get("/people").get_data(as_text=True)
    assert "Leo" in page and leo.email in page
    resp = _post(client, "/people/invite", token, email="nina@example.test", name="Nina", role="admin",
                 area_contacts="read")
    assert resp.status_code == 200 and re.search(r"/invitation/[\w-]+", resp.get_data(as_text=True))
    assert "nina@example.test" in client.get("/people").get_data(as_text=True)  # the pending invitation
    resp = _post(client, "/people/invite", token, email=leo.email, role="member")
    assert resp.status_code == 409 and "already a member" in resp.get_data(as_text=True)
    assert _post(client, f"/people/{leo.id}/role", token, role="admin").status_code == 302
    assert _post(client, f"/people/{leo.id}/areas", token, area_invoices="edit").status_code == 302
    assert _post(client, f"/people/{leo.id}/active", token, active="0").status_code == 302
    assert _post(client, f"/people/{leo.id}/active", token, active="1").status_code == 302
    page = _post(client, f"/people/{leo.id}/reset-link", token).get_data(as_text=True)
    assert re.search(r"/reset-password/[\w-]+", page)
    assert _post(client, "/phones", token, phone="+34600111333", person=str(leo.id),
                 area_contacts="read").status_code == 302
    assert _post(client, "/phones", token, phone="+34600111444", person="").status_code == 302
    shop = system_session.scalar(select(PhoneAuthorization).where(PhoneAuthorization.phone == "+34600111444"))
    row = client.post(f"/phones/{shop.id}/revoke", data={"csrf_token": token}, headers={"HX-Request": "true"})
    assert row.status_code == 200 and "revoked" in row.get_data(as_text=True)

    preview = client.get(f"/people/{leo.id}/remove").get_data(as_text=True)
    assert "<strong>1</strong> private memories" in preview and "<strong>1</strong> shared memories" in preview
    assert "<strong>1</strong> phone numbers" in preview
    resp = _post(client, f"/people/{leo.id}/remove", csrf_from(preview), confirm="remove")
    assert resp.status_code == 302
    assert "1 private memories deleted, 1 shared ones kept" in client.get("/people").get_data(as_text=True)

    system_session.expire_all()
    assert system_session.scalars(select(Memory.level)).all() == ["shared"]
    m = system_session.scalar(select(Membership).where(Membership.user_id == leo.id))
    assert m.left_at is not None and m.role == "admin" and m.permissions == {"invoices": "edit"}
    actions = set(system_session.scalars(select(AuditLog.action)))
    assert {"invitation.created", "membership.role_changed", "membership.permissions_changed",
            "membership.deactivated", "membership.reactivated", "password_reset.issued", "phone.authorized",
            "phone.revoked", "membership.ended"} <= actions


def test_console_refuses_a_reset_link_or_a_linked_number_of_another_orgs_person(web_only, factory, system_session):
    a, b, owner, bea, _ = _two_orgs(factory)
    factory.member(a, user=bea)  # Bea is in both orgs: A may not set her password
    max_ = factory.user(name="Max", phone="+34600777666")
    factory.member(b, user=max_)
    factory.member(a, user=factory.user(name="Sol"))
    client = web_only.test_client()
    token = sign_in(client, owner)
    resp = _post(client, f"/people/{bea.id}/reset-link", token)
    assert resp.status_code == 403 and "also used outside" in resp.get_data(as_text=True)
    resp = _post(client, "/phones", token, phone="+34600777666", person=str(bea.id))
    assert resp.status_code == 409 and "linked to another person" in resp.get_data(as_text=True)
    assert system_session.scalar(select(AccountToken.id).where(AccountToken.purpose == "reset")) is None


def test_org_a_owner_never_sees_or_changes_org_b_people_in_the_console(web_only, factory, system_session):
    a, b, owner, bea, b_phone = _two_orgs(factory)
    client = web_only.test_client()
    token = sign_in(client, owner)
    page = client.get("/people").get_data(as_text=True)
    assert "Bea" not in page and "bea@beta.test" not in page and "+34600999888" not in page
    assert client.get(f"/people/{bea.id}").status_code == 404
    assert client.get(f"/people/{bea.id}/remove").status_code == 404
    assert _post(client, f"/people/{bea.id}/remove", token, confirm="remove").status_code == 404
    assert _post(client, f"/people/{bea.id}/role", token, role="admin").status_code == 404
    assert _post(client, f"/people/{bea.id}/reset-link", token).status_code == 404
    assert _post(client, f"/phones/{b_phone.id}/revoke", token).status_code == 404
    resp = _post(client, "/phones", token, phone="+34600111222", person=str(bea.id))
    assert resp.status_code == 409 and "not a member" in resp.get_data(as_text=True)
    system_session.expire_all()
    assert system_session.scalar(select(Membership.left_at).where(Membership.user_id == bea.id)) is None
    assert system_session.scalar(select(PhoneAuthorization.revoked_at).where(
        PhoneAuthorization.id == b_phone.id)) is None
    assert system_session.scalar(select(Memory.value).where(Memory.owner_user_id == bea.id)) == "b-secret"


# ---------------------------------------------------------------------------- the provisioning API

def test_host_provisions_people_and_phones_over_the_api_without_system_scope(web_only, factory, system_session):
    org = factory.org()
    factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "host", created_by=None, actor_label="test")
    system_session.commit()
    client = web_only.test_client()

    ada = _ok(call(client, "PUT", "/people/u-1", key, {"email": "ada@example.test", "name": "Ada", "role": "admin"}))
    assert ada["created"] and ada["role"] == "admin"
    same = _ok(call(client, "PUT", "/people/u-1", key, {"email": "ada@example.test", "name": "Ada", "role": "admin"}))
    assert not same["created"] and same["user_id"] == ada["user_id"]
    renamed = _ok(call(client, "PUT", "/people/u-1", key, {"email": "ada.l@example.test", "name": "Ada L",
                                                           "role": "member", "permissions": {"contacts": "read"}}))
    assert (renamed["email"], renamed["name"], renamed["role"]) == ("ada.l@example.test", "Ada L", "member")
    phone = _ok(call(client, "PUT", "/phones/p-1", key, {"phone": "+34600123123", "person": "u-1",
                                                          "permissions": {"contacts": "read"}}))
    assert phone["user_id"] == ada["user_id"] and phone["active"]
    assert [p["email"] for p in _ok(call(client, "GET", "/people", key))["people"]][-1] == "ada.l@example.test"
    assert [p["phone"] for p in _ok(call(client, "GET", "/phones", key))["phones"]] == ["+34600123123"]
    system_session.add(Memory(org_id=org.id, level="private", subject="self", attribute="nota", value="x",
                              sentence="nota: x", category="person", area="general",
                              owner_user_id=uuid.UUID(ada["user_id"])))
    system_session.commit()
    counts = _ok(call(client, "GET", "/people/u-1/removal-preview", key))["counts"]
    assert counts == {"private_removed": 1, "shared_kept": 0, "numbers_revoked": 1}
    assert _ok(call(client, "DELETE", "/people/u-1", key))["counts"] == counts
    assert call(client, "GET", "/people/u-1/removal-preview", key).status_code == 404
    assert not _ok(call(client, "DELETE", "/phones/p-1", key))["active"]
    assert system_session.scalar(select(Memory.id).where(Memory.org_id == org.id)) is None


def test_an_org_key_cannot_take_over_or_rename_into_another_orgs_account(web_only, factory, system_session):
    a, b, _, bea, _ = _two_orgs(factory)
    _, key = create_api_key(system_session, a.id, "host", created_by=None, actor_label="test")
    system_session.commit()
    client = web_only.test_client()
    resp = call(client, "PUT", "/people/u-9", key, {"email": "bea@beta.test", "name": "Not Bea"})
    assert resp.status_code == 409 and "invite the person instead" in resp.get_json()["error"]["message"]
    _ok(call(client, "PUT", "/people/u-1", key, {"email": "kim@example.test", "name": "Kim"}))
    resp = call(client, "PUT", "/people/u-1", key, {"email": "bea@beta.test", "name": "Kim"})
    assert resp.status_code == 409 and "Another account" in resp.get_json()["error"]["message"]
    factory.member(b, user=system_session.scalar(select(User).where(User.email == "kim@example.test")))
    resp = call(client, "PUT", "/people/u-1", key, {"email": "kim2@example.test", "name": "Kim"})
    assert resp.status_code == 409 and "also used elsewhere" in resp.get_json()["error"]["message"]
    system_session.expire_all()
    assert system_session.scalar(select(User.name).where(User.id == bea.id)) == "Bea"
    assert system_session.scalar(select(User.email).where(User.name == "Kim")) == "kim@example.test"
    assert system_session.scalar(select(Membership.id).where(Membership.org_id == a.id,
                                                             Membership.user_id == bea.id)) is None


def test_org_a_key_never_sees_or_changes_org_b_people_over_the_api(web_only, factory, system_session):
    a, b, _, bea, b_phone = _two_orgs(factory)
    system_session.execute(select(Membership).where(Membership.user_id == bea.id)).scalar_one().external_id = "bea"
    b_phone.external_id = "bea-phone"
    _, key = create_api_key(system_session, a.id, "host", created_by=None, actor_label="test")
    system_session.commit()
    client = web_only.test_client()
    assert [p["name"] for p in _ok(call(client, "GET", "/people", key))["people"]] == ["Olga"]
    assert _ok(call(client, "GET", "/phones", key))["phones"] == []
    assert call(client, "GET", "/people/bea/removal-preview", key).status_code == 404
    assert call(client, "DELETE", "/people/bea", key).status_code == 404
    assert call(client, "DELETE", "/phones/bea-phone", key).status_code == 404
    # The same host ids in A are A's own rows, never B's.
    _ok(call(client, "PUT", "/phones/bea-phone", key, {"phone": "+34600555444"}))
    system_session.expire_all()
    assert system_session.scalar(select(PhoneAuthorization.phone).where(PhoneAuthorization.id == b_phone.id)) == \
        "+34600999888"
    assert system_session.scalar(select(PhoneAuthorization.revoked_at).where(
        PhoneAuthorization.id == b_phone.id)) is None
    assert system_session.scalar(select(Membership.left_at).where(Membership.user_id == bea.id)) is None


# ---------------------------------------------------------------------------- raw SQL as the app role

def test_org_a_scope_reads_and_changes_nothing_of_org_b_people_in_raw_sql(web_only, factory, system_session):
    a, b, owner, bea, b_phone = _two_orgs(factory)
    db = web_only.extensions["memoria.db"]
    with db.unit_of_work(org_scope(a.id, owner.id)) as uow:
        s = uow.session
        assert s.scalar(text("select current_user")) == "memoria_app"
        assert s.scalar(text("select count(*) from users where id = :u"), {"u": bea.id}) == 0
        assert s.scalar(text("select count(*) from memberships where org_id = :b"), {"b": b.id}) == 0
        assert s.scalar(text("select count(*) from phone_authorizations where org_id = :b"), {"b": b.id}) == 0
        assert s.scalar(text("select count(*) from account_tokens")) == 0
        assert s.scalar(text("select memoria_account_only_in(:u, :b)"), {"u": bea.id, "b": b.id}) is False
        # an update or delete of B's rows finds nothing to change
        assert s.execute(text("update memberships set role = 'owner' where org_id = :b"), {"b": b.id}).rowcount == 0
        assert s.execute(text("update users set name = 'x' where id = :u"), {"u": bea.id}).rowcount == 0
        assert s.execute(text("delete from phone_authorizations where id = :p"), {"p": b_phone.id}).rowcount == 0
    # Each SECURITY DEFINER function acts only for the caller's own org.
    for sql in ("select memoria_leaving_private(:b, :u, false)", "select memoria_leaving_private(:b, :u, true)",
                "select memoria_add_new_member(:b, 'x@example.test', 'X', 'owner', '{}'::jsonb, null)",
                "select memoria_rename_account(:b, :u, 'x@example.test', 'X')"):
        with db.unit_of_work(org_scope(a.id, owner.id)) as uow, pytest.raises(Exception, match="not permitted"):
            uow.session.execute(text(sql), {"b": b.id, "u": bea.id})
    # Rows naming B refused on insert: a membership, an invitation, a reset link for B's person.
    for sql in ("insert into memberships (org_id, user_id, role) values (:b, :o, 'owner')",
                "insert into account_tokens (purpose, token_hash, email, org_id, expires_at) "
                "values ('invite', md5(random()::text), 'x@example.test', :b, now() + interval '1 day')",
                "insert into account_tokens (purpose, token_hash, email, user_id, created_by, expires_at) "
                "values ('reset', md5(random()::text), 'bea@beta.test', :u, :o, now() + interval '1 hour')"):
        with db.unit_of_work(org_scope(a.id, owner.id)) as uow, pytest.raises(Exception, match="row-level security"):
            uow.session.execute(text(sql), {"b": b.id, "u": bea.id, "o": owner.id})
    # A forged system scope on the app role does not open the functions either.
    with db.engine.connect() as c:
        c.execute(text("select set_config('memoria.mode', 'system', false)"))
        with pytest.raises(Exception, match="not permitted"):
            c.execute(text("select memoria_leaving_private(:b, :u, true)"), {"b": b.id, "u": bea.id})
        c.rollback()
        c.execute(text("select set_config('memoria.mode', 'system', false)"))
        assert c.execute(text("select memoria_account_only_in(:u, :b)"), {"u": bea.id, "b": b.id}).scalar() is False
    system_session.expire_all()
    assert system_session.scalar(select(Memory.value).where(Memory.owner_user_id == bea.id)) == "b-secret"
    assert system_session.scalar(select(User.name).where(User.id == bea.id)) == "Bea"


# ---------------------------------------------------------------------------- platform keys

def test_platform_key_creates_and_lists_orgs_and_their_keys_without_system_scope(web_only, factory, system_session):
    from memory_core.tenancy.api_keys import PLATFORM, issue_key, revoke_key
    from memory_core.tenancy.members import Actor

    root = factory.user(platform_role="platform_admin")
    row, platform_key = issue_key(system_session, PLATFORM, "host", actor=Actor("console platform admin", root.id))
    other = factory.org("Beta")
    factory.member(other, role="owner")
    system_session.commit()
    client = web_only.test_client()
    org = _ok(call(client, "PUT", "/organizations/acme-1", platform_key,
                   {"name": "Acme", "owner_email": "olga@example.test", "owner_name": "Olga"}))
    assert org["created"] and "/invitation/" in org["owner_invitation_url"]
    renamed = _ok(call(client, "PUT", "/organizations/acme-1", platform_key, {"name": "Acme SL"}))
    assert renamed["id"] == org["id"] and not renamed["created"] and renamed["name"] == "Acme SL"
    key = _ok(call(client, "POST", "/organizations/acme-1/api-keys", platform_key, {"name": "host"}), 201)["key"]
    _ok(call(client, "PUT", "/people/u-1", key, {"email": "ada@example.test", "name": "Ada"}))
    listed = {o["name"]: o["members"] for o in _ok(call(client, "GET", "/organizations", platform_key))["organizations"]}
    assert listed == {"Acme SL": 1, "Beta": 1}
    assert call(client, "POST", "/organizations/nope/api-keys", platform_key, {"name": "x"}).status_code == 404
    actions = set(system_session.scalars(select(AuditLog.action).where(AuditLog.actor_label.like("platform key%"))))
    assert {"org.created", "invitation.created", "org.renamed", "api_key.created"} <= actions

    revoke_key(system_session, PLATFORM, row.id, actor=Actor("console platform admin", root.id))
    system_session.commit()
    assert call(client, "GET", "/organizations", platform_key).status_code == 401


def test_platform_key_scope_opens_only_with_the_keys_proof_while_it_is_active(web_only, factory, system_session):
    from memory_core.adapters.db import platform_key_scope
    from memory_core.adapters.security import sha256
    from memory_core.tenancy.api_keys import PLATFORM, issue_key, revoke_key
    from memory_core.tenancy.members import Actor

    factory.member(factory.org("Beta"), role="owner")
    live, live_key = issue_key(system_session, PLATFORM, "host", actor=Actor("test"))
    gone, gone_key = issue_key(system_session, PLATFORM, "old", actor=Actor("test"))
    revoke_key(system_session, PLATFORM, gone.id, actor=Actor("test"))
    system_session.commit()
    db = web_only.extensions["memoria.db"]
    with db.unit_of_work(platform_key_scope(live.id, sha256(live_key))) as uow:
        assert uow.session.scalar(text("select count(*) from organizations")) == 1  # the key's own scope works
    # A key's id with no proof, a wrong one or another key's, a revoked key, an unknown id: nothing.
    for who, proof in ((live.id, ""), (live.id, sha256("memp_guess")), (live.id, sha256(gone_key)),
                       (gone.id, sha256(gone_key)), (uuid.uuid4(), sha256(live_key))):
        with db.unit_of_work(platform_key_scope(who, proof)) as uow:
            s = uow.session
            for table in ("organizations", "memberships", "users", "api_keys", "account_tokens", "audit_log"):
                assert s.scalar(text(f"select count(*) from {table}")) == 0, (table, who, proof)
            with pytest.raises(Exception, match="row-level security"):
                s.execute(text("insert into organizations (name) values ('Gamma')"))
