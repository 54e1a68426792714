"""The words that say something changed (domain.change_words), in the three strengths the pipeline asks for."""
from __future__ import annotations

import pytest

from memory_core.domain.change_words import CORRECTS, MAY_CHANGE, SAYS_CHANGED
from memory_core.domain.text import fold


def said(pattern, text: str) -> bool:
    return bool(pattern.search(fold(text)))


@pytest.mark.parametrize("text", [
    "Ahora las facturas las lleva Lucía", "Ya no trabajo allí", "Talleres García pays at 60 days now",
    "from next month it's 60", "Al final son 45 días", "turns out it's HT-5502", "Penrose have changed their day off",
    "Se han mudado a la avenida de América", "Gemma's left, the new accounts person is Callum",
    "Me he equivocado, es el 5520", "been eating meat again", "Kestrel have upped their minimum order",
])
def test_a_message_that_corrects_what_was_known(text):
    assert said(CORRECTS, text)
    assert said(MAY_CHANGE, text)


@pytest.mark.parametrize("text", [
    "Talleres García paga a 60 días", "turn left at the lights", "I went to the gym again on Sunday",
    "Our new driver is Tom", "Nowadays I drink my tea plain",
])
def test_a_message_that_corrects_nothing(text):
    assert not said(CORRECTS, text)


def test_a_plain_now_corrects_the_message_but_no_note():
    assert said(CORRECTS, "I'm now painting landscapes")
    assert not said(SAYS_CHANGED, "I'm now painting landscapes")
    assert not said(SAYS_CHANGED, "Ahora pintamos paisajes")


@pytest.mark.parametrize("text", [
    "Kestrel have upped their minimum order to 750 units", "Mum's moved to Leeds", "La tienda se ha trasladado",
    "we close on Tuesdays instead", "Vuelve a abrir los lunes otra vez", "Callum is taking over the accounts",
])
def test_a_note_that_says_it_changed(text):
    assert said(SAYS_CHANGED, text)


def test_loose_signs_of_news_only_may_tell_a_change():
    for text in ("Kingsley Timber put the delivery charge up to 30 pounds", "nowadays i drink my tea plain",
                 "Our new driver is Tom", "ya tenemos la furgoneta"):
        assert said(MAY_CHANGE, text), text
    assert not said(SAYS_CHANGED, "Our new driver is Tom")
    assert not said(MAY_CHANGE, "Kingsley Timber charges 25 pounds for delivery")
