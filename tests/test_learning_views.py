"""A person's views, values, lasting tastes and ways of being, said in chat, in English and Spanish: each is learnt
as the speaker's own memory, end to end (ingested, learnt by the worker's unit with the local backend, read
back); the greetings, compliments, questions back and small talk around them are not."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.backends.local_extractor.units import units
from memory_core.backends.local_extractor.views import states_a_view
from memory_core.domain.models import Memory
from tests.test_learning_conversations import tell


@pytest.fixture
def ana(factory):
    org = factory.org()
    return org, factory.member(org, role="owner")


def learnt(session, org):
    """Every active memory of the org and of its members."""
    return list(session.scalars(select(Memory).where(Memory.status == "active",
                                                     (Memory.org_id == org.id) | Memory.org_id.is_(None))))


@pytest.mark.parametrize("text, word", [
    ("Thanks, Jo! Setbacks are just opportunities for comebacks.", "setbacks"),
    ("Honestly, I think family is what matters most", "family"),
    ("It's important to stay positive and thankful, even when life gets tough.", "positive"),
    ("I've always loved painting landscapes", "painting"),
    ("I'm a really competitive person", "competitive"),
    ("Music helps me relax after a long day", "music"),
    ("¡Gracias, Lucía! Los pequeños gestos pueden cambiarle el día a alguien.", "gestos"),
    ("La verdad, creo que la familia es lo más importante", "familia"),
    ("Es importante mantenerse positivo cuando las cosas van mal", "positivo"),
    ("Siempre me ha encantado pintar paisajes", "pintar"),
    ("Soy una persona muy competitiva", "competitiva"),
    ("La música me ayuda a relajarme después del trabajo", "música")])
def test_a_view_said_in_chat_becomes_a_memory_of_the_speaker(factory, system_session, backend, ana, text, word):
    tell(system_session, backend, ana, text)
    rows = learnt(system_session, ana[0])
    assert [m.subject for m in rows] == ["self"], [(m.subject, m.value) for m in rows]
    (view,) = rows
    assert word in view.value.lower() and view.owner_user_id == ana[1].id
    assert not view.value.lower().startswith(("thanks", "gracias", "honestly", "la verdad"))


def test_a_view_in_general_is_said_as_the_speakers_in_the_block(factory, system_session, backend, ana):
    tell(system_session, backend, ana, "Hard work always pays off in the end.",
         "Trabajar en equipo siempre da mejores resultados.")
    assert sorted(m.sentence for m in learnt(system_session, ana[0])) == [
        "La persona piensa: Trabajar en equipo siempre da mejores resultados.",
        "The person thinks: Hard work always pays off in the end."]


@pytest.mark.parametrize("text", [
    "I think that's great!",
    "haha you always say that",
    "It's great to see you so happy!",
    "Keep going, you've got this! Never give up on your dreams.",
    "Yeah, Jon! Let's keep spreading kindness.",
    "Love to hear that, thanks for sharing!",
    "Life can be such a rollercoaster sometimes",
    "me encanta, qué bien",
    "Es genial verte tan feliz",
    "¡Ánimo, tú puedes con todo! Eres una crack.",
    "Vamos a seguir apoyándonos, ¿vale?",
    "La vida es así",
    "¿Tú crees que la familia es lo más importante?"])
def test_a_pleasantry_compliment_or_question_back_is_not_a_view(factory, system_session, backend, ana, text):
    assert tell(system_session, backend, ana, text) == ["ignored"]
    assert learnt(system_session, ana[0]) == []


def test_a_hedged_fact_a_plan_or_a_guess_is_no_view():
    # "Creo que" hedges a fact; a day makes a plan; "must be" guesses at the listener's day.
    for text in ("Creo que Talleres García paga a 60 días", "La reunión con Acme es el martes",
                 "I think it's going to rain tomorrow", "Losing so much progress must be really frustrating",
                 "Been tweaking a dessert recipe to make it yummier", "Ping me when Initech pays"):
        assert not states_a_view(text), text
    for text in ("No hay nada como un café por la mañana", "It's moments like these that make life worth living",
                 "Valoro mucho la puntualidad", "I believe in giving people second chances"):
        assert states_a_view(text), text


def test_a_known_name_before_small_talk_is_still_the_listener_addressed():
    # The other speaker's name is a known subject in a long chat; "John, I get it" says nothing of John.
    for text in ("Yeah John, I get it.", "Hey John, I'm doing ok - hope you are too."):
        assert all(u.phatic for u in units(text, frozenset({"john"}))), text
    assert [u.text for u in units("Sí Marta, paga a 30 días", frozenset({"marta"}))] == ["Sí Marta, paga a 30 días"]
