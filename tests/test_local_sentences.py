"""Sentence-level learning with the local backend (gate and extractor), on the sentences of issue #13.

Each test reads a user's message the way the worker does (the gate first, then the extractor when it
passes) and checks what a person would: what was learnt, about whom, under which attribute and value.
"""
from __future__ import annotations

import datetime as dt

import pytest

from memory_core.backends.local_extractor import fold, normalise_name
from memory_core.backends.local_extractor.units import units
from memory_core.domain.model_port import ExtractionContext, KnownContact

MONDAY = dt.date(2026, 3, 2)
LEVANTE = KnownContact("c9", "Construcciones Levante S.L.", "customer")
GARCIA = KnownContact("c1", "Talleres García S.L.", "customer")


def learn(backend, text, contacts=(), known_names=(), recent=(), known=None):
    """What the worker would learn from one message: [] when the gate does not pass it or policy refuses."""
    decision, _ = backend.decide(text, None)
    if not decision.passes or decision.special >= 0.5 or decision.insult >= 0.5:
        return []
    context = ExtractionContext(message=text, contacts=tuple(contacts), known_attributes=known or {},
                                today=MONDAY, gate_category=decision.top_category, gate_scope=decision.top_scope,
                                known_names=tuple(known_names), recent_subjects=tuple(recent))
    return backend.extract(context)[0]


def triples(facts):
    return {(f.subject, f.attribute, f.value) for f in facts}


# --- pleasantries ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Thanks, Mel!", "Hey Jon!", "Yep!", "Thanks so much, Melanie!", "Wow", "lol",
                                  "¡Gracias, Lucía!", "¡Hola Pedro!", "Vale, perfecto", "jajaja qué bueno",
                                  "Hey Gina, thanks for being there for me and believing in me.",
                                  "Hola Lucía, gracias por estar siempre ahí y creer en mí.",
                                  "Hey John, I'm good.", "Hola Pedro, estoy bien, gracias.",
                                  "Yeah, I love to.", "Sí, me encantaría."])
def test_pleasantries_teach_nothing(backend, text):
    assert learn(backend, text) == []


def test_a_pleasantry_around_a_fact_is_cut_from_it(backend):
    [fact] = [f for f in learn(backend, "Thanks, Melanie! I just adopted a puppy named Max.")
              if f.attribute.startswith("mascota")]
    assert (fact.subject, fact.value) == ("self", "dog Max")
    [fact] = [f for f in learn(backend, "¡Gracias, Lucía! Tengo un perro que se llama Max.")
              if f.attribute.startswith("mascota")]
    assert (fact.subject, fact.value) == ("self", "perro Max")


def test_greetings_thanks_and_discourse_markers_are_never_a_subject(backend):
    for text in ("Thanks, Mel! We went camping with the kids last weekend", "Wow, I finally finished my first marathon",
                 "Bueno, Talleres García paga a 60 días", "Anyway, Talleres García pays at 60 days",
                 "Por cierto, nos hemos comprado una furgoneta nueva"):
        subjects = {f.subject for f in learn(backend, text, contacts=(GARCIA,))}
        assert not {s for s in subjects if s.startswith("name:")}, (text, subjects)


def test_a_discourse_marker_is_not_a_new_customer(backend):
    for text in ("Bueno, nos pagan a 30 días", "Anyway, they pay at 30 days"):
        assert not any(f.subject.startswith("name:") for f in learn(backend, text)), text


# --- subjects -------------------------------------------------------------------------------------

def test_a_pup_and_a_kitty_are_the_writers_not_the_business(backend):
    assert triples(learn(backend, "I have a pup and a kitty")) == {("self", "mascota_dog", "dog"),
                                                                   ("self", "mascota_cat", "cat")}
    assert {f.subject for f in learn(backend, "Tenemos un perro y un gato")} == {"self"}


def test_finishing_a_move_is_the_writers_own_life_never_a_business_fact(backend):
    for text in ("We finally finished moving!", "Por fin hemos terminado la mudanza"):
        facts = learn(backend, text)
        assert facts and {f.subject for f in facts} == {"self"}, text


