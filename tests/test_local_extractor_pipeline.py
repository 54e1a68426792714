"""The generic fact end to end: the worker passes the gate's decision to the local extractor."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.backends import get_backend
from memory_core.domain.models import Memory
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


@pytest.fixture(scope="module")
def backend(servers):
    return get_backend(servers)


def run(session, backend, org, user, text):
    """Ingest one message from user and run the worker's unit on it; committed."""
    r = ingest_message(session, channel="web", conversation="chat-1", external_id="m-1", org_id=org.id,
                       user_id=user.id, phone=None, role="user", text=text)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def test_a_passed_message_no_rule_reads_is_learnt_as_a_note_on_the_contact(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    duero = factory.contact(org, "Cerámicas Duero S.L.", tax_id="B47123456", kind="supplier")
    out = run(system_session, backend, org, ana, "Cerámicas Duero no nos sirve nada hasta que recibe el pedido firmado")
    assert out.outcome == "learnt"
    [m] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert (m.subject, m.level, m.category) == (f"contact:{duero.id}", "shared", "supplier")
    assert m.value == "Cerámicas Duero no nos sirve nada hasta que recibe el pedido firmado"


def test_a_contacts_bank_change_in_words_is_proposed_never_applied(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Cerámicas Duero S.L.", tax_id="B47123456", kind="supplier")
    out = run(system_session, backend, org, ana, "Cerámicas Duero dice que ahora cobra en otra cuenta, la del Sabadell")
    assert out.outcome == "proposed"
    assert system_session.scalars(select(Memory).where(Memory.status == "active",
                                                       Memory.level == "shared")).all() == []


def test_what_the_person_says_about_themselves_stays_personal(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, backend, org, ana, "Vivo en Logroño desde 2015")
    assert out.outcome == "learnt"
    [m] = system_session.scalars(select(Memory).where(Memory.status == "active")).all()
    assert (m.subject, m.level, m.owner_user_id) == ("self", "personal", ana.id)
    assert m.sentence == "La persona vive en Logroño desde 2015."
