"""Access is rebuilt from the database as it is now."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from memory_core.domain.access import load_access
from memory_core.domain.models import Membership


def test_member_who_left_has_no_access(factory, system_session):
    org = factory.org()
    user = factory.member(org)
    assert load_access(system_session, org.id, user_id=user.id) is not None
    m = system_session.scalar(select(Membership).where(Membership.user_id == user.id))
    m.left_at = dt.datetime.now(dt.timezone.utc)
    system_session.commit()
    assert load_access(system_session, org.id, user_id=user.id) is None


def test_admin_may_edit_every_area_and_member_only_what_was_granted(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    member = factory.member(org, permissions={"contacts": "read"})
    a = load_access(system_session, org.id, user_id=admin.id)
    m = load_access(system_session, org.id, user_id=member.id)
    assert a.can_edit("contacts") and a.can_edit("invoices")
    assert m.can_read("contacts") and not m.can_edit("contacts") and not m.can_read("invoices")
    assert m.can_read("general")


def test_linked_phone_resolves_to_its_user_with_at_most_the_users_permissions(factory, system_session):
    org = factory.org()
    user = factory.member(org, permissions={"contacts": "read"}, phone="+34600000001")
    factory.phone(org, "+34600000001", user=user)  # the number was authorized to edit everything
    access = load_access(system_session, org.id, phone="+34600000001")
    assert access.principal.user_id == user.id and access.principal.phone == "+34600000001"
    assert access.can_read("contacts") and not access.can_edit("contacts")


def test_unknown_or_revoked_number_has_no_access(factory, system_session):
    org = factory.org()
    auth = factory.phone(org, "+34600000002")
    assert load_access(system_session, org.id, phone="+34600000002") is not None
    auth.revoked_at = dt.datetime.now(dt.timezone.utc)
    system_session.commit()
    assert load_access(system_session, org.id, phone="+34600000002") is None
    assert load_access(system_session, org.id, phone="+34600000003") is None
