"""The memory block speaks the reader's language (never mixed) and follows the subjects the conversation
is about; with the real database and the local embedder."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import update

from memory_core.domain.access import load_access
from memory_core.domain.models import Organization, User
from memory_core.domain.text import language_of
from memory_core.reading.context import PROFILE_MAX_ITEMS, assemble_context

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)
SPANISH_WORDS = re.compile(r"Sobre la persona|Perfil|Tu empresa|\bTú\b|cliente|proveedor|Memoria|datos recordados")
ENGLISH_WORDS = re.compile(r"About the person|Profile|Your company|\bYou\b|customer|supplier|Memory:|remembered")


@pytest.fixture
def world(factory, system_session, database, embedder):
    org = factory.org("Sumalos")
    owner = factory.member(org, role="owner", name="Pablo")
    garcia = factory.contact(org, name="Talleres García S.L.")
    e = embedder

    def mem(sentence, **kw):
        return factory.memory(kw.pop("org", org), sentence=sentence, embedding=e.embed([sentence])[0],
                              embed_model=e.model_name, **kw)

    mem("Me llamo Pablo", level="personal", subject="self", attribute="nombre", value="Pablo", category="person",
        owner=owner)
    mem("Trabajamos con transferencias", subject="org", attribute="forma_pago", value="transferencia",
        category="company")
    mem("Talleres García paga a 60 días", subject=f"contact:{garcia.id}", attribute="plazo_pago", value="60 días",
        category="customer", area="contacts")

    class W:
        pass

    w = W()
    w.org, w.owner, w.garcia, w.s, w.db, w.e, w.factory = org, owner, garcia, system_session, database, e, factory
    return w


def turn(w, message, history=(), language=None):
    conv = w.factory.conversation(w.org, w.owner)
    for text in history:
        w.factory.message(conv, text)
    access = load_access(w.s, w.org.id, user_id=w.owner.id)
    with w.db.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, conv.id, message, now=NOW, embed=w.e.embed,
                                 embed_model=w.e.model_name, language=language)
        uow.commit()
    return block


def test_an_english_conversation_gets_an_english_block_with_no_spanish_label(world):
    block = turn(world, "What are the payment terms of Talleres García?",
                 history=["Hi, I need to chase a couple of invoices today", "Thanks, that is what I was looking for"])
    assert block.text.startswith("Memory: data remembered")
    assert "About the person:" in block.core and "- Name: <<<Pablo>>>" in block.core
    assert "Your company: payment method <<<bank transfer>>>" in block.profile
    assert "(customer)" in block.text and "payment term <<<60 days>>>" in block.text
    assert not SPANISH_WORDS.search(block.text)


def test_a_spanish_conversation_gets_a_spanish_block_with_no_english_label(world):
    block = turn(world, "¿Qué plazo de pago tiene Talleres García?",
                 history=["Hola, hoy tengo que reclamar un par de facturas", "Gracias, es lo que buscaba"])
    assert block.text.startswith("Memoria: datos recordados")
    assert "Sobre la persona:" in block.core and "Tu empresa: forma de pago <<<transferencia>>>" in block.profile
    assert "(cliente)" in block.text
    assert not ENGLISH_WORDS.search(block.text)


def test_facts_named_after_their_value_are_labelled_by_their_family_in_the_blocks_language(world):
    """The learner names a pet, a hobby or an instrument after its value so that several live side by side
    (mascota_bailey, aficion_running): an English block called them "Mascota bailey", "Aficion running"."""
    facts = [("mascota_bailey", "dog Bailey", "I have a dog called Bailey"),
             ("aficion_running", "running", "I love running"),
             ("instrumento_clarinet", "clarinet", "I play the clarinet"),
             ("trabajo_anterior", "waiter", "I used to work as a waiter")]
    for attribute, value, sentence in facts:
        world.factory.memory(None, sentence=sentence, level="personal", subject="self", attribute=attribute,
                             value=value, category="person", owner=world.owner)
    english = turn(world, "hi", history=["Hi, thanks for the help with the dog yesterday"])
    for line in ("- Pet: <<<dog Bailey>>>", "- Hobby: <<<running>>>", "- Instrument: <<<clarinet>>>",
                 "- Previous job: <<<waiter>>>"):
        assert line in english.core, english.core
    assert not re.search(r"Mascota|Aficion|Instrumento|Trabajo", english.text)
    spanish = turn(world, "hola", history=["Hola, gracias por lo del perro ayer"])
    for line in ("- Mascota: <<<dog Bailey>>>", "- Afición: <<<running>>>", "- Trabajo anterior: <<<waiter>>>"):
        assert line in spanish.core, spanish.core


def test_the_org_setting_wins_over_the_conversation_and_the_locale_decides_when_nothing_tells(world):
    world.s.execute(update(User).where(User.id == world.owner.id).values(locale="en"))
    world.s.commit()
    assert turn(world, "ok").text.startswith("Memory:")  # nothing to tell the language by: the person's locale
    world.s.execute(update(Organization).where(Organization.id == world.org.id).values(settings={"language": "es"}))
    world.s.commit()
    block = turn(world, "What are the payment terms of Talleres García?", history=["Hi, thanks for the help"])
    assert block.text.startswith("Memoria:") and not ENGLISH_WORDS.search(block.text)


def test_language_is_told_by_the_words_of_both_languages():
    assert language_of(["¿Y cuánto nos debe el de la esquina?"]) == "es"
    assert language_of(["And how much do I owe him?"]) == "en"
    assert language_of(["ok"]) is None


def crowd_the_profile(w):
    """Enough better-ranked customer facts that Talleres García's is not in the profile."""
    for i in range(PROFILE_MAX_ITEMS + 2):
        c = w.factory.contact(w.org, name=f"Cliente Número {i}", tax_id=None)
        w.factory.memory(w.org, sentence=f"Entrega los pedidos en el almacén {i}", subject=f"contact:{c.id}",
                         attribute="entregas", value=f"almacén {i}", category="customer", area="contacts",
                         confidence=0.99)


