"""The per-turn memory block: core, profile, related, fencing, traces."""
from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, insert, select, text

from memory_core.domain.access import load_access
from memory_core.domain.errors import NotFound
from memory_core.domain.models import Contact, Memory, MemoryTrace, TraceItem
from memory_core.reading.context import age_weight, assemble_context, is_trivial, memories_for_subjects, record_usage

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)


class World:
    def __init__(self, factory, system_session, database, embedder):
        self.f, self.s, self.db, self.e = factory, system_session, database, embedder
        self.org = factory.org("Sumalos")
        self.owner = factory.member(self.org, role="owner", name="Pablo")
        self.conv = factory.conversation(self.org, self.owner)

    def remember(self, sentence, *, attribute, value, level="shared", category="company", subject="org",
                 area="general", owner=None, **kw):
        return self.f.memory(None if level == "personal" else self.org, level=level, subject=subject,
                             attribute=attribute, value=value, sentence=sentence, category=category, area=area,
                             owner=owner, embedding=self.e.embed([sentence])[0], embed_model=self.e.model_name, **kw)

    def me(self, attribute, value, category="person", **kw):
        return self.remember(f"{attribute}: {value}", attribute=attribute, value=value, level="personal",
                             category=category, subject="self", owner=self.owner, **kw)

    def turn(self, message, user=None, conv=None, now=NOW):
        user = user or self.owner
        access = load_access(self.s, self.org.id, user_id=user.id)
        conv = conv or (self.conv if user is self.owner else self.f.conversation(self.org, user))
        with self.db.unit_of_work(access.scope()) as uow:
            block = assemble_context(uow.session, access, conv.id, message, now=now, embed=self.e.embed)
            uow.commit()
        return block


@pytest.fixture
def world(factory, system_session, database, embedder):
    return World(factory, system_session, database, embedder)


def test_member_without_contacts_read_never_gets_customer_facts_in_any_block(world, factory, database):
    c = factory.contact(world.org, name="Talleres García S.L.", tax_id="B12345678")
    fact = world.remember("Talleres García paga a 60 días", attribute="plazo_pago", value="60 días",
                          category="customer", subject=f"contact:{c.id}", area="contacts")
    marta = factory.member(world.org, permissions={})
    for message in ("¿Cuándo paga Talleres García?", "factura a García B12345678", "hola"):
        block = world.turn(message, user=marta)
        assert "García" not in block.text and "60 días" not in block.text
        assert fact.id not in block.memory_ids
    access = load_access(world.s, world.org.id, user_id=marta.id)
    with database.unit_of_work(access.scope()) as uow:
        assert memories_for_subjects(uow.session, access, [c.id]) == {f"contact:{c.id}": []}
    owner_block = world.turn("¿Cuándo paga Talleres García?")
    assert "<<<Talleres García S.L.>>> (cliente): plazo de pago <<<60 días>>>" in owner_block.text


def test_phone_principal_linked_to_a_user_gets_the_users_memories(world, factory, database):
    world.me("nombre", "Pablo")
    world.s.get(type(world.owner), world.owner.id).phone = "+34600111222"
    world.s.commit()
    factory.phone(world.org, "+34600111222", user=world.owner)
    conv = factory.conversation(world.org, world.owner, channel="whatsapp", phone="+34600111222")
    access = load_access(world.s, world.org.id, phone="+34600111222")
    with database.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, conv.id, "hola", now=NOW)
    assert "Nombre: <<<Pablo>>>" in block.core


def test_core_is_byte_identical_across_turns_while_facts_do_not_change(world):
    world.me("hijo", "Juan")
    world.me("nombre", "Pablo")
    world.me("tono", "tú", category="preference")
    world.remember("Acme paga a 30 días", attribute="plazo_pago", value="30 días")
    turns = [world.turn(m, now=NOW + dt.timedelta(days=d)) for d, m in
             [(0, "hola"), (3, "¿cómo se llama mi hijo?"), (40, "prepara una factura para Acme"), (200, "gracias")]]
    cores = {t.core for t in turns}
    assert len(cores) == 1
    core = cores.pop()
    assert core.splitlines() == ["Sobre la persona:", "- Nombre: <<<Pablo>>>", "- Tono: <<<tú>>>", "- Hijo: <<<Juan>>>"]
    assert all(t.text.startswith(turns[0].text.split(core)[0] + core) for t in turns)
    world.me("hija", "Sara")
    assert world.turn("hola").core != core


