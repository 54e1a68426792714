"""Business notes as staff type them: another business's closing days, lower-case names that stop where the name
does, and the household's second home (docs/decisions.md, 2026-12-06; tuned on evals/gate_notes_tune.jsonl)."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.backends.local_extractor.fallback import closer
from memory_core.backends.local_extractor.names import lower_name_runs
from memory_core.backends.local_extractor.text import Sentence
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def run(session, backend, org, user, text):
    r = ingest_message(session, channel="web", conversation="chat-1", external_id="m-1", org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def learnt(session, org, user, text, backend):
    """The active memories one message taught, as (subject, level, category)."""
    assert run(session, backend, org, user, text).outcome == "learnt"
    rows = session.scalars(select(Memory).where(Memory.status == "active", (Memory.org_id == org.id) |
                                                (Memory.owner_user_id == user.id))).all()
    return {(m.subject, m.level, m.category) for m in rows}


# --- a business's closing days are that business's, not the writer's own event -------------------------------------

@pytest.mark.parametrize("text, subject", [
    ("Muebles Soler cierra del 10 al 25 de agosto", "name:muebles soler"),
    ("Panadería Roca no abre este lunes por el festivo", "name:panaderia roca"),
    ("Printwise is shut until the 10th of January", "name:printwise"),
    ("kingsley motors shuts for two weeks in august", "name:kingsley motors"),
    ("Talleres Alonso estará cerrado del 1 al 15 de septiembre", "name:talleres alonso"),
])
def test_a_business_s_closing_days_land_on_that_business(factory, system_session, backend, text, subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    [(got, level, category)] = learnt(system_session, org, ana, text, backend)
    assert (got, level) == (subject, "shared")
    assert category != "event"  # a note on the business everyone sees, not an event in the writer's calendar


def test_a_known_contact_s_closing_days_land_on_the_contact(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    soler = factory.contact(org, "Muebles Soler S.L.", tax_id=None, kind="supplier")
    [(got, level, _)] = learnt(system_session, org, ana, "Muebles Soler cierra del 10 al 25 de agosto", backend)
    assert (got, level) == (f"contact:{soler.id}", "shared")


@pytest.mark.parametrize("text", ["cierro por vacaciones del 1 al 15 de agosto",
                                  "me voy de vacaciones a menorca del 3 al 17 de agosto",
                                  "I'm off from the 10th to the 25th, visiting my parents in Leeds",
                                  "mi hermana cierra su peluquería todo agosto"])
def test_the_writer_s_own_holidays_stay_the_writer_s(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(s, level) for s, level, _ in learnt(system_session, org, ana, text, backend)} == {("self", "personal")}


@pytest.mark.parametrize("text, who", [
    ("Our supplier Nordic Paper closes over Christmas", ("name", "Nordic Paper")),
    ("Harbor Foods, our biggest customer, is closed from the 24th", ("name", "Harbor Foods")),
    ("cerramos del 24 de diciembre al 6 de enero", ("org", None)),
    ("the shop is closed on Sundays", ("org", None)),
    ("El día de Reyes la tienda no abre", ("org", None)),
    ("cierro por vacaciones en agosto", None),
    ("cerramos la casa de la playa en septiembre", None),
    ("Harbor Foods closed the deal with us", None),
])
def test_who_closes_is_the_subject_of_the_verb_of_hours(text, who):
    assert closer(Sentence.of(text), []) == who


# --- a lower-case name stops where the name does -------------------------------------------------------------------

@pytest.mark.parametrize("text, name", [
    ("trabajamos con reformas galan desde marzo", "reformas galan"),
    ("reformas galan desde este mes nos cobra el iva aparte", "reformas galan"),
    ("ya no le compramos a hierros olano desde el verano", "hierros olano"),
    ("we don't work with harbor logistics anymore", "harbor logistics"),
    ("we've been buying from kingsley timber since 2019", "kingsley timber"),
    ("bright paints recently moved to a new warehouse in slough", "bright paints"),
    ("muebles soler ultimamente tarda mucho en entregar", "muebles soler"),
    ("ojo que bellini catering no abre el lunes", "bellini catering"),
])
def test_a_lower_case_name_stops_before_a_preposition_or_an_adverb(text, name):
    assert [n for n, _, _ in lower_name_runs(Sentence.of(text))] == [name]


@pytest.mark.parametrize("text, subject", [
    ("trabajamos con reformas galan desde marzo", "name:reformas galan"),
    ("we don't work with harbor logistics anymore", "name:harbor logistics"),
    ("we stopped buying from bright paints after the last price rise", "name:bright paints"),
    ("hierros olano nos paga desde enero por transferencia", "name:hierros olano"),
])
def test_a_business_dealt_with_in_lower_case_is_learnt_under_its_name(factory, system_session, backend, text,
                                                                      subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {s for s, _, _ in learnt(system_session, org, ana, text, backend)} == {subject}


# --- a second home, however said, is the household's --------------------------------------------------------------

@pytest.mark.parametrize("text", ["We spend every August at our place in Cornwall",
                                  "tenemos una casita en el pueblo, en Soria",
                                  "we've got a little place in the Algarve we go to every spring",
                                  "el apartamento de la playa lo tenemos alquilado en julio"])
def test_a_second_home_said_colloquially_is_personal(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(s, level) for s, level, _ in learnt(system_session, org, ana, text, backend)} == {("self", "personal")}


@pytest.mark.parametrize("text", ["nuestro local de la playa abre en junio",
                                  "our place on the high street opens at 9 on saturdays"])
def test_the_business_s_own_premises_by_the_beach_stay_the_business_s(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(s, level) for s, level, _ in learnt(system_session, org, ana, text, backend)} == {("org", "shared")}