def test_a_pet_and_a_diet_teach_their_names(backend):
    assert ("self", "mascota_max", "dog Max") in triples(learn(backend, "My dog's name is Max"))
    assert ("self", "mascota_max", "perro Max") in triples(learn(backend, "Mi perro se llama Max"))
    assert ("self", "dieta", "vegetarian") in triples(learn(backend, "I'm vegetarian, by the way"))
    assert ("self", "dieta", "vegetariana") in triples(learn(backend, "Soy vegetariana desde hace años"))


def test_a_new_customer_carries_over_to_the_next_sentence(backend):
    facts = learn(backend, "Tenemos un cliente nuevo, Hierros Olano. Nos pagan a treinta días")
    assert ("name:hierros olano", "plazo_pago", "30 días") in triples(facts)
    facts = learn(backend, "We've got a new customer, Baxter Logistics. And they pay at 45 days")
    assert ("name:baxter logistics", "plazo_pago", "45 días") in triples(facts)


def test_the_conversations_subject_carries_over_to_a_later_message(backend):
    facts = learn(backend, "Nos pagan a treinta días", recent=("name:hierros olano",))
    assert triples(facts) == {("name:hierros olano", "plazo_pago", "30 días")}
    facts = learn(backend, "and they pay at 45 days", contacts=(GARCIA,), recent=("contact:c1",))
    assert triples(facts) == {("contact:c1", "plazo_pago", "45 días")}


def test_a_partial_or_unaccented_name_resolves_to_the_known_subject(backend):
    facts = learn(backend, "Olano ahora nos paga a 60 días", known_names=("hierros olano",))
    assert triples(facts) == {("name:hierros olano", "plazo_pago", "60 días")}
    facts = learn(backend, "Baxter now pays at 60 days", known_names=("baxter logistics",))
    assert triples(facts) == {("name:baxter logistics", "plazo_pago", "60 días")}
    facts = learn(backend, "Talleres Garcia paga ahora a 90 días", contacts=(GARCIA,))
    assert triples(facts) == {("contact:c1", "plazo_pago", "90 días")}


def test_two_businesses_that_share_a_word_stay_different(backend):
    facts = learn(backend, "Farmacia Levante nos paga a 45 días", contacts=(LEVANTE,))
    assert triples(facts) == {("name:farmacia levante", "plazo_pago", "45 días")}
    facts = learn(backend, "Levante Pharmacy pays at 45 days", contacts=(LEVANTE,))
    assert {f.subject for f in facts} == {"name:levante pharmacy"}


def test_a_payment_term_of_one_customer_says_nothing_of_another_in_another_language(backend):
    assert {f.subject for f in learn(backend, "Acme pays at 30 days", known_names=("acme",))} == {"name:acme"}
    assert {f.subject for f in learn(backend, "Talleres García paga a 60 días", contacts=(GARCIA,),
                                     known_names=("acme",))} == {"contact:c1"}


# --- values and families --------------------------------------------------------------------------

def test_losing_a_job_and_starting_a_business_are_learnt_as_job_facts(backend):
    facts = triples(learn(backend, "Lost my job as a banker... starting my own business"))
    assert {("self", "trabajo_anterior", "banker"), ("self", "trabajo", "own business")} <= facts
    facts = triples(learn(backend, "He perdido mi trabajo de banquero y estoy montando mi propio negocio"))
    assert {("self", "trabajo_anterior", "banquero"), ("self", "trabajo", "negocio propio")} <= facts


def test_being_lucky_to_have_a_husband_and_kids_is_kept_as_a_family_fact(backend):
    for text in ("I'm lucky to have my husband and kids", "Tengo la suerte de tener a mi marido y a mis hijos"):
        decision, _ = backend.decide(text, None)
        assert decision.passes and decision.special < 0.5, text
        assert {f.subject for f in learn(backend, text)} == {"self"}, text


