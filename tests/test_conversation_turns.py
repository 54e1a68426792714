"""Facts told in conversation, and what a colleague is served of them days later on WhatsApp: the fixes the tuning
half of evals/serve5 led to (docs/decisions.md, 2026-12-07; its other half, evals/serve5_heldout.jsonl, was not
tuned on). Each case runs through the real pipeline and the block the API would build."""
from __future__ import annotations

import pytest

from memory_core.domain.text import fold
from tests.test_serving import _asked, served

W = "whatsapp"


def _ask(text, holds=(), not_holds=(), writer=1, days_later=2):
    return {"text": text, "writer": writer, "channel": W, "days_later": days_later,
            "holds": list(holds), "not_holds": list(not_holds)}


@pytest.mark.parametrize("told, retold, ask, new, old", [
    ("En Distribuciones Vega la que lleva las compras es Rosa.",
     "Lo de Distribuciones Vega: Rosa ya no está, se jubiló. Ahora lleva las compras su sobrino, Álex.",
     "llama a Distribuciones Vega para lo del pedido", "Álex", "Rosa"),
    ("The contact at Harbor Foods is Sunil",
     "Harbor Foods: Sunil retired, now his nephew Raj does the ordering",
     "call Harbor Foods about the crates", "Raj", "Sunil"),
])
def test_who_took_over_a_customer_s_buying_replaces_its_contact(database, backend, told, retold, ask, new, old):
    result = _asked(database, backend, [{"text": told}, {"text": retold, "days_later": 20}],
                    _ask(ask, [new], [f"<<<{old}>>>"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_a_name_in_apposition_ends_the_sentence_and_is_no_vocative():
    from memory_core.backends.local_extractor.units import units

    assert [u.text for u in units("Ahora lleva las compras su sobrino, Álex.")] == [
        "Ahora lleva las compras su sobrino, Álex."]
    assert [u.text for u in units("Ya está la factura, gracias, Álex.")][-1].endswith("gracias")


@pytest.mark.parametrize("text", [
    "Hoy a Pinturas Sol llévales el pedido por la tarde, que por la mañana no hay nadie",
    "Mañana a Talleres García mándale la factura por email, que hoy no la abre nadie",
])
def test_an_order_for_today_said_to_whom_first_is_no_standing_fact(database, backend, text):
    result = _asked(database, backend, [{"text": text}],
                    _ask("organiza lo de la semana que viene", [], ["tarde", "email"], days_later=7))
    assert served(result), result["asks"]
    assert result["memories"] == [], result["memories"]


def test_a_customer_told_always_to_be_delivered_in_the_afternoon_is_still_learnt(database, backend):
    result = _asked(database, backend, [{"text": "A Pinturas Sol llévales siempre el pedido por la tarde, que por la "
                                                 "mañana no hay nadie"}],
                    _ask("organiza la entrega de Pinturas Sol", ["tarde"]))
    assert served(result), result["asks"]


@pytest.mark.parametrize("text, method", [
    ("los de Autos Beñat ahora pagan con pagaré a 90", "pagaré"),
    ("Autos Beñat paga por transferencia a 60", "transferencia"),
])
def test_a_term_said_after_how_they_pay_is_kept_beside_it(database, backend, text, method):
    days = text.rsplit(" ", 1)[-1]
    result = _asked(database, backend, [{"text": text, "writer": 1, "channel": W}],
                    _ask("factura Autos Beñat", [method, f"{days} días"], writer=0))
    assert served(result), result["asks"]


def test_a_number_given_in_reply_is_the_phone_of_whom_the_writer_named_just_before(database, backend):
    result = _asked(database, backend, [
        {"text": "Apunta el teléfono de Marisa, de Cerámicas Roig"},
        {"text": "sí, es el 655 31 20 98", "previous_assistant": "¿Me das el número?"}],
        _ask("llama a Cerámicas Roig", ["655312098"], days_later=3))
    assert served(result), result["asks"]
    assert [(m["subject"], m["attribute"]) for m in result["memories"]] == [("name:ceramicas roig", "telefono")]


@pytest.mark.parametrize("question, reply, subject, phone", [
    ("¿Me das el número de Marisa, de Cerámicas Roig?", "sí, es el 655 31 20 98", "name:ceramicas roig", "655312098"),
    ("What's the number for Roig Tiles?", "07700 900123", "name:roig tiles", "07700900123"),
    ("¿Cuál es el móvil de Hierros Olano?", "el 600 112 233", "name:hierros olano", "600112233"),
])
def test_a_reply_to_a_question_for_someone_s_number_is_their_phone(question, reply, subject, phone):
    from memory_core.backends import LocalBackend
    from memory_core.domain.model_port import ExtractionContext

    facts, _ = LocalBackend().extract(ExtractionContext(message=reply, previous_assistant=question))
    assert [(f.subject, f.attribute, f.value) for f in facts] == [(subject, "telefono", phone)]


@pytest.mark.parametrize("text, phone", [
    ("Marisa's number at Roig Tiles is 07700 900123", "07700900123"),
    ("The phone number for Acme Supplies is 07700 900124", "07700900124"),
    ("El número de pedido de Roig Tiles es 770090012", None),
    ("Tom from Riverside Deli asked me to call him on 07700 900555 rather than the shop line", "07700900555"),
    ("A Marta, de Flores Ana, mejor llamarla al 600 123 456", "600123456"),
])
def test_a_number_said_of_someone_is_their_phone_and_an_order_number_is_not(text, phone):
    from memory_core.backends import LocalBackend
    from memory_core.domain.model_port import ExtractionContext

    facts, _ = LocalBackend().extract(ExtractionContext(message=text))
    phones = [f.value for f in facts if f.attribute == "telefono"]
    assert phones == ([phone] if phone else [])
    assert all(f.subject != "name:marisa" for f in facts)  # her number at the business is the business's


def test_the_writer_s_message_before_is_read_only_from_the_last_half_hour(
        factory, system_session):
    import datetime as dt

    from memory_core.domain import clock
    from memory_core.learning.pipeline import previous_turns

    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user)
    now = clock.now()
    factory.message(conv, "Apunta el teléfono de Hierros Olano", created_at=now - dt.timedelta(hours=2))
    factory.message(conv, "¿Me das el número?", role="assistant", created_at=now - dt.timedelta(minutes=1))
    late = factory.message(conv, "es el 600 112 233", created_at=now)
    assert previous_turns(system_session, late) == ("¿Me das el número?", None)  # two hours ago: another talk
    factory.message(conv, "Apunta el teléfono de Talleres Ruiz", created_at=now - dt.timedelta(minutes=2))
    assert previous_turns(system_session, late) == ("¿Me das el número?", "Apunta el teléfono de Talleres Ruiz")


@pytest.mark.parametrize("text, subject, attribute", [
    ("ojo q pardo ahora paga a 45", "name:construcciones pardo", "plazo_pago"),
    ("Ojo, que Talleres García ya no reparte los sábados", "name:talleres garcia", None),
    ("Heads up, Greenway Produce now want 48 hours notice for any order", "name:greenway produce", None),
])
def test_a_warning_in_front_is_talk_and_what_follows_it_is_read_as_told(text, subject, attribute):
    from memory_core.backends import LocalBackend
    from memory_core.domain.model_port import ExtractionContext

    backend = LocalBackend()
    decision, _ = backend.decide(text, None)
    facts, _ = backend.extract(ExtractionContext(
        message=text, known_names=("Construcciones Pardo",), gate_category=str(decision.top_category),
        gate_scope=str(decision.top_scope)))
    assert [f.subject for f in facts] == [subject]
    assert attribute is None or facts[0].attribute == attribute
    assert not fold(facts[0].value).startswith(("ojo", "heads up"))


# --- the person's own life (the tuning half of evals/serve7; its other half is never tuned on) ---------------

@pytest.mark.parametrize("told, ask, word", [
    ("Our anniversary is on the 9th of June, 12 years this time", "anything coming up in June?", "anniversary"),
    ("My son Oliver is studying law at Edinburgh", "what's Oliver up to these days?", "law"),
    ("My son Oliver is applying to study medicine at Edinburgh", "what's Oliver up to these days?", "medicine"),
    ("Estoy ahorrando para un viaje a Japón en octubre del año que viene", "¿qué planes tengo para el año que viene?",
     "japon"),
])
def test_what_the_person_tells_of_their_life_is_served_back_to_them_in_their_words(database, backend, told, ask, word):
    result = _asked(database, backend, [{"text": told}], _ask(ask, [word], writer=0, days_later=20))
    assert served(result), result["asks"]


def test_a_diagnosis_told_beside_a_diet_is_never_kept_nor_served(database, backend):
    result = _asked(database, backend, [{"text": "Mi mujer es vegetariana y yo celíaco, tenlo en cuenta para las "
                                                 "reservas"}],
                    _ask("resérvame para cenar el sábado", [], ["celiac", "celíaco"], writer=0, days_later=3))
    assert served(result), result["asks"]
    assert not any("celíaco" in m["value"] for m in result["memories"]), result["memories"]
