"""The date phrases people type in Spanish and English chat, read against the day the message was sent: the day a
learnt event falls on, and the day a promise falls due ("te pago a finales de mes", "the 3rd of next month")."""
from __future__ import annotations

import datetime as dt

import pytest

from memory_core.backends.local_extractor import LocalExtractor
from memory_core.domain.dates import find_date
from memory_core.domain.model_port import ExtractionContext, KnownContact
from memory_core.domain.text import fold

SUNDAY = dt.date(2026, 12, 6)  # Sunday 6 December 2026: Monday the 14th is eight days on


def day_of(text: str, past: bool = False) -> dt.date | None:
    found = find_date(fold(text), SUNDAY, past=past)
    return found[0] if found else None


@pytest.mark.parametrize("text, expected", [
    # a weekday and the day number: the 14th, a Monday (not the coming Monday, the 7th)
    ("la reunión es el lunes 14", dt.date(2026, 12, 14)),
    ("see you on Monday the 14th", dt.date(2026, 12, 14)),
    # a weekday and a day that do not agree ("el martes 14"): the day number, this month
    ("el martes 14 te llamo", dt.date(2026, 12, 14)),
    # a day of the month: this month's, or next month's once it has gone
    ("te pago el día 14", dt.date(2026, 12, 14)),
    ("vence el día 3", dt.date(2027, 1, 3)),
    ("payment by the 15th", dt.date(2026, 12, 15)),
    ("el 3 del mes que viene", dt.date(2027, 1, 3)),
    ("the 3rd of next month", dt.date(2027, 1, 3)),
    # parts of a month
    ("nos paga a finales de mes", dt.date(2026, 12, 31)),
    ("a fin de mes", dt.date(2026, 12, 31)),
    ("at the end of the month", dt.date(2026, 12, 31)),
    ("a principios de febrero", dt.date(2027, 2, 1)),
    ("a mediados de enero", dt.date(2027, 1, 15)),
    ("in mid-March", dt.date(2027, 3, 15)),
    # counts written as words
    ("en dos semanas", dt.date(2026, 12, 20)),
    ("dentro de una semana", dt.date(2026, 12, 13)),
    ("en quince días", dt.date(2026, 12, 21)),
    ("dentro de un mes", dt.date(2027, 1, 6)),
    ("in two weeks", dt.date(2026, 12, 20)),
    ("in a week", dt.date(2026, 12, 13)),
    # the weekend
    ("el finde vamos a la sierra", dt.date(2026, 12, 12)),
    # a past day named in a sentence the extractor did not take for past: still the past day
    ("el viernes pasado", dt.date(2026, 12, 4)),
    ("last Friday", dt.date(2026, 12, 4)),
    ("el finde pasado", dt.date(2026, 12, 5)),
])
def test_a_phrase_names_the_day_a_person_means(text, expected):
    assert day_of(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("fui el día 3", dt.date(2026, 12, 3)),
    ("el lunes 14 fuimos al notario", dt.date(2026, 9, 14)),  # the latest Monday the 14th
    ("el finde pasado", dt.date(2026, 12, 5)),
    # told in the past, a coming day is still ahead: "me dijo que pagaría el jueves que viene"
    ("me dijo que pagaría el jueves que viene", dt.date(2026, 12, 10)),
    ("he said he'd pay next Thursday", dt.date(2026, 12, 10)),
])
def test_a_sentence_told_in_the_past_reads_its_day_back_from_the_send_day(text, expected):
    assert day_of(text, past=True) == expected


@pytest.mark.parametrize("text", ["nos paga a 30 días", "el 30% de descuento", "we're on the 5 percent plan",
                                  "el día 15 de cada mes", "I'll be late"])
def test_numbers_that_are_not_days_name_no_day(text):
    assert day_of(text) is None


def test_an_event_on_a_numbered_weekday_is_dated_that_day_and_keeps_its_words():
    ctx = ExtractionContext(message="La reunión con Acme es el lunes 14.", today=SUNDAY,
                            contacts=(KnownContact("c2", "Acme Ibérica S.A.", "customer", "A28123456", ("Acme",)),))
    found, _ = LocalExtractor().extract(ctx)
    events = [f for f in found if f.category == "event"]
    assert [(f.value, f.event_date) for f in events] == [("reunión con Acme", dt.date(2026, 12, 14))]


@pytest.mark.parametrize("text", ["cerramos los viernes a las ocho", "cada viernes vamos al mercado",
                                  "los lunes no abrimos", "solo vengo a la tienda martes y jueves",
                                  "I'm in the office Mondays and Thursdays", "every Monday we have a team meeting"])
def test_a_weekday_every_week_is_no_date(text):
    # "los viernes" is every Friday (a Spanish weekday in -s is the same in the plural): a habit, not an event.
    assert day_of(text) is None
    assert day_of("el viernes cerramos a las ocho") == dt.date(2026, 12, 11)
