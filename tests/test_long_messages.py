"""Long messages as people send them: several facts among greetings, requests and news; a voice note's hesitations;
a slip taken back in the same sentence; apologies for a slow reply that hold nothing (docs/decisions.md,
2026-12-07; measured on evals/gate_long_heldout.jsonl, held out until it was measured once)."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def say(session, backend, org, user, text):
    """One message of `user` in the web chat, processed by the pipeline: its outcome, and the active memories and the
    proposals the org and the user hold, each as {(subject, attribute, value)}."""
    r = ingest_message(session, channel="web", conversation="chat-1", external_id="m-1", org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    rows = session.scalars(select(Memory).where((Memory.org_id == org.id) | (Memory.owner_user_id == user.id))).all()
    return out, {(m.subject, m.attribute, m.value) for m in rows if m.status == "active"}, \
        {(m.subject, m.attribute, m.value) for m in rows if m.status == "proposed"}


@pytest.fixture
def owner(factory):
    org = factory.org()
    return org, factory.member(org, role="owner")


def test_a_long_message_teaches_each_of_its_facts_and_no_greeting(system_session, backend, owner):
    out, memories, proposals = say(system_session, backend, *owner, (
        "Buenos días! Ayer estuve con los de Talleres Moreno y al final quedamos en que nos pagan a 60 días, que a 30 "
        "no les daba la caja. Ah, y la que lleva ahora las cuentas allí es Lorena. Cuando puedas hazme la factura de "
        "la semana pasada, gracias!!"))
    assert out.outcome == "learnt"
    assert {("name:talleres moreno", "plazo_pago", "60 días"),
            ("name:talleres moreno", "persona_contacto", "Lorena")} <= memories
    # Who keeps a customer's books is no bank account to verify.
    assert not proposals
    assert all(subject == "name:talleres moreno" for subject, *_ in memories)


def test_a_new_bank_account_in_a_long_message_is_still_only_proposed(system_session, backend, owner):
    _, memories, proposals = say(system_session, backend, *owner, (
        "Buenos días! Talleres Moreno nos ha pasado una cuenta nueva, ES91 2100 0418 4502 0005 1332, para las "
        "transferencias. Gracias!"))
    assert ("name:talleres moreno", "cuenta_bancaria", "ES9121000418450200051332") in proposals
    assert not {m for m in memories if m[1] == "cuenta_bancaria"}


@pytest.mark.parametrize("text, fact", [
    ("so um yeah just so you know the guy at Patel Wholesale who does the ordering is called Sunil and he's only in "
     "Monday to Wednesday so don't bother calling on Thursdays", ("name:patel wholesale", "persona_contacto", "Sunil")),
    ("vale pues eh apunta que el contacto en Floristería Remedios eh es Rocío", ("name:floristeria remedios",
                                                                               "persona_contacto", "Rocío")),
])
def test_a_voice_note_s_hesitations_hide_no_fact(system_session, backend, owner, text, fact):
    _, memories, _ = say(system_session, backend, *owner, text)
    assert fact in memories


@pytest.mark.parametrize("text", [
    "Construcciones Arrieta paga a 30 días, no, espera, me equivoco, desde enero es a 45.",
    "Kingsway Plumbing pays at 30 days, sorry, my mistake, it's 60 days",
    "Acme pays at 30 days, sorry, my mistake, it's 60 days",  # a one-word name, no subject the talk is on
])
def test_a_slip_taken_back_in_the_same_sentence_leaves_the_value_said_last(system_session, backend, owner, text):
    _, memories, _ = say(system_session, backend, *owner, text)
    terms = {value for _, attribute, value in memories if attribute == "plazo_pago"}
    assert terms == ({"45 días"} if "45" in text else {"60 días"})


@pytest.mark.parametrize("text", [
    "Hi there, hope you're well! Sorry for the radio silence, it's been a mad week with the end of the quarter. "
    "Can you pull up what Harbor Foods still owes us? Thanks a million",
    "Perdona el retraso, menuda semana llevo. ¿Me sacas las facturas pendientes?",
])
def test_an_apology_for_a_slow_reply_is_no_fact(system_session, backend, owner, text):
    out, memories, proposals = say(system_session, backend, *owner, text)
    assert out.outcome != "learnt" and not memories and not proposals


def test_how_the_business_is_paid_and_where_a_customer_s_invoices_go(system_session, backend, owner):
    _, memories, proposals = say(system_session, backend, *owner, (
        "Right, a couple of things. We've stopped taking cheques altogether, bank transfer or card only from now on. "
        "And Greenfield Foods asked for their invoices to go to accounts@greenfieldfoods.co.uk instead of Tom's "
        "email."))
    assert ("name:greenfield foods", "email", "accounts@greenfieldfoods.co.uk") in memories
    # Paying by transfer is a way to pay, not the business's bank account: the note is kept.
    assert any(subject == "org" and "cheques" in value for subject, _, value in memories)
    assert not proposals


def test_the_business_s_tax_number_and_legal_name_are_its_own(system_session, backend, owner):
    _, memories, _ = say(system_session, backend, *owner, (
        "FYI for the records: our VAT number changed when we incorporated, it's now GB 284 1937 56, and the company "
        "name on invoices should be Baker & Co Ltd, not Sam Baker Trading."))
    assert {("org", "nif", "GB284193756"), ("org", "razon_social", "Baker & Co Ltd")} <= memories
    assert {subject for subject, *_ in memories} == {"org"}  # not "GB", nor the old name


def test_a_change_of_adviser_and_who_to_talk_to_there(system_session, backend, owner):
    _, memories, _ = say(system_session, backend, *owner, (
        "Hemos cambiado de gestoría, ahora nos lleva todo Asesoría Elcano, y la persona con la que hablamos allí es "
        "Begoña. El cambio es desde este trimestre."))
    assert {("org", "gestoria", "Asesoría Elcano"),
            ("name:asesoria elcano", "persona_contacto", "Begoña")} <= memories


@pytest.mark.parametrize("text, subject", [
    # someone just taken on is the business's staff, not a contact of their own
    ("Novedades en la tienda: ha entrado una chica nueva, Irene, que va a llevar los pedidos online, y Javi pasa a "
     "encargarse del almacén.", "org"),
    # a group of customers is the business's rule, not a business called "all new customers"
    ("New rule from today: no orders go out to anyone who owes us more than £500. And all new customers pay the "
     "first order upfront.", "org"),
    # "their" is the supplier just named
    ("Just had Northern Packaging on the phone. Their minimum order is going up to 200 boxes.",
     "name:northern packaging"),
    # "su móvil" is the contact's phone, not someone called "Su"
    ("El contacto nuevo en Bodegas Larrea es Aitor Zubizarreta. Su móvil es el 612 45 78 90.", "name:bodegas larrea"),
])
def test_whose_fact_a_sentence_of_a_long_message_is(system_session, backend, owner, text, subject):
    _, memories, _ = say(system_session, backend, *owner, text)
    assert memories and {s for s, *_ in memories} == {subject}


def test_a_note_saying_a_typed_fact_again_does_not_replace_it(system_session, backend, owner):
    """"al final nos pagan por pagaré a 90 días, no hubo manera de bajarlo": the term is read, and the note of the
    sentence that says it again stays beside it, instead of taking the term's place with a sentence for a value."""
    _, memories, _ = say(system_session, backend, *owner, (
        "Buenas tardes! Te escribo rápido que estoy en el coche. Lo de Electricidad Fuentes: al final nos pagan por "
        "pagaré a 90 días, no hubo manera de bajarlo. Y el que firma los pedidos allí es Ramón. Luego hablamos!"))
    assert {("name:electricidad fuentes", "plazo_pago", "90 días"), ("name:electricidad fuentes", "forma_pago", "pagaré"),
            ("name:electricidad fuentes", "persona_contacto", "Ramón")} <= memories
    assert {subject for subject, *_ in memories} == {"name:electricidad fuentes"}  # not "Lo de Electricidad Fuentes"