def test_past_events_leave_the_profile_but_answer_a_question_about_them_with_their_date(world):
    world.remember("Voy a Madrid el 20 de noviembre", attribute="viaje_madrid", value="Madrid", category="event",
                   event_date=dt.date(2026, 11, 20))
    world.remember("Voy a Sevilla el 3 de diciembre", attribute="viaje_sevilla", value="Sevilla", category="event",
                   event_date=dt.date(2026, 12, 3))
    assert "Madrid" not in world.turn("¿Qué tengo pendiente?").text
    block = world.turn("¿Cuándo fui a Madrid?")
    assert "Madrid" not in block.profile and "Sevilla" in block.profile
    assert "<<<Madrid>>> (2026-11-20)" in block.related


def test_age_discount_per_category():
    six_months, three_months = dt.timedelta(days=182.5), dt.timedelta(days=91.25)
    assert age_weight("person", NOW - dt.timedelta(days=3650), NOW) == 1.0
    assert age_weight("preference", NOW - six_months, NOW) == pytest.approx(0.75)
    assert age_weight("customer", NOW - six_months, NOW) == pytest.approx(0.75)
    assert age_weight("event", NOW - three_months, NOW) == pytest.approx(0.75)
    assert age_weight("customer", NOW - dt.timedelta(days=3650), NOW) == 0.5


def test_profile_puts_pinned_first_then_person_then_company_and_fresher_facts_first(world):
    old = world.remember("Acme prefiere email", attribute="canal", value="email", category="customer",
                         subject="name:acme", valid_from=NOW - dt.timedelta(days=400))
    new = world.remember("Beta prefiere teléfono", attribute="canal", value="teléfono", category="customer",
                         subject="name:beta", valid_from=NOW - dt.timedelta(days=5))
    company = world.remember("La oficina abre de 8 a 15", attribute="horario", value="de 8 a 15")
    pinned = world.remember("Nunca facturar en sábado", attribute="regla_sabado", value="no facturar", pinned=True)
    person = world.me("aficion", "ciclismo", category="preference")
    block = world.turn("hola")
    profile_ids = [i.memory_id for i in block.items if i.block == "profile"]
    assert person.id not in profile_ids  # it is in the core
    assert profile_ids == [pinned.id, company.id, new.id, old.id]


def test_profile_stays_within_twenty_items_and_two_thousand_characters(world):
    for i in range(30):
        world.remember(f"Dato {i}", attribute=f"dato_{i}", value="x" * 150)
    block = world.turn("gracias")
    assert len([i for i in block.items if i.block == "profile"]) <= 20
    assert 1800 < len(block.profile) <= 2000  # filled up to the budget, never past it


def _crowd_profile(world, n=22):
    """More memories than the profile holds, so low-confidence ones can only come in as related."""
    for i in range(n):
        world.remember(f"Regla interna {i}", attribute=f"regla_{i}", value=f"valor {i}", confidence=0.99)


def test_a_turn_goes_on_about_the_contact_its_conversation_named_by_one_word_of_its_name(world, factory):
    """"Olano" two messages ago is the visible contact Hierros Olano S.A.: the turn offers its memories, found with
    the memories of the subjects named by name in one statement (subject_query), and to nobody who cannot see it."""
    _crowd_profile(world)
    olano = factory.contact(world.org, name="Hierros Olano S.A.", tax_id=None)
    debt = world.remember("Hierros Olano nos debe la factura de marzo", attribute="deuda", value="1.200 euros",
                          category="customer", subject=f"contact:{olano.id}", area="contacts", confidence=0.3)
    lucia = world.remember("Lucía Sanchis lleva las compras de Olano", attribute="compras", value="Lucía Sanchis",
                           category="customer", subject="name:lucia sanchis", confidence=0.3)
    question = "¿Y qué más tenemos pendiente?"
    assert debt.id not in world.turn(question, conv=factory.conversation(world.org, world.owner)).memory_ids
    factory.message(world.conv, "Esta mañana he hablado con Olano y con Lucia Sanchis")
    block = world.turn(question)
    assert {debt.id, lucia.id} <= set(block.memory_ids)
    assert "<<<Hierros Olano S.A.>>> (cliente): deuda <<<1.200 euros>>>" in block.related
    marta = factory.member(world.org, permissions={})  # no read of contacts: neither the contact nor its memory
    conv = factory.conversation(world.org, marta)
    factory.message(conv, "Esta mañana he hablado con Olano")
    assert debt.id not in world.turn(question, user=marta, conv=conv).memory_ids


