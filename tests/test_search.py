"""Hybrid search: ownership inside every retriever, typos, exact IDs, vector recall under the filter."""
from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, insert, select, text

from memory_core.domain.access import load_access
from memory_core.domain.models import Contact, Document, Memory
from memory_core.reading.search import index_document, remove_document, retrieve, search


@pytest.fixture
def garcia_org(factory, system_session, embedder):
    """An org with a customer, its facts, an invoice, and members with different rights."""
    org = factory.org("Sumalos")
    owner = factory.member(org, role="owner")
    marta = factory.member(org, permissions={})  # may read only "general"
    c = factory.contact(org, name="Talleres García S.L.", tax_id="B12345678", aliases=["García"])
    sentence = "Talleres García paga a 60 días"
    factory.memory(org, level="shared", area="contacts", category="customer", subject=f"contact:{c.id}",
                   attribute="plazo_pago", value="60 días", sentence=sentence,
                   embedding=embedder.embed([sentence])[0], embed_model=embedder.model_name)
    factory.memory(org, level="shared", area="general", category="company", subject="org",
                   attribute="horario", value="de 8 a 15", sentence="La oficina abre de 8 a 15",
                   embedding=embedder.embed(["La oficina abre de 8 a 15"])[0], embed_model=embedder.model_name)
    index_document(system_session, org_id=org.id, kind="invoice", external_ref="F-2024-0012",
                   title="Factura F-2024-0012 Talleres García", text="Cambio de pastillas de freno",
                   contact_id=c.id, tax_id="B12345678", embed=embedder.embed)
    system_session.commit()
    return org, owner, marta, c


def _search(database, system_session, org, user, query, embedder, **kw):
    access = load_access(system_session, org.id, user_id=user.id)
    with database.unit_of_work(access.scope()) as uow:
        return search(uow.session, access, query, embed=embedder.embed, **kw)


def test_member_without_contacts_read_never_gets_customer_facts_in_search(database, system_session, garcia_org,
                                                                          embedder):
    org, owner, marta, c = garcia_org
    for q in ("Talleres García", "B12345678", "cuándo paga García", "F-2024-0012", "60 días"):
        hits = _search(database, system_session, org, marta, q, embedder)
        assert all(h.kind not in ("contact", "invoice") for h in hits), q
        assert all("García" not in h.snippet for h in hits), q
    seen = {h.kind for h in _search(database, system_session, org, owner, "Talleres García", embedder)}
    assert {"contact", "memory", "invoice"} <= seen


def test_exact_tax_id_match_is_ranked_first_whatever_its_spelling(database, system_session, garcia_org,
                                                                  embedder, factory):
    org, owner, marta, c = garcia_org
    # Noise that shares words and digits with the query.
    factory.contact(org, name="Talleres Gómez", tax_id="B87654321")
    for q in ("B-12345678", "b12345678", "NIF B 12345678"):
        hits = _search(database, system_session, org, owner, q, embedder)
        assert (hits[0].kind, hits[0].id) == ("contact", c.id), q
        assert hits[0].ranks.get("exact") == 1


def test_invoice_number_without_separators_finds_the_invoice(database, system_session, garcia_org, embedder):
    org, owner, *_ = garcia_org
    hits = _search(database, system_session, org, owner, "factura F20240012", embedder)
    assert hits[0].kind == "invoice" and hits[0].title.startswith("Factura F-2024-0012")


def test_misspelt_name_still_finds_the_customer(database, system_session, garcia_org, embedder):
    org, owner, marta, c = garcia_org
    hits = _search(database, system_session, org, owner, "Talleres Garsia", embedder, kinds=["contact"])
    assert hits and hits[0].id == c.id and "trigram" in hits[0].ranks


