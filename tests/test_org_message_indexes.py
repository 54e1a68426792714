"""A big organization's messages get indexes that hold only them (a partial HNSW and a partial GIN, built by the
org index job as the org grows, dropped as it shrinks); its people's search reads their messages there and finds
the same rows it finds through the whole table's indexes, never one they may not see."""
from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select, text

from jobs.org_indexes import refresh_org_indexes
from memory_core.adapters.db import SYSTEM
from memory_core.domain.access import load_access
from memory_core.domain.models import Message
from memory_core.reading import org_indexes, principal_size
from memory_core.reading import search as search_module
from memory_core.reading.search import retrieve
from tests.support.statements import plan_of, sent_statements, settings_seen

BIG, SMALL = 300, 100
WORDS = ["factura", "pedido", "entrega", "almacén", "transferencia", "presupuesto", "reunión", "Sevilla"]


@pytest.fixture
def no_message_indexes_left(owner_engine):
    """The indexes these tests build live on the shared schema: drop them afterwards."""
    yield
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        names = c.execute(text("select indexname from pg_indexes where tablename in ('messages', 'memories') and "
                               "(indexname like 'ix_messages_%_org_%' or indexname like 'ix_memories_%_org_%' "
                               "or indexname like 'ix_memories_%_user_%')"))
        for (name,) in names.all():
            c.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    org_indexes.forget_cache()
    principal_size.forget()