def test_an_account_number_whose_check_digits_fail_is_still_only_proposed(system_session, backend, owner):
    _, memories, proposals = say(system_session, backend, *owner, (
        "Viveros Campos quiere que las devoluciones se les hagan a ES29 0081 0300 9912 3400 5678"))
    assert proposals and not {m for m in memories if m[0] == "name:viveros campos"}


def test_without_a_word_of_banking_no_account_is_changing(system_session, backend, owner):
    out, memories, proposals = say(system_session, backend, *owner, (
        "ok so basically uh Brightside Cleaning are gonna invoice us monthly now instead of weekly and uh their new "
        "contact is Janet"))
    assert out.outcome == "learnt" and not proposals
    assert ("name:brightside cleaning", "persona_contacto", "Janet") in memories


@pytest.mark.parametrize("text, facts", [
    ("Te paso los datos del cliente nuevo: Clínica Dental Sonrisas, la administradora es Marta Gil, y pagan con "
     "tarjeta al momento.", {("name:clinica dental sonrisas", "persona_contacto", "Marta Gil"),
                             ("name:clinica dental sonrisas", "forma_pago", "tarjeta")}),
    ("Evening! Long day. Anyway, Harper Builders called, they want all quotes sent to quotes@harperbuilders.co.uk "
     "from now on, and they'll only pay on 30 days end of month.",
     {("name:harper builders", "email", "quotes@harperbuilders.co.uk"), ("name:harper builders", "plazo_pago",
                                                                          "30 días")}),
    ("Just for your records, our new phone number for the shop is 0161 496 0823, the old landline has been cut off.",
     {("org", "telefono", "01614960823")}),
    ("Frutas Garrido nos cobra a 15 días, perdona, a 20.", {("name:frutas garrido", "plazo_pago", "20 días")}),
])
def test_facts_handed_over_in_a_long_message(system_session, backend, owner, text, facts):
    _, memories, _ = say(system_session, backend, *owner, text)
    assert facts <= memories
    assert not {m for m in memories if m[1] in {a for _, a, _ in facts}} - facts  # no other value beside them


def test_what_a_business_just_named_stopped_doing_is_its_own(system_session, backend, owner):
    _, memories, _ = say(system_session, backend, *owner, (
        "Heads up: Mills Timber have put their prices up 5% from January, and they've also stopped delivering on "
        "Saturdays. Annoying but nothing we can do."))
    assert any(subject == "name:mills timber" and "Saturdays" in value for subject, _, value in memories)
    assert {subject for subject, *_ in memories} == {"name:mills timber"}


def test_working_at_a_hospital_is_no_health_data(system_session, backend, owner):
    out, memories, _ = say(system_session, backend, *owner,
                           "Y mi mujer ha empezado a trabajar en el hospital Miguel Servet.")
    assert out.outcome == "learnt"
    assert any(subject == "self" and "hospital" in value for subject, _, value in memories)


def test_a_relative_s_birthday_told_after_one_s_own(system_session, backend, owner):
    """"y el de mi mujer el 3 de febrero" leaves out the noun it shares with the birthday before it, and "por si
    acaso" at the end hides no fact."""
    _, memories, _ = say(system_session, backend, *owner,
                         "Mi cumpleaños es el 12 de octubre, y el de mi mujer el 3 de febrero, por si acaso.")
    assert {("self", "cumpleanos", "12 de octubre"), ("self", "cumpleanos_pareja", "3 de febrero")} <= memories