def test_a_big_address_book_is_searched_by_name_through_its_indexes_typos_and_aliases_too(
        database, system_session, factory, embedder):
    """3,100 contacts (more than search scores one by one): a misspelt name, an alias and a name's words still
    find their contact first, each read through the contacts' trigram and text indexes."""
    org = factory.org("Agenda grande")
    owner = factory.member(org, role="owner")
    system_session.execute(insert(Contact), [{"org_id": org.id, "kind": "customer", "aliases": [],
                                              "name": f"{trade} {surname} {i}"} for i in range(775)
                                             for trade, surname in (("Transportes", "Ruiz"), ("Talleres", "López"),
                                                                    ("Academia", "Lozano"), ("Clínica", "Lorenzo"))])
    lopez = factory.contact(org, name="Transportes López S.L.", tax_id=None)
    norte = factory.contact(org, name="Hierros del Norte S.A.", tax_id=None, aliases=["Olano"])
    system_session.commit()
    assert system_session.scalar(select(func.count()).select_from(Contact).where(Contact.org_id == org.id)) > 3_000
    for query, wanted in (("Trasportes Lopes", lopez), ("transportes lópez", lopez), ("Olano", norte),
                          ("¿cuándo paga Hierros del Norte?", norte)):
        hits = _search(database, system_session, org, owner, query, embedder)
        assert hits and (hits[0].kind, hits[0].id) == ("contact", wanted.id), query
    # The full-text retriever reads the contact holding both words, not the first 300 holding either.
    access = load_access(system_session, org.id, user_id=owner.id)
    with database.unit_of_work(access.scope()) as uow:
        found = retrieve(uow.session, access, "transportes lópez", per_retriever=10, embed=embedder.embed,
                         embed_model=embedder.model_name, retrievers=["fts", "vector"])["fts"]
    assert found[0].id == lopez.id


def test_phone_principal_linked_to_a_user_sees_that_users_memories(database, system_session, factory, embedder):
    org = factory.org()
    pablo = factory.member(org, phone="+34600111222")
    factory.phone(org, "+34600111222", user=pablo)
    factory.memory(None, level="personal", owner=pablo, category="person", subject="self", attribute="hijo",
                   value="Juan", sentence="Pablo tiene un hijo que se llama Juan")
    access = load_access(system_session, org.id, phone="+34600111222")
    assert access.principal.user_id == pablo.id
    with database.unit_of_work(access.scope()) as uow:
        hits = search(uow.session, access, "cómo se llama mi hijo", embed=embedder.embed)
    assert any(h.kind == "memory" and "Juan" in h.snippet for h in hits)


def test_another_members_private_messages_are_never_found(database, system_session, factory, embedder):
    org = factory.org()
    ana, bea = factory.member(org), factory.member(org)
    conv = factory.conversation(org, ana)
    factory.message(conv, "El código del portal del almacén es el de siempre", embedding=None)
    access = load_access(system_session, org.id, user_id=bea.id)
    with database.unit_of_work(access.scope()) as uow:
        assert search(uow.session, access, "portal del almacén", embed=embedder.embed) == []
    access = load_access(system_session, org.id, user_id=ana.id)
    with database.unit_of_work(access.scope()) as uow:
        assert [h.kind for h in search(uow.session, access, "portal del almacén", embed=embedder.embed)] == ["message"]


def test_one_shared_common_word_weighs_less_than_the_rare_ones(database, system_session, factory):
    org = factory.org()
    owner = factory.member(org, role="owner")
    for i in range(8):
        factory.memory(org, attribute=f"f{i}", value=f"{30 + i} días",
                       sentence=f"El proveedor {i} cobra a {30 + i} días")
    target = factory.memory(org, attribute="vacaciones", value="agosto", sentence="Cerramos por vacaciones en agosto")
    access = load_access(system_session, org.id, user_id=owner.id)
    with database.unit_of_work(access.scope()) as uow:
        hits = search(uow.session, access, "días de vacaciones", kinds=["memory"])
    assert hits[0].id == target.id


