"""The business's facts said without "we": its closing days, its staff, its rules for a group of customers or for
orders to a place, its prices and returns. They are the business's, shared with the org, not the writer's own and
not a customer named after a place (docs/decisions.md, 2026-12-06; tuned on evals/gate_business.jsonl, measured
on evals/gate_business_heldout.jsonl)."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from memory_core.domain.clock import FixedClock, use
from memory_core.domain.dates import find_date, span_until
from memory_core.domain.models import Memory
from memory_core.domain.text import fold
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message

SUNDAY = dt.date(2026, 12, 6)


@pytest.fixture
def on_sunday():
    """memoria's clock on Sunday 6 December 2026, when the messages below are sent."""
    with use(FixedClock(dt.datetime(2026, 12, 6, 10, 0, tzinfo=dt.timezone.utc))):
        yield


def say(session, backend, org, user, text, external_id="m-1"):
    """One message of `user` in the web chat, stored and processed by the pipeline; what it made of it."""
    r = ingest_message(session, channel="web", conversation="chat-1", external_id=external_id, org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def learnt(session, backend, org, user, text):
    """The active memories one message taught: (subject, level, category, value, event_date, event_until)."""
    out = say(session, backend, org, user, text)
    assert out.outcome == "learnt", out.reason
    rows = session.scalars(select(Memory).where(Memory.status == "active", (Memory.org_id == org.id) |
                                                (Memory.owner_user_id == user.id))).all()
    return [(m.subject, m.level, m.category, m.value, m.event_date, m.event_until) for m in rows]


def said_then(session, backend, org, user, first, then, *where):
    """`first` learnt, then `then` said in the same chat: (attribute, value, status) of the memories `where` picks."""
    learnt(session, backend, org, user, first)
    say(session, backend, org, user, then, external_id="m-2")
    return {(m.attribute, m.value, m.status) for m in session.scalars(select(Memory).where(*where)).all()}


# --- the business's own closing days: an event the whole org sees, with its last day -------------------------------

@pytest.mark.parametrize("text, first_day, last_day", [
    ("El taller cierra del 1 al 15 de agosto", dt.date(2027, 8, 1), "15 de agosto"),
    ("cerramos del 24 de diciembre al 6 de enero", dt.date(2026, 12, 24), "6 de enero"),
    ("The shop will be closed from the 24th to the 31st of December.", dt.date(2026, 12, 24), "31st of December"),
    ("La oficina cierra del 10 al 24 de agosto por vacaciones.", dt.date(2027, 8, 10), "24 de agosto"),
])
def test_the_business_s_closing_days_are_a_shared_event_that_keeps_its_last_day(
        factory, system_session, backend, on_sunday, text, first_day, last_day):
    org = factory.org()
    ana = factory.member(org, role="owner")
    [(subject, level, category, value, event_date, event_until)] = learnt(system_session, backend, org, ana, text)
    assert (subject, level, category, event_date) == ("org", "shared", "event", first_day)
    assert last_day in value  # "closed on the 1st" alone would have the shop open on the 2nd
    assert event_until is not None and event_until.day == int(last_day.split()[0].rstrip("stndrh"))


def test_the_writer_s_own_holiday_keeps_its_span_and_stays_theirs(factory, system_session, backend, on_sunday):
    org = factory.org()
    ana = factory.member(org, role="owner")
    [(subject, level, category, value, event_date, event_until)] = learnt(
        system_session, backend, org, ana, "I'm on holiday from the 3rd to the 10th of July.")
    assert (subject, level, category, event_date) == ("self", "personal", "event", dt.date(2027, 7, 3))
    assert event_until == dt.date(2027, 7, 10)
    assert "10th of July" in value


@pytest.mark.parametrize("text, first, last", [
    ("from the 24th to the 31st of December", dt.date(2026, 12, 24), dt.date(2026, 12, 31)),
    ("from 3 to 10 July", dt.date(2027, 7, 3), dt.date(2027, 7, 10)),
    ("del 24 de diciembre al 6 de enero", dt.date(2026, 12, 24), dt.date(2027, 1, 6)),
    ("del 1 al 15 de agosto", dt.date(2027, 8, 1), dt.date(2027, 8, 15)),
])
def test_a_span_of_days_is_read_as_its_first_day_until_its_last(text, first, last):
    found = find_date(fold(text), SUNDAY)
    assert found is not None and found[0] == first
    assert span_until(fold(text)[found[1]:found[2]], first) == last


def test_one_day_is_no_span():
    found = find_date(fold("el 15 de agosto"), SUNDAY)
    assert found is not None and span_until(fold("el 15 de agosto")[found[1]:found[2]], found[0]) is None


@pytest.mark.parametrize("text", ["del 1 de enero al 31 de diciembre", "from the 2nd of March to the 30th of November"])
def test_a_span_longer_than_an_event_keeps_its_first_day_only(text):
    """An event lasts at most EVENT_SPAN_MAX_DAYS: a year is no closure a date search could find by its days."""
    found = find_date(fold(text), SUNDAY)
    assert found is not None and span_until(fold(text)[found[1]:found[2]], found[0]) is None


# --- a group of customers, orders to a place, staff by their trade, rules in trade words: the business's ---------

@pytest.mark.parametrize("text", [
    "Los clientes de Lanzarote pagan siempre por adelantado",  # not a customer called Lanzarote
    "Customers from the islands always pay upfront.",
    "Clients in Portugal pay by bank transfer only.",
    "Orders for Ibiza ship on Thursdays.",
    "los pedidos de Mallorca salen los miércoles",  # a region, not a customer called Mallorca
    "Orders from Scotland take three days to arrive.",
    "los envíos a Portugal tardan 3 días",
    "El repartidor nuevo se llama Iván y empieza el lunes",
    "The new delivery guy is called Tom, he starts next week.",
    "Our new driver is Tom.",
    "Refunds are only given as store credit.",
    "las devoluciones se aceptan hasta 30 días con el ticket",
])
def test_the_business_s_rules_and_staff_are_shared_on_the_business(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(s, level) for s, level, *_ in learnt(system_session, backend, org, ana, text)} == {("org", "shared")}


@pytest.mark.parametrize("text, subject", [("Los pedidos de Hierros Olano salen los martes", "name:hierros olano"),
                                           ("hacemos los pedidos a Lácteos Norte por email", "name:lacteos norte")])
def test_orders_from_or_placed_with_a_named_business_stay_that_business_s(factory, system_session, backend, text,
                                                                          subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    learnt_now = learnt(system_session, backend, org, ana, text)
    assert {(s, level) for s, level, *_ in learnt_now} == {(subject, "shared")}


def test_a_bank_account_is_still_no_note_of_the_business(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "Clients in Portugal pay by bank transfer to ES91 2100 0418 4502 0005 1332")
    notes = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.subject == "org",
                                                        Memory.status == "active")).all()
    assert not any("2100" in (m.value + m.sentence) for m in notes)


