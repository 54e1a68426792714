"""The local extractor with a writer who knows many names: the same facts, and what one message brings in stays
in that message (names.Pool, extractor.known_subjects)."""
from __future__ import annotations

from memory_core.backends.local_extractor.extractor import LocalExtractor, known_subjects
from memory_core.backends.local_extractor.names import find_mentions
from memory_core.backends.local_extractor.text import Sentence
from memory_core.domain.model_port import ExtractionContext, KnownContact

CONTACTS = (KnownContact(id="c1", name="Talleres García S.L.", kind="customer", tax_id="B12345678"),
            KnownContact(id="c2", name="Hierros del Norte S.A.", kind="supplier", aliases=("Olano",)))
FIRST = ("marta", "luis", "carmen", "javier", "lucia", "pablo", "elena", "diego", "sara", "andres", "ines", "tomas",
         "rosa", "ivan", "nuria", "oscar", "alba", "hugo", "irene", "raul")
LAST = ("perez", "ruiz", "sanz", "ortega", "gil", "vidal", "moreno", "nieto", "pascual", "herrero", "soler", "rojas",
        "prieto", "lorenzo", "ibanez", "crespo", "roman", "mora", "arias", "duran", "benito", "carrasco", "vega",
        "cabrera", "fuentes")
NAMES = tuple(f"{first} {last}" for first in FIRST for last in LAST)  # 500 known names, none a contact's


def facts(message: str, names: tuple[str, ...] = ()) -> set[tuple[str, str, str]]:
    found, _ = LocalExtractor().extract(ExtractionContext(message=message, contacts=CONTACTS, known_names=names))
    return {(f.subject, f.attribute, f.value) for f in found}


def test_a_writer_who_knows_hundreds_of_names_gets_the_same_facts():
    assert len(NAMES) == 500
    for message in ("Talleres García paga a 60 días desde ahora",
                    "Olano nos paga a 45 días",
                    "El CIF B-12345678 es de un cliente que paga a 90 días",
                    "tenemos un cliente nuevo, Farmacia Levante, y paga a 30 días"):
        alone = facts(message)
        assert alone and facts(message, NAMES) == alone, message
    [(subject, attribute, value)] = facts("Talleres García paga a 60 días desde ahora", NAMES)
    assert (subject, attribute, value) == ("contact:c1", "plazo_pago", "60 días")


def test_a_known_name_is_found_among_hundreds():
    pool = known_subjects(ExtractionContext(message="", contacts=CONTACTS, known_names=NAMES))
    said = Sentence.of("Ayer hablé con Irene Cabrera y con Talleres García")
    assert [m.contact.id for m in find_mentions(said, pool)] == ["c1", "irene cabrera"]


def test_what_a_message_brings_in_is_not_known_to_the_next_one():
    context = ExtractionContext(message="", contacts=CONTACTS, known_names=NAMES)
    pool = known_subjects(context)
    said = Sentence.of("Farmacia Levante paga a 30 días")
    assert find_mentions(said, pool) == []
    pool.index  # built, as the extractor builds it before a message brings a subject in  # noqa: B018
    more = pool + (KnownContact(id="farmacia levante", name="Farmacia Levante", kind="named"),)
    assert [m.contact.id for m in find_mentions(said, more)] == ["farmacia levante"]
    # The writer's pool, shared by their next messages, is as it was.
    assert find_mentions(said, pool) == [] and known_subjects(context) is pool
    assert "farmacia levante" not in pool.index.named_ids and "levante" not in pool.index.owners
