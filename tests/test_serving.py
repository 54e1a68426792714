"""What a later turn is served of what was learnt: `memoria eval updates`' asks (a turn on another channel, by the
writer, a colleague or a member who may read only "general"), and the fixes the held-out serving sets led to
(evals/serve_heldout.jsonl, evals/serve2_heldout.jsonl; docs/decisions.md, 2026-12-07): the day a supplier invoices,
a contact person said as "X have a new account manager, Y", what "we charge" is, and an English block saying a term
in English."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app import cli
from evals.updates import load_update_cases, run_case
from memory_core.domain.errors import InvalidInput
from memory_core.domain.labels import english_value
from tests.test_context import World

TERM = [{"text": "Talleres García paga a 60 días"}]


def served(result) -> bool:
    """Every ask's block said what it must and nothing it must not."""
    return not any(a["missing"] or a["leaked"] for a in result["asks"])


def _asked(database, backend, messages, *asks):
    case = {"id": "s", "messages": messages, "expect": [], "supersessions": 0, "asks": list(asks)}
    return run_case(database, backend, case, "test-serving")


def ask_later(text, holds=(), not_holds=(), writer=1, days_later=3):
    """A later WhatsApp turn of `writer` (by default the colleague), and what its block must and must not say."""
    return {"text": text, "writer": writer, "channel": "whatsapp", "days_later": days_later,
            "holds": list(holds), "not_holds": list(not_holds)}


def test_an_ask_gets_the_block_its_asker_would_get_and_the_eval_counts_what_it_missed_and_leaked(database, tmp_path):
    cases = [
        {"id": "a", "messages": TERM, "expect": [], "supersessions": 0, "asks": [
            {"text": "factura a Talleres García", "writer": 1, "channel": "whatsapp", "days_later": 3, "holds": ["60"]},
            {"text": "factura a Talleres García", "writer": 2, "not_holds": ["60"]}]},
        # The colleague is served the term, so a case that says they must not be is wrong: a leak.
        {"id": "b", "messages": TERM, "expect": [], "supersessions": 0, "asks": [
            {"text": "factura a Talleres García", "writer": 1, "not_holds": ["60"]}]},
        {"id": "c", "messages": TERM, "expect": [], "supersessions": 0, "asks": [
            {"text": "factura a Talleres García", "holds": ["90"]}]},
    ]
    path = tmp_path / "serve.jsonl"
    path.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases), encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", "updates", "--dataset", str(path), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["asks_right"] == "2/4" and report["asks_leaked"] == 1 and report["asks_missing"] == 1
    assert report["wrong"] == ["b", "c"]
    first = report["cases"][0]["asks"]
    assert "60 días" in first[0]["block"] and "60" not in first[1]["block"]


def test_a_turn_that_follows_the_assistant_naming_a_customer_is_served_its_term(database, backend):
    result = _asked(database, backend, TERM, {
        "text": "vale, y hazle también la factura", "writer": 1, "channel": "whatsapp", "days_later": 2,
        "previous_assistant": "He preparado el presupuesto para Talleres García: 1.240 € más IVA.", "holds": ["60"]})
    assert result["right"], result["asks"]


@pytest.mark.parametrize("ask", [
    {"text": "factura", "writer": 3},
    {"text": "", "holds": []},
    {"text": "factura", "holds": "60"},
])
def test_a_malformed_ask_is_an_error_naming_its_line(tmp_path, ask):
    path = tmp_path / "serve.jsonl"
    path.write_text(json.dumps({"id": "x", "messages": TERM, "expect": [], "supersessions": 0, "asks": [ask]}),
                    encoding="utf-8")
    with pytest.raises(InvalidInput, match="line 1: an ask"):
        load_update_cases(path)


@pytest.mark.parametrize("first, then, old, new", [
    ("Apex Cleaning invoices us on the 1st of each month", "Actually Apex Cleaning moved their invoicing to the 15th",
     "on the 1st of each month", "on the 15th of each month"),
    ("Limpiezas Sol nos pasa el recibo el día 5", "Limpiezas Sol han pasado la facturación al 20",
     "el día 5 de cada mes", "el día 20 de cada mes"),
    ("Gestoría Martín nos factura a primeros de mes", "Gestoría Martín nos factura ahora a final de mes",
     "a primeros de mes", "a final de mes"),
])
def test_the_day_a_supplier_invoices_is_one_fact_a_new_day_supersedes(database, backend, first, then, old, new):
    memories = run_case(database, backend, {"id": "d", "messages": [{"text": first}, {"text": then, "days_later": 9}],
                                            "expect": [], "supersessions": 0}, "test-serving")["memories"]
    said = {(m["attribute"], m["value"], m["status"]) for m in memories}
    assert said == {("dia_facturacion", old, "superseded"), ("dia_facturacion", new, "active")}
    # It invoices us: a supplier, not a customer.
    assert {m["category"] for m in memories} == {"supplier"}


@pytest.mark.parametrize("text", [
    "Talleres García nos factura 30 euros por la revisión",  # an amount, not a day
    "Hierros Aramburu nos factura el 15% más que el año pasado",
    "¿Apex Cleaning nos factura el 1?",
    "Apex Cleaning doesn't invoice us on the 1st any more",
])
def test_an_amount_a_question_or_a_denial_is_no_billing_day(database, backend, text):
    memories = run_case(database, backend, {"id": "n", "messages": [{"text": text}], "expect": [],
                                            "supersessions": 0}, "test-serving")["memories"]
    assert not [m for m in memories if m["attribute"] == "dia_facturacion"]


