"""A big organization gets indexes that hold only its memories (a partial HNSW and a partial GIN, built by a
job as it grows and dropped as it shrinks); its people's vector search walks that index, and still finds
the same nearest rows as an exact scan of what they may see."""
from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select, text, update

from jobs.org_indexes import refresh_org_indexes
from memory_core.adapters.db import SYSTEM
from memory_core.domain.access import load_access
from memory_core.domain.models import JobRun, Memory, Organization
from memory_core.reading import org_indexes, principal_size
from memory_core.reading import search as search_module
from memory_core.reading.search import retrieve
from tests.support.statements import generic_plan_of, plan_of, sent_statements

BIG, SMALL = 400, 100
NO_OWNERS = {"owners_created": 0, "owners_dropped": 0, "owners_kept": 0,
             "messages_created": 0, "messages_dropped": 0, "messages_kept": 0}


@pytest.fixture
def no_org_indexes_left(owner_engine):
    """The indexes this test builds live on the shared schema: drop them afterwards."""
    yield
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        names = c.execute(text("select indexname from pg_indexes where tablename = 'memories' and "
                               "(indexname like 'ix_memories_vec_org_%' or indexname like 'ix_memories_tsv_org_%' "
                               "or indexname like 'ix_memories_vec_user_%')"))
        for (name,) in names.all():
            c.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    org_indexes.forget_cache()