def test_only_the_sentence_on_a_protected_topic_is_refused(backend):
    for text in ("My wife was diagnosed with diabetes last year. We have two kids, Leo and Alba.",
                 "A mi mujer le diagnosticaron diabetes el año pasado. Tenemos dos hijos, Leo y Alba."):
        facts = learn(backend, text)
        assert {("self", "hijos_leo", "Leo"), ("self", "hijos_alba", "Alba")} <= triples(facts), text
        assert not any("diabet" in fold(f.value) for f in facts), text


def test_talk_to_me_informally_passes_the_gate_and_sets_the_tone(backend):
    for text in ("háblame de tú", "Please be informal with me"):
        decision, _ = backend.decide(text, None)
        assert decision.passes, text
        assert ("self", "tono", "tú") in triples(learn(backend, text)), text


def test_a_discount_for_paying_cash_is_a_discount_fact(backend):
    assert triples(learn(backend, "5% de rebaja si paga al contado")) == {("org", "descuento", "5% si paga al contado")}
    facts = learn(backend, "Talleres García: 5% off if they pay cash", contacts=(GARCIA,))
    assert triples(facts) == {("contact:c1", "descuento", "5% if they pay cash")}


def test_who_keeps_the_accounts_is_the_contact_person_and_a_change_keeps_the_new_one(backend):
    first = learn(backend, "Ramón lleva las cuentas")
    second = learn(backend, "ahora las lleva Lucía Sanchis")
    assert triples(first) == {("org", "persona_contacto", "Ramón")}
    assert triples(second) == {("org", "persona_contacto", "Lucía Sanchis")}
    assert triples(learn(backend, "Now Lucy Sanchis handles the books")) == {("org", "persona_contacto", "Lucy Sanchis")}


def test_a_contact_person_change_keeps_the_new_person(backend):
    facts = learn(backend, "El contacto en Talleres García ahora es Pilar Ruiz, ya no Marisa", contacts=(GARCIA,))
    assert triples(facts) == {("contact:c1", "persona_contacto", "Pilar Ruiz")}
    facts = learn(backend, "The contact at Talleres García is now Pilar Ruiz", contacts=(GARCIA,))
    assert triples(facts) == {("contact:c1", "persona_contacto", "Pilar Ruiz")}


def test_a_remember_request_and_a_vocative_are_not_part_of_the_value(backend):
    [fact] = learn(backend, "Apúntame que Talleres García paga a 60 días", contacts=(GARCIA,))
    assert fact.value == "60 días"
    facts = learn(backend, "Thanks, Melanie! We've decided to homeschool the kids from September")
    assert facts and all("Melanie" not in f.value and not fold(f.value).startswith("thanks") for f in facts)


def test_questions_the_person_asks_are_never_facts(backend):
    for text in ("Do you have a dog named Max?", "¿Tienes un perro que se llama Max?",
                 "What did you paint last week?", "¿Cuántos días nos da Talleres García para pagar?"):
        assert learn(backend, text, contacts=(GARCIA,)) == [], text


def test_one_message_may_teach_several_facts(backend):
    facts = triples(learn(backend, "Soy vegetariana. Mi perro se llama Max y toco la guitarra."))
    assert {("self", "dieta", "vegetariana"), ("self", "mascota_max", "perro Max"),
            ("self", "instrumento_guitarra", "guitarra")} <= facts
    facts = triples(learn(backend, "I'm vegan. My dog's name is Max and I play the guitar."))
    assert {("self", "dieta", "vegan"), ("self", "mascota_max", "dog Max"),
            ("self", "instrumento_guitar", "guitar")} <= facts


def test_unrelated_notes_never_share_an_attribute(backend):
    a = learn(backend, "Wrapping up the business plan and looking for investors")
    b = learn(backend, "I'm using it to stay organized")
    c = learn(backend, "Being a mom is awesome")
    names = [f.attribute for f in a + b + c]
    assert len(names) == len(set(names))
    assert all(n.startswith("nota") for n in names)


# --- one fold, one name normaliser ----------------------------------------------------------------

