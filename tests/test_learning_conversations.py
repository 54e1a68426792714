"""Issue #13's sentences end to end, in Spanish and English: a user's message is ingested, the worker's unit
learns from it with the local backend, and the test reads the memories (and, through the API, the block)
the way a person would check them."""
from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from sqlalchemy import select

from jobs.outbox import drain_outbox
from memory_core.domain.model_port import ExtractionContext, KnownContact
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message
from memory_core.tenancy.api_keys import create_api_key
from tests.support.fake_openai import fake_openai  # noqa: F401  (fixture)

SENT = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.timezone.utc)  # a Monday


@pytest.fixture
def ana(factory):
    org = factory.org()
    return org, factory.member(org, role="owner")


def tell(session, backend, who, *texts, conversation="chat-1", sent_at=SENT):
    """Each text as one user message of the conversation, processed by the worker's unit in order."""
    org, user = who
    outcomes = []
    for i, text in enumerate(texts):
        r = ingest_message(session, channel="web", conversation=conversation, external_id=f"m-{uuid.uuid4()}",
                           org_id=org.id, user_id=user.id, phone=None, role="user", text=text,
                           sent_at=sent_at + dt.timedelta(minutes=i))
        session.commit()
        outcomes.append(process_message(session, r.message_id, backend).outcome)
        session.commit()
    return outcomes


def active(session, org):
    """(subject, attribute, value, level) of every active memory of the org and of its members."""
    rows = session.scalars(select(Memory).where(Memory.status == "active",
                                                (Memory.org_id == org.id) | Memory.org_id.is_(None)))
    return {(m.subject, m.attribute, m.value, m.level) for m in rows}


def values(session, org, family):
    return sorted(v for _, a, v, _ in active(session, org) if a.startswith(family))


def superseded(session, org):
    return {(m.attribute, m.value) for m in session.scalars(select(Memory).where(
        Memory.status == "superseded", (Memory.org_id == org.id) | Memory.org_id.is_(None)))}


# --- pleasantries, vocatives and discourse markers ------------------------------------------------

@pytest.mark.parametrize("fact, thanks", [
    ("Wrapping up the business plan and looking for investors", "I'm using it to stay organized"),
    ("Estoy cerrando el plan de negocio y buscando inversores", "Lo uso para organizarme"),
    ("Being a mom is awesome, honestly the best thing in my life", "Thanks so much, Melanie!"),
    ("Ser madre es lo mejor que me ha pasado en la vida", "¡Muchas gracias, Marta!")])
def test_a_later_unrelated_sentence_never_replaces_what_was_learnt(factory, system_session, backend, ana, fact,
                                                                  thanks):
    tell(system_session, backend, ana, fact, thanks)
    assert superseded(system_session, ana[0]) == set()
    assert any(fact.split(" ")[1] in v for _, _, v, _ in active(system_session, ana[0]))


@pytest.mark.parametrize("text", ["Thanks, Mel! We went camping with the kids last weekend",
                                  "Wow, I finally finished my first marathon",
                                  "¡Gracias, Lucía! El finde pasado nos fuimos de acampada con los críos",
                                  "Vaya, por fin he terminado mi primera maratón"])
def test_thanks_wow_and_a_vocative_are_never_a_subject(factory, system_session, backend, ana, text):
    tell(system_session, backend, ana, text)
    learnt = active(system_session, ana[0])
    assert learnt and {s for s, *_ in learnt} == {"self"}
    assert not any(v.lower().startswith(("thanks", "wow", "gracias", "vaya", "¡")) for _, _, v, _ in learnt)


@pytest.mark.parametrize("text, word", [
    ("Wow, thanks! We just got back from a cooking class with the kids", "cooking class"),
    ("¡Qué guay, gracias! Acabamos de volver de una clase de cocina con los niños", "clase de cocina"),
    ("Being a mum is the best thing that has happened to me", "mum"),
    ("Ser madre es lo mejor que me ha pasado", "madre")])
