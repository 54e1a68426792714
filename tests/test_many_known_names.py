"""A writer who knows many names (an org's customers learnt without a contact): the extractor is shown the names
the message may be about, found by the words it shares with them, however many the writer knows (context_reads).
Before, it was shown an arbitrary 500 of them, read again for every message, and a model's prompt carried the
attributes of all 500."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from jobs.outbox import drain_batch
from memory_core.domain.access import load_access
from memory_core.domain.models import Memory
from memory_core.learning.contact_candidates import MAX_CONTACTS
from memory_core.learning.context_reads import KnownToWriters, context_reads
from memory_core.learning.ingest import ingest_message
from tests.support.fake_openai import fake_openai  # noqa: F401  (fixture)
from tests.test_openai_backend import make_backend

# Sorted before "hierros", "olano" or "zubiri": a list cut at 500 in name order never reaches the ones that matter.
MANY = 1_200


def _many_names(session, org, *more: str) -> None:
    session.add_all(Memory(org_id=org.id, level="shared", subject=f"name:cliente {i:04d} {word}",
                           attribute="plazo_pago", value=f"{30 + i % 4 * 15} días", sentence=f"Cliente {i} paga.",
                           category="customer", area="contacts")
                    for i in range(MANY) for word in ("alfa" if i % 2 else "beta",))
    session.add_all(Memory(org_id=org.id, level="shared", subject=f"name:{name}", attribute=attribute,
                           value="30 días", sentence=f"{name}: {attribute}.", category="customer", area="contacts")
                    for name in more for attribute in ("plazo_pago", "persona_contacto"))
    session.commit()


def say(session, org, user, text, conversation):
    ingest_message(session, channel="web", conversation=conversation, external_id=f"{conversation}-{text}",
                   org_id=org.id, user_id=user.id, phone=None, role="user", text=text)
    session.commit()


def test_the_names_a_message_shares_a_word_with_are_shown_every_one_and_only_those(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    marta = factory.member(org, role="member", permissions={"general": "read"})  # may not read customers
    _many_names(system_session, org, "hierros olano", "olano sport", "zubiri ferralla")
    factory.memory(org, level="private", owner=marta, subject="name:olano privado", attribute="nota", value="x",
                   category="customer")
    access = load_access(system_session, org.id, user_id=ana.id)
    known = KnownToWriters()

    def read(text, who=access):
        return context_reads(system_session, who, ["self"], None, known=known, mentioned_in=text)

    names, _, attributes = read("Olano ahora nos paga a 45 días")
    assert names == ("hierros olano", "olano sport")  # not Marta's private one
    assert attributes == {f"name:{n}": ("persona_contacto", "plazo_pago") for n in names}
    assert read("Zubiri Ferralla cambió de contacto")[0] == ("zubiri ferralla",)
    # A word many names share: the whole name first, at most MAX_CONTACTS of the others.
    named = read("cliente 1199 alfa")[0]
    assert "cliente 1199 alfa" in named and len(named) == MAX_CONTACTS
    assert read("Buenos días, ¿qué tal?") == ((), (), {})
    # The same whether or not the batch's cache already knew the writer.
    assert read("Olano ahora nos paga a 45 días") == context_reads(
        system_session, access, ["self"], None, mentioned_in="Olano ahora nos paga a 45 días")
    # Marta may read neither the org's customers nor Ana's notes: nothing of them, from the same cache.
    assert read("Olano ahora nos paga a 45 días", load_access(system_session, org.id, user_id=marta.id))[0] == (
        "olano privado",)


def test_a_partial_name_is_resolved_to_the_one_the_writer_knows_among_many(
        factory, system_session, database, servers):
    from memory_core.backends import get_backend

    org = factory.org()
    ana = factory.member(org, role="owner")
    _many_names(system_session, org, "hierros olano", "zubiri ferralla")
    say(system_session, org, ana, "Olano ahora nos paga a 45 días", "c1")
    say(system_session, org, ana, "Ferralla ahora nos paga a 90 días", "c2")

    assert drain_batch(database, get_backend(servers)) == {"done": 2, "failed": 0, "skipped": 0}

    live = {(m.subject, m.value) for m in system_session.scalars(
        select(Memory).where(Memory.org_id == org.id, Memory.status == "active", Memory.attribute == "plazo_pago",
                             ~Memory.subject.like("name:cliente%")))}
    assert live == {("name:hierros olano", "45 días"), ("name:zubiri ferralla", "90 días")}


@pytest.fixture
def openai(fake_openai):  # noqa: F811
    backend = make_backend(fake_openai)
    yield fake_openai, backend
    backend.close()


def test_a_models_prompt_holds_the_names_the_message_shares_a_word_with_not_all_the_writer_knows(
        factory, system_session, database, openai):
    fake, backend = openai
    org = factory.org()
    ana = factory.member(org, role="owner")
    _many_names(system_session, org, "hierros olano")
    text = "Olano ahora nos paga a 45 días"
    fake.script_gate(text, 0.93, category="customer", scope="shared", corrects=0.6)
    fake.script_facts(text, [{"subject": "name:olano", "attribute": "plazo_pago", "value": "45 días",
                              "sentence": "Hierros Olano paga a 45 días.", "category": "customer"}])
    say(system_session, org, ana, text, "c1")

    assert drain_batch(database, backend)["done"] == 1

    [extraction] = [r for r in fake.requests_to("/chat/completions") if "response_format" in r.body]
    sent = json.loads(extraction.body["messages"][-1]["content"])
    assert sent["atributos_conocidos"] == {"name:hierros olano": ["persona_contacto", "plazo_pago"]}
    # The model named "Olano"; the one name the writer knows holding that word is the subject learnt.
    assert system_session.scalars(select(Memory.subject).where(
        Memory.org_id == org.id, Memory.value == "45 días", Memory.status == "active",
        ~Memory.subject.like("name:cliente%"))).all() == ["name:hierros olano"]


def test_a_writers_names_and_attributes_are_read_through_indexes_not_the_whole_org(
        factory, system_session, database, owner_engine):
    """Under row security: the names by their keys' index (migration v7_name_keys_index), those holding a pair of
    the message's words and a few a word, and the attributes by subject; never the org's whole range of rows (which
    grows with the org, whatever the message)."""
    from sqlalchemy import text

    from tests.support.statements import generic_plan_by_index, sent_statements

    org = factory.org()
    ana = factory.member(org, role="owner")
    _many_names(system_session, org, "hierros olano")
    with owner_engine.begin() as connection:
        connection.execute(text("analyze memories"))  # as autovacuum would: the plan is for the org's real size
    access = load_access(system_session, org.id, user_id=ana.id)
    with sent_statements(database.system_engine, lambda s: "named" in s) as sent:
        context_reads(system_session, access, ["self", "org"], None, mentioned_in="Olano paga a 45 días")
    [(statement, _)] = sent
    system_session.close()
    plan = generic_plan_by_index(database, statement)
    assert plan.count("Index Cond: (memoria_name_keys((subject)::text) && ") >= 2, plan
    assert "ix_memories_org_subject" in plan and "subject)::text = ANY" in plan, plan


def test_a_models_prompt_holds_of_a_persons_many_notes_those_the_message_names_and_the_families(
        factory, system_session, database, openai):
    """A person's own notes can run to thousands of attribute names: the prompt shows those sharing a word with the
    message and the families among them, not every one (it grew with everything the person ever told)."""
    from memory_core.backends.openai_backend import ATTRIBUTES_SHOWN

    fake, backend = openai
    org = factory.org()
    ana = factory.member(org, role="owner")
    own = [f"nota_{i:04d}" for i in range(500)] + ["restaurante_favorito", "mascota", "vivienda"]
    system_session.add_all(Memory(level="personal", owner_user_id=ana.id, subject="self", attribute=attribute,
                                  value="x", sentence=f"{attribute}: x.", category="person", area="general")
                           for attribute in own)
    system_session.commit()
    text = "Mis restaurantes favoritos ahora son Casa Pepe y El Faro"
    fake.script_gate(text, 0.93, category="preference", scope="personal", corrects=0.6)
    fake.script_facts(text, [{"subject": "self", "attribute": "restaurante_favorito", "value": "Casa Pepe y El Faro",
                              "sentence": "Sus restaurantes favoritos son Casa Pepe y El Faro.",
                              "category": "preference"}])
    say(system_session, org, ana, text, "c1")

    assert drain_batch(database, backend)["done"] == 1

    [extraction] = [r for r in fake.requests_to("/chat/completions") if "response_format" in r.body]
    shown = json.loads(extraction.body["messages"][-1]["content"])["atributos_conocidos"]["self"]
    assert shown == ["mascota", "restaurante_favorito", "vivienda"]
    assert len(shown) <= ATTRIBUTES_SHOWN < len(own)


def test_a_subjects_few_attribute_names_are_all_shown_and_many_are_cut_to_the_limit():
    from memory_core.backends.openai_backend import ATTRIBUTES_SHOWN, shown_attributes

    few = ("aficiones", "nota_viaje")
    assert shown_attributes(few, "hola") == list(few)
    many = tuple(f"pago_{i:03d}" for i in range(200)) + ("dieta",)
    shown = shown_attributes(many, "te pagos")  # every pago_* shares "pago" with "pagos"
    assert len(shown) == ATTRIBUTES_SHOWN and "dieta" not in shown
    assert shown_attributes(many, "Sigo la dieta") == ["dieta"]


def test_a_name_sharing_two_words_is_shown_among_hundreds_sharing_one_that_sort_before_it(factory, system_session):
    """Names read in name order were cut at 200: among 300 "talleres aaa …", "talleres zubia hermanos" (which
    "Talleres Zubia" means) was never read. They are now ranked as contacts are, the rarer shared words first."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    system_session.add_all(Memory(org_id=org.id, level="shared", subject=subject, attribute="plazo_pago",
                                  value="30 días", sentence="Paga a 30 días.", category="customer", area="contacts")
                           for subject in [*(f"name:talleres aaa {i:03d}" for i in range(300)),
                                           "name:talleres zubia hermanos"])
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)

    names, _, attributes = context_reads(system_session, access, ["self"], None,
                                         mentioned_in="Talleres Zubia nos paga ahora a 45 días")

    assert "talleres zubia hermanos" in names
    assert attributes["name:talleres zubia hermanos"] == ("plazo_pago",)
    assert len(names) == MAX_CONTACTS


