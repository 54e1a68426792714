"""The tenancy pages through Flask's test client: the rules show as form errors, removal shows what goes
before it happens, a suspended org's people lose the console, and every form needs its CSRF token."""
from __future__ import annotations

import re

from sqlalchemy import select

from memory_core.domain.models import Membership, Memory
from memory_core.tenancy import orgs
from memory_core.tenancy.members import Actor
from tests.conftest import csrf_from, sign_in


def _post(client, url, token, **data):
    return client.post(url, data={"csrf_token": token, **data})


def test_the_last_owner_cannot_be_demoted_from_the_console(client, factory):
    org = factory.org()
    owner = factory.member(org, role="owner")
    token = sign_in(client, owner)
    resp = _post(client, f"/people/{owner.id}/role", token, role="member")
    assert resp.status_code == 409 and "last owner" in resp.get_data(as_text=True)


def test_an_admin_cannot_invite_an_owner(client, factory):
    org = factory.org()
    factory.member(org, role="owner")
    admin = factory.member(org, role="admin")
    token = sign_in(client, admin)
    resp = _post(client, "/people/invite", token, email="new@example.test", role="owner")
    assert resp.status_code == 409 and "Only an owner" in resp.get_data(as_text=True)
    resp = _post(client, "/people/invite", token, email="new@example.test", role="member", area_contacts="read")
    assert resp.status_code == 200 and re.search(r"/invitation/[\w-]+", resp.get_data(as_text=True))


def test_removal_shows_what_goes_then_forgets_private_memories(client, factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    leo = factory.member(org, name="Leo")
    factory.memory(org, level="private", owner=leo, attribute="nota", value="x", category="person")
    factory.memory(org, level="shared", attribute="horario", value="9-14", author_user_id=leo.id)
    sign_in(client, owner)
    page = client.get(f"/people/{leo.id}/remove").get_data(as_text=True)
    assert "<strong>1</strong> private memories" in page and "<strong>1</strong> shared memories" in page
    assert system_session.scalar(select(Membership.left_at).where(Membership.user_id == leo.id)) is None
    resp = _post(client, f"/people/{leo.id}/remove", csrf_from(page))  # no confirmation field: refused
    assert resp.status_code == 400
    resp = _post(client, f"/people/{leo.id}/remove", csrf_from(page), confirm="remove")
    assert resp.status_code == 302
    system_session.expire_all()
    assert system_session.scalars(select(Memory.level)).all() == ["shared"]


def test_setting_areas_and_authorizing_a_phone_from_the_console(client, factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    mia = factory.member(org)
    token = sign_in(client, owner)
    assert _post(client, f"/people/{mia.id}/areas", token, area_contacts="read", area_invoices="edit").status_code == 302
    system_session.expire_all()
    assert system_session.scalar(select(Membership.permissions).where(Membership.user_id == mia.id)) == \
        {"contacts": "read", "invoices": "edit"}
    resp = _post(client, "/phones", token, phone="not a phone", person="")
    assert resp.status_code == 400 and "international number" in resp.get_data(as_text=True)
    assert _post(client, "/phones", token, phone="+34600111222", person=str(mia.id), area_contacts="read").status_code == 302
    assert "+34600111222" in client.get("/people").get_data(as_text=True)


def test_a_suspended_orgs_people_lose_its_console_pages(client, factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    orgs.set_suspended(system_session, org.id, True, actor=Actor("test"))
    system_session.commit()
    sign_in(client, owner)
    assert client.get("/people").status_code == 403


def test_tenancy_forms_need_their_csrf_token(client, factory):
    org = factory.org()
    owner = factory.member(org, role="owner")
    sign_in(client, owner)
    assert client.post("/people/invite", data={"email": "x@example.test", "role": "member"}).status_code == 400
    admin = factory.user(platform_role="platform_admin")
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    sign_in(client, admin)
    assert client.post("/platform/orgs", data={"name": "X", "owner_email": "o@example.test"}).status_code == 400


def test_a_reset_link_from_the_console_sets_a_new_password_once(client, factory):
    org = factory.org()
    owner = factory.member(org, role="owner")
    mia = factory.member(org)
    token = sign_in(client, owner)
    page = _post(client, f"/people/{mia.id}/reset-link", token).get_data(as_text=True)
    link = re.search(r"/reset-password/[\w-]+", page).group(0)
    other = client.application.test_client()
    form = other.get(link).get_data(as_text=True)
    weak = other.post(link, data={"csrf_token": csrf_from(form), "password": "short", "confirm": "short"})
    assert weak.status_code == 200 and "at least 12" in weak.get_data(as_text=True)
    ok = other.post(link, data={"csrf_token": csrf_from(form), "password": "a fresh passphrase here",
                                "confirm": "a fresh passphrase here"})
    assert ok.status_code == 302
    assert other.get(link).status_code == 404


def test_revoking_a_number_with_htmx_swaps_its_row(client, factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    auth = factory.phone(org, "+34600111999")
    token = sign_in(client, owner)
    resp = client.post(f"/phones/{auth.id}/revoke", data={"csrf_token": token}, headers={"HX-Request": "true"})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and html.lstrip().startswith(f'<tr id="phone-{auth.id}"') and "revoked" in html
    assert "<html" not in html


def test_platform_admin_lists_suspends_grants_roles_and_creates_a_platform_key(client, factory, system_session):
    from memory_core.domain.models import AuditLog, Organization, User
    from memory_core.tenancy.api_keys import PLATFORM, authenticate_key

    org = factory.org("Panadería Ruiz")
    owner = factory.member(org, role="owner")
    factory.message(factory.conversation(org, owner), "hola")
    bea = factory.user(email="bea@example.test")
    root = factory.user(platform_role="platform_admin")
    token = sign_in(client, root)
    page = client.get("/platform/orgs").get_data(as_text=True)
    assert re.search(r"<td>Panadería Ruiz</td>\s*<td>1</td>\s*<td>1</td>", page)  # one member, one message
    assert _post(client, f"/platform/orgs/{org.id}/suspend", token, suspend="1").status_code == 302
    system_session.expire_all()
    assert system_session.get(Organization, org.id).suspended_at is not None
    assert _post(client, "/platform/people", token, email="bea@example.test", role="staff").status_code == 302
    system_session.expire_all()
    assert system_session.get(User, bea.id).platform_role == "staff"
    invited = _post(client, "/platform/people", token, email="pia@example.test", role="privacy_officer")
    assert re.search(r"/invitation/[\w-]+", invited.get_data(as_text=True))
    last = _post(client, "/platform/people", token, email=root.email, role="")
    assert last.status_code == 409 and "last platform administrator" in last.get_data(as_text=True)
    posted = _post(client, "/platform/keys", token, name="host app")
    assert posted.status_code == 303  # redirect after the POST: a reload creates nothing
    created = client.get(posted.headers["Location"]).get_data(as_text=True)
    key = re.search(r"memp_\w+_[\w-]+", created).group(0)
    assert key not in client.get(posted.headers["Location"], follow_redirects=True).get_data(as_text=True)
    assert authenticate_key(system_session, PLATFORM, key) is not None
    actions = set(system_session.scalars(select(AuditLog.action).where(AuditLog.actor_user_id == root.id)))
    assert {"org.suspended", "platform_role.changed", "invitation.created", "platform_key.created"} <= actions