def test_one_fold_and_one_name_normaliser_serve_the_project():
    assert fold("Ñandú ÁRBOL") == "nandu arbol" and len(fold("İstanbul")) == len("İstanbul")
    assert normalise_name("Hierros Olano, S.L.") == "hierros olano" == normalise_name("HIERROS OLANO SL")
    from memory_core.backends import openai_backend
    assert openai_backend.normalise_name is normalise_name


def test_units_drop_pleasantries_and_keep_the_statements():
    texts = [u.text for u in units("Hey Jon! Good to see you! Lost my job as a banker, but I'm starting my own business.")]
    assert texts == ["", "", "Lost my job as a banker", "I'm starting my own business."]


def test_a_pet_named_in_the_next_sentence_gets_its_name(backend):
    facts = triples(learn(backend, "Guess what - I got a puppy two weeks ago! Her name's Coco and she's adorable."))
    assert ("self", "mascota_coco", "dog Coco") in facts
    facts = triples(learn(backend, "Tengo una perrita nueva. Se llama Luna."))
    assert ("self", "mascota_luna", "perro Luna") in facts


# --- enumerations: one fact per member -------------------------------------------------------------

@pytest.mark.parametrize("text", ["tengo dos críos, Pau y Marina", "I have two kids, Pau and Marina"])
def test_two_children_named_at_once_are_two_facts(backend, text):
    facts = learn(backend, text)
    assert triples(facts) == {("self", "hijos_pau", "Pau"), ("self", "hijos_marina", "Marina")}
    assert all(f.category == "person" for f in facts)


@pytest.mark.parametrize("text, expected", [
    ("Tengo dos hijas, Lucía y Carmen", {("self", "hija_lucia", "Lucía"), ("self", "hija_carmen", "Carmen")}),
    ("My kids' names are Leo, Alba and Max",
     {("self", "hijos_leo", "Leo"), ("self", "hijos_alba", "Alba"), ("self", "hijos_max", "Max")}),
    ("Tengo tres hermanos: Ana, Luis y Marta",
     {("self", "hermanos_ana", "Ana"), ("self", "hermanos_luis", "Luis"), ("self", "hermanos_marta", "Marta")}),
    ("I have two sisters, Ana and Marta", {("self", "hermana_ana", "Ana"), ("self", "hermana_marta", "Marta")})])
def test_every_named_family_member_is_a_fact_of_its_own(backend, text, expected):
    assert expected <= triples(learn(backend, text))


@pytest.mark.parametrize("text, expected", [
    ("Tengo dos perros, Luna y Max", {("self", "mascota_luna", "perro Luna"), ("self", "mascota_max", "perro Max")}),
    ("I have two dogs, Luna and Max", {("self", "mascota_luna", "dog Luna"), ("self", "mascota_max", "dog Max")}),
    ("I have a dog named Luna and a cat named Oliver",
     {("self", "mascota_luna", "dog Luna"), ("self", "mascota_oliver", "cat Oliver")}),
    ("Tengo un perro que se llama Luna y un gato que se llama Oliver",
     {("self", "mascota_luna", "perro Luna"), ("self", "mascota_oliver", "gato Oliver")})])
def test_every_named_pet_is_a_fact_of_its_own(backend, text, expected):
    assert expected <= triples(learn(backend, text))


@pytest.mark.parametrize("text, expected", [
    ("I love painting, hiking and reading",
     {("self", "aficion_painting", "painting"), ("self", "aficion_hiking", "hiking"),
      ("self", "aficion_reading", "reading")}),
    ("Me encanta pintar, correr y leer",
     {("self", "aficion_pintar", "pintar"), ("self", "aficion_correr", "correr"), ("self", "aficion_leer", "leer")})])
def test_every_hobby_of_an_enumeration_is_a_fact_of_its_own(backend, text, expected):
    assert expected <= triples(learn(backend, text))


@pytest.mark.parametrize("text", ["I'm good at chess", "Soy bueno jugando al ajedrez"])
def test_being_good_at_something_is_no_pleasantry(backend, text):
    assert [f.subject for f in learn(backend, text)] == ["self"]


# --- the writer's own life, said in passing -------------------------------------------------------