def test_a_turn_finds_the_contact_it_names_among_hundreds_sharing_its_words_and_by_an_alias(world, factory,
                                                                                             system_session):
    """An address book of 300 workshops: "Talleres Ybarra" is the one holding both words, and "Olano" is the alias
    of Hierros del Norte. Each turn offers the named contact's memory."""
    _crowd_profile(world)
    system_session.execute(insert(Contact), [{"org_id": world.org.id, "kind": "customer", "aliases": [],
                                              "name": f"Talleres {surname} {i}"}
                                             for i in range(150) for surname in ("Alonso", "Ybarrola")])
    ybarra = factory.contact(world.org, name="Talleres Ybarra S.L.", tax_id=None)
    norte = factory.contact(world.org, name="Hierros del Norte S.A.", tax_id=None, aliases=["Olano"])
    debt = world.remember("Talleres Ybarra nos debe la factura de marzo", attribute="deuda", value="1.200 euros",
                          category="customer", subject=f"contact:{ybarra.id}", area="contacts", confidence=0.3)
    term = world.remember("Hierros del Norte paga a 45 días", attribute="plazo_pago", value="45 días",
                          category="customer", subject=f"contact:{norte.id}", area="contacts", confidence=0.3)
    question = "¿Y qué más tenemos pendiente?"
    factory.message(world.conv, "Esta mañana he hablado con Talleres Ybarra")
    assert debt.id in world.turn(question).memory_ids
    conv = factory.conversation(world.org, world.owner)
    factory.message(conv, "Luego llamo a Olano")
    assert term.id in world.turn(question, conv=conv).memory_ids


@pytest.mark.parametrize("sentence, value, subject, question", [
    ("Talleres García paga a 60 días", "60 días", "name:talleres garcía", "¿Cuándo paga Talleres García?"),
    ("Garcia Motors pays at 60 days", "60 days", "name:garcia motors", "When does Garcia Motors pay?"),
])
def test_a_memory_the_message_is_about_is_shown_once_as_related_not_repeated_in_the_profile(world, sentence, value,
                                                                                            subject, question):
    fact = world.remember(sentence, attribute="plazo_pago", value=value, category="customer", subject=subject)
    block = world.turn(question)
    assert [i.block for i in block.items if i.memory_id == fact.id] == ["related"]
    assert value not in block.profile
    assert [i.block for i in world.turn("hola" if "García" in sentence else "hi").items
            if i.memory_id == fact.id] == ["profile"]


def test_related_needs_more_than_one_shared_common_word(world):
    _crowd_profile(world)
    fact = world.remember("Talleres García paga a 60 días", attribute="plazo_pago", value="60 días",
                          category="customer", subject="name:talleres garcía", confidence=0.1)
    assert fact.id not in world.turn("¿Cuántos días de vacaciones me quedan este año?").memory_ids
    block = world.turn("¿Cuándo nos paga Talleres García?", conv=world.f.conversation(world.org, world.owner))
    assert [i.block for i in block.items if i.memory_id == fact.id] == ["related"]
    assert "60 días" in block.related


def test_trivial_turns_skip_the_search(world):
    _crowd_profile(world)
    world.remember("Gracias a Laura cerramos el trato con Acme", attribute="trato_acme", value="cerrado",
                   confidence=0.1)
    for message in ("gracias", "ok", "sí, confírmalo", "Vale, perfecto!"):
        assert is_trivial(message)
        assert world.turn(message).related == ""
    assert not is_trivial("gracias, ¿y cuánto me debe Acme?")


def test_the_embedding_model_is_shown_a_turns_message_and_a_search_with_their_secrets_as_marks(world, monkeypatch):
    from memory_core.domain.models import PolicyExclusion
    from memory_core.reading.search import search

    world.remember("Talleres García paga a 60 días", attribute="plazo_pago", value="60 días", subject="contact:x")
    world.s.add(PolicyExclusion(org_id=world.org.id, kind="secret", name="proyecto_fenix", pattern=r"proyecto f(e|é)nix"))
    world.s.commit()
    shown = []
    real = world.e.embed
    monkeypatch.setattr(world.e, "embed", lambda texts: shown.extend(texts) or real(texts))
    message = "Cárgale a la 4111 1111 1111 1111 lo del proyecto Fénix y ¿a cuántos días paga Talleres García?"
    block = world.turn(message)
    access = load_access(world.s, world.org.id, user_id=world.owner.id)
    with world.db.unit_of_work(access.scope()) as uow:
        hits = search(uow.session, access, message, kinds=["memory"], embed=world.e.embed)
        without_conversation = assemble_context(uow.session, access, None, message, now=NOW, embed=world.e.embed)
    assert len(shown) == 3, shown  # the turn's query, the search's and the one of a turn without a conversation
    assert not any("4111" in t or "Fénix" in t for t in shown), shown
    assert all("[secret: card]" in t and "[secret: proyecto fenix]" in t for t in shown), shown
    assert "60 días" in block.related and "60 días" in without_conversation.related and hits  # the rest still counts


