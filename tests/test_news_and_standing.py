"""The news of a customer's or supplier's business (closed, gone bust, reopened, taken over), standing instructions
about a customer, a guess hedged after the fact, and someone named "un tal" (docs/decisions.md, 2026-12-07; measured
on evals/gate_lifecycle_heldout.jsonl, evals/gate_standing_heldout.jsonl and evals/gate_spanglish_heldout.jsonl,
each held out until it was measured once)."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def say(session, backend, org, user, text, external_id="m-1"):
    """One message of `user` in the web chat, processed by the pipeline: its outcome, and every memory the org and the
    user hold as {(subject, attribute, value, status)}."""
    r = ingest_message(session, channel="web", conversation="chat-1", external_id=external_id, org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    rows = session.scalars(select(Memory).where((Memory.org_id == org.id) | (Memory.owner_user_id == user.id))).all()
    return out, {(m.subject, m.attribute, m.value, m.status) for m in rows}


@pytest.fixture
def owner(factory):
    org = factory.org()
    return org, factory.member(org, role="owner")


@pytest.mark.parametrize("text, subject, value", [
    ("Talleres Moreno ha cerrado, ya no hay que mandarles nada", "name:talleres moreno", "cerrado"),
    ("Hartley Joinery has gone bust, so write off the last invoice", "name:hartley joinery", "gone bust"),
    ("Electricidad Pons ha entrado en concurso de acreedores, no les sirvas nada sin cobrar antes",
     "name:electricidad pons", "en concurso de acreedores"),
    ("Bloom Bakery is in administration", "name:bloom bakery", "in administration"),
    ("Grupo Lanza ha comprado Distribuciones Vera, así que desde ahora facturamos a Grupo Lanza",
     "name:distribuciones vera", "comprada por Grupo Lanza"),
    ("Northgate Supplies has been taken over by Carter Group, invoices now go to Carter's head office",
     "name:northgate supplies", "taken over by Carter Group"),
    ("Peak Office Supplies is now part of Staples but nothing changes for us", "name:peak office supplies",
     "part of Staples"),
])
def test_a_business_closed_bust_or_taken_over_is_that_business_s_trading_status(system_session, backend, owner, text,
                                                                                  subject, value):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert (subject, "situacion", value, "active") in memories
    # The buyer is no subject of the news: what is learnt is on the business bought.
    assert {m[0] for m in memories} == {subject}


def test_a_business_that_reopens_supersedes_its_closing(system_session, backend, owner):
    say(system_session, backend, *owner, "Talleres Moreno ha cerrado, ya no hay que mandarles nada")
    _, memories = say(system_session, backend, *owner, "Talleres Moreno ha reabierto después de la reforma", "m-2")
    assert ("name:talleres moreno", "situacion", "reabierto", "active") in memories
    assert ("name:talleres moreno", "situacion", "cerrado", "superseded") in memories


@pytest.mark.parametrize("text", [
    "Talleres Moreno ha cerrado hoy a las tres",  # closed for the day
    "Acme ha cerrado el trato con nosotros",  # closed a deal
    "Talleres García le ha comprado a Hierros Olano 3 toneladas",  # bought from
])
def test_closing_for_the_day_or_buying_from_someone_is_no_trading_status(system_session, backend, owner, text):
    _, memories = say(system_session, backend, *owner, text)
    assert not {m for m in memories if m[1] == "situacion"}


@pytest.mark.parametrize("text", [
    "Calzados Rey paga a 60 días, pero no estoy seguro",
    "Dicen que Calzados Rey va a cerrar, pero no es seguro",
    "Crown Plumbing pays at 30 days now, not sure though",
])
def test_a_fact_hedged_after_it_is_a_guess_and_teaches_nothing(system_session, backend, owner, text):
    out, memories = say(system_session, backend, *owner, text)
    assert not memories, out.reason


def test_someone_called_un_tal_is_a_contact_and_a_kind_word_about_him_refuses_nothing(system_session, backend, owner):
    out, memories = say(system_session, backend, *owner,
                        "el nuevo contact de Hierros Aramburu es un tal Mikel, super friendly")
    assert out.outcome == "learnt", out.reason
    assert ("name:hierros aramburu", "persona_contacto", "Mikel", "active") in memories


def test_an_instruction_on_writing_to_a_customer_is_that_customer_s(system_session, backend, owner):
    out, memories = say(system_session, backend, *owner,
                        "Always copy in accounts@harperbuild.co.uk when you email Harper Build")
    assert out.outcome == "learnt", out.reason
    assert [m for m in memories if m[0] == "name:harper build" and "accounts@harperbuild.co.uk" in m[2]]


def test_someone_at_a_business_has_their_wishes_filed_on_the_business(system_session, backend, owner):
    _, memories = say(system_session, backend, *owner,
                      "Mrs Adeyemi at Linden Nursery only wants invoices by post, she doesn't do email")
    assert ("name:linden nursery", "canal_preferido", "correo postal", "active") in memories
    assert {m[0] for m in memories} == {"name:linden nursery"}


def test_a_business_the_writer_stopped_working_with_is_that_business_s_news(system_session, backend, owner):
    _, memories = say(system_session, backend, *owner, "We stopped working with Apex Cleaning in October, too unreliable")
    assert memories and {m[0] for m in memories} == {"name:apex cleaning"}


@pytest.mark.parametrize("text, subject, words", [
    ("Cuando le hagas un presupuesto a Reformas Ibarra, ponle siempre el IVA aparte", "name:reformas ibarra", "IVA"),
    ("A Construcciones Arteaga no le hagas más pedidos hasta que pague lo que debe", "name:construcciones arteaga",
     "pague"),
    ("Whenever you quote for Kestrel Homes, add 10% for access costs", "name:kestrel homes", "10%"),
    ("Put the PO number on every invoice for Ashby Logistics, they reject them otherwise", "name:ashby logistics",
     "PO number"),
])
def test_a_standing_instruction_about_a_customer_said_as_an_order_is_that_customer_s(system_session, backend, owner,
                                                                                     text, subject, words):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert [m for m in memories if m[0] == subject and words in m[2]]


@pytest.mark.parametrize("text", [
    "Mándale la factura a Talleres Ruiz",
    "Prepárame el presupuesto de Reformas Ibarra para mañana",
    "Send the invoice to Dalton Electrics please",
])
def test_an_order_for_now_about_a_customer_teaches_nothing(system_session, backend, owner, text):
    _, memories = say(system_session, backend, *owner, text)
    assert not memories


def test_the_days_the_writer_comes_in_are_a_schedule_kept_whole(system_session, backend, owner):
    _, memories = say(system_session, backend, *owner, "A partir de enero solo vengo a la tienda martes y jueves")
    assert [m for m in memories if m[0] == "self" and "martes y jueves" in m[2]]


def test_a_holiday_in_capitals_is_when_not_who(system_session, backend, owner):
    _, memories = say(system_session, backend, *owner, "En Semana Santa cerramos la oficina el jueves y el viernes")
    assert memories and {m[0] for m in memories} == {"org"}


def test_doing_the_banking_is_a_chore_not_an_account(system_session, backend, owner):
    out, memories = say(system_session, backend, *owner,
                        "Don't book anything for me on Friday afternoons, that's when I do the banking")
    assert out.outcome == "learnt", out.reason
    assert [m for m in memories if m[0] == "self" and "Friday afternoons" in m[2] and m[3] == "active"]


@pytest.mark.parametrize("text", ["Mañana no estoy por la mañana, tengo que llevar el coche al taller",
                                  "Today I'm out, back tomorrow"])
def test_being_away_today_or_tomorrow_teaches_nothing(system_session, backend, owner, text):
    _, memories = say(system_session, backend, *owner, text)
    assert not memories


@pytest.mark.parametrize("text, subject, term", [
    ("Pinturas Lasarte paga el 10 del mes siguiente a la factura", "name:pinturas lasarte", "el 10 del mes siguiente"),
    ("Rowan Catering pay on the 25th of every month", "name:rowan catering", "the 25th of every month"),
])
def test_a_customer_paying_on_a_day_of_the_month_is_its_payment_term(system_session, backend, owner, text, subject,
                                                                     term):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert (subject, "plazo_pago", term, "active") in memories


def test_a_day_of_the_month_said_as_a_condition_is_no_term(system_session, backend, owner):
    _, memories = say(system_session, backend, *owner,
                      "Si Pinturas Lasarte paga el 10 del mes siguiente le hacemos descuento")
    assert not {m for m in memories if m[1] == "plazo_pago"}


@pytest.mark.parametrize("text, subject, words", [
    ("Me comenta Iñaki que Frutas Medina ya no reparte los sábados", "name:frutas medina", "sábados"),
    ("Me ha dicho Luis que en Aceros Ortuzar ahora el que manda es Pedro Salaberri", "name:aceros ortuzar", "Pedro"),
    ("Me han dicho en Cafés Urquiza que desde marzo el pedido mínimo es de 100 euros", "name:cafes urquiza", "100"),
    ("Tom says Bellview Hotel want their invoices monthly from now on", "name:bellview hotel", "monthly"),
    ("Ha llamado la de Papelería Goya para decir que cambian el horario: ahora abren a las 9", "name:papeleria goya",
     "9"),
])
def test_news_passed_on_by_someone_is_of_whom_it_is_about_not_of_the_writer(system_session, backend, owner, text,
                                                                            subject, words):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert [m for m in memories if m[0] == subject and words in m[2]]
    assert {m[0] for m in memories} == {subject}


@pytest.mark.parametrize("text", [
    "Luis dice que le llames cuando puedas",
    "Dalton Electrics called about the quote, I said we'd get back to them",
    "Ha llamado Talleres Goñi preguntando por su pedido",
])
def test_a_call_or_a_message_to_pass_on_teaches_nothing(system_session, backend, owner, text):
    _, memories = say(system_session, backend, *owner, text)
    assert not memories


@pytest.mark.parametrize("text", [
    "Somos una carpintería de cinco personas en Getafe",
    "We're a family-run bakery in Leeds, three shops and a central kitchen",
    "We've been trading since 2009",
    "We're VAT registered and use the flat rate scheme",
    "Nuestro mes fuerte es diciembre, en agosto casi no hay trabajo",
    "There are twelve of us now including the two apprentices",
    "Facturamos con IVA al 21%, menos los libros que van al 4%",
])
def test_the_business_telling_what_it_is_is_the_business_s_shared_fact(system_session, backend, owner, text):
    out, memories = say(system_session, backend, *owner, text)
    assert out.outcome == "learnt", out.reason
    assert memories and {m[0] for m in memories} == {"org"}


@pytest.mark.parametrize("text", ["Somos cuatro hermanos", "Our busiest time of year with the kids is Christmas"])
def test_a_household_s_we_stays_the_writer_s(system_session, backend, owner, text):
    _, memories = say(system_session, backend, *owner, text)
    assert memories and "org" not in {m[0] for m in memories}
