"""Changes told the way people tell them, in the kinds the tuning half of evals/serve10 showed (its held-out half,
evals/serve10_heldout.jsonl, was not tuned on; docs/decisions.md, 2026-12-07). The sentences here are this file's
own. Each case runs through the real pipeline, and a later WhatsApp turn's block is what is checked: the new value
served, the old one not, and what only looks like a change left as it was."""
from __future__ import annotations

import pytest

from tests.test_serving import _asked, served
from tests.test_serving import ask_later as _ask


def _active(result):
    return [m for m in result["memories"] if m["status"] == "active"]


def test_a_note_told_beside_a_rule_fact_goes_with_it_when_the_fact_changes(database, backend):
    result = _asked(database, backend,
                    [{"text": "Hollis Bakery pay by card over the phone, ask for Dee in the office."},
                     {"text": "Hollis Bakery have switched to bank transfer", "days_later": 40}],
                    _ask("how does Hollis Bakery pay us?", ["transfer"], ["card", "over the phone"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]
    assert not [m for m in _active(result) if "phone" in m["value"]], result["memories"]


def test_where_the_person_lives_takes_its_aside_with_it(database, backend):
    result = _asked(database, backend, [{"text": "vivo en Burgos, en el barrio de Gamonal, con mi hermana"},
                                        {"text": "por fin nos hemos mudado a Palencia!!", "days_later": 60}],
                    _ask("búscame una piscina cerca de casa", ["palencia"], ["gamonal"], writer=0))
    assert served(result), result["asks"]


@pytest.mark.parametrize("first, later, ask, new, old", [
    ("Tillman Paper's minimum order is 300 sheets.",
     "fyi tillman have raised their minimum order to 450 sheets, it's on their new price list",
     "can we order 350 sheets from Tillman Paper?", "450", "300"),
    ("los martes por la tarde voy a clase de cerámica, no me pongas nada después de las 6",
     "he dejado la cerámica, ahora voy a natación los martes por la tarde",
     "organízame el martes, tengo que ir al banco y al dentista", "natacion", "clase de ceramica"),
])
def test_a_note_said_as_a_change_replaces_the_note_on_the_same_topic(database, backend, first, later, ask, new, old):
    writer = 1 if "sheets" in first else 0
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 30}],
                    _ask(ask, [new], [old], writer=writer))
    assert served(result), result["asks"]