def test_a_turn_on_someone_elses_conversation_is_refused_and_leaves_no_search_waiting(world, factory):
    from memory_core.adapters import threads
    from memory_core.adapters.beside import THREADS

    world.remember("Talleres García paga a 60 días", attribute="plazo_pago", value="60 días", subject="contact:x")
    bea = factory.member(world.org)
    for _ in range(THREADS + 2):  # more refused turns than the threads their searches run on
        with pytest.raises(NotFound):
            world.turn("¿A cuántos días paga Talleres García?", user=bea, conv=world.conv)
    assert threads.pool("beside", THREADS).submit(lambda: "free").result(timeout=30) == "free"
    assert "60 días" in world.turn("¿A cuántos días paga Talleres García?").related


def test_related_memories_are_not_resent_within_two_turns(world):
    _crowd_profile(world)
    fact = world.remember("Talleres García paga a 60 días", attribute="plazo_pago", value="60 días",
                          category="customer", subject="name:talleres garcía", confidence=0.1)
    question = "¿Cuándo nos paga Talleres García?"
    blocks = [world.turn(question) for _ in range(4)]
    assert [fact.id in b.memory_ids for b in blocks] == [True, False, False, True]


def test_trace_stores_what_went_in_and_record_usage_marks_the_used_ones(world, database):
    _crowd_profile(world, n=3)
    world.me("nombre", "Pablo")
    block = world.turn("hola")
    access = load_access(world.s, world.org.id, user_id=world.owner.id)
    with database.unit_of_work(access.scope()) as uow:
        trace = uow.session.get(MemoryTrace, block.trace_id)
        assert trace.block_text == block.text and trace.tokens == block.tokens > 0
        assert trace.conversation_id == world.conv.id and trace.user_id == world.owner.id
        items = uow.session.scalars(select(TraceItem).where(TraceItem.trace_id == trace.id)
                                    .order_by(TraceItem.id)).all()
        assert [(i.memory_id, i.block, i.rank) for i in items] == \
            [(i.memory_id, i.block, i.rank) for i in block.items]
        assert all(i.chars > 0 for i in items) and not any(i.used for i in items)
        used = block.items[0].memory_id
        assert record_usage(uow.session, block.trace_id, [used]) == 1
        uow.commit()
    items = world.s.scalars(select(TraceItem).where(TraceItem.trace_id == block.trace_id)).all()
    assert {i.memory_id for i in items if i.used} == {used}


def test_a_trace_is_owned_like_its_conversation(world, factory, database):
    world.me("nombre", "Pablo")
    block = world.turn("hola")
    bea = factory.member(world.org)
    access = load_access(world.s, world.org.id, user_id=bea.id)
    with database.unit_of_work(access.scope()) as uow:
        assert uow.session.scalars(select(MemoryTrace)).all() == []
        assert uow.session.scalars(select(TraceItem)).all() == []
        with pytest.raises(NotFound):
            record_usage(uow.session, block.trace_id, block.memory_ids)
    owner = load_access(world.s, world.org.id, user_id=world.owner.id)
    with database.unit_of_work(owner.scope()) as uow:
        assert [t.id for t in uow.session.scalars(select(MemoryTrace))] == [block.trace_id]


def test_the_trace_is_stored_with_the_callers_rights_and_none_can_be_stored_for_someone_else(
        world, factory, database):
    """The trace and its items go in one function call (migration v4_trace_in_one_statement), run with the
    caller's rights: row security checks both rows as it checked the two inserts."""
    world.me("nombre", "Pablo")
    mine = world.turn("hola")
    bea = factory.member(world.org)
    store = text("select memoria_store_trace(:id, :org, :conv, null, :user, null, 'web', 'block', 1, now(), "
                 "cast(:ids as uuid[]), '{core}', '{1}', '{1.0}', '{5}')")
    as_bea = load_access(world.s, world.org.id, user_id=bea.id).scope()
    with database.unit_of_work(as_bea) as uow, pytest.raises(Exception, match="row-level security"):
        # Bea's scope, the owner's conversation and name: refused, the items with it.
        uow.session.execute(store, {"id": uuid.uuid4(), "org": world.org.id, "conv": world.conv.id,
                                    "user": world.owner.id, "ids": "{" + str(mine.memory_ids[0]) + "}"})
    owner = load_access(world.s, world.org.id, user_id=world.owner.id)
    with database.unit_of_work(owner.scope()) as uow:
        assert [t.id for t in uow.session.scalars(select(MemoryTrace))] == [mine.trace_id]
        assert {i.trace_id for i in uow.session.scalars(select(TraceItem))} == {mine.trace_id}