def test_a_reaction_then_a_fact_of_the_writers_life_is_learnt(factory, system_session, backend, ana, text, word):
    tell(system_session, backend, ana, text)
    learnt = active(system_session, ana[0])
    assert any(s == "self" and word in v.lower() for s, _, v, _ in learnt), learnt


@pytest.mark.parametrize("text", [
    "Thanks, Mel! I'm right here to cheer you on, never give up!",
    "¡Gracias, Lucía! Aquí estoy para animarte, ¡no te rindas nunca!",
    "Your kind words mean so much to me. You're doing an amazing job with those kids.",
    "Tus palabras tan bonitas significan mucho para mí. Lo estás haciendo genial con los niños."])
def test_encouragement_aimed_at_the_other_person_teaches_nothing(factory, system_session, backend, ana, text):
    assert tell(system_session, backend, ana, text) == ["ignored"]
    assert active(system_session, ana[0]) == set()


@pytest.mark.parametrize("first, text", [
    ("Tenemos un cliente nuevo, Hierros Olano", "Bueno, nos pagan a 30 días"),
    ("We've got a new customer, Baxter Logistics", "Anyway, they pay at 30 days")])
def test_a_discourse_marker_at_the_start_is_not_a_new_customer(factory, system_session, backend, ana, first, text):
    tell(system_session, backend, ana, first, text)
    subjects = {s for s, a, *_ in active(system_session, ana[0]) if a == "plazo_pago"}
    assert len(subjects) == 1 and subjects.pop() in ("name:hierros olano", "name:baxter logistics")


@pytest.mark.parametrize("text", ["Do you have a dog named Max?", "¿Tienes un perro que se llama Max?",
                                  "What are Talleres García's payment terms?", "¿A cuántos días nos paga Talleres García?"])
def test_a_question_the_person_asks_is_never_stored_as_a_fact(factory, system_session, backend, ana, text):
    factory.contact(ana[0], "Talleres García S.L.")
    assert tell(system_session, backend, ana, text) == ["ignored"]
    assert active(system_session, ana[0]) == set()


# --- the person's own life ------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Lost my job as a banker... starting my own business", {"banker", "own business"}),
    ("Perdí mi trabajo de banquero... estoy montando mi propio negocio", {"banquero", "negocio propio"})])
def test_losing_a_job_and_starting_a_business_are_the_writers_job_facts(factory, system_session, backend, ana,
                                                                         text, expected):
    tell(system_session, backend, ana, text)
    learnt = active(system_session, ana[0])
    assert expected <= {v for s, a, v, level in learnt if s == "self" and a.startswith("trabajo")}
    assert {level for *_, level in learnt} == {"personal"}


@pytest.mark.parametrize("text, employer", [("I work at Mercadona as a cashier", "Mercadona"),
                                            ("Trabajo en Mercadona de cajera", "Mercadona")])
def test_the_writers_employer_is_their_own_fact_not_a_customer(factory, system_session, backend, ana, text, employer):
    tell(system_session, backend, ana, text)
    learnt = active(system_session, ana[0])
    assert any(s == "self" and employer in v for s, _, v, _ in learnt), learnt
    assert not any(s.startswith("name:") for s, *_ in learnt)


@pytest.mark.parametrize("diet, pet, expected", [
    ("I'm vegetarian, by the way", "My dog's name is Max", {"vegetarian", "dog Max"}),
    ("Soy vegetariana desde hace años", "Mi perro se llama Max", {"vegetariana", "perro Max"})])
def test_a_diet_and_a_pets_name_are_learnt(factory, system_session, backend, ana, diet, pet, expected):
    tell(system_session, backend, ana, diet, pet)
    assert expected <= {v for s, a, v, level in active(system_session, ana[0]) if s == "self" and level == "personal"}


@pytest.mark.parametrize("text, day", [("I'm flying to Japan on April 15th", dt.date(2026, 4, 15)),
                                       ("Me voy a Japón el 15 de abril", dt.date(2026, 4, 15))])