@pytest.mark.parametrize("text, subject, level", [
    ("El repartidor de Transportes Beltrán se llama Iván", "name:transportes beltran", "shared"),
    ("My sister is called Rocío.", "self", "personal"),
])
def test_someone_else_s_staff_and_the_writer_s_family_are_not_the_business_s(
        factory, system_session, backend, text, subject, level):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(s, lv) for s, lv, *_ in learnt(system_session, backend, org, ana, text)} == {(subject, level)}


# --- the business's accountant, tax adviser, lawyer and insurer: one at a time, by name ------------------------------

@pytest.mark.parametrize("text, attribute, name", [
    ("Our accountant is Helen Price", "contable", "Helen Price"),
    ("Nuestra contable es Helen Price", "contable", "Helen Price"),
    ("Sam Green is our new lawyer.", "abogado", "Sam Green"),
    ("Nuestro gestor es Pedro Ruiz", "gestoria", "Pedro Ruiz"),
])
def test_the_business_s_accountant_or_lawyer_is_the_business_s_by_name(factory, system_session, backend, text,
                                                                        attribute, name):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("org", "shared", "company", name, None, None)]
    assert system_session.scalar(select(Memory.attribute).where(Memory.org_id == org.id)) == attribute


def test_a_new_accountant_replaces_the_last(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    learnt(system_session, backend, org, ana, "Our accountant is Helen Price")
    say(system_session, backend, org, ana, "Our new accountant is Mark Evans", external_id="m-2")
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.attribute == "contable")
                                  .order_by(Memory.created_at)).all()
    assert [(m.value, m.status) for m in rows] == [("Helen Price", "superseded"), ("Mark Evans", "active")]


# --- birthdays and anniversaries: every year, not an event that is past once its day is ------------------------------