def test_removed_document_is_no_longer_found(database, system_session, garcia_org, embedder):
    org, owner, *_ = garcia_org
    assert remove_document(system_session, org_id=org.id, kind="invoice", external_ref="F-2024-0012")
    system_session.commit()
    hits = _search(database, system_session, org, owner, "F-2024-0012", embedder)
    assert all(h.kind != "invoice" for h in hits)
    assert not remove_document(system_session, org_id=org.id, kind="invoice", external_ref="F-2024-0012")


def test_reindexing_a_document_updates_it_instead_of_duplicating(system_session, garcia_org):
    org, *_ = garcia_org
    index_document(system_session, org_id=org.id, kind="invoice", external_ref="F-2024-0012",
                   title="Factura rectificada")
    system_session.commit()
    docs = system_session.scalars(select(Document).where(Document.org_id == org.id)).all()
    assert [d.title for d in docs] == ["Factura rectificada"]


def _unit(rng, n):
    v = rng.normal(size=(n, 512)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("mode", ["exact", "hnsw"])
def test_small_owner_in_a_big_table_still_gets_its_nearest_rows(database, system_session, factory, mode,
                                                                 owner_engine):
    rng = np.random.default_rng(4)
    big, small = factory.org("Big"), factory.org("Small")
    owner = factory.member(small, role="owner")
    # 3,000 rows of another org sit in the HNSW graph around the query; the small org owns 40.
    query = _unit(rng, 1)[0]
    noise = query + 0.6 * _unit(rng, 3000)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    system_session.add_all([Memory(org_id=big.id, level="shared", area="general", category="company", subject="org",
                                   attribute=f"n{i}", value="x", sentence="x", embedding=v.tolist())
                            for i, v in enumerate(noise)])
    mine = _unit(rng, 40)
    rows = [Memory(org_id=small.id, level="shared", area="general", category="company", subject="org",
                   attribute=f"m{i}", value="y", sentence="y", embedding=v.tolist()) for i, v in enumerate(mine)]
    system_session.add_all(rows)
    system_session.commit()
    with owner_engine.begin() as c:  # only the table's owner may analyze it
        c.execute(text("analyze memories"))
    expected = [rows[i].id for i in np.argsort(-(mine @ query))[:10]]
    access = load_access(system_session, small.id, user_id=owner.id)
    with database.unit_of_work(access.scope()) as uow:
        got = retrieve(uow.session, access, "q", kinds=["memory"], per_retriever=10, vector=query.tolist(),
                       retrievers=["vector"], vector_mode=mode)["vector"]
    assert [f.id for f in got] == expected


def test_relative_dates_pick_the_message_of_that_day(database, system_session, factory):
    import datetime as dt

    from memory_core.reading.search import date_range

    now = dt.datetime(2026, 11, 29, 12, tzinfo=dt.timezone.utc)  # a Sunday
    assert date_range("¿qué me dijo ayer?", now) == (dt.date(2026, 11, 28), dt.date(2026, 11, 29))
    assert date_range("what did he say last week", now) == (dt.date(2026, 11, 16), dt.date(2026, 11, 23))
    assert date_range("facturas de septiembre", now) == (dt.date(2026, 9, 1), dt.date(2026, 10, 1))
    assert date_range("el pedido de mesas", now) is None
    org = factory.org()
    owner = factory.member(org, role="owner")
    conv = factory.conversation(org, owner)
    old = factory.message(conv, "El cliente de Sevilla ha confirmado el pedido de mesas",
                          created_at=dt.datetime(2026, 10, 2, tzinfo=dt.timezone.utc))
    new = factory.message(conv, "El cliente de Sevilla ha cancelado el pedido de mesas",
                          created_at=dt.datetime(2026, 11, 28, 18, tzinfo=dt.timezone.utc))
    access = load_access(system_session, org.id, user_id=owner.id)
    with database.unit_of_work(access.scope()) as uow:
        assert search(uow.session, access, "¿qué pasó ayer con el pedido de mesas?", now=now)[0].id == new.id
        assert search(uow.session, access, "el pedido de mesas de octubre", now=now)[0].id == old.id
