"""A change of prices is learnt whoever's prices they are: the business's ("los precios suben un 3% el 1 de enero"),
a supplier's ("Muebles Soler sube sus precios un 4% en febrero", "Printwise's prices are going up 3% next year"), and
a later change replaces the earlier one, kept as a version; questions and maybes teach nothing (docs/decisions.md,
2026-12-06; tuned on evals/gate_prices.jsonl, measured on evals/gate_prices_heldout.jsonl)."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.backends.local_extractor.business import _rule_price_change
from memory_core.backends.local_extractor.text import Sentence
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def say(session, backend, org, user, text, n=1):
    r = ingest_message(session, channel="whatsapp", conversation="chat-1", external_id=f"m-{n}", org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


@pytest.mark.parametrize("text, subject, value", [
    ("los precios suben un 3% el 1 de enero", "org", "+3% el 1 de enero"),
    ("From March prices go up 5%.", "org", "+5% from March"),
    ("We're lowering our prices 5% in the January sales", "org", "-5% in the January sales"),
    ("Muebles Soler sube sus precios un 4% en febrero", "name:muebles soler", "+4% en febrero"),
    ("Harbor Foods is putting its prices up 6% from May", "name:harbor foods", "+6% from May"),
    ("Initech raised their rates by 10%", "name:initech", "+10%"),
])
def test_a_price_change_is_learnt_on_whose_prices_they_are(factory, system_session, backend, text, subject, value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert say(system_session, backend, org, ana, text).outcome == "learnt"
    [row] = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    assert (row.subject, row.attribute, row.value, row.level) == (subject, "cambio_precios", value, "shared")


def test_a_later_price_change_replaces_the_earlier_one_kept_as_a_version(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    say(system_session, backend, org, ana, "los precios suben un 3% el 1 de enero", 1)
    say(system_session, backend, org, ana, "a partir de marzo subimos las tarifas un 6%", 2)
    rows = system_session.scalars(select(Memory).where(Memory.org_id == org.id,
                                                       Memory.attribute == "cambio_precios")).all()
    assert {(m.value, m.status) for m in rows} == {("+3% el 1 de enero", "superseded"),
                                                  ("+6% a partir de marzo", "active")}


@pytest.mark.parametrize("text", ["Are prices going up in January?", "igual subimos un 5% el año que viene",
                                  "if Initech raises prices again we'll switch supplier"])
def test_questions_and_maybes_about_prices_teach_nothing(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    assert say(system_session, backend, org, ana, text).outcome == "ignored"


@pytest.mark.parametrize("text", ["Muebles Soler no sube sus precios este año", "mi alquiler sube un 2% en junio"])
def test_no_rise_and_someone_s_rent_are_no_price_change(text):
    assert list(_rule_price_change(Sentence.of(text))) == []