def _unit(rng, n):
    v = rng.normal(size=(n, 512)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _plan_without_sorting(database, access, statement, parameters) -> str:
    """EXPLAIN of a captured vector statement in the principal's scope, sorting off as the HNSW walk runs it."""
    with database.unit_of_work(access.scope()) as uow:
        uow.session.execute(select(func.set_config("enable_sort", "off", True)))
        return plan_of(uow.session.connection(), statement, parameters)


def _rows(org, n, vectors, tag, **kw):
    fields = {"level": "shared", "area": "general", "category": "company", **kw}
    return [Memory(org_id=org.id if fields["level"] != "personal" else None, subject="org", attribute=f"{tag}{i}",
                   value="v", sentence=f"hecho {i}", embedding=v.tolist(), **fields)
            for i, v in zip(range(n), vectors, strict=True)]


@pytest.fixture
def big_org(factory, system_session, owner_engine):
    """An org of 480 active memories among 1,500 of another org, with a member who sees part of them."""
    rng = np.random.default_rng(7)
    big, other = factory.org("Grande"), factory.org("Otra")
    ana = factory.member(big, role="member")  # reads general, not contacts
    bea = factory.member(big, role="member")
    centre = _unit(rng, 1)[0]
    near = lambda n: (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(centre + 0.8 * _unit(rng, n))  # noqa: E731
    visible = (_rows(big, 400, near(400), "s") + _rows(big, 20, near(20), "p", level="private", owner_user_id=ana.id)
               + _rows(big, 10, near(10), "q", level="personal", owner_user_id=ana.id))
    hidden = (_rows(big, 30, near(30), "c", area="contacts", category="customer")
              + _rows(big, 20, near(20), "b", level="private", owner_user_id=bea.id)
              + _rows(other, 1500, near(1500), "o"))
    system_session.add_all(visible + hidden)
    system_session.commit()
    # Vacuumed as well as analysed (by the table's owner): the plans do not change when autovacuum empties the
    # text indexes' pending lists.
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text("vacuum analyze memories"))
    return big, other, ana, visible, centre, rng


def test_a_big_org_gets_its_own_indexes_and_loses_them_when_it_shrinks(
        database, system_session, factory, big_org, servers, no_org_indexes_left):
    big, other, _, visible, _, _ = big_org
    small = factory.org("Pequeña")
    system_session.add_all(_rows(small, 50, _unit(np.random.default_rng(1), 50), "x"))
    system_session.commit()
    assert refresh_org_indexes(servers, big=BIG, small=SMALL) == {
        "created": 2, "dropped": 0, "kept": 0, "common_words": 2} | NO_OWNERS
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.existing(uow.session) == {
            org.id: dict.fromkeys(org_indexes.index_names(org.id), True) for org in (big, other)}
        assert org_indexes.indexed_orgs(uow.session) == {big.id, other.id}
    # Run again: nothing to do.
    assert refresh_org_indexes(servers, big=BIG, small=SMALL) == {
        "created": 0, "dropped": 0, "kept": 2, "common_words": 2} | NO_OWNERS

    # The org shrinks below the lower mark: its indexes go.
    system_session.execute(Memory.__table__.delete().where(
        Memory.org_id == big.id, Memory.id.notin_([m.id for m in visible[:SMALL - 1]])))
    system_session.commit()
    assert refresh_org_indexes(servers, big=BIG, small=SMALL) == {
        "created": 0, "dropped": 1, "kept": 1, "common_words": 1} | NO_OWNERS
    with database.unit_of_work(SYSTEM) as uow:
        assert set(org_indexes.existing(uow.session)) == {other.id}
    assert system_session.scalar(select(func.count()).select_from(JobRun).where(JobRun.job == "org_indexes")) == 3


def test_a_big_orgs_vector_search_walks_its_own_index_with_the_recall_of_an_exact_scan(
        database, system_session, big_org, servers, no_org_indexes_left):
    big, _, ana, visible, centre, rng = big_org
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    access = load_access(system_session, big.id, user_id=ana.id)
    ids = [m.id for m in visible]
    matrix = np.array([m.embedding for m in visible], dtype=np.float32)

    hits = total = 0
    with sent_statements(database.engine, lambda s: "<=>" in s) as statements:
        for _ in range(20):
            query = centre + 0.8 * _unit(rng, 1)[0]
            query /= np.linalg.norm(query)
            with database.unit_of_work(access.scope()) as uow:
                got = retrieve(uow.session, access, "q", kinds=["memory"], per_retriever=10, vector=query.tolist(),
                               retrievers=["vector"], vector_mode="hnsw")["vector"]
            expected = {ids[i] for i in np.argsort(-(matrix @ query))[:10]}
            hits += len(expected & {f.id for f in got})
            total += len(expected)
    assert hits / total >= 0.99

    # The plan of that statement walks the org's own HNSW index, not the whole table's graph.
    statement, parameters = statements[-1]
    plan = _plan_without_sorting(database, access, statement, parameters)
    vector_index, _ = org_indexes.index_names(big.id)
    assert vector_index in plan
    assert "ix_memories_embedding" not in plan


def test_a_big_orgs_full_text_search_reads_its_own_text_index(
        database, system_session, big_org, servers, no_org_indexes_left, monkeypatch, owner_engine):
    big, _, ana, visible, centre, _ = big_org
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    # The principal counts as big from 100 candidate rows (3,000 in production) so this small org takes that path.
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)
    access = load_access(system_session, big.id, user_id=ana.id)
    with sent_statements(database.engine, lambda s: "@@" in s and "<=>" not in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            got = retrieve(uow.session, access, "117", kinds=["memory"], per_retriever=10,
                           vector=centre.tolist(), retrievers=["fts", "vector"])["fts"]
    visible_ids = {m.id for m in visible}
    assert got and {f.id for f in got} <= visible_ids
    statement, parameters = statements[-1]
    # The statement's shape lets the planner read the org's own text index. For a word this rare the whole
    # table's index costs about the same and the planner may pick either, so it is set aside (in a transaction
    # that is rolled back) to see what the statement can use.
    with owner_engine.connect() as c, c.begin() as tx:
        c.execute(text("drop index ix_memories_tsv"))
        plan = plan_of(c, statement, parameters)
        tx.rollback()
    _, text_index = org_indexes.index_names(big.id)
    assert text_index in plan, plan


def test_a_person_with_many_personal_memories_gets_their_own_index_and_their_search_walks_it(
        database, system_session, big_org, servers, no_org_indexes_left):
    """The big org's principal's personal rows are walked in the person's own graph: the same nearest rows
    as the plain path's exact scan; the index goes when their personal memories shrink."""
    big, _, ana, visible, centre, rng = big_org
    counts = refresh_org_indexes(servers, big=BIG, small=SMALL, big_owner=8, small_owner=4)
    assert (counts["owners_created"], counts["owners_kept"]) == (1, 0)  # ana's 10; bea has none
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.indexed_owners(uow.session) == {ana.id}
    access = load_access(system_session, big.id, user_id=ana.id)
    hits = total = 0
    with sent_statements(database.engine, lambda s: "<=>" in s) as statements:
        for _ in range(20):
            query = centre + 0.8 * _unit(rng, 1)[0]
            query = (query / np.linalg.norm(query)).tolist()
            got = {}
            for mode in ("exact", "hnsw"):  # the plain path, and the big principal's
                with database.unit_of_work(access.scope()) as uow:
                    got[mode] = [f.id for f in retrieve(uow.session, access, "q", kinds=["memory"], per_retriever=10,
                                                        vector=query, retrievers=["vector"],
                                                        vector_mode=mode)["vector"]]
            hits += len(set(got["exact"]) & set(got["hnsw"]))
            total += len(got["exact"])
    assert hits / total >= 0.99
    statement, parameters = statements[-1]
    plan = _plan_without_sorting(database, access, statement, parameters)
    assert org_indexes.owner_index_name(ana.id) in plan, plan
    assert org_indexes.index_names(big.id)[0] in plan, plan

    # Fewer than the lower mark: the person's index goes.
    system_session.execute(Memory.__table__.delete().where(Memory.owner_user_id == ana.id, Memory.level == "personal",
                                                           Memory.attribute.in_([f"q{i}" for i in range(7)])))
    system_session.commit()
    counts = refresh_org_indexes(servers, big=BIG, small=SMALL, big_owner=8, small_owner=4)
    assert (counts["owners_dropped"], counts["owners_kept"]) == (1, 0)
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.existing_owners(uow.session) == {}


def test_a_principal_found_big_is_not_counted_again_on_its_next_turn(
        database, system_session, big_org, monkeypatch):
    big, _, ana, _, centre, _ = big_org
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)
    principal_size.forget()
    access = load_access(system_session, big.id, user_id=ana.id)
    lists = []
    try:
        with sent_statements(database.engine, lambda s: "n_memory" in s) as counted:
            for _ in range(2):
                with database.unit_of_work(access.scope()) as uow:
                    lists.append(retrieve(uow.session, access, "hecho", kinds=["memory"], per_retriever=10,
                                          vector=centre.tolist(), retrievers=["fts", "vector"]))
    finally:
        principal_size.forget()
    assert len(counted) == 1
    assert [f.id for f in lists[0]["vector"]] == [f.id for f in lists[1]["vector"]]


