"""Facts told in passing, the way the tuning half of evals/serve8 tells them (docs/decisions.md, 2026-12-07; its other
half, evals/serve8_heldout.jsonl, was not tuned on): as the reason for an order, in a list, with "por si" after it,
as a reminder of what is; and what must stay unlearnt: a one-off, a request to note what was said before. Each case
runs through the real pipeline and the block a colleague's later WhatsApp turn gets."""
from __future__ import annotations

import pytest

from tests.test_serving import _asked, served
from tests.test_serving import ask_later as _ask


@pytest.mark.parametrize("order", [
    "hola, hazme la factura de Talleres Ruiz del mes de abril xfa, que desde este mes pagan a 60, lo hablé ayer con él",
    "prepara la factura de Talleres Ruiz, porque ahora pagan a 60 días",
])
def test_a_term_told_as_the_reason_for_an_order_replaces_the_old_one(database, backend, order):
    result = _asked(database, backend, [{"text": "Talleres Ruiz nos paga a 45 días, siempre por transferencia."},
                                        {"text": order, "days_later": 20}],
                    _ask("prepárame la factura de talleres ruiz de mayo", ["60", "transferencia"], ["45"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_an_order_whose_reason_is_for_today_learns_nothing(database, backend):
    result = _asked(database, backend, [{"text": "mándale la factura a Talleres García, que la necesitan hoy"}],
                    _ask("factura a Talleres García", [], ["hoy"]))
    assert served(result), result["asks"]
    assert result["memories"] == [], result["memories"]


def test_each_line_of_a_list_is_its_customer_s_term(database, backend):
    told = ("apunta xfa:\n- Bodegas Caro: pagan a 60 x transferencia\n- Restaurante Lua: al contado, cuando se "
            "entrega\n- Catering Olmo: a 30 pero siempre se retrasan")
    result = _asked(database, backend, [{"text": told}],
                    _ask("hazme la factura de bodegas caro", ["60", "transferencia"]),
                    _ask("cómo le cobro a lua el pedido de mañana?", ["contado"]),
                    _ask("factura a catering olmo", ["30"]))
    assert served(result), result["asks"]


@pytest.mark.parametrize("told", [
    "Bloom & Co want to move to direct debit from now on, I've sent them the mandate form",
    "Bloom & Co switched to direct debit last month",
])
def test_a_customer_moving_to_another_way_of_paying_replaces_the_old_one(database, backend, told):
    result = _asked(database, backend, [{"text": "Bloom & Co pay by card."}, {"text": told, "days_later": 30}],
                    _ask("how does Bloom & Co pay?", ["direct debit"], ["<<<card>>>"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


@pytest.mark.parametrize("told, ask, word", [
    ("vivo en Leganés con mis padres, x si me buscas cosas cerca", "busca gimnasios baratos cerca de casa", "leganes"),
    ("anyway! remind me my mum's birthday is the 3rd of April, she's turning 70 this year",
     "what should I get mum for her birthday?", "3rd of april"),
    ("recuérdame que el cumple de mi madre es el 3 de abril", "qué le regalo a mi madre por su cumple?", "3 de abril"),
])
def test_a_fact_said_with_an_aside_or_as_a_reminder_is_learnt(database, backend, told, ask, word):
    result = _asked(database, backend, [{"text": told}], _ask(ask, [word], writer=0))
    assert served(result), result["asks"]


@pytest.mark.parametrize("told", [
    "al pedido de hoy de Bar Manolo hazle un 10% de descuento, solo esta vez q les llegó tarde la entrega",
    "just this once, Bar Manolo get 10% off on today's order",
    "apúntalo xfa q lo uso cada semana",
    "save that please, I use it every week",
    "remind me to call Bar Manolo about the 10% tomorrow",
])
def test_a_one_off_or_a_request_to_note_what_came_before_teaches_nothing(database, backend, told):
    result = _asked(database, backend, [{"text": told}], _ask("hazme el albarán de bar manolo", [], ["10%"]))
    assert served(result), result["asks"]
    assert result["memories"] == [], result["memories"]


def test_a_standing_discount_is_still_learnt(database, backend):
    result = _asked(database, backend, [{"text": "A Bar Manolo hazle siempre un 10% de descuento"}],
                    _ask("hazme el albarán de bar manolo", ["10%"]))
    assert served(result), result["asks"]


@pytest.mark.parametrize("told, ask, words", [
    ("and keep it short please, no emojis", "write a message to congratulate my boss", ["short", "no emojis"]),
    ("sé breve y sin emojis, porfa", "escribe un mensaje para mi jefe", ["breve", "sin emojis"]),
    ("so I need to rethink breakfasts, can you give me some low sugar ideas? not a fan of eggs btw, never have been",
     "breakfast ideas for this week pls", ["eggs"]),
])
def test_how_the_writer_wants_answers_and_what_they_dislike_are_kept(database, backend, told, ask, words):
    result = _asked(database, backend, [{"text": told}], _ask(ask, words, writer=0))
    assert served(result), result["asks"]


@pytest.mark.parametrize("before, after, ask, new, old", [
    ("salgo a correr 3 días por semana por el Retiro, normalmente a las 7 de la mañana",
     "desde que nació la niña ya no salgo a correr, ahora hago yoga en casa cuando se duerme",
     "planéame el sábado por la mañana", "yoga", "retiro"),
    ("I go running every morning before work, usually along the canal", "I stopped running last month, no time",
     "plan my mornings this week", "gave it up", "canal"),
    ("vivo en Leganés con mis padres", "ya estoy en el piso nuevo de Getafe!!! por fin independizado",
     "busca gimnasios baratos cerca de casa", "getafe", "leganes"),
])
def test_a_pastime_given_up_or_a_new_home_replaces_the_old_one(database, backend, before, after, ask, new, old):
    result = _asked(database, backend, [{"text": before}, {"text": after, "days_later": 60}],
                    _ask(ask, [new], [old], writer=0))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]


def test_the_name_of_someone_just_talked_of_is_no_customer(database, backend):
    result = _asked(database, backend, [{"text": "Ha nacido la niña! Se llama Alba por cierto 😍"}],
                    _ask("hazme la lista de clientes", [], ["<<<alba>>> (cliente)"]))
    assert served(result), result["asks"]
    assert not any(m["subject"].startswith("name:") for m in result["memories"]), result["memories"]


def test_a_payment_told_with_the_account_it_goes_to_keeps_its_term(database, backend):
    told = "Hola! Apunta: a Papelera del Sur les pagamos a 30 días por transferencia, a la cuenta que acaba en 4410."
    result = _asked(database, backend, [{"text": told}], _ask("factura de papelera del sur", ["30"]))
    assert served(result), result["asks"]
    assert not any(m["attribute"] == "cuenta_bancaria" and m["status"] == "active" for m in result["memories"])


@pytest.mark.parametrize("told", [
    "my son uses an inhaler for his asthma, he's playing football on saturday",
    "tengo asma, siempre llevo el ventolin en el bolso",
])
def test_a_chronic_condition_or_its_medicine_is_never_kept_or_served(database, backend, told):
    result = _asked(database, backend, [{"text": told}],
                    _ask("plan saturday", [], ["asthma", "asma", "inhaler", "ventolin"], writer=0))
    assert served(result), result["asks"]
    assert result["memories"] == [], result["memories"]


@pytest.mark.parametrize("told", [
    "Para entrar al almacén el código de la alarma es 4471, apúntalo",
    "btw the key safe code for the flat is 1906, cleaner comes on Friday",
])
def test_a_code_that_opens_a_place_is_never_kept_or_served(database, backend, told):
    result = _asked(database, backend, [{"text": told}],
                    _ask("how do I get in on friday?", [], ["4471", "1906"]))
    assert served(result), result["asks"]
    assert result["memories"] == [], result["memories"]


def test_what_the_vet_said_of_the_dog_is_learnt_for_the_dog_s_food(database, backend):
    result = _asked(database, backend,
                    [{"text": "Tenemos una perrita, Lola, una carlina de 6 años"},
                     {"text": "la veterinaria dice que es alérgica a la ternera, así que nada de premios de ternera"}],
                    _ask("se ha acabado el pienso de la perra, qué le compro?", ["ternera"], writer=0))
    assert served(result), result["asks"]
