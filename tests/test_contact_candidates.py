"""Which contacts of a big address book the extractor is shown for a message (learning/contact_candidates.py)."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from memory_core.backends import get_backend
from memory_core.domain.models import Memory
from memory_core.learning.contact_candidates import ALL_CONTACTS_UP_TO, MAX_CONTACTS, ContactIndex, ContactRow
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message


def row(name: str, tax_id: str | None = None, aliases: tuple[str, ...] = ()) -> ContactRow:
    return ContactRow(uuid.uuid4(), name, "customer", tax_id, aliases)


def workshops() -> list[ContactRow]:
    """An address book of workshops, by name: 60 "... García" that sort before "Talleres García", 80 other
    "Talleres ...", and the one a message names."""
    rows = [row(f"Academia García {i}") for i in range(30)] + [row(f"Clínica García {i}") for i in range(30)]
    rows += [row(f"Talleres {surname} {i}") for i in range(40) for surname in ("Alonso", "Zubiri")]
    rows.append(row("Talleres García S.L.", tax_id="B-12345678"))
    rows.append(row("Hierros del Norte S.A.", tax_id="A87654321", aliases=("Olano",)))
    return sorted(rows, key=lambda r: r.name)


def names(rows) -> list[str]:
    return [r.name for r in rows]


def test_the_contact_a_message_names_comes_first_among_many_sharing_its_words():
    index = ContactIndex(workshops())
    found = index.candidates("Talleres García paga a 60 días desde ahora")
    assert names(found)[0] == "Talleres García S.L."
    # 140 contacts share a word with the message: the extractor is shown at most MAX_CONTACTS of them, the
    # ones sharing the rarer word ("garcia": 61 contacts, "talleres": 81) before the others.
    assert len(found) == MAX_CONTACTS
    assert all("García" in n for n in names(found))


def test_a_tax_id_written_any_way_finds_its_contact_first():
    index = ContactIndex(workshops())
    assert names(index.candidates("El NIF del taller nuevo es B 12.345.678, paga a 30 días"))[0] == \
        "Talleres García S.L."
    assert names(index.candidates("CIF A-87654321: cambian de banco"))[0] == "Hierros del Norte S.A."


def test_an_alias_names_its_contact():
    index = ContactIndex(workshops())
    assert names(index.candidates("Olano nos paga a 45 días")) == ["Hierros del Norte S.A."]


def test_a_message_that_names_nobody_is_shown_no_contact_of_a_big_book():
    assert ContactIndex(workshops()).candidates("paga a 60 días desde ahora, recuérdalo") == []


def test_a_small_address_book_is_shown_whole_in_name_order():
    rows = sorted((row(f"Cliente {i:02d}") for i in range(ALL_CONTACTS_UP_TO)), key=lambda r: r.name)
    index = ContactIndex(rows)
    assert index.candidates("Talleres García paga a 60 días") == rows
    assert ContactIndex(rows + [row("Zapatería Ruiz")]).candidates("Talleres García paga a 60 días") == []


def test_the_worker_links_the_fact_to_the_named_workshop_in_a_big_address_book(factory, system_session, servers):
    org = factory.org()
    ana = factory.member(org, role="owner")
    for i in range(30):
        factory.contact(org, f"Academia García {i}", tax_id=None)
        factory.contact(org, f"Talleres Alonso {i}", tax_id=None)
    garcia = factory.contact(org, "Talleres García S.L.", tax_id=None)
    said = ingest_message(system_session, channel="web", conversation="chat-1", external_id="m-1", org_id=org.id,
                          user_id=ana.id, phone=None, role="user", text="Talleres García paga a 60 días ahora")
    system_session.commit()
    assert process_message(system_session, said.message_id, get_backend(servers)).outcome == "learnt"
    system_session.commit()
    [fact] = system_session.scalars(select(Memory).where(Memory.org_id == org.id, Memory.status == "active")).all()
    assert (fact.subject, fact.attribute, fact.value) == (f"contact:{garcia.id}", "plazo_pago", "60 días")