def test_temporary_conversation_reads_memory_but_stores_no_trace(world, factory, database):
    world.me("nombre", "Pablo")
    conv = factory.conversation(world.org, world.owner, temporary=True)
    block = world.turn("hola", conv=conv)
    assert "Pablo" in block.core and block.trace_id is None
    assert world.s.scalars(select(MemoryTrace)).all() == []


def test_memories_for_subjects_gives_the_best_few_of_each(world, factory, database):
    c = factory.contact(world.org)
    subject = f"contact:{c.id}"
    facts = [world.remember(f"Talleres dato {i}", attribute=f"dato_{i}", value=str(i), category="customer",
                            subject=subject, area="contacts", confidence=0.5 + i / 10) for i in range(5)]
    access = load_access(world.s, world.org.id, user_id=world.owner.id)
    with database.unit_of_work(access.scope()) as uow:
        got = memories_for_subjects(uow.session, access, [c.id], per_subject=3)
        assert [m.id for m in got[subject]] == [facts[4].id, facts[3].id, facts[2].id]


_SKELETON = re.compile(r"<<<.*?>>>")
_LINE_DATE = re.compile(r" \((?:dicho el )?\d{4}(?:-\d{2}){0,2}\)$")
# Any text a person can send: everything but NUL and lone surrogates (not valid UTF-8, refused at ingest).
_unsafe = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=120)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_unsafe, name=_unsafe)
def test_fenced_values_cannot_break_out_of_their_fence(world, factory, value, name):
    c = factory.contact(world.org, name=name or "x", tax_id=None)
    sentence = "dato recordado"
    factory.memory(world.org, level="shared", area="contacts", category="customer", subject=f"contact:{c.id}",
                   attribute="nota", value=value, sentence=sentence)
    factory.memory(None, level="personal", owner=world.owner, category="person", subject="self",
                   attribute="nombre", value=value, sentence=sentence)
    block = world.turn("hola").text
    for m in world.s.scalars(select(Memory)).all():
        world.s.delete(m)
    world.s.delete(c)
    world.s.commit()
    # The header names the markers once; then one fence per remembered value and one for the name.
    assert block.count("<<<") == block.count(">>>") == 4
    # Outside the fences, the block is exactly its skeleton: nothing leaked out of a fence.
    stripped = _SKELETON.sub("", block)
    assert "<<" not in stripped and ">>" not in stripped
    # A profile line ends with its date (when it was said, here), outside the fence.
    lines = [_LINE_DATE.sub("", line) for line in stripped.splitlines()]
    assert lines == _expected_skeleton().splitlines()


def _expected_skeleton() -> str:
    from memory_core.reading.fence import MEMORY_HEADER

    return _SKELETON.sub("", MEMORY_HEADER) + "\n\nSobre la persona:\n- Nombre: \n\nPerfil:\n-  (cliente): nota "


def test_deleting_a_memory_removes_it_from_every_trace_even_one_its_deleter_cannot_see(world, factory, database):
    shared = world.remember("Trabajamos con Iberluz para la luz", attribute="proveedor_luz", value="Iberluz")
    world.me("nombre", "Pablo")
    bea = factory.member(world.org, name="Bea")
    beas = world.turn("hola", user=bea)
    assert shared.id in beas.memory_ids
    # Pablo forgets the shared fact in his own scope: Bea's trace is not his to read, yet its item goes.
    pablo = load_access(world.s, world.org.id, user_id=world.owner.id)
    with database.unit_of_work(pablo.scope()) as uow:
        uow.session.execute(delete(Memory).where(Memory.id == shared.id))
        uow.commit()
    items = world.s.scalars(select(TraceItem.memory_id).where(TraceItem.trace_id == beas.trace_id)).all()
    assert shared.id not in items and len(items) == len(beas.items) - 1