@pytest.mark.parametrize("text", ["Hey Mel! We even had a picnic last week with my friends!",
                                  "¡Hola Ana! El sábado pasado hicimos un pícnic con mis amigos."])
def test_a_plain_account_of_the_writers_week_is_a_note_about_them(backend, text):
    facts = learn(backend, text)
    assert [f.subject for f in facts] == ["self"]
    assert "picnic" in fold(facts[0].value) or "picnic" in fold(facts[0].value.replace("í", "i"))
    assert not fold(facts[0].value).startswith(("hey", "hola"))


@pytest.mark.parametrize("text", [
    "It made me reflect on how far I've come since I started painting three years ago",
    "Me hizo pensar en lo mucho que he avanzado desde que empecé a pintar hace tres años"])
def test_a_sentence_opening_like_a_reaction_but_telling_the_writers_story_is_kept(backend, text):
    assert [f.subject for f in learn(backend, text)] == ["self"]


@pytest.mark.parametrize("text", ["Gonna explore more and volunteer at shelters next month.",
                                  "Voy a explorar más y hacer voluntariado en refugios el mes que viene."])
def test_a_plan_without_a_pronoun_is_the_writers(backend, text):
    facts = learn(backend, text)
    assert [f.subject for f in facts] == ["self"] and "volunt" in fold(facts[0].value)


@pytest.mark.parametrize("text", ["I'm so proud of you for spreading awareness and inspiring others",
                                  "Estoy muy orgullosa de ti por ayudar a tanta gente",
                                  "q me queda por cobrar de este mes", "what's left to collect this month"])
def test_praise_for_the_listener_and_quick_questions_teach_nothing(backend, text):
    assert learn(backend, text) == []


def test_a_past_tense_note_reads_well_in_third_person(backend):
    facts = learn(backend, "We even had a picnic last week with my friends!")
    assert facts and facts[0].sentence == "The person even had a picnic last week with their friends."


# --- past events keep their dates (resolved against when the message was sent) ----------------------

@pytest.mark.parametrize("text, day, what", [
    ("I went to a pottery class last Saturday.", dt.date(2026, 2, 28), "pottery class"),
    ("El sábado pasado fui a una clase de cerámica.", dt.date(2026, 2, 28), "clase de cerámica"),
    ("Fui al concierto el 1 de marzo.", dt.date(2026, 3, 1), "concierto"),
    ("I went to the concert on March 1st.", dt.date(2026, 3, 1), "concert"),
    ("Yesterday I took the kids to the museum.", dt.date(2026, 3, 1), "museum"),
    ("Ayer llevé a los críos al museo.", dt.date(2026, 3, 1), "museo"),
])
def test_a_past_event_is_kept_with_its_day(backend, text, day, what):
    [event] = [f for f in learn(backend, text) if f.category == "event"]
    assert event.event_date == day and what in event.value
    assert str(day.year) in event.sentence  # the sentence says the day too


@pytest.mark.parametrize("text", ["I ran a charity race for the shelter last Saturday - it was really rewarding.",
                                  "El sábado pasado corrí una carrera solidaria por el refugio, fue muy bonito."])
def test_a_race_run_last_saturday_is_no_protected_topic(backend, text):
    [event] = [f for f in learn(backend, text) if f.category == "event"]
    assert event.event_date == dt.date(2026, 2, 28)


@pytest.mark.parametrize("text", ["I had a great time yesterday!", "Lo pasamos genial ayer."])
def test_how_the_day_went_is_no_event(backend, text):
    assert learn(backend, text) == []


@pytest.mark.parametrize("text", ["I'm doing my best", "They make me so happy", "I'm not giving up!",
                                  "Estoy muy agradecida", "Me siento muy afortunada", "Estoy muy orgullosa"])
def test_how_the_writer_feels_teaches_nothing(backend, text):
    assert learn(backend, text) == []


@pytest.mark.parametrize("text, kept", [("I'm so grateful. I'm in Madrid until Friday.", "I'm in Madrid until Friday."),
                                        ("Estoy muy agradecida. Estoy en Madrid hasta el viernes.",
                                         "Estoy en Madrid hasta el viernes.")])