def test_a_plan_keeps_its_date(factory, system_session, backend, ana, text, day):
    tell(system_session, backend, ana, text)
    [event] = system_session.scalars(select(Memory).where(Memory.status == "active", Memory.category == "event"))
    assert event.subject == "self" and event.event_date == day and "Jap" in event.value


@pytest.mark.parametrize("text", ["háblame de tú", "Please be informal with me"])
def test_asking_to_be_spoken_to_informally_sets_the_tone(factory, system_session, backend, ana, text):
    assert tell(system_session, backend, ana, text) == ["learnt"]
    assert ("self", "tono", "tú", "personal") in active(system_session, ana[0])


# --- values normalised where the family knows its type ---------------------------------------------

GARCIA = KnownContact("c1", "Talleres García S.L.", "customer")


@pytest.mark.parametrize("text, attribute, value", [
    ("Talleres García nos paga a sesenta días", "plazo_pago", "60 días"),
    ("Talleres García pays us at sixty days", "plazo_pago", "60 días"),
    ("Talleres García entrega los martes", "dia_entrega", "martes"),
    ("Talleres García delivers on Tuesdays", "dia_entrega", "Tuesday"),
    ("Talleres García nos debe 1.200 euros", "deuda", "1.200 €"),
    ("Talleres García owes us €1,200", "deuda", "1.200 €"),
    ("El pedido mínimo de Talleres García es de 300 euros", "pedido_minimo", "300 €"),
    ("Talleres García's minimum order is 250.50 euros", "pedido_minimo", "250,50 €"),
    ("Talleres García prefiere que le escribamos por WhatsApp", "canal_preferido", "WhatsApp"),
    ("Talleres García prefers WhatsApp", "canal_preferido", "WhatsApp"),
    ("Talleres García nos hace un 5% de descuento", "descuento", "5%"),
    ("Talleres García gives us 5% off", "descuento", "5%"),
    ("El contacto en Talleres García es Marisa", "persona_contacto", "Marisa"),
    ("Our contact at Talleres García is Marisa", "persona_contacto", "Marisa"),
])
def test_a_value_of_a_typed_family_is_normalised(backend, text, attribute, value):
    decision, _ = backend.decide(text, None)
    facts = backend.extract(ExtractionContext(message=text, contacts=(GARCIA,), today=SENT.date(),
                                              gate_category=decision.top_category, gate_scope=decision.top_scope))[0]
    assert decision.passes and [(f.subject, f.attribute, f.value) for f in facts] == [("contact:c1", attribute, value)]


@pytest.mark.parametrize("text, day, value", [("La inspección es el 15 de abril", dt.date(2026, 4, 15), "inspección"),
                                              ("The inspection is on April 15th", dt.date(2026, 4, 15), "inspection")])
def test_a_dated_event_keeps_its_date_and_only_what_happens(backend, text, day, value):
    [fact] = backend.extract(ExtractionContext(message=text, today=SENT.date(), gate_category="event"))[0]
    assert (fact.event_date, fact.value) == (day, value)


# --- the business and its customers ---------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("5% de rebaja si paga al contado", "5% si paga al contado"),
                                         ("5% off if they pay cash", "5% if they pay cash")])
def test_a_discount_for_paying_cash_is_learnt(factory, system_session, backend, ana, text, value):
    assert tell(system_session, backend, ana, text) == ["learnt"]
    assert values(system_session, ana[0], "descuento") == [value]


@pytest.mark.parametrize("first, second, person", [
    ("Ramón lleva las cuentas", "ahora las lleva Lucía Sanchis", "Lucía Sanchis"),
    ("Ramón keeps our books", "Now Lucy Sanchis handles the books", "Lucy Sanchis")])
