"""How a unit of work ends: what it wrote without committing is gone, whatever statement wrote it, and a
unit that only read keeps the connection's prepared statements (so row security's statements are not
parsed and planned afresh at every turn)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from memory_core.adapters.db import SYSTEM, Database, resolve_urls
from memory_core.domain.models import Organization


@pytest.fixture
def one_connection(database, servers):
    """A Database with a single pooled connection, so every unit of work reuses the same one."""
    urls = resolve_urls(servers)
    db = Database(urls.app, system_url=urls.system, pool_size=1, max_overflow=0)
    yield db
    db.dispose()


def _org_named(database, name: str) -> Organization | None:
    with database.unit_of_work(SYSTEM) as uow:
        return uow.session.scalar(select(Organization).where(Organization.name == name))


@pytest.mark.parametrize("how", ["orm", "insert", "select that writes"])
def test_what_a_unit_of_work_wrote_without_committing_is_gone(one_connection, database, how):
    name = f"never committed {how}"
    with one_connection.unit_of_work(SYSTEM) as uow:
        if how == "orm":
            uow.session.add(Organization(name=name))
            uow.session.flush()
        elif how == "insert":
            uow.session.execute(text("insert into organizations (id, name) values (:id, :name)"),
                                {"id": uuid.uuid4(), "name": name})
        else:  # a SELECT whose CTE writes: nothing on the Python side says it wrote
            uow.session.execute(text("with made as (insert into organizations (id, name) values (:id, :name) "
                                     "returning id) select id from made"), {"id": uuid.uuid4(), "name": name})
    assert _org_named(database, name) is None


def test_a_failed_unit_of_work_leaves_a_working_connection(one_connection):
    with one_connection.unit_of_work(SYSTEM) as uow:
        with pytest.raises(DBAPIError):
            uow.session.execute(text("select 1 / 0"))
    with one_connection.unit_of_work(SYSTEM) as uow:
        assert uow.session.scalar(text("select 41 + 1")) == 42


def _read_six_times(database, read) -> None:
    for _ in range(6):  # psycopg prepares a statement on its 5th run on a connection
        with database.unit_of_work(SYSTEM) as uow:
            uow.session.execute(read).all()  # never committed: the unit ends as it does after a read


def _kept(database) -> list[str]:
    with database.unit_of_work(SYSTEM) as uow:
        statements = uow.session.scalars(text("select statement from pg_prepared_statements")).all()
    return [s for s in statements if "FROM organizations" in s]


def test_a_unit_of_work_that_only_read_keeps_the_connections_prepared_statements(one_connection):
    _read_six_times(one_connection, select(Organization.name).where(Organization.id == uuid.uuid4()))
    assert _kept(one_connection), "the read's prepared statement was forgotten when its unit of work ended"


def test_a_unit_of_work_that_wrote_and_rolled_back_forgets_them(one_connection):
    """The driver's own rule after a ROLLBACK (a rolled-back write may have changed what a statement reads)."""
    _read_six_times(one_connection, select(Organization.name).where(Organization.id == uuid.uuid4()))
    with one_connection.unit_of_work(SYSTEM) as uow:
        uow.session.add(Organization(name="rolled back"))
        uow.session.flush()
    assert not _kept(one_connection)


def test_a_principals_text_matching_plans_for_its_words_while_the_rest_of_a_search_reuses_plans(one_connection,
                                                                                              factory, system_session):
    """A kept prepared statement may run one generic plan for all values. For the statements matching the query's
    text that plan is blind to the words and to who asks (at 1M memories a typical principal's full text took 217
    instead of 10 ms): they plan every run for their own values, even on a connection whose default is the
    generic plan. The rest of the search keeps the generic plan that skips planning row security's policies."""
    from memory_core.domain.access import load_access
    from memory_core.reading.search import search

    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.memory(org, level="personal", subject="contact:talleres", attribute="plazo_pago",
                   value="Talleres García paga a 60 días", owner=ana)
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()
    with one_connection.unit_of_work(access.scope()) as uow:
        uow.session.execute(text("set plan_cache_mode = force_generic_plan"))  # the session's default from now on
    found = []
    for _ in range(7):  # psycopg prepares a statement on its 5th run on a connection
        with one_connection.unit_of_work(access.scope()) as uow:
            found.append([hit.id for hit in search(uow.session, access, "Talleres García")])
            assert uow.session.scalar(text("select current_setting('plan_cache_mode')")) == "force_generic_plan"
    assert found[0] and all(ids == found[0] for ids in found)
    with one_connection.unit_of_work(access.scope()) as uow:
        kept = uow.session.execute(text("select statement, generic_plans, custom_plans from pg_prepared_statements")).all()
    text_matching = [k for k in kept if ("fts_cand_" in k.statement or "word_similarity" in k.statement)
                     and "set_config(" not in k.statement]
    assert any("fts_cand_" in k.statement for k in text_matching), kept
    assert any("word_similarity" in k.statement and "fts_cand_" not in k.statement for k in text_matching), kept
    assert all(k.generic_plans == 0 and k.custom_plans >= 2 for k in text_matching), text_matching
    described = [k for k in kept if "replace(memories.attribute" in k.statement]
    assert described and described[0].generic_plans >= 2, kept


