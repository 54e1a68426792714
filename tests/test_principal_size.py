"""How long a principal's row count is kept before search counts again (reading/principal_size.py), and that a
kept count changes how search reads, never what it finds."""
from __future__ import annotations

import pytest

from memory_core.domain.access import load_access
from memory_core.reading import principal_size
from memory_core.reading import search as search_module
from memory_core.reading.search import retrieve
from tests.support.statements import sent_statements

MARK = 100


@pytest.fixture(autouse=True)
def nothing_kept():
    principal_size.forget()
    yield
    principal_size.forget()


@pytest.mark.parametrize("n, kept_for", [(101, principal_size.BIG_SECONDS), (50, principal_size.SMALL_SECONDS),
                                         (0, principal_size.SMALL_SECONDS), (51, None), (100, None)])
def test_a_count_is_kept_while_it_cannot_have_crossed_the_mark(n, kept_for):
    principal_size.remember("ana", n, MARK, now=1000.0)
    if kept_for is None:  # near the mark: counted again on every turn
        assert principal_size.known("ana", now=1000.0) is None
        return
    assert principal_size.known("ana", now=1000.0 + kept_for - 0.1) == n
    assert principal_size.known("ana", now=1000.0 + kept_for) is None
    assert principal_size.known("ana", now=1000.0) is None  # expired entries are gone, not revived


def test_a_small_count_outlasts_the_pause_between_a_persons_turns():
    # A person's next turn often comes minutes later: counting again then cost 2-3 ms of a typical block at 1M.
    principal_size.remember("ana", 10, MARK, now=1000.0)
    assert principal_size.known("ana", now=1000.0 + 5 * 60) == 10


def _counts(statement: str) -> bool:
    return "n_memory" in statement


def test_a_small_principal_is_counted_once_for_its_next_turns_and_finds_the_same_rows(
        database, system_session, factory, embedder):
    org = factory.org()
    ana = factory.member(org, role="owner")
    for i, sentence in enumerate(["Talleres García paga a 60 días", "La oficina abre de 8 a 15",
                                  "Talleres López prefiere factura por email"]):
        factory.memory(org, attribute=f"hecho_{i}", value=str(i), sentence=sentence,
                       embedding=embedder.embed([sentence])[0], embed_model=embedder.model_name)
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)
    vector = embedder.embed(["¿a cuántos días paga García?"])[0]
    found = []
    with sent_statements(database.engine, _counts) as counted:
        for _ in range(3):
            with database.unit_of_work(access.scope()) as uow:
                lists = retrieve(uow.session, access, "García paga", kinds=["memory"], per_retriever=10,
                                 vector=vector, embed_model=embedder.model_name, retrievers=["fts", "vector"])
            found.append({name: [f.id for f in hits] for name, hits in lists.items()})
    assert len(counted) == 1
    assert found[0] == found[1] == found[2] and found[0]["fts"] and len(found[0]["vector"]) == 3


def test_a_principal_near_the_mark_is_counted_on_every_turn_and_takes_the_big_path_once_past_it(
        database, system_session, factory, embedder, monkeypatch):
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 4)  # 3 rows: more than half the mark
    org = factory.org()
    ana = factory.member(org, role="owner")

    def add(i):
        sentence = f"Hecho número {i} de la oficina"
        factory.memory(org, attribute=f"hecho_{i}", value=str(i), sentence=sentence,
                       embedding=embedder.embed([sentence])[0], embed_model=embedder.model_name)
        system_session.commit()

    for i in range(3):
        add(i)
    access = load_access(system_session, org.id, user_id=ana.id)
    vector = embedder.embed(["hecho de la oficina"])[0]
    key = (access.org_id, access.principal, access.read_areas, "memory", embedder.model_name, 4)

    def turn():
        with database.unit_of_work(access.scope()) as uow:
            return retrieve(uow.session, access, "hecho", kinds=["memory"], per_retriever=10, vector=vector,
                            embed_model=embedder.model_name, retrievers=["vector"])["vector"]

    with sent_statements(database.engine, _counts) as counted:
        assert len(turn()) == 3
        assert len(turn()) == 3
        assert len(counted) == 2 and principal_size.known(key) is None
        add(3), add(4)  # 5 rows: past the mark
        assert len(turn()) == 5
        assert principal_size.known(key) == 5  # found big: kept, and walked by the index from now on
        assert len(turn()) == 5
        assert len(counted) == 3
