"""A principal with many rows: the full-text retriever weighs the rows holding every query word and gives each word
its share of the candidates, so the one row holding a rare word (a supplier's name), and the few holding all of a
query's common words, are found among the thousands holding one common word."""
from __future__ import annotations

import numpy as np
import pytest

from memory_core.domain.access import load_access
from memory_core.domain.models import Memory, Message, Organization, User
from memory_core.reading import principal_size
from memory_core.reading import search as search_module
from memory_core.reading.search import retrieve


@pytest.fixture
def crowded_org(factory, system_session, monkeypatch):
    """400 memories saying that a supplier charges at some days, then the one about Valdecielo, written last (so
    last in the table: a bitmap of rows holding any query word reaches it last)."""
    org = factory.org("Muchos")
    owner = factory.member(org, role="owner")
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(402, 512))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [Memory(org_id=org.id, level="shared", area="general", category="company", subject="org",
                   attribute=f"cobro_{i}", value=f"{30 + i % 60} días",
                   sentence=f"El proveedor {i} cobra a {30 + i % 60} días", embedding=vectors[i].tolist())
            for i in range(400)]
    system_session.add_all(rows)
    system_session.commit()
    valdecielo = Memory(org_id=org.id, level="shared", area="general", category="company", subject="org",
                        attribute="cobro_valdecielo", value="90 días", sentence="Valdecielo cobra a 90 días",
                        embedding=vectors[400].tolist())
    portal = Memory(org_id=org.id, level="shared", area="general", category="company", subject="org",
                    attribute="portal", value="x.com/a'b", sentence="El proveedor factura en http://x.com/a'b",
                    embedding=vectors[401].tolist())
    system_session.add_all([valdecielo, portal])
    system_session.commit()
    # She counts as big from 100 rows, and weighs 40 full-text candidates (the marks of 1M rows, scaled down).
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)
    monkeypatch.setattr(search_module, "FTS_CANDIDATES_BIG", 40)
    search_module._statement.cache_clear()
    search_module._count_statement.cache_clear()
    principal_size.forget()
    yield load_access(system_session, org.id, user_id=owner.id), valdecielo, portal, vectors[0].tolist()
    search_module._statement.cache_clear()
    search_module._count_statement.cache_clear()
    principal_size.forget()


def _full_text(database, access, query, vector):
    with database.unit_of_work(access.scope()) as uow:
        return [f.id for f in retrieve(uow.session, access, query, kinds=["memory"], per_retriever=10,
                                       vector=vector, retrievers=["fts", "vector"])["fts"]]


def test_the_one_row_naming_a_supplier_is_found_among_hundreds_sharing_the_querys_common_words(
        database, crowded_org):
    access, valdecielo, _, vector = crowded_org
    for query in ("¿a cuántos días cobra Valdecielo?", "valdecielo", "proveedor Valdecielo cobra días"):
        found = _full_text(database, access, query, vector)
        assert found[0] == valdecielo.id, query
    # The common words alone still find rows that hold them.
    assert len(_full_text(database, access, "proveedor cobra", vector)) == 10


def test_a_word_holding_a_quote_is_matched_as_it_is_stored(database, crowded_org):
    access, _, portal, vector = crowded_org
    assert _full_text(database, access, "proveedor http://x.com/a'b", vector)[0] == portal.id


def test_a_query_of_only_function_words_finds_nothing_and_fails_nothing(database, crowded_org):
    access, _, _, vector = crowded_org
    assert _full_text(database, access, "de la que", vector) == []


def test_the_few_rows_holding_every_word_of_a_query_of_common_words_come_first(database, system_session, crowded_org):
    access, _, _, vector = crowded_org
    rows = [Memory(org_id=access.org_id, level="shared", area="general", category="company", subject="org",
                   attribute=f"cliente_{i}", value="en mano", sentence=f"El cliente {i} paga en mano")
            for i in range(200)]
    both = [Memory(org_id=access.org_id, level="shared", area="general", category="company", subject="org",
                   attribute=f"cliente_cobra_{i}", value="en mano", sentence=f"Al cliente {i} se le cobra en mano")
            for i in range(3)]
    system_session.add_all(rows)
    system_session.commit()
    system_session.add_all(both)  # written last: a bitmap of rows holding either word reaches them last
    system_session.commit()
    principal_size.forget()
    assert set(_full_text(database, access, "cliente cobra", vector)[:3]) == {m.id for m in both}


def test_a_big_principals_messages_holding_a_rare_word_are_found_too(database, system_session, factory, crowded_org):
    access, _, _, vector = crowded_org
    conv = factory.conversation(system_session.get(Organization, access.org_id),
                                system_session.get(User, access.principal.user_id))
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(301, 512))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"El proveedor {i} cobra a {30 + i % 60} días" for i in range(300)] + ["Ojo: Valdecielo ya cobra a 90 días"]
    system_session.add_all([Message(conversation_id=conv.id, channel=conv.channel, external_id=f"m-{i}",
                                    org_id=conv.org_id, user_id=conv.user_id, role="user", text=t,
                                    embedding=v.tolist()) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))])
    system_session.commit()
    principal_size.forget()
    with database.unit_of_work(access.scope()) as uow:
        found = retrieve(uow.session, access, "cuándo cobra Valdecielo", kinds=["message"], per_retriever=10,
                         vector=vector, retrievers=["fts", "vector"])["fts"]
    assert system_session.get(Message, found[0].id).text == texts[-1]
