"""Shaped values (domain.value_shapes): what a sentence says a term, phone, email, address, amount, time, channel or
weekdays is, so a change can be matched with the fact it changes."""
from __future__ import annotations

from memory_core.domain.policy import not_a_bank_change
from memory_core.domain.value_shapes import shapes, value_of


def test_shapes_read_each_kind_of_value_once_whatever_the_wording():
    assert shapes("Green leaf bakery changed to 60 days") == {"days": {"60"}}
    assert shapes("ha cambiado de número, ahora es 644 55 66 77") == {"phone": {"644556677"}}
    assert shapes("el email es admin@acme.es") == {"email": {"admin@acme.es"}}
    assert shapes("nos cobra el litro a 8 euros") == {"money": {"8"}}
    assert shapes("we close at 7pm") == {"time": {"19:00"}} and shapes("cerramos a las 19:00") == {"time": {"19:00"}}
    assert shapes("reparte los martes y jueves") == {"weekday": {"jueves martes"}}
    assert shapes("delivers on tuesdays") == shapes("reparte los martes")
    assert shapes("ahora están en la avenida de Burgos 21") == {"address": {"avenida de burgos 21"}}
    assert shapes("send it by e-mail") == shapes("mándalo por correo") == {"channel": {"email"}}


def test_one_day_is_no_routine_and_a_quantity_no_term():
    assert shapes("nos ha pedido 200 macetas para el viernes") == {}


def test_the_value_taken_is_the_one_the_old_fact_does_not_say():
    assert value_of("ya no pedimos por email, ahora es todo por whatsapp", "channel", "pedidos por email") == "whatsapp"
    assert value_of("printwise changed our delivery day to tuesdays", "weekday") == "tuesday"
    assert value_of("no, a 90 días", "days") == "90 días"


def test_a_new_phone_or_account_manager_is_no_bank_change_but_an_account_is():
    assert not_a_bank_change("Cristalería Prieto ha cambiado de número, ahora es 644556677")
    assert not_a_bank_change("bellini catering has a new account manager, Mark Owens")
    assert not not_a_bank_change("Acme has a new account manager and a new bank account")
    assert not not_a_bank_change("el número de cuenta nuevo de Acme es 2100 0418 4502 0005 1332")


def test_an_email_change_is_no_bank_change_unless_it_speaks_of_one():
    assert not_a_bank_change("oakridge dental changed their invoices email to billing@oakridge.com")
    assert not not_a_bank_change("Acme nos ha dado su nueva cuenta, te la mando al email x@y.com")


def test_a_note_said_as_a_change_restates_only_the_same_habit():
    from memory_core.domain.ladder import _restates

    assert _restates("nowadays I drink my tea plain", "I drink my tea with honey")
    assert _restates("these days I take my coffee black", "I take my coffee with milk and sugar")
    # notes that share a name but not what they say: chat is full of "now" and "new"
    assert not _restates("I'm learning how to play the violin now",
                         "How are you doing in school? — Doing good! Busy with studies")
    assert not _restates("Anything cool? — I'm working on a new project",
                         "Anything cool happening recently? — Their words touched me")
    assert not _restates("[image: a photo of a turtle swimming in a tank]", "[image: a photo of a turtle on a log]")
    assert not _restates("Exploring new cities is always so much fun", "Exploring new places can be so inspiring")