def test_a_note_that_names_what_it_replaces_replaces_it(database, backend):
    result = _asked(database, backend,
                    [{"text": "panaderia orbe nos va a pedir 20 barras cada dia, empiezan el lunes"},
                     {"text": "al final los de orbe quieren 35 barras al dia, no 20", "days_later": 2}],
                    _ask("¿cuántas barras le preparo mañana a Panadería Orbe?", ["35"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]
    assert not [m for m in _active(result) if m["value"].startswith("Panaderia orbe nos va")], result["memories"]


def test_days_after_not_are_no_new_delivery_days(database, backend):
    result = _asked(database, backend,
                    [{"text": "Our bread from Millstone Bakery comes on Mondays and Thursdays."},
                     {"text": "Actually Millstone changed their round, it's Tuesdays and Fridays now, not Monday and "
                              "Thursday.", "days_later": 5}],
                    _ask("when does the Millstone Bakery bread arrive?", ["tuesday", "friday"], ["monday", "thursday"]))
    assert served(result), result["asks"]


def test_an_attempt_to_get_a_lower_price_changes_nothing(database, backend):
    result = _asked(database, backend,
                    [{"text": "We charge Corner Deli £2.40 a dozen for eggs."},
                     {"text": "Corner Deli tried to haggle us down to £2 a dozen today. I said no, price stays.",
                      "days_later": 10}],
                    _ask("invoice Corner Deli for 30 dozen eggs", ["2.40"], ["£2 a dozen"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 0, result["memories"]


def test_the_business_hours_are_served_to_a_member_who_may_read_only_general(database, backend):
    result = _asked(database, backend,
                    [{"text": "We're closed on Wednesdays, open 8am to 6pm the other days."},
                     {"text": "change of plan from next month: our closing day is going to be Sunday instead.",
                      "days_later": 30}],
                    _ask("a customer asks which day we're shut", ["sunday"], ["wednesday"], writer=2))
    assert served(result), result["asks"]


def test_a_customer_s_hours_stay_out_of_general(database, backend):
    result = _asked(database, backend, [{"text": "Ferreteria Olmedo cierra los lunes, no les llevéis nada ese día"}],
                    _ask("qué día cierra Ferretería Olmedo?", ["lunes"], writer=1),
                    _ask("qué día cierra Ferretería Olmedo?", [], ["lunes"], writer=2, days_later=0))
    assert served(result), result["asks"]


@pytest.mark.parametrize("later", [
    "ojo q los de rivas ahora pagan con bizum, ya no por transferencia",
    "hazme la factura de rivas del mes, y ojo q ahora pagan con bizum",
])
def test_a_known_customer_typed_in_lower_case_is_named(database, backend, later):
    result = _asked(database, backend, [{"text": "Talleres Rivas nos paga por transferencia."},
                                        {"text": later, "days_later": 20}],
                    _ask("¿cómo nos paga Talleres Rivas?", ["bizum"], ["<<<transferencia>>>"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_talk_that_names_a_customer_sets_whom_we_and_them_are_about(database, backend):
    result = _asked(database, backend,
                    [{"text": "Larkspur Florists get a 5% trade discount."},
                     {"text": "Re your question about Larkspur Florists: we've moved them up to 8% since they signed "
                              "the yearly contract.", "days_later": 30}],
                    _ask("quote Larkspur Florists for 100 vases", ["8%"], []))
    assert served(result), result["asks"]
    assert not [m for m in _active(result) if m["subject"] == "self"], result["memories"]


@pytest.mark.parametrize("later, name", [
    ("Nadia has left Ropewalk Supplies, the new accounts person is Owen Pryce", "Owen Pryce"),
    ("En Suministros Vidal la nueva persona de contacto es Rocío Peña", "Rocío Peña"),
])
def test_a_new_contact_person_replaces_the_old_one(database, backend, later, name):
    first = "the contact at Ropewalk Supplies is Nadia" if "Ropewalk" in later else \
        "la persona de contacto en Suministros Vidal es Nadia"
    business = "Ropewalk Supplies" if "Ropewalk" in later else "Suministros Vidal"
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 30}])
    contact = [m for m in _active(result) if m["attribute"] == "persona_contacto"]
    assert [m["value"] for m in contact] == [name], result["memories"]
    assert business.split()[-1].lower() in contact[0]["subject"], result["memories"]


@pytest.mark.parametrize("told, job, employer", [
    ("I'm a paralegal at Hartley Law in Leeds", "paralegal", "Hartley Law"),
    ("he empezado en un trabajo nuevo, soy administrativa en Seguros Ocaso", "administrativa", "Seguros Ocaso"),
])
def test_a_job_at_a_named_place_is_the_job_and_the_employer(database, backend, told, job, employer):
    result = _asked(database, backend, [{"text": told}])
    facts = {m["attribute"]: m["value"] for m in _active(result)}
    assert facts.get("trabajo") == job and facts.get("empleador") == employer, result["memories"]


@pytest.mark.parametrize("told", ["I'm a regular at The Crown", "I'm a member at Fitness First"])
def test_being_somewhere_s_regular_or_member_is_no_job(database, backend, told):
    result = _asked(database, backend, [{"text": told}])
    assert not [m for m in _active(result) if m["attribute"] in ("trabajo", "empleador")], result["memories"]


def test_a_move_told_as_being_in_the_new_house_is_where_the_person_lives(database, backend):
    result = _asked(database, backend, [{"text": "We live in Derby with the kids."},
                                        {"text": "we've moved!! finally in the new house in Lincoln", "days_later": 50}],
                    _ask("find me a Sunday market near home", ["lincoln"], ["derby"], writer=0))
    assert served(result), result["asks"]


@pytest.mark.parametrize("told, word", [
    ("Keep your answers short please, bullet points are fine.", "short"),
    ("I'd prefer fuller explanations from now on, with worked examples.", "detailed"),
    ("a partir de ahora quiero respuestas más detalladas, con ejemplos", "detalladas"),
])
def test_how_the_person_wants_answers_is_learnt(database, backend, told, word):
    result = _asked(database, backend, [{"text": told}])
    style = [m["value"] for m in _active(result) if m["attribute"] == "estilo_respuesta"]
    assert style and word in style[0], result["memories"]


def test_a_later_answer_style_replaces_the_earlier_one(database, backend):
    result = _asked(database, backend, [{"text": "Keep your answers short please."},
                                        {"text": "Actually I'd prefer fuller explanations now, with worked examples.",
                                         "days_later": 40}])
    style = [m["value"] for m in _active(result) if m["attribute"] == "estilo_respuesta"]
    assert style == ["detailed"], result["memories"]


@pytest.mark.parametrize("first, later, new, old", [
    ("Para que lo tengas en cuenta cuando te pida recetas: soy vegetariana, pero como huevos.",
     "desde hace un mes me he hecho vegana, así que nada de huevos ya", "vegana", "vegetariana"),
    ("I'm pescatarian, fish is fine but no meat please.",
     "been eating meat again since the summer, so chicken is fine now", "omnivore", "pescatarian"),
])
def test_a_new_diet_replaces_the_old_one(database, backend, first, later, new, old):
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 60}])
    diet = [m["value"] for m in _active(result) if m["attribute"] == "dieta"]
    assert diet == [new], result["memories"]
    assert [m["value"] for m in result["memories"] if m["attribute"] == "dieta" and m["status"] == "superseded"] \
        == [old], result["memories"]


def test_a_discount_said_to_go_up_is_the_customer_s_new_discount(database, backend):
    result = _asked(database, backend,
                    [{"text": "A Bodegas Lázaro les hacemos un 5% de descuento en todos los pedidos."},
                     {"text": "Hemos renegociado con Bodegas Lázaro: desde este mes su descuento sube al 9%.",
                      "days_later": 30}],
                    _ask("pásame el presupuesto para Bodegas Lázaro, 10 cajas", ["9%"], ["<<<5%"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


@pytest.mark.parametrize("told", [
    "a partir de enero cerramos los sábados",
    "from next month we're closed on Sundays",
])
def test_a_standing_fact_told_with_the_day_it_holds_from_is_no_event(database, backend, told):
    result = _asked(database, backend, [{"text": told}])
    mine = _active(result)
    assert mine and all(m["category"] != "event" and m["subject"] == "org" for m in mine), result["memories"]


def test_time_away_from_a_day_is_still_an_event(database, backend):
    result = _asked(database, backend, [{"text": "a partir del lunes estoy de vacaciones hasta el día 20"}])
    assert [m["category"] for m in _active(result)] == ["event"], result["memories"]


def test_what_the_person_sold_is_no_longer_theirs(database, backend):
    result = _asked(database, backend, [{"text": "Tengo un Renault Clio de 2011, diésel, que ya va dando guerra."},
                                        {"text": "por fin he vendido el clio!! me he comprado un kia niro híbrido",
                                         "days_later": 40}],
                    _ask("voy a ir en coche de Madrid a Valencia, cuánto me gastaré?", ["niro"], ["diesel"], writer=0))
    assert served(result), result["asks"]


def test_a_new_job_takes_the_old_employer_with_the_old_job(database, backend):
    result = _asked(database, backend, [{"text": "I'm a paralegal at Hartley Law in Leeds"},
                                        {"text": "I started a new job as a conveyancer last week", "days_later": 70}],
                    _ask("help me write a short bio for my profile", ["conveyancer"], ["hartley"], writer=0))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_who_does_what_for_the_business_is_the_business_s(database, backend):
    result = _asked(database, backend, [{"text": "Mohammed's left us sadly. Ellie's taking over social media from Monday"}],
                    _ask("who's posting on instagram now?", ["ellie"]))
    assert served(result), result["asks"]


@pytest.mark.parametrize("first, later, ask, new, old", [
    ("My partner is called Tom", "Tom and I broke up. I'm seeing someone new, Alex",
     "plan a date night for me and my partner", "alex", "<<<tom>>>"),
    ("Mi pareja se llama Sergio", "lo he dejado con Sergio, estoy saliendo con Iker",
     "organiza una cena para mi pareja y yo", "iker", "<<<sergio>>>"),
])
def test_a_new_partner_replaces_the_old_one(database, backend, first, later, ask, new, old):
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 90}],
                    _ask(ask, [new], [old], writer=0))
    assert served(result), result["asks"]


def test_a_break_up_leaves_no_partner(database, backend):
    result = _asked(database, backend, [{"text": "My partner is called Tom"},
                                        {"text": "Tom and I broke up last month", "days_later": 90}])
    partner = [m for m in _active(result) if m["attribute"] == "pareja"]
    assert len(partner) == 1 and "no partner" in partner[0]["sentence"], result["memories"]


@pytest.mark.parametrize("first, later, ask, new, old", [
    ("We open at 9 on Saturdays", "From next month we'll open at 10 on Saturdays", "what time do we open on Saturday?",
     "10", "<<<9"),
    ("La comercial de Papelera Sur es Lola", "Lola ya no está en Papelera Sur, ahora nos atiende Andrés",
     "con quién hablo en Papelera Sur?", "andres", "<<<lola>>>"),
    ("Harbor Foods pay at 30 days", "Harbor Foods asked to move to 45 days and we agreed", "invoice Harbor Foods",
     "45", "30 days"),
    ("Bodegas Ruiz nos paga a 30 días", "Bodegas Ruiz nos pidió pagar a 60 días y le dijimos que sí",
     "factura a Bodegas Ruiz", "60", "30 dias"),
    ("I'm vegetarian", "I've started eating fish again", "dinner ideas tonight?", "pescatarian", "<<<vegetarian>>>"),
])
def test_more_changes_said_as_people_say_them(database, backend, first, later, ask, new, old):
    writer = 0 if first.startswith("I'm") else 1
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 30}],
                    _ask(ask, [new], [old], writer=writer))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_a_term_asked_for_and_refused_changes_nothing(database, backend):
    result = _asked(database, backend, [{"text": "Harbor Foods pay at 30 days"},
                                        {"text": "Harbor Foods asked to move to 60 days, I said no", "days_later": 30}],
                    _ask("invoice Harbor Foods", ["30"], ["60"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 0, result["memories"]


@pytest.mark.parametrize("first, later, ask, new, old, writer", [
    ("Ferretería Ugarte nos paga a 30 días", "scrap that, Ugarte es a 45, me equivoqué", "factura a Ferretería Ugarte",
     "45", "30 dias", 1),
    ("Distribuciones Mar entrega los lunes", "olvida lo que te dije de Distribuciones Mar, entregan los miércoles",
     "cuándo entrega Distribuciones Mar?", "miercoles", "lunes", 1),
    ("Mis hijos van al colegio Cervantes", "este curso los niños se han cambiado al colegio Alameda",
     "a qué hora salen los niños del cole?", "alameda", "cervantes", 0),
    ("My dad lives in Norwich", "Dad's moved into a care home in Ipswich", "send flowers to my dad", "ipswich",
     "norwich", 0),
    ("Hierros Olano está en el polígono Landaben, nave 12", "Hierros Olano se ha trasladado al polígono Agustinos, nave 3",
     "dónde está Hierros Olano?", "agustinos", "landaben", 1),
    ("my mobile is 07700 900123", "my new mobile is 07700 900456", "what's my mobile?", "900456", "900123", 0),
])
def test_changes_told_in_other_words(database, backend, first, later, ask, new, old, writer):
    result = _asked(database, backend, [{"text": first}, {"text": later, "days_later": 30}],
                    _ask(ask, [new], [old], writer=writer))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_a_mobile_said_as_mine_is_the_writer_s_own(database, backend):
    result = _asked(database, backend, [{"text": "my mobile is 07700 900123"}],
                    _ask("what's my mobile?", ["900123"], writer=0), _ask("what's the mobile?", [], ["900123"]))
    assert served(result), result["asks"]


@pytest.mark.parametrize("told", ["lo hemos dejado para mañana", "hemos roto con Reformas Galán", "Me he roto el brazo",
                                  "Hemos dejado de vender la tarta de queso", "Sergio y yo lo dejamos en la mesa"])
def test_what_only_sounds_like_a_break_up_leaves_the_partner(database, backend, told):
    result = _asked(database, backend, [{"text": "Mi pareja se llama Sergio"}, {"text": told, "days_later": 10}])
    assert [m["value"] for m in _active(result) if m["attribute"] == "pareja"] == ["Sergio"], result["memories"]


def test_a_change_told_in_two_halves_neither_of_which_passes_alone_is_still_learnt(database, backend):
    result = _asked(database, backend,
                    [{"text": "Lindley Nurseries is closed on Wednesdays, never send the van there on a Wednesday."},
                     {"text": "Lindley have changed their day off — it's Thursdays they're shut now.",
                      "days_later": 30}],
                    _ask("book the compost run to Lindley Nurseries next week, which day is out?", ["thursday"],
                         ["closed on wednesdays"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_a_new_job_at_a_gp_surgery_is_learnt_not_refused_as_health_data(database, backend):
    result = _asked(database, backend,
                    [{"text": "I'm a staff nurse at Whittington Hospital, mostly on nights"},
                     {"text": "handed my notice in! starting on the 3rd of May as practice nurse at a GP surgery in "
                              "Highgate", "days_later": 50}],
                    _ask("write me a two-line bio for the team page", ["practice nurse"], ["staff nurse"], writer=0))
    assert served(result), result["asks"]


def test_a_new_day_told_with_even_if_after_it_is_no_hypothesis(database, backend):
    result = _asked(database, backend,
                    [{"text": "Los de Lácteos Cantábrico vienen los martes por la mañana."},
                     {"text": "xq han cambiado las rutas, lacteos cantabrico pasa a venir los jueves, tb si es festivo",
                      "days_later": 20}],
                    _ask("avísame el día antes de que venga Lácteos Cantábrico, que hay que vaciar la cámara",
                         ["jueves"], ["martes"], writer=0))
    assert served(result), result["asks"]


def test_the_writer_and_a_partner_who_left_it_last_summer_broke_up(database, backend):
    result = _asked(database, backend, [{"text": "Mi novio se llama Sergio, llevamos un año"},
                                        {"text": "bueno, sergio y yo lo dejamos en verano...", "days_later": 90}])
    assert [m["value"] for m in _active(result) if m["attribute"] == "pareja"] == ["ninguna ahora (lo han dejado)"], \
        result["memories"]
