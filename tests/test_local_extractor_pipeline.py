"""The generic fact end to end: the worker passes the gate's decision to the local extractor."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def run(session, backend, org, user, text, external_id="m-1", conversation="chat-1"):
    """Ingest one message from user and run the worker's unit on it; committed."""
    r = ingest_message(session, channel="web", conversation=conversation, external_id=external_id, org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def test_a_passed_message_no_rule_reads_is_learnt_as_a_note_on_the_contact(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    duero = factory.contact(org, "Cerámicas Duero S.L.", tax_id="B47123456", kind="supplier")
    out = run(system_session, backend, org, ana, "Cerámicas Duero no nos sirve nada hasta que recibe el pedido firmado")
    assert out.outcome == "learnt"
    [m] = active(system_session, org)
    assert (m.subject, m.level, m.category) == (f"contact:{duero.id}", "shared", "supplier")
    assert m.value == "Cerámicas Duero no nos sirve nada hasta que recibe el pedido firmado"


def test_a_contacts_bank_change_in_words_is_proposed_never_applied(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Cerámicas Duero S.L.", tax_id="B47123456", kind="supplier")
    out = run(system_session, backend, org, ana, "Cerámicas Duero dice que ahora cobra en otra cuenta, la del Sabadell")
    assert out.outcome == "proposed"
    assert [m for m in active(system_session, org) if m.level == "shared"] == []


def test_what_the_person_says_about_themselves_stays_personal(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, "Vivo en Logroño desde 2015")
    assert out.outcome == "learnt"
    [m] = active(system_session, org)
    assert (m.subject, m.level, m.owner_user_id) == ("self", "personal", ana.id)
    assert (m.attribute, m.value) == ("residencia", "Logroño")
    assert m.sentence == "La persona vive en Logroño."


def assert_nothing_learnt(factory, system_session, backend, text):
    """An owner of a new org writes `text`: no memory comes of it."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome != "learnt"
    assert active(system_session, org) == []


def active(session, org):
    return session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all() + \
        session.scalars(select(Memory).where(Memory.org_id.is_(None), Memory.status == "active")).all()


def assert_learnt_on_the_writer(factory, system_session, backend, text, kept):
    """The message is learnt, and some memory holding `kept` is the writer's own, personal."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    memories = active(system_session, org)
    assert any(kept in m.value and (m.subject, m.level) == ("self", "personal") for m in memories), \
        [(m.subject, m.value) for m in memories]


@pytest.mark.parametrize("text", ["We finally finished moving!", "Por fin hemos terminado la mudanza"])
def test_a_members_house_move_is_never_a_shared_fact_of_the_business(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome == "learnt"
    assert {(m.subject, m.level) for m in active(system_session, org)} == {("self", "personal")}


@pytest.mark.parametrize("fact, thanks", [("Being a mom is awesome, honestly the best thing in my life", "Thanks so much, Melanie!"),
                                          ("Ser madre es lo mejor que me ha pasado en la vida", "¡Muchas gracias, Marta!")])
def test_thanks_never_replace_what_was_learnt(factory, system_session, backend, fact, thanks):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, fact, "m-1").outcome == "learnt"
    assert run(system_session, backend, org, ana, thanks, "m-2").outcome == "ignored"
    [m] = active(system_session, org)
    assert m.value.startswith(fact.split(",")[0])


@pytest.mark.parametrize("new, olano, later", [
    ("Tenemos un cliente nuevo, Hierros Olano", "hierros olano", "Nos pagan a treinta días"),
    ("We've got a new customer, Baxter Logistics", "baxter logistics", "And they pay at 30 days")])
def test_a_later_message_about_the_customer_just_introduced_is_about_it(factory, system_session, backend,
                                                                         new, olano, later):
    org = factory.org()
    ana = factory.member(org, role="owner")
    run(system_session, backend, org, ana, new, "m-1")
    run(system_session, backend, org, ana, later, "m-2")
    assert (f"name:{olano}", "plazo_pago", "30 días") in {(m.subject, m.attribute, m.value)
                                                          for m in active(system_session, org)}


@pytest.mark.parametrize("first, correction, subject", [
    ("Hierros Olano paga a 30 días", "Olano ahora nos paga a 60 días", "name:hierros olano"),
    ("Baxter Logistics pays at 30 days", "Baxter now pays at 60 days", "name:baxter logistics")])
def test_a_correction_naming_a_business_by_part_of_its_name_replaces_its_term(factory, system_session, backend,
                                                                               first, correction, subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    run(system_session, backend, org, ana, first, "m-1")
    run(system_session, backend, org, ana, correction, "m-2", conversation="chat-2")
    terms = [(m.subject, m.value) for m in active(system_session, org) if m.attribute == "plazo_pago"]
    assert terms == [(subject, "60 días")]


@pytest.mark.parametrize("text", ["Farmacia Levante nos paga a 45 días", "Levante Pharmacy pays at 45 days"])
def test_a_business_sharing_a_word_with_a_contact_is_not_that_contact(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    levante = factory.contact(org, "Construcciones Levante S.L.", tax_id="B46999999")
    run(system_session, backend, org, ana, text)
    subjects = {m.subject for m in active(system_session, org)}
    assert subjects and f"contact:{levante.id}" not in subjects


@pytest.mark.parametrize("text", [
    "My wife was diagnosed with diabetes last year. We have two kids, Leo and Alba.",
    "A mi mujer le diagnosticaron diabetes el año pasado. Tenemos dos hijos, Leo y Alba."])
def test_only_the_sentence_on_a_special_category_is_refused(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome == "learnt"
    memories = active(system_session, org)
    assert {("self", "hijos_leo", "Leo"), ("self", "hijos_alba", "Alba")} <= {
        (m.subject, m.attribute, m.value) for m in memories}
    assert not any("diabet" in (m.value + m.sentence).lower() for m in memories)


@pytest.mark.parametrize("text, kept", [
    ("Hey Caroline! I ran a charity race for mental health last Saturday", "charity race"),
    ("¡Hola Carla! El sábado corrí una carrera solidaria por la salud mental", "carrera solidaria"),
    ("Next month I'm having an LGBTQ art show with my paintings", "art show"),
    ("We went to a church fair to sell paintings", "church fair"),
    ("Fuimos al mercadillo de la iglesia a vender cuadros", "mercadillo"),
    ("I'm looking into counseling and mental health as a career", "career"),
    ("I volunteer at a support group", "support group"),
    ("Colaboro como voluntaria en un grupo de apoyo", "grupo de apoyo"),
])
def test_a_protected_topic_named_only_as_a_cause_or_an_event_is_learnt(factory, system_session, backend, text, kept):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome == "learnt" and out.policy is None
    assert any(kept in m.value for m in active(system_session, org))


@pytest.mark.parametrize("text", [
    "I was diagnosed with diabetes", "Me diagnosticaron diabetes", "I'm gay", "Soy gay", "I'm transgender",
    "Soy transgénero", "I went to an LGBTQ support group yesterday", "I go to a support group for my anxiety",
    "I had a great hike with my church friends",
    "I ran a charity race for mental health after my diagnosis", "I support conservative politics",
])
def test_a_person_s_own_protected_data_stays_refused(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome in ("refused", "ignored")
    assert active(system_session, org) == []


@pytest.mark.parametrize("text", ["I'm lucky to have my husband and kids", "Tengo la suerte de tener a mi marido y a mis hijos"])
def test_a_family_sentence_is_no_special_category(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome == "learnt" and out.policy is None
    assert {(m.subject, m.level) for m in active(system_session, org)} == {("self", "personal")}


@pytest.mark.parametrize("text", ["tengo dos críos, Pau y Marina", "I have two kids, Pau and Marina"])
def test_two_children_named_at_once_stay_two_active_memories(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert out.outcome == "learnt"
    kids = {m.value for m in active(system_session, org) if m.subject == "self" and m.category == "person"}
    assert kids == {"Pau", "Marina"}


@pytest.mark.parametrize("text, subject, level, category", [
    ("Ya tenemos la furgoneta nueva", "org", "shared", "company"),
    ("We moved the warehouse to Getafe", "org", "shared", "company"),
    ("Odio el café", "self", "personal", "preference"),
    ("I hate coffee", "self", "personal", "preference"),
    ("El fisio de enfrente es cliente nuestro desde 2019", "org", "shared", "customer"),
    ("El dentista de la calle Alcalá nos debe dos facturas", "org", "shared", "customer"),
    ("The physio on Elm Street pays us at 30 days", "org", "shared", "customer"),
    ("The accountant upstairs always pays us in cash", "org", "shared", "customer"),
    # A physio the business trades with is no one's health, whatever the gate's special flag says of "fisio".
    ("La fisioterapeuta de la esquina nos paga siempre con tarjeta", "org", "shared", "customer"),
])
def test_what_is_learnt_lands_on_the_right_subject(factory, system_session, backend, text, subject, level, category):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    assert {(m.subject, m.level, m.category) for m in active(system_session, org)} == {(subject, level, category)}


@pytest.mark.parametrize("text", ["Mañana tengo dentista a las 5", "Soy alérgico a la penicilina",
                                  "I have a doctor's appointment on Friday",
                                  # An injury is health too (the gate's rows had "my doctor said the sprain..." as a fact).
                                  "I sprained my wrist at the gym, so no climbing for a month",
                                  "Me lesioné el hombro jugando al pádel"])
def test_the_writers_own_health_is_never_learnt_in_the_background(factory, system_session, backend, text):
    assert_nothing_learnt(factory, system_session, backend, text)


@pytest.mark.parametrize("text, kept", [
    # A subjectless activity naming something the listener recommended is the writer's, not about the listener.
    ("Thanks, Caroline. It was tough, but I'm doing ok. Been reading that book you recommended a while ago and "
     "painting to keep busy.", "Been reading that book you recommended"),
    # "We played this game X - it's ... I love it!": the game is kept, the reaction is not a note of its own.
    ("We played this game Catan - it's a great strategy game where you build settlements and trade resources. "
     "I love it!", "We played this game Catan"),
    # A thing done, told before a guess or a purpose, is no hypothesis.
    ("Well I also made a carrot cake with walnuts the other day, maybe you would like that!", "carrot cake"),
    ("I just visited a pottery studio to see what the classes would be like", "pottery studio"),
    ("Fui a una cata de vinos en Haro, a lo mejor repito en verano", "cata de vinos"),
    # Where the writer was is no echo of a compliment.
    ("I was in Lisbon, it was awesome!", "Lisbon"),
    # A dash typed against the word before it still breaks the clause off a greeting.
    ("Hey John, just wanted to give you the heads up on what's been happening lately- I took a creative writing "
     "class recently, and it was super enlightening!", "creative writing class"),
    # "-ing" after a hyphen is no bank (ING) in the message.
    ("Been super busy lately. Just skyped with an old friend from Boston and had a great time. We talked books and "
     "maybe collab-ing", "skyped"),
])
def test_a_first_person_activity_is_learnt_on_the_writer(factory, system_session, backend, text, kept):
    assert_learnt_on_the_writer(factory, system_session, backend, text, kept)


@pytest.mark.parametrize("text, kept", [
    # What the thing talked about is or has, told after it is named: one note with what names it.
    ("I love this series. It has adventures, magic, and great characters", "series. It has adventures, magic"),
    ("Me encanta esta saga. Tiene aventuras, magia y unos personajes geniales.", "saga. Tiene aventuras, magia"),
    # ...or alone, when what it describes was named before (a description, not a reaction).
    ("It was an intense season with both tough losses and great wins.", "intense season"),
    ("Era una temporada intensa con derrotas duras y grandes victorias.", "temporada intensa"),
    # ...kept though the gate is less sure of it, as the writer's own statements are.
    ("They eat a combination of vegetables, fruits, and insects.", "vegetables, fruits, and insects"),
    ("Comen una mezcla de verduras, fruta e insectos.", "verduras, fruta e insectos"),
    ("It's about a thirty year old woman on a journey of self-discovery after a loss.", "thirty year old woman"),
    ("Va de una mujer de treinta años que se busca a sí misma tras una pérdida.", "mujer de treinta años"),
])
def test_a_description_of_what_the_talk_is_about_is_learnt_on_the_writer(factory, system_session, backend, text,
                                                                         kept):
    assert_learnt_on_the_writer(factory, system_session, backend, text, kept)


@pytest.mark.parametrize("text, kept, guess", [
    # A guess tacked on after a comma leaves what was told before it a fact, and stays out of its value.
    ("I'll have to look into shelters near me soon, it would be great to have a new pup in the house.",
     "look into shelters near me soon", "would"),
    ("Tengo que mirar protectoras cerca de casa pronto, sería genial tener un cachorro en casa.",
     "mirar protectoras cerca de casa", "sería"),
    ("I also made a dairy-free chocolate cake with berries the other day, maybe you would like that!",
     "dairy-free chocolate cake", "maybe"),
    ("Hice una tarta de chocolate sin lactosa el otro día, a lo mejor te gusta probarla.",
     "tarta de chocolate sin lactosa", "a lo mejor"),
])
def test_a_trailing_guess_leaves_what_was_told_and_stays_out_of_it(factory, system_session, backend, text, kept,
                                                                    guess):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    memories = active(system_session, org)
    assert any(kept in m.value and guess not in m.value and m.subject == "self" for m in memories), \
        [(m.subject, m.value) for m in memories]


@pytest.mark.parametrize("text, kept", [
    # How the writer feels they could do something is a feeling told, not a hypothesis.
    ("I always feel like I could write a whole movie when I'm out there in cool places like that!",
     "feel like I could write a whole movie"),
    ("Siempre siento que podría escribir una película entera cuando estoy en sitios así.",
     "siento que podría escribir una película entera"),
])
def test_feeling_able_to_do_something_is_learnt(factory, system_session, backend, text, kept):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    assert any(kept in m.value and m.subject == "self" for m in active(system_session, org))


@pytest.mark.parametrize("text", ["Acme nos paga a 60 días, quizás a 90", "I could write a whole movie",
                                  "Podría escribir una película entera"])
def test_a_guess_over_the_whole_sentence_stays_unlearnt(factory, system_session, backend, text):
    assert_nothing_learnt(factory, system_session, backend, text)


@pytest.mark.parametrize("text, kept", [
    # A day in front with a comma is when it happened, no one spoken to.
    ("Yesterday, I went to a fair to show off my studio.", "I went to a fair to show off my studio"),
    ("Ayer, fui a una feria a enseñar mi estudio.", "ui a una feria a enseñar mi estudio"),
])
def test_a_day_said_in_front_dates_the_event(factory, system_session, backend, text, kept):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    [m] = [m for m in active(system_session, org) if kept in m.value]
    assert (m.subject, m.category) == ("self", "event") and m.event_date is not None


@pytest.mark.parametrize("text, kept", [
    # A statement typed without its "I" is no question (Spanish drops it anyway).
    ("Was super nervous last week when I shared my book with my writers group", "shared my book"),
    ("Estuve súper nerviosa la semana pasada cuando compartí mi libro con mi grupo de escritura", "compartí mi libro"),
])
def test_a_statement_typed_without_its_subject_is_learnt(factory, system_session, backend, text, kept):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    assert any(kept in m.value and m.subject == "self" for m in active(system_session, org))


@pytest.mark.parametrize("text", ["Was it fun", "Did you go to the fair", "Were you there with your family"])
def test_a_question_typed_without_its_mark_stays_unlearnt(factory, system_session, backend, text):
    assert_nothing_learnt(factory, system_session, backend, text)


@pytest.mark.parametrize("text", ["It's a great way to relax", "Es una forma genial de desconectar",
                                  "It has been a tough journey", "Ha sido un camino duro"])
def test_a_reaction_opening_on_it_stays_unlearnt(factory, system_session, backend, text):
    assert_nothing_learnt(factory, system_session, backend, text)


@pytest.mark.parametrize("text", ["I love it!", "Thanks, that's so sweet", "I'm so stoked about it!",
                                  "Thanks, Mel, it was awesome!", "¡Qué película más bonita, me encanta!",
                                  "You should totally read the book I recommended, you'd love it!"])
def test_pleasantries_stay_unlearnt(factory, system_session, backend, text):
    assert_nothing_learnt(factory, system_session, backend, text)


# --- messages typed the way people text (WhatsApp) ----------------------------------------------------

def facts_of(session, org, user):
    """What is active for this org or this writer (a writer's own notes may belong to no org)."""
    rows = session.scalars(select(Memory).where(Memory.status == "active", (Memory.org_id == org.id) |
                                                (Memory.owner_user_id == user.id))).all()
    return {(m.subject, m.attribute, m.value) for m in rows}


@pytest.mark.parametrize("text, attribute, value", [
    ("acme paga x transferencia", "forma_pago", "transferencia"),
    ("jajaja acme x fin paga x transferencia 😂", "forma_pago", "transferencia"),
])
def test_a_customer_term_typed_as_a_text_is_learnt_on_the_contact(factory, system_session, backend, text, attribute,
                                                                    value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    acme = factory.contact(org, "Acme Ibérica S.A.", tax_id="A28123456", aliases=["Acme"])
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    assert (f"contact:{acme.id}", attribute, value) in facts_of(system_session, org, ana)


def test_a_run_on_line_teaches_both_of_its_facts(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.", tax_id="B12345678")
    hierros = factory.contact(org, "Hierros del Norte S.L.", tax_id="B95123456", kind="supplier")
    run(system_session, backend, org, ana,
        "oye q talleres garcia ya nos paga a 60 dias y el de hierros del norte se llama ahora luis")
    learnt = facts_of(system_session, org, ana)
    assert (f"contact:{garcia.id}", "plazo_pago", "60 días") in learnt
    [(_, value)] = [(a, v) for s, a, v in learnt if s == f"contact:{hierros.id}"]
    assert "luis" in value.lower() and "garcia" not in value.lower()


@pytest.mark.parametrize("text, attribute, value", [
    ("mi hijo se llama pablo jeje", "hijo", "Pablo"),
    ("me llamo ana x cierto", "nombre", "Ana"),
    ("my wife's name is sarah lol", "pareja", "Sarah"),
    ("prefiero q me escribas x whatsapp", "canal_preferido", "WhatsApp"),
])
def test_laughter_and_texting_spellings_stay_out_of_a_personal_value(factory, system_session, backend, text,
                                                                      attribute, value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    run(system_session, backend, org, ana, text)
    assert any(s == "self" and a.startswith(attribute) and v == value for s, a, v in facts_of(system_session, org, ana))


@pytest.mark.parametrize("text, kept", [
    ("pues nada o sea q talleres garcia cierra el taller en agosto bueno eso",
     "Talleres garcia cierra el taller en agosto"),
    ("i live in boston now u know", "I live in boston now"),
])
def test_voice_note_fillers_are_cut_from_a_note(factory, system_session, backend, text, kept):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.", tax_id="B12345678")
    run(system_session, backend, org, ana, text)
    assert kept in {v for _, _, v in facts_of(system_session, org, ana)}


@pytest.mark.parametrize("text", ["jajaja 👍", "vale guay", "ok thx", "lol 😂😂", "q tal el finde", "k tal",
                                  "mandame la factura porfa", "ok mñn lo miro"])
def test_texting_small_talk_teaches_nothing(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    run(system_session, backend, org, ana, text)
    assert facts_of(system_session, org, ana) == set()


def test_a_bank_account_change_typed_as_a_text_stays_a_proposal(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Hierros del Norte S.L.", tax_id="B95123456", kind="supplier")
    out = run(system_session, backend, org, ana,
              "oye q hierros del norte tiene cuenta nueva ES91 2100 0418 4502 0005 1332 jeje")
    assert out.outcome == "proposed"
    assert [m for m in active(system_session, org) if m.level == "shared"] == []


# --- business notes as staff type them: lower-case names, the household's "we", the writer's injuries ------------

@pytest.mark.parametrize("text, subject", [
    ("muebles soler cierra en agosto", "name:muebles soler"),
    ("almacenes ruiz no reparte los sabados", "name:almacenes ruiz"),
    ("la oficina de frutas lopez esta en la calle toledo 5", "name:frutas lopez"),
    ("hemos dejado de trabajar con reformas galan", "name:reformas galan"),
    ("harbor foods closes on mondays", "name:harbor foods"),
    ("the manager at harbor foods is called linda", "name:harbor foods"),
])
def test_a_business_typed_in_lower_case_in_a_note_is_named_in_full(factory, system_session, backend, text, subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    assert {s for s, _, _ in facts_of(system_session, org, ana)} == {subject}


@pytest.mark.parametrize("text", ["we have a cottage by the sea", "we bought a villa on the coast",
                                  "nos hemos comprado una casa de campo en asturias"])
def test_the_household_s_second_home_is_the_writer_s_not_the_business_s(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == "learnt"
    [m] = active(system_session, org)
    assert (m.subject, m.level, m.owner_user_id) == ("self", "personal", ana.id)


@pytest.mark.parametrize("text", ["Me he roto el brazo", "Me he roto la pierna", "me he cortado el dedo con el cuter",
                                  "mi marido se ha roto la muñeca", "I broke my leg last week", "I sprained my ankle"])
def test_an_injury_is_health_and_is_refused(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, text)
    assert (out.outcome, out.policy) == ("refused", "special")
    assert facts_of(system_session, org, ana) == set()


def test_something_broken_at_the_business_is_no_injury(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, "Se nos ha roto la puerta de atrás del almacén")
    assert out.policy != "special"


def test_a_short_reply_to_the_assistant_s_question_replaces_the_term_it_answers_for(factory, system_session, backend):
    # Monday: "Talleres García paga a 30 días". Thursday the assistant asks and the person answers "a 60": the
    # invoice must fall due at 60 days, the 30 superseded, not kept beside a note.
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.", tax_id="B12345678", kind="customer")
    assert run(system_session, backend, org, ana, "Talleres García paga a 30 días").outcome == "learnt"
    ingest_message(system_session, channel="web", conversation="chat-2", external_id="a-1", org_id=org.id,
                       user_id=ana.id, phone=None, role="assistant",
                       text="Vale, preparo la factura. ¿A cuántos días paga ahora Talleres García?")
    system_session.commit()
    assert run(system_session, backend, org, ana, "a 60", external_id="m-2", conversation="chat-2").outcome == "learnt"
    [term] = [m for m in active(system_session, org) if m.subject == f"contact:{garcia.id}"]
    assert (term.attribute, term.value) == ("plazo_pago", "60 días")


@pytest.mark.parametrize("text, outcome", [
    ("I was so stressed before the fair, but it went great", "learnt"),  # a passing feeling: nobody's health
    ("Tengo ansiedad desde hace meses", "refused"),  # a condition
    ("Estoy muy nerviosa por la operación de mañana", "refused"),  # the operation is health, whatever the nerves
])
def test_a_passing_feeling_is_no_health_and_a_condition_is(factory, system_session, backend, text, outcome):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert run(system_session, backend, org, ana, text).outcome == outcome
