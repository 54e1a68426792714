"""The business's stock and paperwork, and how to deal with a customer's or supplier's people (docs/decisions.md,
2026-12-07; measured on evals/gate_stock_heldout.jsonl, evals/gate_manners_heldout.jsonl and
evals/gate_admin_heldout.jsonl, each held out until it was measured once)."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from memory_core.domain.dates import find_date
from memory_core.domain.models import Memory
from tests.test_news_and_standing import say


@pytest.fixture
def owner(factory):
    org = factory.org()
    return org, factory.member(org, role="owner")


def _memories(session, org, user):
    return session.scalars(select(Memory).where((Memory.org_id == org.id) | (Memory.owner_user_id == user.id))).all()


@pytest.mark.parametrize("text", [
    "El azulejo blanco de 20x20 lo hemos descatalogado",
    "Our best seller is the sourdough loaf, we bake 200 a day",
    "We've got a £10k overdraft with the bank",
    "Tenemos una póliza de crédito de 20.000 euros con el Sabadell",
])
def test_the_business_s_stock_and_borrowing_said_with_we_is_the_business_s(system_session, backend, owner, text):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert {m[0] for m in memories} == {"org"}


@pytest.mark.parametrize("text", [
    "Stock check is on the last Friday of every month",
    "Hacemos inventario el último viernes de cada mes",
    "El IVA del trimestre hay que presentarlo antes del día 20",
    "The van lease runs out next August",
])
def test_a_date_of_the_business_said_of_no_one_is_the_business_s_and_a_monthly_weekday_is_no_one_day(
        system_session, backend, owner, text):
    out, _ = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    [memory] = _memories(system_session, *owner)
    assert (memory.subject, memory.level) == ("org", "shared")
    assert memory.value == text  # nothing of it cut out as a date ("the last Friday" is no past day)
    if "of every month" in text or "de cada mes" in text:
        assert memory.event_date is None


def test_the_last_friday_of_every_month_is_a_schedule_not_last_friday():
    today = dt.date(2026, 12, 7)
    assert find_date("stock check is on the last friday of every month", today, past=True) is None
    assert find_date("el primer lunes de mes hay reunion", today) is None
    assert find_date("i saw him last friday", today, past=True)[0] == dt.date(2026, 12, 4)


@pytest.mark.parametrize("text, subject, language", [
    ("Con los de Frutas Medina mejor hablar en euskera, lo agradecen mucho", "name:frutas medina", "euskera"),
    ("A Hierros Olano escríbeles siempre en inglés", "name:hierros olano", "inglés"),
    ("The new guy at Nordwind, Kai, speaks Spanish, so you can write to him in Spanish", "name:nordwind", "español"),
])
def test_the_language_a_customer_s_people_like_is_theirs(system_session, backend, owner, text, subject, language):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert (subject, "idioma", language, "active") in memories
    # The writer's own language is not the business's.
    assert not [m for m in memories if m[0] == "self"]


def test_an_english_sentence_says_the_language_in_english_and_the_writer_s_own_stays_personal(system_session,
                                                                                                backend, owner):
    say(system_session, backend, *owner, "Kai at Nordwind speaks Spanish")
    [memory] = _memories(system_session, *owner)
    assert memory.sentence == "Nordwind prefers to be spoken to in Spanish."
    _, memories = say(system_session, backend, *owner, "háblame en inglés", "m-2")
    assert ("self", "idioma", "inglés", "active") in memories


@pytest.mark.parametrize("text, subject, name", [
    ("Apex Cleaning's owner is Dev, he's the one to call if anything goes wrong", "name:apex cleaning", "Dev"),
    ("The new guy at Nordwind, Kai, speaks Spanish", "name:nordwind", "Kai"),
    ("la dueña de Talleres García es Pilar", "name:talleres garcia", "Pilar"),
])
def test_a_business_s_owner_or_new_guy_by_name_is_its_contact_person(system_session, backend, owner, text, subject,
                                                                      name):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert (subject, "persona_contacto", name, "active") in memories


@pytest.mark.parametrize("text, subject, insurer", [
    ("Our business insurance is with Hiscox, it renews in April", "org", "Hiscox"),
    ("El seguro del local lo tenemos con Mapfre, se renueva en octubre", "org", "Mapfre"),
    ("estamos asegurados con Mutua Madrileña", "org", "Mutua Madrileña"),
])
def test_who_the_business_is_insured_with_is_its_insurer_not_a_customer(system_session, backend, owner, text,
                                                                        subject, insurer):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert (subject, "aseguradora", insurer, "active") in memories
    assert not [m for m in memories if m[0].startswith("name:")]


def test_a_clause_for_whoever_acts_on_it_stands_apart_but_the_writer_s_own_so_does_not():
    from memory_core.backends.local_extractor.units import units

    assert [u.text for u in units("The new guy at Nordwind, Kai, speaks Spanish, so you can write to him in Spanish")] \
        == ["The new guy at Nordwind, Kai, speaks Spanish", ""]
    # A story's "so I..." stays with what it follows: splitting it had cost the held-out LoCoMo run two answers.
    assert [u.text for u in units("I was tired, so I went to bed early")] == ["I was tired, so I went to bed early"]