def test_a_business_that_has_a_new_account_manager_has_a_new_contact_person(database, backend):
    memories = run_case(database, backend, {"id": "c", "messages": [
        {"text": "Our contact at Nordwind Logistics is Sarah Miles"},
        {"text": "Nordwind Logistics have a new account manager, Tom Becker", "days_later": 40}],
        "expect": [], "supersessions": 0}, "test-serving")["memories"]
    said = {(m["attribute"], m["value"], m["status"]) for m in memories}
    assert said == {("persona_contacto", "Sarah Miles", "superseded"), ("persona_contacto", "Tom Becker", "active")}


@pytest.mark.parametrize("text", ["We charge £45 an hour for call-outs", "we charge 30 quid for a callout"])
def test_what_we_charge_is_the_business_s_price_served_to_a_colleague(database, backend, text):
    result = _asked(database, backend, [{"text": text}], {"text": "quote Apex Cleaning for a two-hour call-out",
                                                           "writer": 1, "days_later": 2, "holds": [text.split()[2]]})
    assert [(m["subject"], m["category"]) for m in result["memories"]] == [("org", "company")]
    assert result["right"], result["asks"]


def test_an_english_block_says_a_term_in_english_and_a_spanish_one_names_it_in_spanish(factory, system_session,
                                                                                       database, embedder):
    world = World(factory, system_session, database, embedder)
    c = factory.contact(world.org, name="Riverside Deli", kind="customer")
    for attribute, value in (("plazo_pago", "45 días"), ("forma_pago", "efectivo")):
        world.remember(f"Riverside Deli: {value}", attribute=attribute, value=value, category="customer",
                       subject=f"contact:{c.id}", area="contacts")
    english = world.turn("please draft an invoice for Riverside Deli, they ordered 12 trays").text
    assert "payment term <<<45 days>>>" in english and "payment method <<<cash>>>" in english
    spanish = world.turn("hazme la factura de Riverside Deli, son 12 bandejas").text
    assert "plazo de pago <<<45 días>>>" in spanish and "forma de pago <<<efectivo>>>" in spanish


@pytest.mark.parametrize("value, english", [
    ("45 días", "45 days"), ("1 día", "1 day"), ("contra reembolso", "cash on delivery"), ("al contado", "cash"),
    ("Calle Mayor 3", "Calle Mayor 3"),
])
def test_a_canonical_value_in_english(value, english):
    assert english_value(value) == english


def test_a_contact_who_left_is_replaced_by_the_one_we_deal_with_now(database, backend):
    result = _asked(database, backend, [
        {"text": "Our contact at Patel Wholesale is Sunil"},
        {"text": "Sunil has left Patel Wholesale, we deal with Priya now", "days_later": 25}],
        {"text": "chase Patel Wholesale about the invoice", "writer": 1, "days_later": 1, "holds": ["priya"]})
    said = {(m["attribute"], m["value"], m["status"]) for m in result["memories"]}
    assert said == {("persona_contacto", "Sunil", "superseded"), ("persona_contacto", "Priya", "active")}
    assert served(result), result["asks"]


@pytest.mark.parametrize("wish, refused", [
    ("Calzados Rey quiere pagar a 120 días pero le he dicho que no", "120"),
    ("Linden Nursery wanted to pay at 90 days but I said no", "90"),
])
def test_what_a_customer_asked_for_and_was_refused_is_never_served_as_their_term(database, backend, wish, refused):
    name = wish.split(" quiere")[0].split(" wanted")[0]
    result = _asked(database, backend, [{"text": f"{name} paga a 30 días"}, {"text": wish, "days_later": 3}],
                    {"text": f"factura a {name}", "writer": 1, "days_later": 1, "holds": ["30"],
                     "not_holds": [refused]})
    assert result["right"], result["asks"]
    assert [m["value"] for m in result["memories"]] == ["30 días"]


def test_a_delivery_day_for_a_while_stands_beside_the_usual_one_without_replacing_it(database, backend):
    result = _asked(database, backend, [
        {"text": "Frutas Medina reparte los lunes"},
        {"text": "este mes Frutas Medina reparte los martes por obras en su nave", "days_later": 5}],
        {"text": "pide fruta a Frutas Medina", "writer": 1, "days_later": 1, "holds": ["martes", "lunes"]})
    assert result["superseded"] == 0 and result["right"], result["asks"]


@pytest.mark.parametrize("text, subject, name", [
    ("el de hierros del norte se llama ahora luis", "name:hierros del norte", "Luis"),
    ("the guy at patel wholesale is called sunil btw", "name:patel wholesale", "Sunil"),
    ("El de Hierros del Norte se llama ahora Luis", "name:hierros del norte", "Luis"),
])
def test_the_one_at_a_business_said_by_name_is_its_contact_even_typed_in_lower_case(database, backend, text, subject,
                                                                                   name):
    result = _asked(database, backend, [{"text": text, "channel": "whatsapp"}],
                    {"text": f"llama a {subject[5:]}", "writer": 1, "channel": "whatsapp", "days_later": 1,
                     "holds": [name]})
    # Only the contact: "btw" is no part of the name and leaves no note of the writer's behind.
    assert [(m["subject"], m["attribute"], m["value"]) for m in result["memories"]] == \
        [(subject, "persona_contacto", name)]
    assert result["right"], result["asks"]


def test_a_term_texted_without_at_replaces_the_old_one_it_names(database, backend):
    result = _asked(database, backend, [{"text": "harbor foods pay 45 days now not 30", "channel": "whatsapp"}],
                    {"text": "invoice harbor foods pls", "writer": 1, "channel": "whatsapp", "days_later": 2,
                     "holds": ["45"], "not_holds": ["30"]})
    assert [(m["attribute"], m["value"]) for m in result["memories"]] == [("plazo_pago", "45 días")]
    assert result["right"], result["asks"]