@pytest.mark.parametrize("text, value", [
    ("Mi cumpleaños es el 3 de mayo", "3 de mayo"),
    ("El cumpleaños de mi hija es el 20 de febrero", "20 de febrero"),
    ("my husband's birthday is on March 14th", "March 14th"),
    ("Our wedding anniversary is June 2nd", "June 2nd"),
])
def test_a_birthday_is_the_person_s_every_year_not_a_dated_event(factory, system_session, backend, on_sunday, text,
                                                                  value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("self", "personal", "person", value, None, None)]


@pytest.mark.parametrize("text, attribute, value", [
    ("Hoy es mi cumpleaños, cumplo 41", "cumpleanos", "6 de diciembre"),
    ("Mañana es el cumple de mi hermana", "cumpleanos_hermana", "7 de diciembre"),
    ("Mi cumpleaños es el jueves que viene", "cumpleanos", "10 de diciembre"),
    ("Tomorrow is my wife's birthday", "cumpleanos_pareja", "December 7"),
    ("It's our anniversary on Saturday", "aniversario", "December 12"),
])
def test_a_birthday_told_by_when_it_falls_is_the_day_of_the_year_it_falls_on(
        factory, system_session, backend, on_sunday, text, attribute, value):
    """"Hoy es mi cumpleaños" sent on 6 December: the person's birthday is the 6th of December, every year."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("self", "personal", "person", value, None, None)]
    assert system_session.scalar(select(Memory.attribute).where(Memory.owner_user_id == ana.id)) == attribute


@pytest.mark.parametrize("text", ["La fiesta de mi cumpleaños es el sábado", "¡Feliz cumpleaños!",
                                  "I'm going to my brother's birthday party on Saturday"])
def test_a_party_or_a_greeting_is_no_birthday(factory, system_session, backend, on_sunday, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, text)
    assert not system_session.scalars(select(Memory.attribute).where(
        Memory.owner_user_id == ana.id, Memory.attribute.like("cumpleanos%"))).all()


def test_a_birthday_said_again_replaces_the_one_said_before(factory, system_session, backend, on_sunday):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert said_then(system_session, backend, org, ana, "El cumpleaños de mi hija es el 20 de febrero",
                     "perdona, el cumpleaños de mi hija es el 21 de febrero", Memory.owner_user_id == ana.id) == {
        ("cumpleanos_hija", "20 de febrero", "superseded"), ("cumpleanos_hija", "21 de febrero", "active")}
    assert all("hija" in sentence for sentence in system_session.scalars(select(Memory.sentence).where(
        Memory.owner_user_id == ana.id)))


# --- the business's own bank: a fact of the business, not an account change to verify -------------------------------

@pytest.mark.parametrize("text, bank", [
    ("Tenemos la cuenta de la empresa en el Santander", "Santander"),
    ("La cuenta de la tienda la tenemos en Bankinter", "Bankinter"),
    ("Our business account is with Barclays", "Barclays"),
    ("Nuestro banco es el Sabadell", "Sabadell"),
    ("Cambiamos el banco de la empresa al Sabadell el mes pasado", "Sabadell"),
])
def test_the_business_s_own_bank_is_learnt_as_the_business_s(factory, system_session, backend, text, bank):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("org", "shared", "company", bank, None, None)]


def test_moving_the_business_s_account_replaces_its_bank_and_proposes_nothing(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert said_then(system_session, backend, org, ana, "Tenemos la cuenta de la empresa en el Santander",
                     "Hemos pasado la cuenta del negocio a CaixaBank", Memory.org_id == org.id) == {
        ("banco", "Santander", "superseded"), ("banco", "CaixaBank", "active")}  # and no proposal


def test_a_supplier_s_new_bank_is_still_an_account_change_to_verify(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = say(system_session, backend, org, ana, "Talleres García tiene la cuenta nueva en el BBVA")
    assert out.outcome == "proposed"
    assert not system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.attribute == "banco")).all()


@pytest.mark.parametrize("text, attribute, name", [
    ("La asesoría que nos lleva los impuestos ahora es Asesores Beltrán", "gestoria", "Asesores Beltrán"),
    ("The firm that does our payroll is now Clarke Accounting", "gestoria", "Clarke Accounting"),
    ("La empresa que nos lleva la contabilidad es Cuentas Claras", "contable", "Cuentas Claras"),
    ("Our payroll is done by Hughes & Co now", "gestoria", "Hughes & Co"),
    ("Los impuestos nos los lleva Asesoría Pons y Asociados", "gestoria", "Asesoría Pons y Asociados"),
])
def test_an_adviser_named_by_the_work_they_do_for_the_business(factory, system_session, backend, text, attribute,
                                                                name):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("org", "shared", "company", name, None, None)]
    assert system_session.scalar(select(Memory.attribute).where(Memory.org_id == org.id)) == attribute



@pytest.mark.parametrize("text, whose", [("Our accountant is Priya Patel", ("org", "shared", "company")),
                                         ("My accountant is Priya Patel", ("self", "personal", "person")),
                                         ("Mi contable es Priya Patel", ("self", "personal", "person"))])
def test_our_accountant_is_the_business_s_and_my_accountant_the_writer_s(factory, system_session, backend, text,
                                                                          whose):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [(*whose, "Priya Patel", None, None)]


def test_a_name_given_in_reply_is_the_adviser_asked_about(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    ingest_message(system_session, channel="web", conversation="chat-1", external_id="a-1", org_id=org.id,
                   user_id=ana.id, phone=None, role="assistant", text="What's your accountant's name?")
    out = say(system_session, backend, org, ana, "Helen Price")
    assert out.outcome == "learnt", out.reason
    m = system_session.scalars(select(Memory).where(Memory.owner_user_id == ana.id)).one()
    assert (m.attribute, m.value, m.sentence) == ("contable", "Helen Price", "The accountant of the person is Helen Price.")

# --- pastimes: one fact each, which giving it up replaces -------------------------------------------------------------

@pytest.mark.parametrize("text, attribute, value", [
    ("Juego al pádel los martes", "pasatiempo_padel", "pádel los martes"),
    ("Voy a clases de cerámica los jueves", "pasatiempo_ceramica", "cerámica los jueves"),
    ("I play tennis on Sundays", "pasatiempo_tennis", "tennis on Sundays"),
    ("He dejado las clases de cerámica", "pasatiempo_ceramica", "cerámica (lo ha dejado)"),
    ("Ya no voy a yoga", "pasatiempo_yoga", "yoga (lo ha dejado)"),
    ("I don't play tennis anymore", "pasatiempo_tennis", "tennis (gave it up)"),
])
def test_a_pastime_done_or_given_up_is_the_person_s(factory, system_session, backend, on_sunday, text, attribute,
                                                     value):
    """Going to yoga is no one's health: "ya no voy a yoga" is learnt, not refused as special-category data."""
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert learnt(system_session, backend, org, ana, text) == [("self", "personal", "preference", value, None, None)]
    assert system_session.scalar(select(Memory.attribute).where(Memory.owner_user_id == ana.id)) == attribute