def test_a_big_orgs_full_text_search_reads_the_orgs_and_the_persons_text_indexes_and_finds_the_same_rows(
        database, system_session, big_org, servers, no_org_indexes_left, monkeypatch, owner_engine):
    """The org's rows holding a query word come from the org's text index and the person's personal rows from
    theirs (never the whole table's text index, whose bitmap holds every org's rows with a common word), and the
    retriever ranks the same rows with the same scores as the one visibility rule over the whole table."""
    big, _, ana, visible, centre, rng = big_org
    # She has told many personal things that do not say "hecho" (what makes her own text index worth reading).
    notes = _rows(big, 400, _unit(rng, 400), "n", level="personal", owner_user_id=ana.id)
    for m in notes:
        m.sentence = "nota suelta"
    system_session.add_all(notes)
    system_session.commit()
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text("vacuum analyze memories"))
    refresh_org_indexes(servers, big=BIG, small=SMALL, big_owner=8, small_owner=4)
    # Every word here is held by a hundredth of the org's rows: with its common words listed, the org's full text
    # reads only the least common word by word (the next test); here, which indexes give which rows.
    system_session.execute(update(Organization).values(common_words=None))
    system_session.commit()
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)  # she counts as big from 100 candidate rows
    access = load_access(system_session, big.id, user_id=ana.id)
    visible_ids = {m.id for m in visible + notes}

    def fts(query):
        with database.unit_of_work(access.scope()) as uow:
            return [(f.id, round(f.score, 9)) for f in retrieve(
                uow.session, access, query, kinds=["memory"], per_retriever=30, vector=centre.tolist(),
                retrievers=["fts", "vector"])["fts"]]

    queries = ["hecho 117", "3", "4 5 6 7", "hecho", "nota"]
    with sent_statements(database.engine, lambda s: "fts_cand_memory" in s) as statements:
        got = {q: fts(q) for q in queries}
    with monkeypatch.context() as m:
        m.setattr(search_module, "indexed_orgs", lambda session: frozenset())  # the one rule, the whole table's index
        expected = {q: fts(q) for q in queries}
    assert got == expected
    assert all(got.values()) and all({i for i, _ in hits} <= visible_ids for hits in got.values())
    assert {i for i, _ in got["3"]} & {m.id for m in visible if m.level == "personal"}  # her personal rows
    assert len(got["nota"]) == 30 and {i for i, _ in got["nota"]} <= {m.id for m in notes}

    statement, parameters = statements[-1]
    assert f"'{big.id}'::uuid" in statement and f"'{ana.id}'::uuid" in statement
    with database.unit_of_work(access.scope()) as uow:
        plan = plan_of(uow.session.connection(), statement, parameters)
    _, org_text = org_indexes.index_names(big.id)
    _, own_text = org_indexes.owner_index_names(ana.id)
    assert org_text in plan and own_text in plan, plan
    assert "on ix_memories_tsv " not in plan, plan
    # So does the plan PostgreSQL keeps once the driver has prepared the statement: the org and the user are
    # constants in it, the indexes' predicates still proved.
    with database.unit_of_work(access.scope()) as uow:
        generic = generic_plan_of(uow.session.connection(), statement)
    assert org_text in generic and own_text in generic, generic
    assert "on ix_memories_tsv " not in generic, generic


