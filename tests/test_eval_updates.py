"""`memoria eval updates` and the updates it measures: a new value supersedes the old one (kept as a version),
and only when it should. Each sequence runs through the real pipeline on a scratch org, as the eval does."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app import cli
from evals.updates import load_update_cases, run_case
from memory_core.domain.errors import InvalidInput
from memory_core.domain.text import fold

TERMS = {"id": "u1", "messages": [{"text": "Talleres García paga a 30 días"},
                                  {"text": "talleres garcía ahora paga a 60 días", "days_later": 5}],
         "expect": [{"subject": "Talleres García", "holds": ["60"], "not_holds": ["30"]}], "supersessions": 1}


def _dataset(tmp_path, cases) -> str:
    path = tmp_path / "updates.jsonl"
    path.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n", encoding="utf-8")
    return str(path)


def test_the_eval_scores_a_met_case_right_and_one_the_pipeline_cannot_meet_wrong(database, tmp_path):
    unmet = TERMS | {"id": "u2", "expect": [{"subject": "Talleres García", "holds": ["90"]}], "supersessions": 0}
    result = CliRunner().invoke(cli, ["eval", "updates", "--dataset", _dataset(tmp_path, [TERMS, unmet]), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["n"] == 2 and report["cases_right"] == 1 and report["wrong"] == ["u2"]
    assert report["holds_right"] == "1/2"
    assert report["wrong_supersessions"] == 1 and report["missing_supersessions"] == 0
    assert report["stale_left_active"] == 0


def test_a_malformed_case_is_an_error_naming_its_line(tmp_path):
    with pytest.raises(InvalidInput, match="line 2"):
        load_update_cases(_dataset(tmp_path, [TERMS, {"id": "x", "messages": [], "expect": [], "supersessions": 0}]))


def _run(database, backend, *texts, **first):
    messages = [{"text": t} for t in texts]
    messages[0] |= first
    case = {"id": "t", "messages": messages, "expect": [], "supersessions": 0}
    memories = run_case(database, backend, case, "test-updates")["memories"]
    active = [m for m in memories if m["status"] == "active"]
    superseded = [m for m in memories if m["status"] == "superseded"]
    return active, superseded, memories


def _says(memory, word):
    return fold(word) in fold(f"{memory['value']} {memory['sentence']}")


def test_a_change_with_a_value_of_the_known_facts_shape_updates_it(database, backend):
    """"changed our delivery day to tuesdays" is a note; its weekdays update the delivery day, which keeps its name."""
    active, superseded, _ = _run(database, backend, "Printwise delivers every friday",
                                 "printwise changed our delivery day to tuesdays")
    assert [(m["attribute"], m["value"]) for m in active] == [("dia_entrega", "tuesday")]
    assert len(superseded) == 1 and superseded[0]["attribute"] == "dia_entrega" and _says(superseded[0], "friday")


def test_a_note_with_a_new_amount_replaces_the_note_on_the_same_topic(database, backend):
    active, superseded, _ = _run(database, backend, "Nordic Paper charges us 40 euros a box",
                                 "nordic paper raised the price to 46 euros a box")
    assert len(active) == 1 and _says(active[0], "46") and not _says(active[0], "40")
    assert len(superseded) == 1 and _says(superseded[0], "40")


def test_a_short_correction_replaces_the_value_just_given(database, backend):
    active, superseded, _ = _run(database, backend, "Pinturas Sol paga a 60 días", "no, perdona, a 90")
    assert [(m["subject"], m["attribute"], m["value"]) for m in active] == \
        [("name:pinturas sol", "plazo_pago", "90 días")]
    assert [m["value"] for m in superseded] == ["60 días"]


def test_a_new_phone_number_is_no_bank_account(database, backend):
    active, superseded, memories = _run(database, backend, "el móvil de Cristalería Prieto es 633221100",
                                        "cristalería prieto ha cambiado de número, ahora es 644556677")
    assert not [m for m in memories if m["status"] == "proposed"]
    assert [(m["attribute"], m["value"]) for m in active] == [("telefono", "644556677")]
    assert [m["value"] for m in superseded] == ["633221100"]


def test_where_the_person_lives_now_replaces_where_they_lived(database, backend):
    active, superseded, _ = _run(database, backend, "vivo en Bilbao", "ahora vivo en Sevilla")
    assert [(m["attribute"], m["value"]) for m in active] == [("residencia", "Sevilla")]
    assert [m["value"] for m in superseded] == ["Bilbao"]


@pytest.mark.parametrize("later", [
    "hace años bodegas arana pagaba a 120 días, un desastre",  # how it was once
    "igual cambiamos a bodegas arana a 120 días",  # a maybe
    "si bodegas arana pagara a 120 días iríamos mucho peor",  # an if
])
def test_a_story_a_maybe_or_an_if_neither_supersedes_nor_is_kept(database, backend, later):
    active, superseded, _ = _run(database, backend, "Bodegas Arana paga a 30 días", later)
    assert not superseded
    assert [m["value"] for m in active] == ["30 días"]


def test_another_customer_with_the_same_attribute_supersedes_nothing(database, backend):
    active, superseded, _ = _run(database, backend, "Recambios Lozano paga a 30 días", "Recambios López paga a 90 días")
    assert not superseded
    assert sorted((m["subject"], m["value"]) for m in active) == \
        [("name:recambios lopez", "90 días"), ("name:recambios lozano", "30 días")]


def test_a_new_account_manager_is_the_contact_person_not_a_bank_account(database, backend):
    active, superseded, memories = _run(database, backend, "our account manager at Bellini Catering is Laura Pike",
                                        "bellini catering has a new account manager, Mark Owens")
    assert not [m for m in memories if m["status"] == "proposed"]
    assert [(m["attribute"], m["value"]) for m in active] == [("persona_contacto", "Mark Owens")]
    assert [m["value"] for m in superseded] == ["Laura Pike"]


def test_a_note_said_again_as_it_is_nowadays_replaces_the_note_of_the_same_words(database, backend):
    active, superseded, _ = _run(database, backend, "I drink my tea with honey", "nowadays I drink my tea plain")
    assert len(active) == 1 and _says(active[0], "plain")
    assert len(superseded) == 1 and _says(superseded[0], "honey")


def test_a_move_to_a_new_address_replaces_the_old_one_but_a_second_shop_does_not(database, backend):
    active, superseded, _ = _run(database, backend, "Hierros Olano tiene el almacén en la calle Toledo 8",
                                 "hierros olano se ha trasladado, ahora están en la avenida de Burgos 21")
    assert len(active) == 1 and _says(active[0], "Burgos") and len(superseded) == 1 and _says(superseded[0], "Toledo")
    active, superseded, _ = _run(database, backend, "Hierros Olano tiene el almacén en la calle Toledo 8",
                                 "la tienda nueva de Hierros Olano está en la calle Alcalá 3")
    assert not superseded and len(active) == 2


def test_a_past_routine_of_a_supplier_is_not_taken_for_its_current_one(database, backend):
    active, superseded, _ = _run(database, backend, "Printwise delivers on thursdays",
                                 "printwise used to deliver on mondays, years ago")
    assert not superseded
    assert [(m["attribute"], m["value"]) for m in active] == [("dia_entrega", "Thursday")]


def test_a_new_invoices_email_of_a_contact_named_with_a_possessive_replaces_the_old_one(database, backend):
    """"Oakridge Dental's" is Oakridge Dental, and a new email is no bank account."""
    active, superseded, memories = _run(database, backend, "Oakridge Dental's accounts email is accounts@oakridge.com",
                                        "oakridge dental changed their invoices email to billing@oakridge.com")
    assert not [m for m in memories if m["status"] == "proposed"]
    assert [(m["subject"], m["attribute"], m["value"]) for m in active] == \
        [("name:oakridge dental", "email", "billing@oakridge.com")]
    assert [m["value"] for m in superseded] == ["accounts@oakridge.com"]


def test_these_days_is_no_part_of_what_a_note_is_about(database, backend):
    active, superseded, _ = _run(database, backend, "I drink my coffee with oat milk",
                                 "these days I drink my coffee with almond milk")
    assert len(active) == 1 and _says(active[0], "almond")
    assert len(superseded) == 1 and _says(superseded[0], "oat")


def test_the_business_closing_time_is_learnt_and_a_new_one_replaces_it(database, backend):
    active, superseded, _ = _run(database, backend, "cerramos a las 20:00", "desde el lunes cerramos a las 21:00")
    assert [(m["subject"], m["attribute"], m["value"]) for m in active] == [("org", "hora_cierre", "21:00")]
    assert [m["value"] for m in superseded] == ["20:00"]


def test_a_closing_time_said_as_a_change_does_not_replace_the_opening_time(database, backend):
    active, superseded, _ = _run(database, backend, "el almacén abre a las 8:00", "ahora la tienda cierra a las 20:00")
    assert not superseded
    assert sorted((m["attribute"], m["value"]) for m in active) == [("hora_apertura", "8:00"), ("hora_cierre", "20:00")]


def test_one_days_hours_are_no_standing_hours(database, backend):
    active, _, _ = _run(database, backend, "mañana cerramos a las 14")
    assert not [m for m in active if m["attribute"].startswith("hora_")]


def test_a_business_placed_at_a_street_and_moving_keeps_one_address(database, backend):
    active, superseded, _ = _run(database, backend, "Printwise is at 3 Low Road",
                                 "printwise's new address is 10 High Street")
    assert [(m["subject"], m["attribute"], m["value"]) for m in active] == \
        [("name:printwise", "direccion", "10 High Street")]
    assert [m["value"] for m in superseded] == ["3 Low Road"]


def test_someone_in_a_street_is_no_address():
    from memory_core.backends.local_extractor.extractor import LocalExtractor
    from memory_core.domain.model_port import ExtractionContext

    facts, _ = LocalExtractor().extract(ExtractionContext(message="Laura está en la calle Mayor comprando"))
    assert not [f for f in facts if f.attribute == "direccion"]


def test_a_day_said_as_also_is_added_beside_the_known_one(database, backend):
    active, superseded, _ = _run(database, backend, "Kingsley Timber delivers on mondays",
                                 "kingsley timber now also delivers on thursdays")
    assert not superseded
    assert sorted(m["value"] for m in active) == ["Monday", "Thursday"]


def test_a_price_for_something_else_is_no_new_price(database, backend):
    active, superseded, _ = _run(database, backend, "we charge 40 euros an hour for installation",
                                 "now we charge 15 euros for delivery")
    assert not superseded and len(active) == 2
    active, superseded, _ = _run(database, backend, "cobramos 30 euros por la revisión",
                                 "ahora cobramos 45 euros por la revisión")
    assert len(active) == 1 and _says(active[0], "45") and len(superseded) == 1


@pytest.mark.parametrize("first, correction, now, before", [
    ("el alquiler del local son 800 euros al mes", "no perdona, 850", "850", "800"),
    ("We pay Kingsley Motors at 30 days", "actually it's 60, I got it wrong", "60", "30"),
])
def test_a_number_taken_back_corrects_the_fact_just_taught(database, backend, first, correction, now, before):
    active, superseded, _ = _run(database, backend, first, correction)
    assert len(active) == 1 and _says(active[0], now) and not _says(active[0], before)
    assert len(superseded) == 1 and _says(superseded[0], before)


@pytest.mark.parametrize("later", ["sorry, I'm 5 minutes late", "no perdona, mañana te llamo a las 5",
                                   "actually I have 2 questions"])
def test_a_number_said_with_more_than_a_correction_corrects_nothing(database, backend, later):
    active, superseded, _ = _run(database, backend, "Talleres García paga a 30 días", later)
    assert not superseded and [m["value"] for m in active if m["subject"] == "name:talleres garcia"] == ["30 días"]


def test_new_said_of_something_else_changes_no_price_but_a_new_number_changes_the_phone(database, backend):
    active, superseded, _ = _run(database, backend, "Nordic Paper charges us 40 euros a box",
                                 "nordic paper has a new catalogue with boxes at 35 euros for schools")
    assert not superseded and len(active) == 2
    active, superseded, _ = _run(database, backend, "the phone number for Redwood Builders is 07700900111",
                                 "redwood builders have a new number: 07700900222")
    assert len(active) == 1 and _says(active[0], "07700900222") and len(superseded) == 1


@pytest.mark.parametrize("before, after, now", [
    ("No como carne", "He vuelto a comer carne", "vuelve a comer carne"),
    ("I don't eat fish", "I've started eating fish again", "eats fish again"),
    ("Soy vegetariana", "Ya no soy vegetariana", "ya no vegetariana"),
])
def test_eating_it_again_replaces_not_eating_it(database, backend, before, after, now):
    active, superseded, _ = _run(database, backend, before, after)
    # (meat or fish again is also the diet's new value, "omnívora" or "pescatarian", beside what it replaces)
    assert [m["value"] for m in active if m["attribute"] != "dieta" or m["value"] in ("ya no vegetariana",)] == [now]
    assert len(superseded) == 1 and superseded[0]["attribute"] in [m["attribute"] for m in active]


@pytest.mark.parametrize("text, employer", [("Trabajo en el Santander desde 2019", "Santander"),
                                            ("I work at Barclays", "Barclays"),
                                            ("Trabajo en el Corte Inglés", "Corte Inglés")])
def test_the_bank_one_works_at_is_an_employer_not_an_account(database, backend, text, employer):
    active, _, memories = _run(database, backend, text)
    assert not [m for m in memories if m["status"] == "proposed"]
    assert [(m["attribute"], m["value"], m["category"]) for m in active] == [("empleador", employer, "person")]


def test_the_bank_someone_at_a_customer_works_at_is_no_account_of_that_customer(database, backend):
    """The same rule for a note on a contact: the bank is where Luis works, no new account of Hierros Olano."""
    active, _, memories = _run(database, backend, "Luis, el contable de Hierros Olano, trabaja en el Santander los lunes")
    assert not [m for m in memories if m["status"] == "proposed" or m["attribute"] == "cuenta_bancaria"]
    assert [m["subject"] for m in active] == ["name:hierros olano"]


@pytest.mark.parametrize("before, after", [
    ("This is my go-to place for writing inspiration", "Right now my writing is consuming me"),
    ("Even though mine is small, I rely on them for strength", "Even though I kept falling off, now I keep trying"),
])
def test_a_note_said_with_now_replaces_no_note_on_another_topic(database, backend, before, after):
    """"now" in a message makes it a correction, which may replace the note closest in meaning: only one on the
    same topic, not one that merely opens the same way."""
    active, superseded, _ = _run(database, backend, before, after)
    assert not superseded
    assert any(m["value"] == before for m in active)