def test_a_names_keys_are_those_a_message_mentioning_it_asks_for(system_session):
    """The index's keys (migration v7_name_keys_index, in SQL) and a message's (context_reads, in Python) must
    agree: words, pairs of significant words (company words left out), and a name of one significant word."""
    from sqlalchemy import text

    from memory_core.learning.context_reads import _message_words
    from memory_core.learning.subjects import NAME_NOISE
    from tests.support.migrations import migration

    def keys(subject):
        return set(system_session.execute(text("select public.memoria_name_keys(:s)"), {"s": subject}).scalar_one())

    def asked(message):
        return set(_message_words(message)["name_pairs"])

    assert keys("name:talleres garcia hermanos") == {
        "talleres", "garcia", "hermanos", "garcia+talleres", "garcia+hermanos", "hermanos+talleres"}
    assert {"garcia+talleres", "hermanos+talleres"} <= asked("¿Y lo de García, de Talleres Hermanos?")
    assert keys("name:olano sl") == {"olano", "sl", "=olano"} and "=olano" in asked("Olano paga a 45 días")
    assert keys("name:talleres hijos de zubia") & asked("Talleres Zubia llamó") == {"talleres+zubia"}
    # Words far apart in a long message make no pair: a name is mentioned by words close together.
    assert "garcia+talleres" not in asked("Talleres: mañana llevo las cajas y luego lo de García")

    assert set(migration("v7_name_keys_index").NOISE) == {w for w in NAME_NOISE if len(w) > 2}