def _says(org, tag, sentences, **kw):
    return [Memory(org_id=org.id, level="shared", area="general", category="company", subject="org",
                   attribute=f"{tag}{i}", value="v", sentence=sentence, **kw) for i, sentence in enumerate(sentences)]


def test_an_indexed_orgs_common_words_are_listed_most_common_first_and_go_with_its_indexes(
        database, system_session, factory, big_org, servers, no_org_indexes_left):
    big, other, ana, visible, _, _ = big_org
    # 470 of the org's memories say "hecho"; 100 "pedido urgente", 10 more "urgente"; 2 "zanahoria" (under a hundredth).
    system_session.add_all(_says(big, "d", ["pedido urgente"] * 100 + ["urgente"] * 10 + ["zanahoria"] * 2))
    # Her personal rows are not the org's; nor are another org's, nor rows no longer active.
    system_session.add_all(_says(big, "old", ["zanahoria"] * 50, status="superseded")
                           + [Memory(level="personal", owner_user_id=ana.id, category="person", subject="self",
                                     attribute=f"z{i}", value="v", sentence="zanahoria") for i in range(50)])
    system_session.commit()
    small = factory.org("Pequeña")
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    listed = dict(system_session.execute(select(Organization.id, Organization.common_words)).all())
    words = listed[big.id]  # (every row's value, "v", is the most common)
    assert words.index("hech") < words.index("urgent") < words.index("ped") and "zanahori" not in words
    assert listed[other.id] == ["hech", "v"]
    assert listed[small.id] is None  # no indexes of its own
    # The org shrinks below the lower mark: its indexes go, and so does its list.
    system_session.execute(Memory.__table__.delete().where(Memory.org_id == big.id))
    system_session.commit()
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    system_session.expire_all()
    assert system_session.get(Organization, big.id).common_words is None
    assert system_session.get(Organization, other.id).common_words == ["hech", "v"]


