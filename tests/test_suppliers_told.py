"""Suppliers told the way people tell them: the business buys from them, pays them, or has stopped. A named business
the writer buys from is a supplier whatever the gate guessed, its terms are what the business pays it, and a new
supplier told as a change replaces the old note."""
from __future__ import annotations

import datetime as dt
from functools import cache

import pytest

from memory_core.backends import LocalBackend
from memory_core.domain.model_port import ExtractionContext
from tests.test_serving import _asked, served
from tests.test_serving import ask_later as _ask


@cache
def _backend() -> LocalBackend:
    return LocalBackend()


def facts(text, category="customer"):
    """The local backend's facts of a message the gate passed as `category` (its gate judges each unit's note)."""
    ctx = ExtractionContext(message=text, today=dt.date(2026, 3, 2), gate_category=category, gate_scope="shared")
    return _backend().extract(ctx)[0]


@pytest.mark.parametrize("text, thing, supplier, sentence", [
    ("La madera se la compramos a Maderas Ruiz", "madera", "Maderas Ruiz", "La empresa compra madera a Maderas Ruiz."),
    ("Ahora el aceite se lo compramos a Almazara Los Arcos", "aceite", "Almazara Los Arcos", None),
    ("compramos la fruta a Frutas Paco", "fruta", "Frutas Paco", None),
    ("ahora la madera nos la trae Maderas Pino", "madera", "Maderas Pino", None),
    ("Ya no le compramos la madera a Maderas Ruiz, ahora nos la trae Maderas Pino", "madera", "Maderas Pino", None),
    ("Nuestro proveedor de café es Cafés Orbe", "cafe", "Cafés Orbe", None),
    ("We buy our timber from Kingsley Timber", "timber", "Kingsley Timber",
     "The business buys its timber from Kingsley Timber."),
    ("Our paper supplier is now Tillman Paper", "paper", "Tillman Paper", None),
    ("Dalton Joinery supplies us all our doors", "door", "Dalton Joinery", None),
])
def test_who_the_business_buys_a_thing_from_is_one_fact_of_the_business(text, thing, supplier, sentence):
    [fact] = [f for f in facts(text) if f.attribute.startswith("proveedor_")]
    assert (fact.subject, fact.attribute, fact.value) == ("org", f"proveedor_{thing}", supplier)
    assert sentence is None or fact.sentence == sentence


@pytest.mark.parametrize("text", ["No le compramos la fruta a Frutas Paco", "La fruta ya no nos la trae Frutas Paco",
                                  "Lo compramos todo a Makro", "We get our veg box from Riverford"])
def test_what_the_business_does_not_buy_or_a_household_buys_is_no_supplier_of_the_business(text):
    assert not [f for f in facts(text) if f.attribute.startswith("proveedor_")]


def test_a_supplier_fact_keeps_a_note_of_what_else_was_said_on_the_supplier():
    found = facts("Maderas Pino nos trae la madera los martes")
    assert {f.attribute for f in found if f.subject == "org"} == {"proveedor_madera"}
    [note] = [f for f in found if f.subject == "name:maderas pino"]
    assert note.category == "supplier" and "martes" in note.value


@pytest.mark.parametrize("text, name", [
    ("La madera se la compramos a Maderas Ruiz, que nos la deja muy bien de precio", "maderas ruiz"),
    ("Ya no trabajamos con Transportes Beltrán, ahora nos lleva todo Seur", "transportes beltran"),
])
def test_a_business_the_writer_buys_from_is_a_supplier_even_when_the_gate_says_customer(text, name):
    [fact] = [f for f in facts(text) if f.subject.startswith("name:")]
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


@pytest.mark.parametrize("old", ["Aceites Cazorla", "Aceites Cazorla S.L."])
def test_a_new_supplier_told_as_a_change_replaces_the_old_one_in_the_block(database, backend, old):
    result = _asked(database, backend,
                    [{"text": f"El aceite de oliva se lo compramos a {old}, en garrafas de 5 litros"},
                     {"text": "Desde este mes el aceite se lo compramos a Almazara Los Arcos, nos sale más barato",
                      "days_later": 20}],
                    _ask("¿a quién le pido el aceite para el pedido de la semana que viene?", ["Arcos"],
                         ["Cazorla"]))
    assert served(result), result["asks"]
    assert result["superseded"] >= 1, result["memories"]


def test_our_customer_number_at_a_supplier_is_no_bank_account_to_review():
    [fact] = facts("Our customer account number with Hargreaves Timber is HT-5520.")
    assert fact.subject == "name:hargreaves timber" and fact.attribute != "cuenta_bancaria"
    [bank] = facts("Hargreaves Timber have a new bank account, sort code 20-00-00")
    assert bank.attribute == "cuenta_bancaria"


@pytest.mark.parametrize("text, name", [("a vinoteca el tonel les hacemos un 5% de dto en todos los pedidos",
                                         "vinoteca el tonel"),
                                        ("a bar la plaza le hacemos un 10% de descuento", "bar la plaza")])
def test_a_business_named_in_lower_case_with_an_article_inside_keeps_its_whole_name(text, name):
    [fact] = facts(text)
    assert (fact.subject, fact.attribute) == (f"name:{name}", "descuento")


@pytest.mark.parametrize("text, name, person", [
    ("accounts contact at brindley & shaw is Gemma, gemma.p@brindleyshaw.co.uk", "brindley shaw", "Gemma"),
    ("el contacto en hermanos pardo es Lucía", "hermanos pardo", "Lucía"),
])
def test_a_business_typed_in_lower_case_where_the_contact_rule_expects_one_is_that_business(text, name, person):
    [fact] = [f for f in facts(text) if f.attribute == "persona_contacto"]
    assert (fact.subject, fact.value) == (f"name:{name}", person)


def test_words_that_name_no_one_in_that_place_are_no_business():
    assert not [f for f in facts("our contact at the shop is Gemma") if f.subject.startswith("name:the")]


def test_what_the_business_has_said_with_our_and_given_to_share_is_the_business_s():
    [fact] = facts("Our shipping boxes come from PackRight in Leeds, account 4471.", category="company")
    assert fact.subject == "org"


def test_a_town_that_starts_like_a_verb_of_reading_is_no_pastime():
    [fact] = facts("We deliver to Leeds on Fridays", category="company")
    assert fact.subject == "org"


@pytest.mark.parametrize("text, attribute, value", [
    ("Invoices for Greenway Vets go to Sandra in their accounts team.", "persona_contacto", "Sandra"),
    ("Invoices for Greenway Vets should go to Greenway Veterinary Ltd", "razon_social", "Greenway Veterinary Ltd"),
    ("Invoices for Greenway Vets are made out to Greenway Veterinary Ltd", "razon_social", "Greenway Veterinary Ltd"),
])
def test_invoices_that_go_to_a_person_name_who_gets_them_not_the_company_they_are_made_out_to(text, attribute, value):
    [fact] = facts(text)
    assert (fact.subject, fact.attribute, fact.value) == ("name:greenway vets", attribute, value)
