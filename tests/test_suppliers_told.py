"""Suppliers told the way people tell them: the business buys from them, pays them, or has stopped. A named business
the writer buys from is a supplier whatever the gate guessed, its terms are what the business pays it, and a new
supplier told as a change replaces the old note."""
from __future__ import annotations

import datetime as dt

import pytest

from memory_core.backends.local_extractor import LocalExtractor
from memory_core.domain.model_port import ExtractionContext
from tests.test_serving import _asked, served
from tests.test_serving import ask_later as _ask


def facts(text, category="customer"):
    ctx = ExtractionContext(message=text, today=dt.date(2026, 3, 2), gate_category=category, gate_scope="shared")
    return LocalExtractor().extract(ctx)[0]


@pytest.mark.parametrize("text, name", [
    ("La madera se la compramos a Maderas Ruiz", "maderas ruiz"),
    ("We buy our timber from Kingsley Timber", "kingsley timber"),
    ("Ya no trabajamos con Transportes Beltrán, ahora nos lleva todo Seur", "transportes beltran"),
])
def test_a_business_the_writer_buys_from_is_a_supplier_even_when_the_gate_says_customer(text, name):
    [fact] = facts(text)
    assert fact.subject == f"name:{name}" and fact.category == "supplier"


def test_a_business_that_buys_from_the_writer_stays_a_customer():
    [fact] = facts("Los Pérez nos compran el pan todos los días")
    assert fact.category == "customer"


@pytest.mark.parametrize("text, sentence", [
    ("Les pagamos a 30 días a Hierros Olano", "Pagamos a Hierros Olano a 30 días."),
    ("We pay Kingsley Timber at 60 days", "We pay Kingsley Timber at 60 days."),
])
def test_a_suppliers_term_is_what_the_business_pays_it(text, sentence):
    [fact] = facts(text)
    assert fact.attribute == "plazo_pago" and fact.sentence == sentence


def test_a_customers_term_is_still_what_the_customer_pays():
    [fact] = facts("Talleres García paga a 60 días")
    assert fact.sentence == "Talleres García paga a 60 días."


def test_a_sentence_opening_pronoun_is_no_contact_person():
    assert not [f for f in facts("Nos lleva la contabilidad Asesoría Puig", category="company")
                if f.attribute == "persona_contacto"]


def test_not_working_with_someone_is_no_opening_hours():
    [fact] = facts("Ya no trabajamos con Transportes Beltrán, ahora nos lleva todo Seur", category="supplier")
    assert not fact.attribute.startswith("nota_horario")
    [hours] = facts("Los lunes no trabajamos", category="company")
    assert hours.attribute.startswith("nota_horario")


def test_a_new_supplier_told_as_a_change_replaces_the_old_one_in_the_block(database, backend):
    result = _asked(database, backend,
                    [{"text": "La madera se la compramos a Maderas Ruiz, nos la traen los martes"},
                     {"text": "Ya no le compramos la madera a Maderas Ruiz, ahora nos la trae Maderas Pino",
                      "days_later": 20}],
                    _ask("¿a quién le pido la madera para el pedido de la semana que viene?", ["pino"], ["martes"]))
    assert served(result), result["asks"]
    assert result["superseded"] == 1, result["memories"]