def test_giving_up_a_pastime_replaces_doing_it(factory, system_session, backend, on_sunday):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert said_then(system_session, backend, org, ana, "Juego al pádel los martes", "Al final he dejado el pádel",
                     Memory.owner_user_id == ana.id) == {("pasatiempo_padel", "pádel los martes", "superseded"),
                                                         ("pasatiempo_padel", "pádel (lo ha dejado)", "active")}


@pytest.mark.parametrize("text", ["Al final he dejado el pádel, me destrozaba la rodilla",
                                  "I quit running, it was wrecking my knees"])
def test_a_pastime_given_up_for_an_injury_is_health_and_refused(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert say(system_session, backend, org, ana, text).outcome == "refused"
    assert not system_session.scalars(select(Memory).where(Memory.owner_user_id == ana.id)).all()


@pytest.mark.parametrize("text", ["Mañana voy a yoga", "Ayer jugué al pádel con Luis", "Mañana voy al partido de fútbol"])
def test_a_pastime_done_once_is_no_standing_pastime(factory, system_session, backend, on_sunday, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, text)
    assert not system_session.scalars(select(Memory.attribute).where(
        Memory.owner_user_id == ana.id, Memory.attribute.like("pasatiempo%"))).all()


# --- what a customer owes, said in reply to a question that names the customer ---------------------------------------

@pytest.mark.parametrize("question, reply, subject, value", [
    ("¿Qué tal va el cobro con Hierros Olano?", "Nos deben unos 2.400 euros", "name:hierros olano", "2.400 €"),
    ("Has Harbor Foods paid the last invoice?", "they still owe us around 900 pounds", "name:harbor foods", "900 £"),
    ("¿Ha pagado ya Construcciones Pereda?", "Nos debe todavía unos 800 euros", "name:construcciones pereda", "800 €"),
    ("How much does Northwind Supplies owe us now?", "about 1,200 euros", "name:northwind supplies", "1.200 €"),
    ("How much does Northwind Supplies owe us now?", "still about 1,200 euros, they keep saying next week",
     "name:northwind supplies", "1.200 €"),
])
def test_a_debt_told_in_reply_is_the_debt_of_the_customer_asked_about(factory, system_session, backend, question,
                                                                       reply, subject, value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    ingest_message(system_session, channel="web", conversation="chat-1", external_id="a-1", org_id=org.id,
                   user_id=ana.id, phone=None, role="assistant", text=question)
    out = say(system_session, backend, org, ana, reply)
    assert out.outcome == "learnt", out.reason
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    assert [(m.subject, m.attribute, m.value) for m in rows] == [(subject, "deuda", value)]


def test_the_business_s_home_deliveries_are_the_business_s(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    [(subject, level, *_)] = learnt(system_session, backend, org, ana, "We stopped doing home deliveries in October")
    assert (subject, level) == ("org", "shared")


# --- how the business works with a customer: who to ask for, whose name the invoices carry -----------------------------

@pytest.mark.parametrize("text, subject, attribute, value", [
    ("At Riverside Deli ask for Tom when you deliver, he signs the notes", "name:riverside deli", "persona_contacto",
     "Tom"),
    ("En Bodegas Ortiz hay que preguntar por Luis", "name:bodegas ortiz", "persona_contacto", "Luis"),
    ("Para Panadería Molina las facturas van a nombre de Pan Molina S.L.", "name:panaderia molina", "razon_social",
     "Pan Molina S.L."),
    ("Las facturas de Bodegas Álvarez van ahora a nombre de Álvarez e Hijos S.L.", "name:bodegas alvarez",
     "razon_social", "Álvarez e Hijos S.L."),
    # the legal name is the fact's value, never its subject
    ("Invoices for Riverside Deli are made out to Riverside Foods Ltd", "name:riverside deli", "razon_social",
     "Riverside Foods Ltd"),
])
def test_a_customer_s_contact_and_legal_name_are_the_customer_s(factory, system_session, backend, text, subject,
                                                                 attribute, value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = say(system_session, backend, org, ana, text)
    assert out.outcome == "learnt", out.reason
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    assert (subject, attribute, value) in {(m.subject, m.attribute, m.value) for m in rows}
    assert {m.level for m in rows} == {"shared"}


def test_the_legal_name_reads_in_the_language_it_was_told_in(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "Invoices for Riverside Deli are made out to Riverside Foods Ltd")
    assert system_session.scalar(select(Memory.sentence).where(Memory.org_id == org.id)) == \
        "The legal name of Riverside Deli is Riverside Foods Ltd."


def test_an_invoice_asked_for_is_no_legal_name(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "invoice Talleres García as usual")
    assert not system_session.scalars(select(Memory).where(Memory.attribute == "razon_social")).all()


@pytest.mark.parametrize("text", ["We stopped selling the oat milk, nobody bought it",
                                  "We've stopped stocking Coca-Cola", "Hemos dejado de vender la tarta de queso"])
def test_what_the_business_stops_selling_is_the_business_s(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(subject, level) for subject, level, *_ in learnt(system_session, backend, org, ana, text)} == \
        {("org", "shared")}


@pytest.mark.parametrize("text", ["Mrs Okafor is allergic to nuts, so nothing with almonds in her orders",
                                  "El niño de los Ruiz tiene alergia a la leche"])
def test_a_customer_s_allergy_is_health_and_refused(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = say(system_session, backend, org, ana, text)
    assert (out.outcome, out.policy) == ("refused", "special")
    assert not system_session.scalars(select(Memory).where(Memory.org_id == org.id)).all()


# --- the business's staff, its hours on one weekday, a customer off credit ------------------------------------------

@pytest.mark.parametrize("text", ["Marta libra los lunes y los martes", "Jake only works Saturdays, he's still at college",
                                  "La chica nueva de la tienda se llama Aisha",
                                  "Our Saturday girl, Emma, is leaving at the end of the month"])
def test_the_business_s_staff_is_the_business_s(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(subject, level) for subject, level, *_ in learnt(system_session, backend, org, ana, text)} == \
        {("org", "shared")}


def test_a_relative_s_days_off_stay_the_writer_s(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert {(subject, level) for subject, level, *_ in
            learnt(system_session, backend, org, ana, "Mi hermana libra los lunes")} == {("self", "personal")}


@pytest.mark.parametrize("text, attribute, value, sentence", [
    ("Ahora cerramos a las 8 los viernes", "hora_cierre_viernes", "8 los viernes",
     "La empresa cierra a las 8 los viernes."),
    ("We open at 10 on Sundays", "hora_apertura_domingo", "10 on Sundays", "The business opens at 10 on Sundays."),
])
def test_hours_of_one_weekday_are_that_day_s_beside_the_usual_ones(factory, system_session, backend, text, attribute,
                                                                    value, sentence):
    org = factory.org()
    ana = factory.member(org, role="owner")
    learnt(system_session, backend, org, ana, "Cerramos a las 7")
    say(system_session, backend, org, ana, text, external_id="m-2")
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    assert {(m.attribute, m.value, m.sentence) for m in rows} >= {("hora_cierre", "7", "La empresa cierra a las 7."),
                                                                   (attribute, value, sentence)}


def test_one_day_s_closing_is_no_weekday_s_hours(factory, system_session, backend, on_sunday):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "El sábado cerramos a las 2")
    assert not system_session.scalars(select(Memory).where(Memory.attribute.like("hora_%"))).all()


@pytest.mark.parametrize("text, subject", [("A Talleres Ruiz no le vendas más a crédito, que no paga",
                                            "name:talleres ruiz"),
                                           ("Harbor Foods is cash only now", "name:harbor foods")])
def test_a_customer_off_credit_pays_on_the_spot(factory, system_session, backend, text, subject):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, text)
    assert (subject, "al contado") in {(m.subject, m.value) for m in system_session.scalars(
        select(Memory).where(Memory.org_id == org.id, Memory.attribute == "plazo_pago"))}


def test_the_days_of_an_early_payment_discount_are_no_payment_term(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "Kingsley Timber gives us 3% off if we pay within 10 days")
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id)).all()
    assert ("descuento", "3%") in {(m.attribute, m.value) for m in rows}
    assert "plazo_pago" not in {m.attribute for m in rows}


# --- when the business's things fall due: the van's inspection and insurance, the shop's lease ------------------------

@pytest.mark.parametrize("text, attribute, whose", [
    ("La furgoneta pasa la ITV en marzo", "vencimiento_itv_furgoneta", ("org", "shared")),
    ("The van's insurance renews on the 1st of June", "vencimiento_seguro_furgoneta", ("org", "shared")),
    ("El alquiler del local vence en 2028", "vencimiento_alquiler_local", ("org", "shared")),
    ("My car's MOT is due in May", "vencimiento_itv_coche", ("self", "personal")),
])
def test_when_a_thing_falls_due_is_its_owner_s(factory, system_session, backend, on_sunday, text, attribute, whose):
    org = factory.org()
    ana = factory.member(org, role="owner")
    [(subject, level, *_)] = learnt(system_session, backend, org, ana, text)
    assert (subject, level) == whose
    assert system_session.scalar(select(Memory.attribute).where(Memory.status == "active", (
        Memory.org_id == org.id) | (Memory.owner_user_id == ana.id))) == attribute


def test_next_year_s_inspection_replaces_this_year_s(factory, system_session, backend, on_sunday):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert said_then(system_session, backend, org, ana, "La furgoneta pasa la ITV en marzo",
                     "La furgoneta pasa la ITV en abril", Memory.org_id == org.id) == {
        ("vencimiento_itv_furgoneta", "La furgoneta pasa la ITV en marzo", "superseded"),
        ("vencimiento_itv_furgoneta", "La furgoneta pasa la ITV en abril", "active")}


@pytest.mark.parametrize("text", ["¿Cuándo pasa la ITV la furgoneta?", "la factura 2024-0153 vence el 15 de marzo"])
def test_a_question_or_an_invoice_s_due_date_is_no_thing_falling_due(factory, system_session, backend, on_sunday,
                                                                      text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, text)
    assert not system_session.scalars(select(Memory).where(Memory.attribute.like("vencimiento%"))).all()