def test_a_feeling_beside_a_fact_leaves_the_fact(text, kept):
    assert [u.text for u in units(text) if not u.phatic] == [kept]


# --- what a conversation tells besides its typed facts (issue #13, learning recall) ------------------

@pytest.mark.parametrize("text", ["Yeah, I have one.", "Sí, yo también tengo uno.",
                                  "Cool, I love pizza too!", "¡Genial, a mí también me encanta la pizza!",
                                  "Hey Calvin, photography has been great for me!",
                                  "Hola Lucía, la fotografía ha sido genial para mí.",
                                  "Being there for each other has made us both happy.",
                                  "Estar ahí el uno para el otro nos ha hecho muy felices a los dos."])
def test_echoes_appraisals_and_replies_that_point_back_teach_nothing(backend, text):
    assert learn(backend, text) == []


def test_a_fact_said_after_a_me_too_is_still_a_fact():
    assert [u.text for u in units("I have two kids too")] == ["I have two kids too"]
    assert [u.text for u in units("Yo también trabajo en Valencia")] == ["Yo también trabajo en Valencia"]


def test_a_time_clause_before_the_main_clause_is_a_statement_not_a_question(backend):
    [fact] = learn(backend, "When I was younger, we had some money problems and had to rely on our auntie.")
    assert "money problems" in fact.value and fact.subject == "self"
    [fact] = learn(backend, "Cuando era pequeña, mi familia tuvo problemas de dinero y nos ayudó mi tía.")
    assert "problemas de dinero" in fact.value and fact.subject == "self"
    # Still an order for later, and still questions.
    assert learn(backend, "Cuando llegue el pedido, mándame la factura") == []
    assert learn(backend, "When the order arrives, send me the invoice") == []
    assert learn(backend, "cuando viene el técnico") == []


def test_even_if_and_as_if_are_no_hypotheticals(backend):
    facts = learn(backend, "Volunteering at the shelter makes me feel great, even if it's just for a bit.")
    assert any("shelter" in f.value for f in facts)
    facts = learn(backend, "Hacer voluntariado en el albergue me hace sentir muy bien, incluso si es un rato.")
    assert any("albergue" in f.value for f in facts)
    assert learn(backend, "si Acme pagara a 90 días") == []


def test_a_sentence_a_rule_reads_keeps_what_else_it_tells(backend):
    facts = learn(backend, "I took my turtles to the beach in Tampa yesterday!")
    assert any(f.attribute.startswith("mascota") for f in facts)
    assert any("beach in Tampa" in f.value for f in facts)
    facts = learn(backend, "Me he comprado un perro y lo saco cada mañana a correr por la playa de la Malvarrosa")
    assert any(f.attribute.startswith("mascota") for f in facts)
    assert any("Malvarrosa" in f.value for f in facts)
    # A sentence that only states the typed fact stays one fact.
    assert len(learn(backend, "Tengo dos críos, Pau y Marina")) == 2
    assert len(learn(backend, "I have a pup and a kitty")) == 2


def test_a_statement_with_no_subject_reads_in_the_third_person():
    from memory_core.backends.local_extractor.third_person import third_person

    assert third_person("Lost my job as a banker, so I'm gonna start my own business", "self") == \
        "The person lost their job as a banker, so they're gonna start their own business"
    assert third_person("Me he comprado un perro", "self") == "La persona se ha comprado un perro"


@pytest.mark.parametrize("text, head, tail", [
    ("Thanks, Caroline! Pottery is a huge part of my life - it helps me express my emotions.", "Pottery",
     "express my emotions"),
    ("Tengo un huerto en el pueblo. Es mi forma de desconectar del trabajo.", "huerto", "desconectar"),
])
def test_a_sentence_that_goes_on_about_the_one_before_is_part_of_its_note(backend, text, head, tail):
    facts = learn(backend, text)
    assert any(head in f.value and tail in f.value for f in facts)
    # and no note of its own that says "it" about nothing
    assert not any(f.value.lower().startswith(("it helps", "es mi forma")) for f in facts)