def _unit(rng, n):
    v = rng.normal(size=(n, 512)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def chatty_org(factory, system_session, owner_engine):
    """An org of 430 messages among 400 of another org and 10,000 of a third: Ana may see her own (in the org and
    outside any org) and those shared in "general"; not Bea's, not those shared in "contacts", not the other orgs'."""
    rng = np.random.default_rng(11)
    big, other = factory.org("Charlatana"), factory.org("Otra")
    ana = factory.member(big, role="member")  # reads general only
    bea = factory.member(big, role="member")
    stranger = factory.member(other, role="member")
    convs = {"ana": factory.conversation(big, ana), "bea": factory.conversation(big, bea),
             "ana_alone": factory.conversation(None, ana), "other": factory.conversation(other, stranger)}
    centre = _unit(rng, 1)[0]

    def rows(conv, n, tag, **kw):
        vectors = centre + 0.8 * _unit(rng, n)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        words = rng.choice(WORDS, size=(n, 3))
        return [Message(conversation_id=conv.id, channel=conv.channel, external_id=f"{tag}-{i}",
                        org_id=conv.org_id, user_id=conv.user_id, role="user",
                        text=f"{' '.join(w)} {tag} {i}", embedding=v.tolist(), embed_model="m", **kw)
                for i, (w, v) in enumerate(zip(words, vectors, strict=True))]

    visible = (rows(convs["ana"], 120, "mio") + rows(convs["bea"], 150, "general", visibility="shared_in_org")
               + rows(convs["ana_alone"], 30, "solo"))
    hidden = (rows(convs["bea"], 100, "privado") + rows(convs["bea"], 60, "clientes", visibility="shared_in_org",
                                                       area="contacts")
              + rows(convs["other"], 400, "ajeno", visibility="shared_in_org")
              + rows(convs["ana"], 10, "borrado", deleted_at=func.now()))
    system_session.add_all(visible + hidden)
    # As in production, most of the table is other orgs': 10,000 messages of a third org, with the same words. On a
    # table of the org and little else, the planner finds it cheaper to read the whole table's text index than the
    # org's one and the owner index together, once a vacuum has emptied the pending lists.
    third = factory.org("Mayorista")
    outsider = factory.conversation(third, factory.member(third, role="member"))
    system_session.execute(text(
        "insert into messages (id, conversation_id, channel, external_id, org_id, user_id, role, text, visibility) "
        "select gen_random_uuid(), :conversation, :channel, 'mayorista-' || i, :org, :user, 'user', "
        "(cast(:words as text[]))[1 + i % 8] || ' ' || (cast(:words as text[]))[1 + (i / 8) % 8] || ' mayorista ' || i, "
        "'shared_in_org' from generate_series(1, 10000) i"),
        {"conversation": outsider.id, "channel": outsider.channel, "org": third.id, "user": outsider.user_id,
         "words": WORDS})
    system_session.commit()
    # Vacuumed as well as analysed: the text indexes' pending lists are empty whenever autovacuum comes by.
    with owner_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:  # the table's owner's right
        c.execute(text("vacuum analyze messages"))
    return big, other, third, ana, visible, centre, rng


def test_an_org_with_many_messages_gets_its_own_message_indexes_and_loses_them_when_it_shrinks(
        database, system_session, chatty_org, servers, no_message_indexes_left):
    big, other, third, _, visible, _, _ = chatty_org
    counts = refresh_org_indexes(servers, big=10**9, small=10**9, big_messages=BIG, small_messages=SMALL)
    assert (counts["messages_created"], counts["messages_dropped"], counts["messages_kept"]) == (3, 0, 0)
    with database.unit_of_work(SYSTEM) as uow:
        assert org_indexes.existing_message_orgs(uow.session) == {
            org.id: dict.fromkeys(org_indexes.message_index_names(org.id), True) for org in (big, other, third)}
        assert org_indexes.message_indexed_orgs(uow.session) == {big.id, other.id, third.id}
        assert org_indexes.indexed_orgs(uow.session) == frozenset()  # its memories are another matter
    counts = refresh_org_indexes(servers, big=10**9, small=10**9, big_messages=BIG, small_messages=SMALL)
    assert (counts["messages_created"], counts["messages_kept"]) == (0, 3)

    # The org's messages are deleted but for a few: its message indexes go, the other orgs' stay.
    system_session.execute(Message.__table__.update().where(
        Message.org_id == big.id, Message.id.notin_([m.id for m in visible[:SMALL - 1]])).values(deleted_at=func.now()))
    system_session.commit()
    counts = refresh_org_indexes(servers, big=10**9, small=10**9, big_messages=BIG, small_messages=SMALL)
    assert (counts["messages_dropped"], counts["messages_kept"]) == (1, 2)
    with database.unit_of_work(SYSTEM) as uow:
        assert set(org_indexes.existing_message_orgs(uow.session)) == {other.id, third.id}


def test_a_big_orgs_message_search_reads_the_orgs_message_indexes_and_finds_the_same_rows(
        database, system_session, chatty_org, servers, no_message_indexes_left, monkeypatch):
    """Full text: the same ranked messages, with the same scores, as the one visibility rule over the whole table's
    index; vectors: the org's graph finds the nearest messages an exact scan of what she may see finds; both read
    the org's own indexes in the plan of each run, and each run is planned for its values (planner.custom_plans):
    never the plan PostgreSQL would keep for any values, which may or may not read them as the table's statistics
    change (it did not, once, in a full run of the tests)."""
    big, _, _, ana, visible, centre, rng = chatty_org
    refresh_org_indexes(servers, big=10**9, small=10**9, big_messages=BIG, small_messages=SMALL)
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 100)  # she counts as big from 100 candidate messages
    principal_size.forget()
    access = load_access(system_session, big.id, user_id=ana.id)
    visible_ids = {m.id for m in visible}

    def lists(query, vector):
        with database.unit_of_work(access.scope()) as uow:
            found = retrieve(uow.session, access, query, kinds=["message"], per_retriever=20, vector=vector,
                             embed_model="m", retrievers=["fts", "vector"])
        return {name: [(f.id, round(f.score, 6)) for f in hits] for name, hits in found.items()}

    queries = [(" ".join(rng.choice(WORDS, size=2)), (lambda v: (v / np.linalg.norm(v)).tolist())(
        centre + 0.8 * _unit(rng, 1)[0])) for _ in range(12)] + [("solo general", centre.tolist())]
    wanted = lambda s: "fts_cand_message" in s or "<=>" in s  # noqa: E731
    with sent_statements(database.engine, wanted) as statements, \
            settings_seen(database.engine, ("plan_cache_mode",), wanted) as modes:
        got = [lists(q, v) for q, v in queries]
    with monkeypatch.context() as m:
        m.setattr(search_module, "message_indexed_orgs", lambda session: frozenset())  # the whole table's indexes
        principal_size.forget()
        expected = [lists(q, v) for q, v in queries]
    for g, e in zip(got, expected, strict=True):
        # The same scores in the same order, and the same messages above the last score (rows tied with the last
        # one kept are cut at the limit in whatever order the plan found them, on either path).
        assert [score for _, score in g["fts"]] == [score for _, score in e["fts"]]
        last = g["fts"][-1][1]
        assert {i for i, score in g["fts"] if score > last} == {i for i, score in e["fts"] if score > last}
    assert all(g["fts"] and {i for i, _ in g["fts"]} <= visible_ids for g in got)
    assert {i for g in got for i, _ in g["fts"]} & {m.id for m in visible if m.org_id is None}  # outside any org

    # The nearest messages: what an exact scan of every message she may see ranks first.
    matrix = np.array([m.embedding for m in visible], dtype=np.float32)
    ids = [m.id for m in visible]
    hits = total = 0
    for (_, vector), g in zip(queries, got, strict=True):
        assert {i for i, _ in g["vector"]} <= visible_ids
        exact = {ids[i] for i in np.argsort(-(matrix @ np.asarray(vector, dtype=np.float32)))[:20]}
        hits += len(exact & {i for i, _ in g["vector"]})
        total += len(exact)
    assert hits / total >= 0.99

    vec_index, text_index = org_indexes.message_index_names(big.id)
    fts_statement = next(s for s in statements if "fts_cand_message" in s[0])
    vector_statement = next(s for s in statements if "<=>" in s[0] and "fts_cand" not in s[0])
    for (statement, parameters), index in ((fts_statement, text_index), (vector_statement, vec_index)):
        assert f"'{big.id}'::uuid" in statement
        with database.unit_of_work(access.scope()) as uow:
            uow.session.execute(select(func.set_config("enable_sort", "off", True)))
            plan = plan_of(uow.session.connection(), statement, parameters)
        assert index in plan, plan
        assert "on ix_messages_tsv " not in plan and "ix_messages_embedding" not in plan, plan
    assert len(modes) == len(statements) and {values["plan_cache_mode"] for _, values in modes} == {"force_custom_plan"}