@pytest.mark.parametrize("history, question, term", [
    (["Hoy he pasado por Talleres García a llevarles el presupuesto"], "¿Y cuándo nos pagan?", "60 días"),
    (["I dropped the quote at Talleres García this morning"], "And when do they pay us?", "60 days"),
])
def test_related_memories_follow_the_subject_the_conversation_named(world, history, question, term):
    crowd_the_profile(world)
    without = turn(world, question)
    assert term not in without.text
    block = turn(world, question, history=history)
    assert f"<<<{term}>>>" in block.related


def test_a_partial_name_in_the_conversation_finds_the_contact(world):
    crowd_the_profile(world)
    block = turn(world, "¿Y cuándo nos pagan?", history=["He hablado con los de García esta mañana"])
    assert "<<<60 días>>>" in block.related


def test_yesterday_in_the_block_is_the_day_before_the_message_was_sent(world):
    sent = dt.datetime(2025, 3, 3, 10, 0, tzinfo=dt.timezone.utc)
    world.factory.memory(None, level="personal", owner=world.owner, subject="self", attribute="evento",
                         value="Visita al taller de Talleres García", sentence="Visitó el taller de Talleres García",
                         category="event", event_date=dt.date(2025, 3, 2))
    conv = world.factory.conversation(world.org, world.owner)
    msg = world.factory.message(conv, "¿Qué hice ayer?", sent_at=sent)
    access = load_access(world.s, world.org.id, user_id=world.owner.id)
    with world.db.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, conv.id, "¿Qué hice ayer?", message_id=msg.id,
                                 embed=world.e.embed, embed_model=world.e.model_name)
        uow.commit()
    assert "<<<Visita al taller de Talleres García>>> (2025-03-02)" in block.related
