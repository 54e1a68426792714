"""Row-level security, checked with raw SQL as the restricted app role: the second wall behind the
ownership filter, so a query that forgot the filter still cannot cross over."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from memory_core.adapters.db import Scope


def _count(database, scope: Scope, sql: str) -> int:
    with database.unit_of_work(scope) as uow:
        return uow.session.execute(text(sql)).scalar_one()


@pytest.fixture
def world(factory):
    a, b = factory.org("A"), factory.org("B")
    ana = factory.member(a, role="member", permissions={"contacts": "read"})
    bea = factory.member(a, role="member", permissions={})
    bob = factory.member(b, role="owner")
    factory.memory(a, level="shared", area="general", attribute="a_general")
    factory.memory(a, level="shared", area="contacts", category="customer", attribute="a_contacts")
    factory.memory(a, level="private", owner=ana, attribute="ana_private")
    factory.memory(a, level="private", owner=bea, attribute="bea_private")
    factory.memory(None, level="personal", owner=ana, attribute="ana_personal", category="person")
    factory.memory(b, level="shared", area="general", attribute="b_general")
    return a, b, ana, bea, bob


def _attrs(database, scope: Scope) -> set[str]:
    with database.unit_of_work(scope) as uow:
        return set(uow.session.execute(text("select attribute from memories")).scalars())


def test_app_role_is_not_superuser_and_cannot_bypass_rls(database):
    with database.unit_of_work(Scope()) as uow:
        row = uow.session.execute(text(
            "select rolsuper, rolbypassrls from pg_roles where rolname = current_user")).one()
    assert row == (False, False)


def test_no_scope_sees_nothing(database, world):
    assert _attrs(database, Scope()) == set()


def test_org_a_never_sees_org_b(database, world):
    a, b, ana, bea, bob = world
    seen = _attrs(database, Scope(mode="principal", org_id=a.id, user_id=ana.id, read_areas=("general", "contacts")))
    assert "b_general" not in seen
    seen_b = _attrs(database, Scope(mode="principal", org_id=b.id, user_id=bob.id, read_areas=("general",)))
    assert seen_b == {"b_general"}


def test_member_never_sees_another_members_private_rows(database, world):
    a, b, ana, bea, bob = world
    seen = _attrs(database, Scope(mode="principal", org_id=a.id, user_id=bea.id, read_areas=("general",)))
    assert "ana_private" not in seen and "ana_personal" not in seen
    assert "bea_private" in seen


def test_member_without_area_read_never_sees_that_areas_shared_rows(database, world):
    a, b, ana, bea, bob = world
    seen = _attrs(database, Scope(mode="principal", org_id=a.id, user_id=bea.id, read_areas=("general",)))
    assert "a_contacts" not in seen
    seen_ana = _attrs(database, Scope(mode="principal", org_id=a.id, user_id=ana.id,
                                      read_areas=("general", "contacts")))
    assert seen_ana == {"a_general", "a_contacts", "ana_private", "ana_personal"}


def test_rls_refuses_writing_a_row_outside_the_scope(database, world):
    a, b, ana, bea, bob = world
    scope = Scope(mode="principal", org_id=a.id, user_id=ana.id, read_areas=("general",))
    with database.unit_of_work(scope) as uow, pytest.raises(Exception, match="row-level security"):
        uow.session.execute(text(
            "insert into memories (org_id, level, area, category, subject, attribute, value, sentence) "
            "values (:org, 'shared', 'general', 'company', 'org', 'x', 'y', 'z')"), {"org": str(b.id)})


def test_messages_follow_owner_and_area(database, factory):
    a = factory.org()
    ana = factory.member(a)
    bea = factory.member(a)
    conv = factory.conversation(a, ana)
    factory.message(conv, "private to ana")
    factory.message(conv, "shared in contacts", visibility="shared_in_org", area="contacts")
    as_bea = Scope(mode="principal", org_id=a.id, user_id=bea.id, read_areas=("general",))
    assert _count(database, as_bea, "select count(*) from messages") == 0
    as_bea_contacts = Scope(mode="principal", org_id=a.id, user_id=bea.id, read_areas=("general", "contacts"))
    assert _count(database, as_bea_contacts, "select count(*) from messages") == 1
    as_ana = Scope(mode="principal", org_id=a.id, user_id=ana.id, read_areas=("general",))
    assert _count(database, as_ana, "select count(*) from messages") == 2  # she wrote both


def test_phone_principal_sees_rows_owned_by_the_phone(database, factory):
    a = factory.org()
    factory.memory(a, level="private", owner_phone="+34611000111", attribute="phone_fact")
    scope = Scope(mode="principal", org_id=a.id, phone="+34611000111", read_areas=("general",))
    assert _attrs(database, scope) == {"phone_fact"}
    other = Scope(mode="principal", org_id=a.id, phone="+34611000999", read_areas=("general",))
    assert _attrs(database, other) == set()