def test_who_keeps_the_books_changes_and_only_the_new_person_stays(factory, system_session, backend, ana, first,
                                                                   second, person):
    tell(system_session, backend, ana, first, second)
    assert values(system_session, ana[0], "persona_contacto") == [person]
    assert ("persona_contacto", "Ramón") in superseded(system_session, ana[0])


@pytest.mark.parametrize("first, second", [
    ("El contacto en Talleres García es Marisa", "El contacto en Talleres García ahora es Pilar Ruiz, ya no Marisa"),
    ("Our contact at Talleres García is Marisa", "The contact at Talleres García is now Pilar Ruiz")])
def test_a_customers_new_contact_person_replaces_the_old_one(factory, system_session, backend, ana, first, second):
    garcia = factory.contact(ana[0], "Talleres García S.L.")
    tell(system_session, backend, ana, first, second)
    assert {(s, v) for s, a, v, _ in active(system_session, ana[0]) if a == "persona_contacto"} == {
        (f"contact:{garcia.id}", "Pilar Ruiz")}


@pytest.mark.parametrize("first, second, new", [
    ("Talleres García nos hace un 5% de descuento", "Hemos renegociado: Talleres García ahora nos hace un 8%", "8%"),
    ("Talleres García gives us a 5% discount", "We renegotiated: Talleres García now gives us 8% off", "8%")])
def test_a_renegotiated_discount_replaces_the_old_one(factory, system_session, backend, ana, first, second, new):
    factory.contact(ana[0], "Talleres García S.L.")
    tell(system_session, backend, ana, first, second)
    discounts = values(system_session, ana[0], "descuento")
    assert len(discounts) == 1 and discounts[0].startswith(new), discounts


@pytest.mark.parametrize("first, second, street", [
    ("Nuestra dirección es Calle Mayor 5, Valencia", "Nos hemos cambiado de oficina: ahora estamos en Calle Colón 12, "
     "Valencia", "Colón 12"),
    ("Our address is 5 High Street, Leeds", "We've moved offices, our address is now 12 Park Road, Leeds",
     "12 Park Road")])
def test_a_changed_address_replaces_the_old_one(factory, system_session, backend, ana, first, second, street):
    tell(system_session, backend, ana, first, second)
    addresses = values(system_session, ana[0], "direccion")
    assert len(addresses) == 1 and street in addresses[0], addresses


@pytest.mark.parametrize("first, second", [("Acme pays at 30 days", "Talleres García paga a 60 días"),
                                           ("Acme paga a 30 días", "Talleres García pays at 60 days")])
def test_one_customers_term_is_not_replaced_by_another_customers_in_another_language(factory, system_session,
                                                                                     backend, ana, first, second):
    garcia = factory.contact(ana[0], "Talleres García S.L.")
    tell(system_session, backend, ana, first, second)
    terms = {(s, v) for s, a, v, _ in active(system_session, ana[0]) if a == "plazo_pago"}
    assert terms == {("name:acme", "30 días"), (f"contact:{garcia.id}", "60 días")}


@pytest.mark.parametrize("new, later", [("Tenemos un cliente nuevo, Hierros Olano", "Nos pagan a treinta días"),
                                        ("We've got a new customer, Baxter Logistics", "And they pay at 30 days")])
def test_the_customer_just_introduced_is_not_carried_into_another_conversation(factory, system_session, backend,
                                                                               ana, new, later):
    tell(system_session, backend, ana, new)
    tell(system_session, backend, ana, later, conversation="chat-2")
    assert not any(s.startswith("name:") and a == "plazo_pago" for s, a, *_ in active(system_session, ana[0]))


@pytest.mark.parametrize("new, later", [("Tenemos un cliente nuevo, Hierros Olano", "Nos pagan a treinta días"),
                                        ("We've got a new customer, Baxter Logistics", "And they pay at 30 days")])
