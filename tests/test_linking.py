"""Linking a WhatsApp number to a web account with a one-time code, and adopting pre-link history."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, text, update

from memory_core.domain.access import load_access
from memory_core.domain.errors import Conflict, Forbidden, TooManyAttempts
from memory_core.domain.models import AuditLog, LinkCode, Memory, Message, PhoneAuthorization, User
from memory_core.learning.ingest import ingest_message
from memory_core.tenancy import linking

PHONE = "+34611222333"


def _code(system_session, user, org) -> str:
    code = linking.create_link_code(system_session, user.id, org.id)
    system_session.commit()
    return code


def _send(system_session, phone, text_):
    """A WhatsApp message through ingest, as the channel would deliver it; returns the reply."""
    result = ingest_message(system_session, channel="whatsapp", conversation=f"wa-{phone}",
                            external_id=f"wamid-{text_}-{phone}",
                            org_id=None, user_id=None, phone=phone, role="user", text=text_)
    system_session.commit()
    return result


def test_code_is_six_unambiguous_characters_stored_only_as_hmac(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    code = _code(system_session, ana, org)
    assert len(code) == 6 and set(code) <= set(linking.ALPHABET)
    assert not set("0O1IL5S2Z") & set(linking.ALPHABET)
    stored = system_session.execute(text("select * from link_codes")).mappings().one()
    assert code not in " ".join(str(v) for v in stored.values())
    assert stored["code_hmac"] == linking.code_digest(code)


def test_vincular_from_the_phone_links_that_number_case_and_spacing_tolerant(factory, system_session):
    org = factory.org()
    ana = factory.member(org, permissions={"contacts": "read"})
    code = _code(system_session, ana, org)
    spaced = f"  vincular  {code[:3].lower()} {code[3:].lower()} "
    result = _send(system_session, PHONE, spaced)
    assert result.link_request and "vinculado a tu cuenta" in result.reply
    assert system_session.scalar(select(Message.id)) is None  # the code is never stored as a message
    system_session.expire_all()
    assert system_session.get(User, ana.id).phone == PHONE
    access = load_access(system_session, org.id, phone=PHONE)
    assert access.principal.user_id == ana.id and access.principal.phone == PHONE
    # at most the person's own permissions: a member who only reads contacts cannot edit them by phone
    assert access.can_read("contacts") and not access.can_edit("contacts")
    assert not access.can_read("invoices")


def test_number_gets_at_most_the_persons_permissions_even_if_an_admin_granted_more(factory, system_session):
    org = factory.org()
    ana = factory.member(org, permissions={"contacts": "read"})
    factory.phone(org, PHONE)  # an admin had authorized the bare number to edit everything
    code = _code(system_session, ana, org)
    _send(system_session, PHONE, f"VINCULAR {code}")
    auth = system_session.scalar(select(PhoneAuthorization).where(PhoneAuthorization.phone == PHONE))
    assert auth.user_id == ana.id
    assert auth.permissions.get("contacts") == "read" and "invoices" not in auth.permissions


def test_code_is_single_use(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    code = _code(system_session, ana, org)
    assert "vinculado" in linking.confirm_link(system_session, PHONE, code)
    system_session.commit()
    reply = linking.confirm_link(system_session, "+34699000111", code)
    system_session.commit()
    assert "ya se usó" in reply
    assert system_session.scalar(select(User.phone).where(User.id == ana.id)) == PHONE


def test_code_expires_after_ten_minutes(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    code = _code(system_session, ana, org)
    row = system_session.scalar(select(LinkCode))
    assert dt.timedelta(minutes=9) < row.expires_at - row.created_at <= dt.timedelta(minutes=10, seconds=5)
    expired = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
    system_session.execute(update(LinkCode).values(expires_at=expired))
    system_session.commit()
    reply = linking.confirm_link(system_session, PHONE, code)
    system_session.commit()
    assert "caducado" in reply
    assert system_session.scalar(select(User.phone).where(User.id == ana.id)) is None


def test_a_number_linked_to_another_account_is_refused(factory, system_session):
    org = factory.org()
    ana = factory.member(org, phone=PHONE)
    factory.phone(org, PHONE, user=ana)
    bea = factory.member(org)
    code = _code(system_session, bea, org)
    reply = linking.confirm_link(system_session, PHONE, code)
    system_session.commit()
    assert "otra cuenta" in reply
    system_session.expire_all()
    assert system_session.get(User, bea.id).phone is None
    assert system_session.get(User, ana.id).phone == PHONE
    assert system_session.scalar(select(PhoneAuthorization.user_id).where(PhoneAuthorization.phone == PHONE)) == ana.id


def test_reply_is_in_english_for_an_english_speaking_user(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    system_session.execute(update(User).where(User.id == ana.id).values(locale="en"))
    system_session.commit()
    code = _code(system_session, ana, org)
    assert linking.confirm_link(system_session, PHONE, code).startswith("Done: this number is now linked")


def test_wrong_codes_from_one_number_are_rate_limited(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    code = _code(system_session, ana, org)
    for _ in range(linking.MAX_FAILURES):
        assert "no es válido" in linking.confirm_link(system_session, PHONE, "AAAAAA")
        system_session.commit()
    assert "Espera 15 minutos" in linking.confirm_link(system_session, PHONE, code)
    assert system_session.scalar(select(User.phone).where(User.id == ana.id)) is None
    # the rate-limit key never holds the number itself
    keys = system_session.execute(text("select key from login_attempts")).scalars().all()
    assert keys and all(PHONE not in k and "611222333" not in k for k in keys)


def test_asking_for_codes_is_rate_limited_and_a_new_code_voids_the_old(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    first = _code(system_session, ana, org)
    _code(system_session, ana, org)
    assert "caducado" in linking.confirm_link(system_session, PHONE, first)
    system_session.commit()
    for _ in range(linking.MAX_CODES - 2):
        _code(system_session, ana, org)
    with pytest.raises(TooManyAttempts):
        linking.create_link_code(system_session, ana.id, org.id)


def test_only_a_member_may_ask_for_a_code(factory, system_session):
    org, other = factory.org(), factory.org()
    ana = factory.member(other)
    with pytest.raises(Forbidden):
        linking.create_link_code(system_session, ana.id, org.id)


def test_linking_is_audited_without_the_number(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    linking.confirm_link(system_session, PHONE, _code(system_session, ana, org))
    system_session.commit()
    rows = system_session.scalars(select(AuditLog).where(AuditLog.action.like("identity.%"))).all()
    assert {r.action for r in rows} == {"identity.link_code_issued", "identity.linked"}
    assert all("611222333" not in f"{r.actor_label}{r.target_id}{r.details}" for r in rows)


def test_pre_link_history_stays_with_the_phone_until_the_person_adopts_it(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    factory.phone(org, PHONE)
    conv = factory.conversation(org, channel="whatsapp", phone=PHONE)
    factory.message(conv, "me llamo Ana")
    factory.memory(None, level="personal", owner_phone=PHONE, category="person", subject="self",
                   attribute="nombre", value="Ana")
    factory.memory(org, level="private", owner_phone=PHONE, attribute="nota", value="x")
    linking.confirm_link(system_session, PHONE, _code(system_session, ana, org))
    system_session.commit()
    before = linking.pre_link_history(system_session, ana.id)
    assert (before.memories, before.messages, before.conversations) == (2, 1, 1)
    assert system_session.scalar(select(Memory.owner_phone).where(Memory.attribute == "nombre")) == PHONE

    with pytest.raises(Forbidden):
        linking.adopt_pre_link_history(system_session, ana.id, PHONE, actor=factory.member(org).id)
    counts = linking.adopt_pre_link_history(system_session, ana.id, PHONE, actor=ana.id)
    system_session.commit()
    assert counts["memories"] == 2 and counts["messages"] == 1
    owners = set(system_session.execute(select(Memory.owner_user_id, Memory.owner_phone)).all())
    assert owners == {(ana.id, None)}
    assert linking.pre_link_history(system_session, ana.id).memories == 0
    assert system_session.scalar(select(AuditLog.action).where(AuditLog.action == "identity.history_adopted"))


def test_adopting_keeps_one_active_fact_and_the_older_as_a_version(factory, system_session):
    org = factory.org()
    ana = factory.member(org, phone=PHONE)
    factory.memory(None, level="personal", owner_phone=PHONE, category="person", subject="self",
                   attribute="ciudad", value="Sevilla")
    factory.memory(None, level="personal", owner=ana, category="person", subject="self",
                   attribute="ciudad", value="Madrid")
    linking.adopt_pre_link_history(system_session, ana.id, PHONE, actor=ana.id)
    system_session.commit()
    rows = {m.value: m.status for m in system_session.scalars(select(Memory))}
    assert rows == {"Sevilla": "superseded", "Madrid": "active"}


def test_cannot_adopt_a_number_that_is_not_linked_to_you(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    with pytest.raises(Conflict):
        linking.adopt_pre_link_history(system_session, ana.id, PHONE, actor=ana.id)


def test_linking_a_new_number_moves_the_account_and_the_old_number_stops_speaking_for_it(factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    linking.confirm_link(system_session, PHONE, _code(system_session, ana, org))
    system_session.commit()
    assert load_access(system_session, org.id, phone=PHONE) is not None
    linking.confirm_link(system_session, "+34699888777", _code(system_session, ana, org))
    system_session.commit()
    system_session.expire_all()
    assert system_session.get(User, ana.id).phone == "+34699888777"
    assert load_access(system_session, org.id, phone=PHONE) is None
    assert load_access(system_session, org.id, phone="+34699888777").principal.user_id == ana.id


def test_a_code_issued_in_one_org_cannot_be_redeemed_through_another_orgs_agent(factory, system_session):
    from memory_core.tenancy.linking import confirm_link, create_link_code

    org_a, org_b = factory.org(), factory.org()
    ana = factory.member(org_a)
    code = create_link_code(system_session, ana.id, org_a.id)
    system_session.commit()
    confirm_link(system_session, "+34600777888", code, org_id=org_b.id)
    system_session.commit()
    system_session.refresh(ana)
    assert ana.phone is None
    confirm_link(system_session, "+34600777888", code, org_id=org_a.id)  # the code is still unused
    system_session.commit()
    system_session.refresh(ana)
    assert ana.phone == "+34600777888"