def test_an_indexed_orgs_full_text_reads_its_uncommon_words_one_by_one_and_its_common_ones_only_together(
        database, system_session, big_org, servers, no_org_indexes_left, monkeypatch):
    """A common word's share of the candidates would be an arbitrary sample of its hundreds of rows: the rows it
    brings are those holding every word of the query, or the least common words' when the query has no other."""
    big, _, ana, visible, centre, _ = big_org
    together = _says(big, "all", ["hecho urgente pedido zanahoria tarde"])
    rare = _says(big, "d", ["la zanahoria llegó tarde"] + ["pedido urgente"] * 100 + ["urgente"] * 10)
    system_session.add_all(together + rare)
    system_session.commit()
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)  # she counts as big from 100 candidate rows
    access = load_access(system_session, big.id, user_id=ana.id)

    def fts(query):
        with database.unit_of_work(access.scope()) as uow:
            return [f.id for f in retrieve(uow.session, access, query, kinds=["memory"], per_retriever=60,
                                           vector=centre.tolist(), retrievers=["fts", "vector"])["fts"]]

    # Two uncommon words ("zanahoria", "tarde"): those rows, the one holding every word first; none of the hundreds
    # holding only "hecho", "urgente" or "pedido".
    assert fts("hecho urgente pedido zanahoria tarde") == [together[0].id, rare[0].id]
    # Only common words, and no row holds them all but one: the least common two are read word by word.
    found = fts("hecho urgente pedido")
    assert found[0] == together[0].id and len(found) > 1
    assert set(found) <= {m.id for m in together + rare[1:]} | {m.id for m in visible}


def test_a_person_indexed_before_text_indexes_existed_gets_theirs_and_keeps_their_vector_index(
        database, system_session, big_org, servers, owner_engine, no_org_indexes_left):
    _, _, ana, _, _, _ = big_org
    refresh_org_indexes(servers, big=BIG, small=SMALL, big_owner=8, small_owner=4)
    vector_index, text_index = org_indexes.owner_index_names(ana.id)
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.exec_driver_sql(f"DROP INDEX {text_index}")
        oid = c.execute(text("select to_regclass(:n)::oid"), {"n": vector_index}).scalar_one()
    org_indexes.forget_cache()
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.indexed_owners(uow.session) == frozenset()  # the full-text arm waits for its index
    counts = refresh_org_indexes(servers, big=BIG, small=SMALL, big_owner=8, small_owner=4)
    assert (counts["owners_created"], counts["owners_kept"]) == (1, 0)
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.existing_owners(uow.session) == {ana.id: {vector_index: True, text_index: True}}
        assert org_indexes.indexed_owners(uow.session) == {ana.id}
    with owner_engine.connect() as c:
        assert c.execute(text("select to_regclass(:n)::oid"), {"n": vector_index}).scalar_one() == oid  # not rebuilt


def test_every_text_index_takes_a_new_row_at_once_and_keeps_no_list_that_reads_scan(
        database, system_session, big_org, servers, owner_engine, no_org_indexes_left):
    """A GIN index with PostgreSQL's default `fastupdate` keeps new rows in a pending list, up to 4 MB, that every read
    through it scans until a vacuum folds it in (a big org's block 25 -> 30-35 ms p50 with 4,000 memories pending).
    Every GIN index, the schema's and those the job makes for a big org, takes them into the index itself."""
    big, _, ana, _, centre, _ = big_org
    refresh_org_indexes(servers, big=BIG, small=SMALL)
    system_session.add_all(_rows(big, 3, np.stack([centre] * 3), "nuevo"))  # learnt after the index was built
    system_session.commit()
    _, text_index = org_indexes.index_names(big.id)
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        options = dict(c.execute(text(
            "select c.relname, coalesce(array_to_string(c.reloptions, ','), '') from pg_index i "
            "join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam "
            "join pg_namespace n on n.oid = c.relnamespace where a.amname = 'gin' and n.nspname = 'public'")).all())
        c.execute(text("create extension if not exists pageinspect"))
        pending = c.execute(text("select (gin_metapage_info(get_raw_page(:ix, 0))).n_pending_tuples"),
                            {"ix": text_index}).scalar_one()
    assert {"ix_memories_tsv", "ix_messages_text_trgm", "ix_contacts_tsv", text_index} <= set(options)
    assert {name: o for name, o in options.items() if "fastupdate=off" not in o} == {}
    assert pending == 0