def test_imported_history_carries_the_customer_over_only_within_half_an_hour_of_send_time(
        factory, system_session, backend, ana, new, later):
    tell(system_session, backend, ana, new, sent_at=SENT - dt.timedelta(days=2))  # processed now, sent days ago
    tell(system_session, backend, ana, later)
    assert not any(s.startswith("name:") and a == "plazo_pago" for s, a, *_ in active(system_session, ana[0]))
    tell(system_session, backend, ana, later, sent_at=SENT - dt.timedelta(days=2, minutes=-10))
    assert any(s.startswith("name:") and a == "plazo_pago" for s, a, *_ in active(system_session, ana[0]))


@pytest.mark.parametrize("text", ["We're closed on Saturdays", "Los sábados cerramos"])
def test_we_about_the_business_is_a_shared_fact_of_the_business(factory, system_session, backend, ana, text):
    tell(system_session, backend, ana, text)
    assert {(s, level) for s, _, _, level in active(system_session, ana[0])} == {("org", "shared")}


# --- through the API: ingest, the worker, the block; and /remember ----------------------------------

def _api(client, key, path, body):
    return client.post("/api/v1" + path, data=json.dumps(body), content_type="application/json",
                       headers={"Authorization": f"Bearer {key}"})


@pytest.mark.parametrize("first, correction, question, old", [
    ("Hierros Olano nos paga a 30 días", "Corrijo: Olano nos paga a 60 días", "¿A cuántos días paga Olano?",
     "30 días"),
    # An English block says the term in English.
    ("Baxter Logistics pays us at 30 days", "Correction: Baxter pays at 60 days", "When does Baxter pay?",
     "30 days")])
def test_through_the_api_a_correction_naming_a_business_in_part_reaches_the_block_alone(
        client, factory, system_session, first, correction, question, old):
    org = factory.org()
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    conv = None
    for i, text in enumerate((first, correction)):
        r = _api(client, key, "/messages", {"channel": "web", "conversation": "chat-1", "external_id": f"m-{i}",
                                            "user_id": str(ana.id), "role": "user", "text": text,
                                            "sent_at": (SENT + dt.timedelta(minutes=i)).isoformat()})
        assert r.status_code == 200, r.get_data(as_text=True)
        conv = r.get_json()["conversation_id"]
        drain_outbox()
    subjects = {m.subject for m in system_session.scalars(select(Memory))}
    assert len(subjects) == 1
    block = _api(client, key, "/context", {"user_id": str(ana.id), "message": question, "conversation_id": conv})
    text = block.get_json()["text"]
    new = old.replace("30", "60")
    assert new in text and old not in text.replace(new, "")


@pytest.mark.parametrize("text", ["Recuerda que Farmacia Levante nos paga a 45 días",
                                  "Remember that Levante Pharmacy pays us at 45 days"])
