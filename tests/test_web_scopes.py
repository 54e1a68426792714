"""The web and API processes without system scope (issue 15, finding 3): each flow that used to need the
worker role's connection runs through Flask's test client on an app whose Database has no worker URL
(app.py builds it so: any system-scope session raises SystemScopeUnavailable), and
shows its user-visible result; the web role cannot reach what the narrower paths guard."""
from __future__ import annotations

import pytest
from sqlalchemy import select, text, update

from memory_core.adapters.db import Scope, org_scope
from memory_core.adapters.security import sha256
from memory_core.domain.models import (
    AuditLog,
    Conversation,
    Membership,
    Memory,
    MemorySource,
    Message,
    PhoneAuthorization,
    User,
)
from memory_core.tenancy import members, platform
from memory_core.tenancy.members import Actor
from tests.conftest import csrf_from, login, sign_in
from tests.factories import PASSWORD

NEW_PASSWORD = "a fresh passphrase here"


@pytest.fixture
def web(web_only):
    return web_only.test_client()


def test_no_module_of_the_web_or_the_api_names_system_scope():
    """The console, review pages, API and web helpers never ask for the worker's scope (the CLI in app.py
    and the jobs do, in their own processes)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    named = []
    for package in ("console", "review", "api", "web"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and any(a.name == "SYSTEM" for a in node.names):
                    named.append(str(path.relative_to(root)))
    assert named == []


def _use_link(client, path: str, **fields):
    form = client.get(path)
    assert form.status_code == 200, form.get_data(as_text=True)
    return client.post(path, data={"csrf_token": csrf_from(form.get_data(as_text=True)), **fields})


def _signs_in(client, email: str, password: str) -> bool:
    """Whether a new browser signs in with this email and password."""
    return "Sign out" in login(client.application.test_client(), email, password).get_data(as_text=True)


def test_the_setup_link_makes_the_first_platform_admin_without_system_scope(web, system_session):
    token = platform.issue_setup_link(system_session)
    system_session.commit()
    resp = _use_link(web, f"/setup/{token}", email="root@example.test", name="Root", password=NEW_PASSWORD,
                     confirm=NEW_PASSWORD)
    assert resp.status_code == 302
    root = system_session.scalar(select(User).where(User.email == "root@example.test"))
    assert root.platform_role == "platform_admin"
    assert web.get(f"/setup/{token}").status_code == 404  # used once
    assert _signs_in(web, "root@example.test", NEW_PASSWORD)


def test_an_invitation_makes_the_account_and_membership_without_system_scope(web, factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    _row, token = members.invite(system_session, org.id, "nora@example.test", role="admin",
                                 permissions={"contacts": "read"}, actor=Actor("test", owner.id, "owner"))
    system_session.commit()
    page = web.get(f"/invitation/{token}").get_data(as_text=True)
    assert org.name in page and "nora@example.test" in page
    resp = _use_link(web, f"/invitation/{token}", name="Nora", password=NEW_PASSWORD, confirm=NEW_PASSWORD)
    assert resp.status_code == 302
    nora = system_session.scalar(select(User).where(User.email == "nora@example.test"))
    m = system_session.scalar(select(Membership).where(Membership.user_id == nora.id))
    assert (nora.name, m.org_id, m.role, m.permissions) == ("Nora", org.id, "admin", {"contacts": "read"})
    assert system_session.scalar(select(AuditLog.org_id).where(AuditLog.action == "invitation.accepted")) == org.id
    assert web.get(f"/invitation/{token}").status_code == 404
    assert _signs_in(web, "nora@example.test", NEW_PASSWORD)


def test_an_existing_account_joins_by_invitation_without_system_scope(web, factory, system_session):
    first, second = factory.org(), factory.org()
    leo = factory.member(first)
    _row, token = members.invite(system_session, second.id, leo.email, actor=Actor("test"))
    system_session.commit()
    assert web.get(f"/invitation/{token}").status_code == 302  # sign in as that person first
    sign_in(web, leo)
    resp = _use_link(web, f"/invitation/{token}")
    assert resp.status_code == 302
    assert system_session.scalar(select(Membership.role).where(Membership.user_id == leo.id,
                                                                Membership.org_id == second.id)) == "member"


def test_a_platform_invitation_gives_the_role_without_system_scope(web, system_session):
    token = platform.grant_or_invite(system_session, "officer@example.test", "privacy_officer",
                                     actor=Actor("test"))
    system_session.commit()
    resp = _use_link(web, f"/invitation/{token}", password=NEW_PASSWORD, confirm=NEW_PASSWORD)
    assert resp.status_code == 302
    assert system_session.scalar(select(User.platform_role).where(
        User.email == "officer@example.test")) == "privacy_officer"


def test_a_reset_link_sets_the_password_without_system_scope(web, factory, system_session):
    mia = factory.member(factory.org())
    token = members.request_password_reset(system_session, mia.email, actor=Actor("test"))
    system_session.commit()
    weak = _use_link(web, f"/reset-password/{token}", password="short", confirm="short")
    assert weak.status_code == 200 and "at least 12" in weak.get_data(as_text=True)
    resp = _use_link(web, f"/reset-password/{token}", password=NEW_PASSWORD, confirm=NEW_PASSWORD)
    assert resp.status_code == 302
    assert web.get(f"/reset-password/{token}").status_code == 404
    assert _signs_in(web, mia.email, NEW_PASSWORD)
    assert not _signs_in(web, mia.email, PASSWORD)


def test_the_web_role_learns_nothing_of_a_link_without_its_token(database, factory, system_session):
    mia = factory.member(factory.org())
    token = members.request_password_reset(system_session, mia.email, actor=Actor("test"))
    system_session.commit()
    s = database.session(Scope())  # memoria_app, no scope: what an SQL injection in the web would have
    try:
        assert s.execute(text("select * from account_tokens")).all() == []
        peek = text("select * from memoria_link_peek('reset', :t, now())")
        assert s.execute(peek, {"t": "made-up-token"}).all() == []
        assert s.execute(peek, {"t": sha256(token)}).all() == []  # the stored digest is not the capability
        use = text("select memoria_link_use('reset', :t, now(), null, null)")
        assert s.scalar(use, {"t": sha256(token)}) is None
        assert s.scalar(use, {"t": "made-up-token"}) is None
        assert s.execute(text("select * from memoria_link_peek('invite', :t, now())"), {"t": token}).all() == []
        assert [r.account_id for r in s.execute(peek, {"t": token})] == [mia.id]  # the token holder's answer
    finally:
        s.rollback()
        s.close()


def test_adopting_a_numbers_history_in_every_org_without_system_scope(web, factory, system_session):
    phone = "+34600111000"
    first, second = factory.org(), factory.org()
    ana = factory.member(first, phone=phone)
    factory.memory(None, level="personal", owner_phone=phone, category="person", subject="self",
                   attribute="ciudad", value="Cádiz")
    factory.memory(None, level="personal", owner=ana, category="person", subject="self", attribute="ciudad",
                   value="Madrid")
    for org in (first, second):  # the number wrote in two orgs before it was linked
        conv = factory.conversation(org, channel="whatsapp", phone=phone)
        factory.message(conv, "hola")
        factory.memory(org, level="private", owner_phone=phone, attribute="nota", value=org.name)
    other = factory.memory(second, level="private", owner_phone="+34600999999", attribute="nota", value="not hers")
    token = sign_in(web, ana)
    resp = web.post("/link-whatsapp/adopt", data={"csrf_token": token}, follow_redirects=True)
    assert "Adopted 3 memories and 2 messages" in resp.get_data(as_text=True)
    system_session.expire_all()
    owners = {(m.value, m.owner_user_id, m.status) for m in system_session.scalars(select(Memory))}
    assert owners == {("Cádiz", ana.id, "superseded"), ("Madrid", ana.id, "active"), (first.name, ana.id, "active"),
                      (second.name, ana.id, "active"), ("not hers", None, "active")}
    assert other.owner_phone == "+34600999999"
    assert set(system_session.scalars(select(Message.user_id))) == {ana.id}


@pytest.fixture
def keyed(factory, system_session):
    """An org with an owner, a member and an API key."""
    from memory_core.tenancy.api_keys import create_api_key

    org = factory.org()
    owner = factory.member(org, role="owner")
    bea = factory.member(org)
    _, key = create_api_key(system_session, org.id, "bot", created_by=owner.id, actor_label="test")
    system_session.commit()
    return org, bea, {"Authorization": f"Bearer {key}"}


def test_deleting_a_conversation_forgets_its_owners_private_memories_without_system_scope(web, keyed, factory,
                                                                                           system_session):
    org, bea, headers = keyed
    conv = factory.conversation(org, bea)
    said = factory.message(conv, "soy alérgica al marisco")
    kept = factory.memory(org, level="shared", attribute="horario", value="9-14")
    mine = [factory.memory(None, level="personal", owner=bea, subject="self", attribute="alergia", value="marisco"),
            factory.memory(org, level="private", owner=bea, attribute="nota", value="x"),
            factory.memory(org, level="private", owner_phone="+34600111222", attribute="nota", value="y")]
    for m in (*mine, kept):
        system_session.add(MemorySource(memory_id=m.id, message_id=said.id, conversation_id=conv.id))
    elsewhere = factory.memory(org, level="private", owner=bea, attribute="otra", value="z")
    system_session.commit()
    resp = web.delete(f"/api/v1/conversations/{conv.id}", headers=headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.get_json()["counts"]["memories_removed"] == 3
    assert set(system_session.scalars(select(Memory.id))) == {kept.id, elsewhere.id}
    assert system_session.scalar(select(Conversation.id).where(Conversation.id == conv.id)) is None


def test_deleting_a_contact_forgets_every_fact_about_it_without_system_scope(web, keyed, factory, system_session):
    org, bea, headers = keyed
    contact = factory.contact(org)
    about = f"contact:{contact.id}"
    factory.memory(org, subject=about, attribute="plazo_pago", value="60 días", area="contacts", category="customer")
    factory.memory(org, level="private", owner=bea, subject=about, attribute="nota", value="x", category="customer")
    factory.memory(org, level="private", owner_phone="+34600111222", subject=about, attribute="nota", value="y",
                   category="customer")
    other = factory.memory(org, level="private", owner=bea, subject="self", attribute="nota", value="z")
    resp = web.delete(f"/api/v1/contacts/{contact.id}", headers=headers)
    assert resp.status_code == 200 and resp.get_json()["counts"]["facts_removed"] == 3
    assert set(system_session.scalars(select(Memory.id))) == {other.id}


def test_ending_a_membership_forgets_the_members_private_memories_without_system_scope(web, keyed, factory,
                                                                                       system_session):
    org, bea, headers = keyed
    factory.memory(org, level="private", owner=bea, attribute="nota", value="x")
    shared = factory.memory(org, level="shared", attribute="horario", value="9-14", author_user_id=bea.id)
    resp = web.delete(f"/api/v1/memberships/{bea.id}", headers=headers)
    assert resp.status_code == 200 and resp.get_json()["counts"]["private_removed"] == 1
    assert set(system_session.scalars(select(Memory.id))) == {shared.id}
    assert system_session.scalar(select(Membership.left_at).where(Membership.user_id == bea.id)) is not None


def test_only_the_conversations_org_scope_learns_who_owns_what_forgetting_reaches(database, keyed, factory):
    org, bea, _headers = keyed
    conv = factory.conversation(org, bea)
    said = factory.message(conv, "hola")
    m = factory.memory(org, level="private", owner=bea, attribute="nota", value="x")
    factory.s.add(MemorySource(memory_id=m.id, message_id=said.id, conversation_id=conv.id))
    factory.s.commit()
    other = factory.org()
    owners = text("select * from memoria_forget_owners(:o, :c, null)")
    for scope, org_id, found in ((Scope(), org.id, []), (org_scope(other.id), other.id, []),
                                 (org_scope(other.id), org.id, []), (org_scope(org.id), org.id, [bea.id])):
        s = database.session(scope)
        try:
            assert [r.user_id for r in s.execute(owners, {"o": org_id, "c": conv.id})] == found
        finally:
            s.rollback()
            s.close()


def _vincular(web, headers, phone: str, code: str):
    body = {"channel": "whatsapp", "conversation": f"wa-{phone}", "external_id": f"wamid-{code}-{phone}",
            "phone": phone, "role": "user", "text": f"VINCULAR {code}"}
    resp = web.post("/api/v1/messages", json=body, headers=headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()["reply"]


def test_vincular_links_the_number_through_the_api_without_system_scope(web, keyed, factory, system_session):
    from memory_core.tenancy import linking

    org, bea, headers = keyed
    other_org = factory.org()
    factory.phone(other_org, "+34600000001", user=bea)  # her old number, in another org
    system_session.execute(update(User).where(User.id == bea.id).values(phone="+34600000001"))
    system_session.commit()
    code = linking.create_link_code(system_session, bea.id, org.id)
    system_session.commit()
    assert "vinculado a tu cuenta" in _vincular(web, headers, "34600111222", code)
    system_session.expire_all()
    assert system_session.scalar(select(User.phone).where(User.id == bea.id)) == "+34600111222"
    auths = {(a.org_id, a.phone): a.revoked_at is None for a in system_session.scalars(select(PhoneAuthorization))}
    assert auths == {(org.id, "+34600111222"): True, (other_org.id, "+34600000001"): False}
    assert "ya se usó" in _vincular(web, headers, "+34600111222", code)
    for _ in range(linking.MAX_FAILURES):
        assert "no es válido" in _vincular(web, headers, "+34600333444", "AAAAAA")
    assert "Demasiados" in _vincular(web, headers, "+34600333444", "AAAAAA")


def test_another_orgs_key_cannot_redeem_a_link_code(web, keyed, factory, system_session):
    from memory_core.tenancy import linking
    from memory_core.tenancy.api_keys import create_api_key

    org, bea, _headers = keyed
    other = factory.org()
    _, key = create_api_key(system_session, other.id, "bot", created_by=None, actor_label="test")
    code = linking.create_link_code(system_session, bea.id, org.id)
    system_session.commit()
    assert "no es válido" in _vincular(web, {"Authorization": f"Bearer {key}"}, "+34600111222", code)
    assert system_session.scalar(select(User.phone).where(User.id == bea.id)) is None


def _remember(web, headers, **body):
    resp = web.post("/api/v1/remember", json=body, headers=headers)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


TONO = {"subject": "self", "attribute": "tono", "value": "tú", "sentence": "Prefiere que le tuteen.",
        "category": "preference"}


def test_remember_writes_through_the_ladder_without_system_scope(web, keyed, factory, system_session):
    org, bea, headers = keyed
    owner = system_session.scalar(select(Membership.user_id).where(Membership.org_id == org.id,
                                                                    Membership.role == "owner"))
    contact = factory.contact(org, "Talleres García S.L.")
    learnt = _remember(web, headers, user_id=str(owner), text="Recuerda que Talleres García paga a 60 días")
    assert learnt["outcome"] == "learnt" and learnt["writes"][0]["level"] == "shared"
    # A member who may not edit contacts keeps it private and proposes it to the org.
    marta = factory.member(org, permissions={"contacts": "read"})
    proposed = _remember(web, headers, user_id=str(marta.id), text="Recuerda que Talleres García paga a 90 días")
    assert proposed["outcome"] == "proposed"
    rows = {(m.level, m.status, m.value, m.owner_user_id) for m in system_session.scalars(
        select(Memory).where(Memory.subject == f"contact:{contact.id}"))}
    assert rows == {("shared", "active", "60 días", None), ("private", "active", "90 días", marta.id),
                    ("shared", "proposed", "90 días", None)}
    # Personal facts: learnt, then replaced by a new value kept as a version.
    assert _remember(web, headers, user_id=str(bea.id), fact=TONO)["writes"][0]["level"] == "personal"
    again = _remember(web, headers, user_id=str(bea.id), fact={**TONO, "value": "usted",
                                                               "sentence": "Prefiere que le traten de usted."})
    assert again["outcome"] in ("learnt", "superseded") and again["writes"][0]["outcome"] == "superseded"
    assert {(m.value, m.status) for m in system_session.scalars(select(Memory).where(
        Memory.attribute == "tono", Memory.owner_user_id == bea.id))} == {("tú", "superseded"), ("usted", "active")}
    assert system_session.scalar(select(AuditLog.id).where(AuditLog.action == "memory.superseded")) is not None


def test_remember_for_a_number_without_an_account_without_system_scope(web, keyed, factory, system_session):
    org, _bea, headers = keyed
    factory.phone(org, "+34611000222")
    out = _remember(web, headers, phone="+34611000222", fact=TONO)
    assert out["outcome"] == "learnt", out
    [m] = system_session.scalars(select(Memory)).all()
    assert (m.level, m.owner_phone, m.owner_user_id) == ("personal", "+34611000222", None)


def test_the_ladder_scope_sees_the_orgs_shared_facts_and_only_its_own_memories(database, keyed, factory):
    from memory_core.domain.access import Access, Principal

    org, bea, _headers = keyed
    leo = factory.member(org)
    shared = factory.memory(org, level="shared", area="invoices", attribute="horario", value="9-14")
    hers = [factory.memory(None, level="personal", owner=bea, subject="self", attribute="a", value="1"),
            factory.memory(org, level="private", owner=bea, attribute="b", value="2")]
    factory.memory(None, level="personal", owner=leo, subject="self", attribute="c", value="3")
    factory.memory(org, level="private", owner=leo, attribute="d", value="4")
    factory.memory(factory.org(), level="shared", attribute="e", value="5")
    s = database.session(Access(Principal(user_id=bea.id), org.id).ladder_scope())
    try:
        assert set(s.scalars(select(Memory.id))) == {shared.id, *(m.id for m in hers)}
        assert s.execute(text("select * from account_tokens")).all() == []
    finally:
        s.rollback()
        s.close()


def test_platform_scope_needs_the_live_sessions_proof_not_just_a_staff_id(database, factory, system_session):
    from memory_core.adapters.db import platform_scope

    staff = factory.user(platform_role="staff")
    factory.org()

    def orgs_seen(scope: Scope) -> int:
        with database.unit_of_work(scope) as uow:
            return uow.session.execute(text("select count(*) from organizations")).scalar_one()

    version = staff.session_version
    assert orgs_seen(platform_scope(staff.id, version)) == 1
    assert orgs_seen(platform_scope(staff.id)) == 0  # what an SQL injection that knows the id could set
    assert orgs_seen(Scope(mode="platform", user_id=staff.id, proof="0" * 64)) == 0
    assert orgs_seen(platform_scope(staff.id, version + 1)) == 0
    system_session.execute(update(User).where(User.id == staff.id).values(session_version=version + 1))
    system_session.commit()  # signing out bumps the version: the old proof stops working at once
    assert orgs_seen(platform_scope(staff.id, version)) == 0
    assert orgs_seen(platform_scope(staff.id, version + 1)) == 1
    with database.unit_of_work(Scope()) as uow:  # the key is the worker's alone
        assert uow.session.execute(text("select count(*) from memoria_keys")).scalar_one() == 0


def test_staff_pages_work_through_the_web_with_the_sessions_proof(web, factory, system_session):
    from memory_core.domain import audit

    staff = factory.user(platform_role="staff")
    org = factory.org("Visible Org")
    audit.record(system_session, actor_label="test", action="contact.deleted", org_id=org.id)
    system_session.commit()
    sign_in(web, staff)
    for page in ("/traces", "/usage", "/jobs"):
        assert web.get(page).status_code == 200, page
    assert "contact.deleted" in web.get("/audit").get_data(as_text=True)  # another org's row: platform scope


def test_a_person_cannot_make_themselves_staff_from_their_own_scope(database, factory):
    import sqlalchemy.exc

    from memory_core.adapters.db import person_scope

    ana = factory.member(factory.org())
    for scope in (person_scope(ana.id), org_scope(factory.org().id, ana.id)):
        with database.unit_of_work(scope) as uow:
            assert uow.session.execute(text("update users set name = 'Ana B' where id = :u"), {"u": ana.id}).rowcount
            with pytest.raises(sqlalchemy.exc.ProgrammingError, match="only a platform administrator"):
                uow.session.execute(text("update users set platform_role = 'platform_admin' where id = :u"),
                                    {"u": ana.id})
