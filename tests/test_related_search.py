"""A memory block's related search, and a search's full text, run on a connection of their own, beside the
turn's other reads, in the principal's scope; a turn that fails leaves no search waiting for it."""
from __future__ import annotations

import datetime as dt
import time

import pytest
from sqlalchemy.orm import Session

from memory_core.adapters import beside
from memory_core.domain.access import load_access
from memory_core.domain.errors import NotFound
from memory_core.reading.context import assemble_context
from memory_core.reading.search import search
from tests.support.statements import connection_of_each_statement, settings_seen

NOW = dt.datetime(2026, 12, 4, 12, tzinfo=dt.timezone.utc)
QUESTION = "¿A cuántos días paga Talleres García las facturas?"


@pytest.fixture
def story(factory, system_session):
    org = factory.org()
    ana, bea = factory.member(org), factory.member(org)
    conversation = factory.conversation(org, ana)
    paid = factory.memory(org, subject="Talleres García", attribute="plazo_pago", value="paga a 60 días",
                          sentence="Talleres García paga las facturas a 60 días", category="customer")
    beas = factory.memory(org, level="personal", owner=bea, subject="Talleres García", attribute="descuento",
                          value="15% de descuento", sentence="Talleres García me hace un 15% de descuento en facturas")
    return org, ana, bea, conversation, paid, beas, load_access(system_session, org.id, user_id=ana.id)


def test_the_related_search_runs_on_another_connection_in_the_principals_scope(database, story):
    org, ana, bea, conversation, paid, beas, access = story
    with connection_of_each_statement(database.engine) as sent, \
            settings_seen(database.engine, ("memoria.mode", "memoria.user_id"), keep=lambda s: "fts_cand_" in s) as seen, \
            database.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, conversation.id, QUESTION, now=NOW)
        uow.commit()
    assert [i.block for i in block.items if i.memory_id == paid.id] == ["related"]
    assert beas.id not in block.memory_ids and "15%" not in block.text  # Bea's own memory stays hers
    conversation_read = {c for c, s in sent if "FROM conversations" in s}
    full_text = {c for c, s in sent if "fts_cand_" in s}
    assert len(conversation_read) == 1 and len(full_text) == 1 and conversation_read != full_text
    assert [values for _, values in seen] == [{"memoria.mode": "principal", "memoria.user_id": str(ana.id)}]


def test_a_session_bound_to_one_connection_searches_in_it_and_finds_the_same(database, story):
    org, ana, bea, conversation, paid, beas, access = story
    with database.unit_of_work(access.scope()) as uow:
        beside = assemble_context(uow.session, access, conversation.id, QUESTION, now=NOW)
        uow.rollback()  # no trace: the two blocks are built alike
    with database.engine.connect() as connection, connection_of_each_statement(database.engine) as sent, \
            Session(bind=connection, info={"scope": access.scope()}) as session:
        inline = assemble_context(session, access, conversation.id, QUESTION, now=NOW)
        session.rollback()
    assert len({c for c, _ in sent}) == 1
    assert inline.text == beside.text and "60 días" in inline.related


def test_turns_that_fail_leave_no_search_holding_a_connection(database, factory, story):
    """A turn that fails before it knows its time (a conversation the principal does not own) still lets its
    search finish: otherwise each would wait for that time for ever, holding a pooled connection and one of the
    search's threads, and the next turns' searches would wait behind them."""
    org, ana, bea, conversation, paid, beas, access = story
    beas_conversation = factory.conversation(org, bea)
    for _ in range(beside.THREADS + 1):
        with database.unit_of_work(access.scope()) as uow, pytest.raises(NotFound):
            assemble_context(uow.session, access, beas_conversation.id, QUESTION, now=NOW)
    deadline = time.monotonic() + 10
    while database.engine.pool.checkedout() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert database.engine.pool.checkedout() == 0
    with database.unit_of_work(access.scope()) as uow:
        assert "60 días" in assemble_context(uow.session, access, conversation.id, QUESTION, now=NOW).related


def test_a_search_runs_full_text_beside_and_embeds_its_query_after_its_other_text_reads(database, story, embedder):
    """search() sends full text on another connection, and embeds the query only once its own text reads are sent
    (it used to embed first, before any read): the embedding runs while full text does."""
    org, ana, bea, conversation, paid, beas, access = story
    marks = {"fts_cand_": "full text", "word_similarity": "trigram", "<=>": "vector"}
    embedded_at: list[int] = []  # how many statements had been sent when the query was embedded
    with connection_of_each_statement(database.engine) as sent, database.unit_of_work(access.scope()) as uow:
        def embed(texts):
            embedded_at.append(len(sent))
            return embedder.embed(texts)

        hits = search(uow.session, access, "plazo de pago de Talleres García", kinds=["memory"], embed=embed,
                      embed_model=embedder.model_name)
        own = id(uow.session.connection().connection.dbapi_connection)
    at = {kind: (n, c) for n, (c, statement) in enumerate(sent) for mark, kind in marks.items() if mark in statement}
    assert at["trigram"][1] == at["vector"][1] == own != at["full text"][1]
    assert len(embedded_at) == 1 and at["trigram"][0] < embedded_at[0] <= at["vector"][0]
    found = next(h for h in hits if h.id == paid.id)
    assert "fts" in found.ranks  # found by the full text run beside
    assert beas.id not in {h.id for h in hits}