def test_a_small_principals_block_matches_its_text_on_a_kept_generic_plan(one_connection, factory, system_session,
                                                                           embedder):
    """A principal with few memories (counted) has them matched one by one, whatever the words: the block's
    full-text and trigram statements then keep the generic plan (no planning of row security's policies at every
    turn) and find what they found before."""
    from memory_core.domain.access import load_access
    from memory_core.reading.context import assemble_context

    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.memory(org, level="personal", subject="contact:talleres", attribute="plazo_pago",
                   value="Talleres García paga a 60 días", owner=ana)
    conversations = [factory.conversation(org, ana) for _ in range(7)]  # each new: nothing shown in it yet
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()
    blocks = []
    for conversation in conversations:  # psycopg prepares a statement on its 5th run on a connection
        with one_connection.unit_of_work(access.scope()) as uow:
            blocks.append(assemble_context(uow.session, access, conversation.id, "¿Cómo paga Talleres García?",
                                           embed=embedder.embed, embed_model=embedder.model_name).text)
            uow.commit()  # the trace, as the API commits it
    assert "60 días" in blocks[0] and all(block == blocks[0] for block in blocks)
    with one_connection.unit_of_work(access.scope()) as uow:
        kept = uow.session.execute(text("select statement, generic_plans, custom_plans from pg_prepared_statements")).all()
    text_matching = [k for k in kept if "fts_cand_memory" in k.statement or "<%" in k.statement]
    assert text_matching, kept
    assert all(k.generic_plans >= 2 and k.custom_plans == 0 for k in text_matching), text_matching


def test_a_principals_first_block_on_a_connection_runs_on_plans_made_once(one_connection, factory, system_session,
                                                                         embedder):
    """psycopg prepares a statement at its sixth run: until then every read of a block planned row security's
    policies afresh (the profile 11-22 ms instead of 1-2 at 1M memories). A block prepares its reads at their first
    run on a connection, on the generic plan; the connection, back in its pool, prepares as usual again."""
    from memory_core.domain.access import load_access
    from memory_core.reading.context import assemble_context

    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.memory(org, level="personal", subject="contact:talleres", attribute="plazo_pago",
                   value="Talleres García paga a 60 días", owner=ana)
    conversation = factory.conversation(org, ana)
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()
    with one_connection.unit_of_work(access.scope()) as uow:  # the connection's first block
        block = assemble_context(uow.session, access, conversation.id, "¿Cómo paga Talleres García?",
                                 embed=embedder.embed, embed_model=embedder.model_name)
        uow.commit()
    assert "60 días" in block.text
    with one_connection.unit_of_work(access.scope()) as uow:
        uow.session.scalar(select(Organization.name).where(Organization.id == org.id))  # run once, after the block
        kept = uow.session.execute(text("select statement, generic_plans, custom_plans from pg_prepared_statements")).all()
    reads = [k for k in kept if k.statement.lstrip().upper().startswith(("SELECT", "WITH"))
             and "set_config(" not in k.statement]
    assert any("k_rank" in k.statement for k in reads), kept  # the profile, among them
    assert all(k.generic_plans == 1 and k.custom_plans == 0 for k in reads), reads
    assert not [k for k in kept if k.statement.startswith("SELECT organizations.name")], "a later read was prepared"


def test_a_small_principals_search_matches_its_text_on_kept_generic_plans(one_connection, factory, system_session,
                                                                           embedder):
    """A search reads memories, messages, contacts and documents: with few of each (counted, contacts too) the
    principal's full-text, trigram and name statements keep their generic plan, and find the same hits every time."""
    from memory_core.domain.access import load_access
    from memory_core.reading.search import search

    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, name="Talleres García S.L.")
    factory.memory(org, level="personal", subject="contact:talleres", attribute="plazo_pago",
                   value="Talleres García paga a 60 días", owner=ana)
    access = load_access(system_session, org.id, user_id=ana.id)
    system_session.commit()
    found = []
    for _ in range(7):  # psycopg prepares a statement on its 5th run on a connection
        with one_connection.unit_of_work(access.scope()) as uow:
            hits = search(uow.session, access, "Talleres García", embed=embedder.embed, embed_model=embedder.model_name)
            found.append([(hit.kind, hit.id) for hit in hits])
    assert {"contact", "memory"} <= {kind for kind, _ in found[0]} and all(f == found[0] for f in found)
    with one_connection.unit_of_work(access.scope()) as uow:
        kept = uow.session.execute(text("select statement, generic_plans, custom_plans from pg_prepared_statements")).all()
    text_matching = [k for k in kept if ("fts_cand_" in k.statement or "similarity" in k.statement)
                     and "set_config(" not in k.statement]
    assert any("fts_cand_contact" in k.statement for k in text_matching), kept
    assert all(k.generic_plans >= 2 and k.custom_plans == 0 for k in text_matching), text_matching
