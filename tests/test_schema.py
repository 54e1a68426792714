"""Constraints the data model promises."""
from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, ProgrammingError

from memory_core.domain.models import Memory


def test_partial_unique_index_rejects_a_second_active_fact(factory, system_session):
    org = factory.org()
    factory.memory(org, subject="contact:1", attribute="plazo_pago", value="30 días")
    system_session.add(Memory(org_id=org.id, level="shared", subject="contact:1", attribute="plazo_pago",
                              value="60 días", sentence="x", category="customer", area="contacts"))
    with pytest.raises(IntegrityError, match="uq_memories_active_fact"):
        system_session.commit()


def test_superseded_versions_may_share_subject_and_attribute(factory):
    org = factory.org()
    factory.memory(org, subject="contact:1", attribute="plazo_pago", value="30 días", status="superseded")
    factory.memory(org, subject="contact:1", attribute="plazo_pago", value="45 días", status="superseded")
    factory.memory(org, subject="contact:1", attribute="plazo_pago", value="60 días")


def test_same_fact_may_be_active_for_two_owners(factory):
    org = factory.org()
    u1, u2 = factory.member(org), factory.member(org)
    factory.memory(org, level="private", owner=u1, attribute="nota", value="a")
    factory.memory(org, level="private", owner=u2, attribute="nota", value="b")


def test_audit_log_is_append_only_for_the_app(system_session):
    system_session.execute(text("insert into audit_log (actor_label, action) values ('t', 'test')"))
    system_session.commit()
    with pytest.raises(ProgrammingError, match="permission denied"):
        system_session.execute(text("update audit_log set action = 'changed'"))
    system_session.rollback()
    with pytest.raises(ProgrammingError, match="permission denied"):
        system_session.execute(text("delete from audit_log"))


def test_audit_log_is_append_only_even_for_the_owner(owner_engine, database):
    with owner_engine.begin() as c:
        c.execute(text("insert into audit_log (actor_label, action) values ('t', 'test')"))
    with pytest.raises(ProgrammingError, match="append-only"), owner_engine.begin() as c:
        c.execute(text("delete from audit_log"))


def test_exclusion_list_is_seeded(system_session):
    names = set(system_session.execute(text("select name from policy_exclusions where org_id is null")).scalars())
    assert {"password", "card_number", "national_id", "api_key", "verification_code", "health"} <= names


def test_full_text_uses_spanish_stemming_without_accents(factory, system_session):
    org = factory.org()
    factory.memory(org, attribute="plazo_pago", value="60 días", sentence="Talleres García paga a 60 días")
    hit = system_session.execute(text(
        "select count(*) from memories "
        "where search_tsv @@ plainto_tsquery('public.spanish_unaccent', 'garcia pagaba dias')"
    )).scalar_one()
    assert hit == 1


def test_full_text_search_uses_its_index_under_row_level_security(factory, database):
    from memory_core.adapters.db import Scope

    org = factory.org()
    user = factory.member(org)
    scope = Scope(mode="principal", org_id=org.id, user_id=user.id, read_areas=("general",))
    with database.unit_of_work(scope) as uow:
        uow.session.execute(text("set local enable_seqscan = off"))  # a tiny table would scan anyway
        plan = "\n".join(uow.session.execute(text(
            "explain select id from memories where search_tsv @@ plainto_tsquery('public.spanish_unaccent', 'garcia')"
        )).scalars())
    assert "ix_memories_tsv" in plan, plan


def test_the_migrations_have_one_head():
    """Parallel branches are joined by a merge revision, so `alembic upgrade head` and the next migration's
    down_revision are never ambiguous."""
    from alembic.script import ScriptDirectory

    from memory_core.adapters.migrate import alembic_config

    heads = ScriptDirectory.from_config(alembic_config("postgresql://unused")).get_heads()
    assert len(heads) == 1, heads