@pytest.mark.parametrize("text", ["Next month I'm having an LGBTQ art show with my paintings",
                                  "Fuimos al mercadillo de la iglesia a vender cuadros"])
def test_an_event_on_a_protected_topic_is_learnt_by_the_local_backend(backend, text):
    assert learn(backend, text)


@pytest.mark.parametrize("text", ["I'm transgender", "Soy gay", "I went to an LGBTQ support group yesterday",
                                  "Me diagnosticaron diabetes"])
def test_a_person_s_protected_data_is_not_learnt_by_the_local_backend(backend, text):
    assert learn(backend, text) == []


@pytest.mark.parametrize("text, kept", [
    ("I just started helping out with a food drive for folks who lost their jobs. Here's a picture of me at the "
     "food bank.", "food drive"),
    ("Ayudo los sábados en el banco de alimentos del barrio.", "banco de alimentos"),
])
def test_a_food_bank_is_no_bank_account(backend, text, kept):
    assert any(kept in f.value for f in learn(backend, text))


@pytest.mark.parametrize("text", ["My favorite is the banana split sundae - I enjoy it after a day of volunteering.",
                                  "Me gusta mucho eso de madrugar los domingos"])
def test_a_pronoun_is_never_taken_for_a_hobby(backend, text):
    assert not any(f.attribute.startswith("aficion_") and f.value.split()[0].lower() in ("it", "eso")
                   for f in learn(backend, text))


# --- whose "we" --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Cobramos por transferencia, nunca en efectivo.", "We ship every order within 48 hours.",
                                  "Los presupuestos los hacemos siempre por escrito.", "Our quotes include transport to the site."])
def test_we_speaking_business_is_the_business(backend, text):
    facts = learn(backend, text)
    assert facts and {f.subject for f in facts} == {"org"}, facts


@pytest.mark.parametrize("text", ["We love painting together lately, especially nature-inspired ones.",
                                  "Los domingos comemos siempre en casa de mi suegra.",
                                  "Uniting is essential for making a difference."])
def test_we_of_the_writers_own_life_or_view_is_never_the_business(backend, text):
    # The business's memories are shared with the whole org: what is not said to be the business's stays the writer's.
    facts = learn(backend, text)
    assert facts and {f.subject for f in facts} == {"self"}, facts


@pytest.mark.parametrize("text", ["Let's keep going after our goals and making them happen.",
                                  "Quite a week since we last talked - something awesome happened to me!",
                                  "We're all in it together.", "It helps us grow and learn more about ourselves.",
                                  "We both have so much potential!", "Sigamos adelante, que podemos con esto.",
                                  "Hablamos mañana con más calma.", "Tenemos que vernos más a menudo."])
def test_the_two_people_talking_teach_nothing(backend, text):
    assert learn(backend, text) == []


def test_we_talking_business_is_kept_even_in_the_words_of_an_exhortation(backend):
    facts = learn(backend, "Sigamos cobrando por transferencia, nunca en efectivo.")
    assert facts and {f.subject for f in facts} == {"org"}, facts


@pytest.mark.parametrize("text", ["There's a new fantasy TV series coming out next month - can't wait!",
                                  "\"The Santa Clause\" is a classic! It's so sweet.",
                                  "One of the residents at the shelter, Cindy, wrote it."])
def test_a_name_said_in_no_words_of_business_is_no_customer(backend, text):
    # A customer's memory is shared with the whole org; a show, a film or a friend the writer mentions is theirs.
    facts = learn(backend, text)
    assert facts and {f.subject for f in facts} == {"self"}, facts


@pytest.mark.parametrize("text", ["We roast marshmallows around the campfire and just enjoy each other's company.",
                                  "We've been working on our confidence and it's really been paying off!"])
def test_business_words_in_phrases_that_mean_something_else_do_not_make_we_the_business(backend, text):
    facts = learn(backend, text)
    assert "org" not in {f.subject for f in facts}, facts