def test_remember_never_files_a_business_under_a_contact_that_shares_a_word(client, factory, system_session, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    levante = factory.contact(org, "Construcciones Levante S.L.", tax_id="B46999999")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    r = _api(client, key, "/remember", {"user_id": str(ana.id), "text": text})
    assert r.status_code == 200 and r.get_json()["outcome"] == "learnt", r.get_data(as_text=True)
    subjects = {m.subject for m in system_session.scalars(select(Memory).where(Memory.status == "active"))}
    assert subjects and f"contact:{levante.id}" not in subjects


# --- the OpenAI backend follows the same rules (its HTTP fake answers as a model would) ---------------

@pytest.fixture
def openai_backend(fake_openai):  # noqa: F811
    from memory_core.backends.openai_backend import OpenAIBackend

    b = OpenAIBackend(api_key="sk-test", base_url=fake_openai.base_url, gate_model="gpt-4.1-mini",
                      extract_model="gpt-4o-mini", embed_model="text-embedding-3-small", timeout=2.0, max_retries=2)
    yield b
    b.close()


@pytest.mark.parametrize("first, second, person", [
    ("Ramón lleva las cuentas", "Ahora las lleva Lucía Sanchis", "Lucía Sanchis"),
    ("Ramón keeps our books", "Now Lucy Sanchis handles the books", "Lucy Sanchis")])
def test_with_the_openai_backend_a_correction_replaces_the_contact_person_and_thanks_replace_nothing(
        factory, system_session, fake_openai, openai_backend, ana, first, second, person):  # noqa: F811
    thanks = "Thanks so much, Melanie!" if first.endswith("books") else "¡Muchas gracias, Marta!"
    fake_openai.script_gate(first, 0.95, category="company", scope="shared")
    fake_openai.script_facts(first, [{"subject": "org", "attribute": "persona_contacto", "value": "Ramón",
                                      "sentence": first + ".", "category": "company"}])
    fake_openai.script_gate(second, 0.95, category="company", scope="shared", corrects=0.9)
    fake_openai.script_facts(second, [{"subject": "org", "attribute": "contacto", "value": person,
                                       "sentence": second + ".", "category": "company", "corrects": True}])
    fake_openai.script_gate(thanks, 0.05)
    assert tell(system_session, openai_backend, ana, first, second, thanks) == ["learnt", "learnt", "ignored"]
    assert values(system_session, ana[0], "persona_contacto") == [person]
    assert superseded(system_session, ana[0]) == {("persona_contacto", "Ramón")}


@pytest.mark.parametrize("text, word", [("Thanks, Mel! We went camping with the kids last weekend", "thanks"),
                                        ("¡Vaya, Lucía! El finde fuimos de acampada con los críos", "vaya")])
def test_with_the_openai_backend_a_thanks_or_a_reaction_is_never_a_subject(
        factory, system_session, fake_openai, openai_backend, ana, text, word):  # noqa: F811
    fake_openai.script_gate(text, 0.9, category="person", scope="personal")
    fake_openai.script_facts(text, [
        {"subject": f"name:{word}", "attribute": "nota", "value": word, "sentence": f"{word}.", "category": "person"},
        {"subject": "self", "attribute": "aficiones", "value": "camping", "sentence": "Went camping with the kids.",
         "category": "person"}])
    tell(system_session, openai_backend, ana, text)
    assert {s for s, *_ in active(system_session, ana[0])} == {"self"}


def test_with_the_openai_backend_the_extractor_reads_the_writer_s_message_before_unless_it_holds_a_secret(
        factory, system_session, fake_openai, openai_backend, ana):  # noqa: F811
    org, user = ana
    asked, reply = "Apunta el teléfono de Hierros Olano", "es el 600 112 233"
    secret = "La contraseña del wifi del almacén es Almacen2024"
    fake_openai.script_gate(reply, 0.95, category="customer", scope="shared")
    fake_openai.script_facts(reply, [{"subject": "name:Hierros Olano", "attribute": "telefono", "value": "600112233",
                                      "sentence": "El teléfono de Hierros Olano es 600112233.",
                                      "category": "customer"}])
    sent = {}
    for conversation, before in (("chat-a", asked), ("chat-b", secret)):
        tell(system_session, openai_backend, ana, before, conversation=conversation)
        ingest_message(system_session, channel="web", conversation=conversation, external_id=f"a-{conversation}",
                       org_id=org.id, user_id=user.id, phone=None, role="assistant", text="¿Me das el número?",
                       sent_at=SENT + dt.timedelta(minutes=1))
        tell(system_session, openai_backend, ana, reply, conversation=conversation,
             sent_at=SENT + dt.timedelta(minutes=2))
        payloads = [json.loads(r.body["messages"][1]["content"]) for r in fake_openai.requests_to("/chat/completions")
                    if "mensaje_anterior_de_la_persona" in r.body["messages"][1]["content"]]
        sent[conversation] = [p["mensaje_anterior_de_la_persona"] for p in payloads if p["mensaje"] == reply][-1]
    assert sent == {"chat-a": asked, "chat-b": None}
    assert "Almacen2024" not in json.dumps([r.body for r in fake_openai.requests_to("/chat/completions")])
