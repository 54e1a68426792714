"""Onboarding without SQL, in the domain: orgs, invitations, roles, areas, phones, removal, resets,
passwords, platform roles and keys, and idempotent provisioning by the host's own ids."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from memory_core.adapters.security import sha256, verify_password
from memory_core.domain.access import load_access
from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import AccountToken, AuditLog, Memory, PhoneAuthorization, User
from memory_core.tenancy import api_keys, members, orgs, phones, platform, provisioning, tokens
from memory_core.tenancy.members import Actor
from memory_core.tenancy.passwords import check_password

ADMIN = Actor("console platform admin")
GOOD = "a long and unusual passphrase"


def _actions(s, prefix=""):
    return [a for a in s.scalars(select(AuditLog.action).order_by(AuditLog.id)) if a.startswith(prefix)]


def test_invitation_is_stored_only_as_its_sha256(system_session):
    org, (row, token) = orgs.create_org(system_session, "Acme", owner_email="Ana@Example.test", actor=ADMIN)
    system_session.commit()
    stored = system_session.scalars(select(AccountToken.token_hash)).all()
    assert stored == [sha256(token)] and token not in str(stored)
    assert row.email == "ana@example.test" and row.role == "owner"


def test_invitation_works_once_then_never_again(system_session):
    org, (_row, token) = orgs.create_org(system_session, "Acme", owner_email="ana@example.test", actor=ADMIN)
    user = members.accept_invitation(system_session, token, password=GOOD, name="Ana")
    system_session.commit()
    assert verify_password(user.password_hash, GOOD)
    assert load_access(system_session, org.id, user_id=user.id).role == "owner"
    with pytest.raises(NotFound):
        members.accept_invitation(system_session, token, password=GOOD)


def test_invitation_expires(system_session):
    org, _ = orgs.create_org(system_session, "Acme", owner_email=None, actor=ADMIN)
    past = tokens.utcnow() - dt.timedelta(days=8)
    _row, token = members.invite(system_session, org.id, "bob@example.test", actor=ADMIN, now=past)
    system_session.commit()
    with pytest.raises(NotFound, match="expired"):
        members.accept_invitation(system_session, token, password=GOOD)


def test_a_weak_password_is_refused_and_does_not_use_up_the_invitation(system_session):
    org, (_row, token) = orgs.create_org(system_session, "Acme", owner_email="ana@example.test", actor=ADMIN)
    system_session.commit()
    with pytest.raises(InvalidInput):
        members.accept_invitation(system_session, token, password="password1234")
    members.accept_invitation(system_session, token, password=GOOD)


@pytest.mark.parametrize("weak", ["short", "password1234", "qwertyuiop123", "aaaaaaaaaaaaaa", "ana@example.test"])
def test_short_common_and_email_passwords_are_refused(weak):
    with pytest.raises(InvalidInput):
        check_password(weak, email="ana@example.test")
    assert check_password(GOOD) == GOOD


def _org_with_owner(s):
    org, (_row, token) = orgs.create_org(s, "Acme", owner_email="ana@example.test", actor=ADMIN)
    owner = members.accept_invitation(s, token, password=GOOD)
    s.commit()
    return org, owner


def test_member_invited_to_read_contacts_only_reads_contacts(system_session):
    org, owner = _org_with_owner(system_session)
    _row, token = members.invite(system_session, org.id, "mia@example.test", role="member",
                                 permissions={"contacts": "read"}, actor=Actor("console owner", owner.id))
    mia = members.accept_invitation(system_session, token, password=GOOD)
    access = load_access(system_session, org.id, user_id=mia.id)
    assert access.can_read("contacts") and not access.can_edit("contacts") and not access.can_read("invoices")
    members.set_permissions(system_session, org.id, mia.id, {"contacts": "edit", "invoices": "read"},
                            actor=Actor("console owner", owner.id))
    access = load_access(system_session, org.id, user_id=mia.id)
    assert access.can_edit("contacts") and access.can_read("invoices")
    with pytest.raises(InvalidInput):
        members.set_permissions(system_session, org.id, mia.id, {"nowhere": "read"}, actor=ADMIN)


def test_last_owner_cannot_be_demoted_or_removed(system_session):
    org, owner = _org_with_owner(system_session)
    with pytest.raises(Conflict):
        members.set_role(system_session, org.id, owner.id, "admin", actor=ADMIN)
    with pytest.raises(Conflict):
        members.removal_preview(system_session, org.id, owner.id)
    with pytest.raises(Conflict):
        members.remove_member(system_session, org.id, owner.id, actor=ADMIN)
    other = platform.create_user(system_session, "bea@example.test", "Bea", GOOD, actor=ADMIN)
    members.add_member(system_session, org.id, other.id, role="owner", actor=ADMIN)
    members.set_role(system_session, org.id, owner.id, "admin", actor=ADMIN)
    assert load_access(system_session, org.id, user_id=owner.id).role == "admin"


def test_removing_a_member_previews_then_forgets_their_private_memories(system_session, factory):
    org, owner = _org_with_owner(system_session)
    leo = platform.create_user(system_session, "leo@example.test", "Leo", GOOD, actor=ADMIN)
    members.add_member(system_session, org.id, leo.id, actor=ADMIN)
    system_session.commit()
    factory.memory(org, level="private", owner=leo, attribute="nota", value="x", category="person")
    factory.memory(org, level="shared", attribute="horario", value="9-14", author_user_id=leo.id)
    preview = members.removal_preview(system_session, org.id, leo.id)
    assert preview == {"private_removed": 1, "shared_kept": 1, "numbers_revoked": 0}
    assert system_session.scalar(select(func.count()).select_from(Memory)) == 2  # the preview changed nothing
    assert members.remove_member(system_session, org.id, leo.id, actor=ADMIN) == preview
    system_session.commit()
    assert system_session.scalars(select(Memory.level)).all() == ["shared"]
    assert load_access(system_session, org.id, user_id=leo.id) is None


def test_deactivated_member_has_no_access_and_keeps_everything(system_session, factory):
    org, owner = _org_with_owner(system_session)
    leo = platform.create_user(system_session, "leo@example.test", "Leo", GOOD, actor=ADMIN)
    members.add_member(system_session, org.id, leo.id, actor=ADMIN)
    system_session.commit()
    factory.memory(org, level="private", owner=leo, attribute="nota", value="x", category="person")
    members.set_active(system_session, org.id, leo.id, False, actor=ADMIN)
    assert load_access(system_session, org.id, user_id=leo.id) is None
    members.set_active(system_session, org.id, leo.id, True, actor=ADMIN)
    assert load_access(system_session, org.id, user_id=leo.id) is not None
    assert system_session.scalar(select(func.count()).select_from(Memory)) == 1


def test_password_reset_link_is_single_use_expiring_and_hashed(system_session):
    org, owner = _org_with_owner(system_session)
    token = members.request_password_reset(system_session, "ANA@example.test", actor=ADMIN)
    assert members.request_password_reset(system_session, "nobody@example.test", actor=ADMIN) is None
    assert sha256(token) in system_session.scalars(select(AccountToken.token_hash)).all()
    members.reset_password(system_session, token, "another fine passphrase")
    with pytest.raises(NotFound):
        members.reset_password(system_session, token, "yet another passphrase")
    assert verify_password(system_session.get(User, owner.id).password_hash, "another fine passphrase")
    old = members.request_password_reset(system_session, "ana@example.test", actor=ADMIN,
                                         now=tokens.utcnow() - dt.timedelta(hours=2))
    with pytest.raises(NotFound):
        members.reset_password(system_session, old, "yet another passphrase")


def test_setup_link_creates_the_first_platform_admin_once(system_session):
    token = platform.issue_setup_link(system_session)
    admin = platform.complete_setup(system_session, token, "root@example.test", "Root", GOOD)
    system_session.commit()
    assert admin.platform_role == "platform_admin"
    with pytest.raises(NotFound):
        platform.complete_setup(system_session, token, "two@example.test", "Two", GOOD)
    with pytest.raises(Conflict):
        platform.issue_setup_link(system_session)


def test_platform_roles_are_granted_and_the_last_platform_admin_stays(system_session):
    root = platform.create_user(system_session, "root@example.test", "Root", GOOD, platform_role="platform_admin",
                                actor=ADMIN)
    bea = platform.create_user(system_session, "bea@example.test", "Bea", GOOD, actor=ADMIN)
    platform.set_platform_role(system_session, bea.id, "privacy_officer", actor=Actor("console platform admin", root.id))
    assert bea.platform_role == "privacy_officer"
    with pytest.raises(Conflict):
        platform.set_platform_role(system_session, root.id, None, actor=ADMIN)
    assert "platform_role.changed" in _actions(system_session)


def test_phone_authorized_for_a_person_never_exceeds_them(system_session):
    org, owner = _org_with_owner(system_session)
    _row, token = members.invite(system_session, org.id, "mia@example.test", permissions={"contacts": "read"},
                                 actor=ADMIN)
    mia = members.accept_invitation(system_session, token, password=GOOD)
    auth = phones.authorize_phone(system_session, org.id, "+34 600 111 222", user_id=mia.id,
                                  permissions={"contacts": "edit", "invoices": "edit"}, actor=ADMIN)
    mia.phone = auth.phone  # as linking from the phone does
    access = load_access(system_session, org.id, phone="+34600111222")
    assert access.can_read("contacts") and not access.can_edit("contacts") and not access.can_read("invoices")
    shop = phones.authorize_phone(system_session, org.id, "+34600999000", permissions={"contacts": "read"},
                                  actor=ADMIN)
    assert load_access(system_session, org.id, phone="+34600999000").can_read("contacts")
    phones.revoke_phone(system_session, org.id, shop.id, actor=ADMIN)
    assert load_access(system_session, org.id, phone="+34600999000") is None
    assert {"phone.authorized", "phone.revoked"} <= set(_actions(system_session, "phone."))


def test_provisioning_is_idempotent_by_host_ids(system_session):
    org, _ = orgs.create_org(system_session, "Acme", owner_email=None, actor=ADMIN)
    key = Actor("api key x")
    first = provisioning.upsert_person(system_session, org.id, "u-1", email="eva@example.test", name="Eva",
                                       role="member", permissions={"contacts": "read"}, actor=key)
    system_session.commit()
    audit_rows = len(_actions(system_session))
    again = provisioning.upsert_person(system_session, org.id, "u-1", email="eva@example.test", name="Eva",
                                       role="member", permissions={"contacts": "read"}, actor=key)
    system_session.commit()
    assert first.created and not again.created and again.user.id == first.user.id
    assert len(_actions(system_session)) == audit_rows  # nothing changed, nothing recorded
    provisioning.upsert_person(system_session, org.id, "u-1", email="eva@example.test", name="Eva", role="admin",
                               actor=key)
    assert load_access(system_session, org.id, user_id=first.user.id).role == "admin"
    p1 = provisioning.upsert_phone(system_session, org.id, "ph-1", phone="+34600111333", person_ref="u-1", actor=key)
    p2 = provisioning.upsert_phone(system_session, org.id, "ph-1", phone="+34600111333", person_ref="u-1", actor=key)
    assert p1.id == p2.id
    provisioning.upsert_phone(system_session, org.id, "ph-1", phone="+34600111333", active=False, actor=key)
    assert system_session.get(PhoneAuthorization, p1.id).revoked_at is not None
    o1 = provisioning.upsert_org(system_session, "host-org-9", name="Nueve", actor=key)
    o2 = provisioning.upsert_org(system_session, "host-org-9", name="Nueve", actor=key)
    assert o1[0].id == o2[0].id and o1[1] and not o2[1]


def test_provisioning_never_takes_over_an_existing_account(system_session):
    org, owner = _org_with_owner(system_session)
    other, _ = orgs.create_org(system_session, "Other", owner_email=None, actor=ADMIN)
    with pytest.raises(Conflict):
        provisioning.upsert_person(system_session, other.id, "x", email="ana@example.test", actor=Actor("key"))


def test_suspending_an_org_is_audited_and_reversible(system_session):
    org, _ = orgs.create_org(system_session, "Acme", owner_email=None, actor=ADMIN)
    orgs.set_suspended(system_session, org.id, True, actor=ADMIN)
    assert orgs.is_suspended(system_session, org.id)
    orgs.set_suspended(system_session, org.id, False, actor=ADMIN)
    assert not orgs.is_suspended(system_session, org.id)
    assert _actions(system_session, "org.") == ["org.created", "org.suspended", "org.restored"]
    [row] = orgs.list_orgs(system_session)
    assert row.members == 0 and row.messages_30d == 0


def test_platform_key_is_stored_hashed_and_authenticates(system_session):
    row, key = api_keys.issue_key(system_session, api_keys.PLATFORM, "host", actor=ADMIN)
    system_session.commit()
    assert row.key_hash == sha256(key) and key.startswith("memp_")
    assert api_keys.authenticate_key(system_session, api_keys.PLATFORM, key).id == row.id
    api_keys.revoke_key(system_session, api_keys.PLATFORM, row.id, actor=ADMIN)
    assert api_keys.authenticate_key(system_session, api_keys.PLATFORM, key) is None


def test_an_admin_cannot_make_change_or_remove_owners(system_session):
    from memory_core.domain.errors import Forbidden

    org, owner = _org_with_owner(system_session)
    ada = platform.create_user(system_session, "ada@example.test", "Ada", GOOD, actor=ADMIN)
    members.add_member(system_session, org.id, ada.id, role="admin", actor=ADMIN)
    as_admin = Actor("console admin", ada.id, org_role="admin")
    with pytest.raises(Forbidden):
        members.invite(system_session, org.id, "new@example.test", role="owner", actor=as_admin)
    with pytest.raises(Forbidden):
        members.set_role(system_session, org.id, owner.id, "member", actor=as_admin)
    with pytest.raises(Forbidden):
        members.remove_member(system_session, org.id, owner.id, actor=as_admin)
    members.invite(system_session, org.id, "new@example.test", role="admin", actor=as_admin)


def test_an_org_cannot_reset_the_password_of_an_account_used_elsewhere(system_session):
    from memory_core.domain.errors import Forbidden

    org, owner = _org_with_owner(system_session)
    other, _ = orgs.create_org(system_session, "Other", owner_email=None, actor=ADMIN)
    eva = platform.create_user(system_session, "eva@example.test", "Eva", GOOD, actor=ADMIN)
    members.add_member(system_session, org.id, eva.id, actor=ADMIN)
    as_owner = Actor("console owner", owner.id, org_role="owner")
    assert members.org_reset_link(system_session, org.id, eva.id, actor=as_owner)
    members.add_member(system_session, other.id, eva.id, actor=ADMIN)
    with pytest.raises(Forbidden):
        members.org_reset_link(system_session, org.id, eva.id, actor=as_owner)


def test_request_logs_never_hold_a_one_time_token(caplog):
    import logging

    import app

    logger = logging.getLogger("werkzeug")
    if not any(type(f).__name__ == "_RedactOneTimeLinks" for f in logger.filters):
        logger.addFilter(app._RedactOneTimeLinks())
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        logger.info('"%s" %s %s', "GET /invitation/s3cr3t-T0ken_x HTTP/1.1", "200", "-")
    assert "s3cr3t" not in caplog.text and "/invitation/[redacted]" in caplog.text
