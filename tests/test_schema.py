"""Constraints the data model promises."""
from __future__ import annotations

import random
import string
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, ProgrammingError

from memory_core.domain.models import Document, Memory


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


def _out_of_row(session, table: str, row_id, columns: tuple[str, ...]) -> list[str]:
    """The columns of one row whose value PostgreSQL keeps in the table's TOAST table, not in the row."""
    chunks = session.execute(text(
        f"select {', '.join(f'pg_column_toast_chunk_id({c})' for c in columns)} from {table} where id = :id"),
        {"id": row_id}).one()
    return [c for c, chunk in zip(columns, chunks) if chunk is not None]


def test_text_stays_in_the_row_beside_its_vector(factory, system_session):
    """The 512-d vector fills most of a row: with PostgreSQL's default storage every longer value beside it was
    moved to the TOAST table, and each read of a sentence, a message or their search_tsv fetched it from there."""
    org = factory.org()
    user = factory.member(org)
    vector = [1 / 512 ** 0.5] * 512
    sentence = ("Talleres García S.L. paga a 60 días desde marzo, por transferencia, y quiere las facturas "
                "por email a administracion@talleresgarcia.es con el número de pedido.")
    memory = factory.memory(org, subject=f"contact:{uuid.uuid4()}", attribute="plazo_pago", value="60 días",
                            sentence=sentence, category="customer", area="contacts", embedding=vector,
                            embed_model="test")
    conversation = factory.conversation(org, user)
    message = factory.message(conversation, f"Apunta esto: {sentence} {sentence}", embedding=vector,
                              embed_model="test")
    document = factory._save(Document(org_id=org.id, kind="invoice", external_ref="F-2026-0042",
                                      title="Factura reparación furgoneta", text=sentence * 3,
                                      embedding=vector, embed_model="test"))

    assert _out_of_row(system_session, "memories", memory.id, ("subject", "value", "sentence", "search_tsv")) == []
    assert _out_of_row(system_session, "messages", message.id, ("text", "search_tsv")) == []
    assert _out_of_row(system_session, "documents", document.id, ("title", "text", "search_tsv")) == []


def test_every_table_with_a_vector_keeps_its_other_values_in_the_row(system_session):
    """A table given a vector column later must store its text MAIN too (see v1_inline_text_beside_vectors)."""
    moved_out = system_session.execute(text(
        "select c.relname || '.' || a.attname from pg_attribute a join pg_class c on c.oid = a.attrelid "
        "where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace and a.attnum > 0 and not a.attisdropped "
        "and a.attstorage in ('x', 'e') and exists (select 1 from pg_attribute v where v.attrelid = c.oid "
        "and v.atttypid = 'vector'::regtype) order by 1")).scalars().all()
    assert moved_out == []


def test_a_text_too_long_for_a_page_is_still_stored_whole(factory, system_session):
    org = factory.org()
    conversation = factory.conversation(org, factory.member(org))
    rng = random.Random(4)
    pasted = " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 12))) for _ in range(6000))
    message = factory.message(conversation, pasted, embedding=[1 / 512 ** 0.5] * 512, embed_model="test")
    system_session.expire_all()
    assert system_session.scalar(text("select text from messages where id = :id"), {"id": message.id}) == pasted
    assert _out_of_row(system_session, "messages", message.id, ("text",)) == ["text"]


def _migrations():
    """The project's migration scripts, read from disk (no database needed)."""
    from alembic.script import ScriptDirectory

    from memory_core.adapters.migrate import alembic_config

    return ScriptDirectory.from_config(alembic_config("postgresql://unused"))


def test_the_migrations_have_one_head():
    """Parallel branches are joined by a merge revision, so `alembic upgrade head` and the next migration's
    down_revision are never ambiguous."""
    heads = _migrations().get_heads()
    assert len(heads) == 1, heads


def test_every_revision_id_fits_the_alembic_version_column():
    """alembic_version.version_num is varchar(32): a longer id fails the upgrade after the migration has run."""
    assert [r.revision for r in _migrations().walk_revisions() if len(r.revision) > 32] == []


def test_an_upgrade_files_the_business_hours_learnt_before_in_general(factory, system_session, owner_engine):
    """x1_business_hours_general: hours learnt when the ladder filed them under "company" are moved to "general", as
    the ladder files them now; a customer's hours and the business's other facts stay where they were."""
    from alembic import command

    from memory_core.adapters.migrate import alembic_config

    org = factory.org()
    hours = factory.memory(org, attribute="nota_horario_closed", value="We're closed on Mondays", area="company")
    opens = factory.memory(org, attribute="hora_apertura", value="9", area="company")
    other = factory.memory(org, attribute="plantilla", value="12", area="company")
    theirs = factory.memory(org, subject="name:penrose", attribute="nota_horario_closed", value="closed on Mondays",
                            category="customer", area="contacts")
    system_session.commit()
    cfg = alembic_config(owner_engine.url.render_as_string(hide_password=False))
    command.downgrade(cfg, "w9_secret_access_codes")
    try:
        system_session.execute(text("update memories set area = 'company' where id = any(:ids)"),
                               {"ids": [hours.id, opens.id]})
        system_session.commit()
        command.upgrade(cfg, "heads")
        got = dict(system_session.execute(text("select id, area from memories where id = any(:ids)"),
                                          {"ids": [hours.id, opens.id, other.id, theirs.id]}).all())
        assert (got[hours.id], got[opens.id], got[other.id], got[theirs.id]) == ("general", "general", "company",
                                                                                  "contacts")
    finally:
        command.upgrade(cfg, "heads")


def test_an_upgrade_lets_a_gp_surgery_through_the_seeded_health_rule_and_keeps_an_operators_edit(system_session,
                                                                                                   owner_engine):
    """x2_health_gp_surgery: the seeded health pattern no longer reads a GP's surgery as an operation; a pattern an
    operator changed is left as they wrote it; a downgrade puts the seeded one back."""
    from alembic import command

    from memory_core.adapters.migrate import alembic_config
    from tests.support.migrations import migration

    seeded, changed = migration("x2_health_gp_surgery").SEEDED, migration("x2_health_gp_surgery").PATTERN

    def health() -> str:
        return system_session.scalar(text("select pattern from policy_exclusions where org_id is null "
                                          "and kind = 'special' and name = 'health'"))

    cfg = alembic_config(owner_engine.url.render_as_string(hide_password=False))
    try:
        assert health() == changed
        command.downgrade(cfg, "x1_business_hours_general")
        system_session.commit()
        assert health() == seeded
        command.upgrade(cfg, "heads")
        system_session.commit()
        assert health() == changed
        command.downgrade(cfg, "x1_business_hours_general")
        system_session.execute(text("update policy_exclusions set pattern = :p where org_id is null and "
                                    "name = 'health'"), {"p": seeded + "|operator"})
        system_session.commit()
        command.upgrade(cfg, "heads")
        system_session.commit()
        assert health() == seeded + "|operator"
    finally:
        system_session.execute(text("update policy_exclusions set pattern = :p where org_id is null and "
                                    "name = 'health'"), {"p": changed})
        system_session.commit()
        command.upgrade(cfg, "heads")
