"""The write ladder: decides who a fact belongs to, never widening what was asked, then supersedes
instead of overwriting.

Rungs, top to bottom:
- personal facts (the person, their preferences, their own events) are owned by the user, or by the
  phone when no account is behind the number;
- business, customer and supplier facts are shared in the org, in their area;
  - a customer's or supplier's bank account becomes an unverified shared proposal (bank_account);
  - confirmation mode: a background fact waits for its author (confirmation);
  - a writer who may only read the area keeps a private memory plus a low_permission proposal;
- a caller may ask for less (private), never for more.

Everything here runs in the caller's transaction: memory, supersede link, source and audit row
commit together or not at all.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sqlalchemy import bindparam, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session, defer
from sqlalchemy.orm.attributes import set_committed_value

from memory_core.adapters.vector_binary import sent_vector
from memory_core.domain import audit, clock, subject_locks, value_shapes, versions
from memory_core.domain.access import Access
from memory_core.domain.change_words import MAY_CHANGE, SAYS_CHANGED
from memory_core.domain.dates import event_last_day
from memory_core.domain.families import FAMILIES as FAMILY_NAMES
from memory_core.domain.families import MEMBER_OF
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Memory, MemorySource, Organization
from memory_core.domain.text import fold, normalise_name, squash
from memory_core.domain.vocabulary import CATEGORY_AREA

# Two facts of one subject whose sentences are at least this similar are the same fact said again
# (with another attribute name, or as another note): it merges, it never replaces.
SAME_FACT_SIMILARITY = 0.92
# A correction ("ahora...", "no longer...", the gate's corrects) replaces the fact of its subject it is
# closest to in meaning, at least this close, whatever its attribute.
CORRECTION_SIMILARITY = 0.70
# A note said as a change replaces a note of its subject on the same topic (two words of substance in common, or a
# schedule's topic its name starts with: nota_horario_..., nota_entregas_...) at
# least this close: the local embedder puts "Kestrel's minimum order is 500 units" and "Kestrel have upped their
# minimum order to 750 units" at 0.57.
NOTE_CHANGE_SIMILARITY = 0.45
# Note topics of which a subject keeps one at a time, and the words both notes must say to be that topic: when it
# opens or closes ("our closing day is going to be Tuesday instead"), when it delivers, its discount; not a staff
# member's shift.
_SCHEDULES = {"horario": re.compile(r"\b(?:open\w*|clos\w*|shut|hours|abr[ei]\w*|cerr\w*|cierr\w*|horario)\b"),
              "entregas": re.compile(r"\b(?:deliver\w*|entreg\w*|repart\w*|rounds?|ruta)\b"),
              "descuento": re.compile(r"\b(?:descuento|discount|dto|rappel)\b|\d\s*(?:%|por ciento|percent)")}

BANK_ATTRIBUTES = ("cuenta_bancaria",)
# The business's own bank, named without an account number ("la cuenta de la empresa la tenemos en Bankinter"): a
# fact like any other, not an account change to verify.
OWN_BANK = "banco"
PERSONAL_CATEGORIES = ("person", "preference")
# Things a person has several of: each value is a fact of its own, not a correction of the last one.
MANY_VALUED = ("hijo", "hija", "hermano", "hermana")
# Attribute families that hold one value at a time: a new value for the same subject replaces the old
# one. Every other attribute (a generic note, a hobby, a family fact...) is many-valued: a new value
# is added beside the others (or merged into one that means the same), and replaces one only when the
# message corrects it.
SINGLE_VALUED = frozenset({
    "plazo_pago", "forma_pago", "persona_contacto", "canal_preferido", "formato_factura", "formato_importes",
    "nombre", "tono", "idioma", "pareja", "madre", "padre", "direccion", "regimen_iva", "regimen_irpf",
    "retencion_irpf", "nif", "razon_social", "actividad", "cuenta_bancaria", "email", "telefono", "descuento",
    "empleo", "trabajo", "profesion", "cargo", "empresa", "ciudad", "vivienda", "dieta", "plantilla", "web",
    "moneda", "fundacion", "residencia", "empleador", "dia_entrega", "hora_apertura", "hora_cierre",
    "cambio_precios", "contable", "gestoria", "abogado", "aseguradora", "banco", "cumpleanos", "aniversario",
    "situacion", "dia_facturacion", "estilo_respuesta",
})
# Families named after their object that hold one value each: what a person does not eat, food by food ("no come
# carne", then "vuelve a comer carne"); a relative's birthday; a pastime ("pádel los martes", then "pádel (lo ha
# dejado)"); the business's hours on one weekday ("8 los viernes"); when a thing falls due (the van's ITV); who the
# business buys a thing from.
SINGLE_VALUED_PREFIXES = ("no_come_", "cumpleanos_", "pasatiempo_", "hora_apertura_", "hora_cierre_", "vencimiento_",
                          "proveedor_")


def single_valued(family: str) -> bool:
    return family in SINGLE_VALUED or family.startswith(SINGLE_VALUED_PREFIXES)


# A many-valued fact kept beside another of the same attribute is stored as `<attribute>__<n>`.
NOTE_SEPARATOR = "__"

Embed = Callable[[list[str]], list[list[float]]]


@dataclass(frozen=True)
class Source:
    message_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None


@dataclass
class WriteResult:
    """What the ladder did: learnt | merged | superseded | proposed | refused, and the rows it touched."""
    outcome: str
    memory: Memory | None = None  # the active memory now holding the fact (private one for low_permission)
    proposal: Memory | None = None
    superseded: Memory | None = None
    reason: str = ""


def normalise(value: str) -> str:
    """Compare values the way a person would: case, accents and spacing do not matter."""
    return squash(value)


@lru_cache(maxsize=4096)
def attribute_family(attribute: str) -> str:
    """The family an attribute belongs to: its canonical name, without the suffix that keeps several
    values apart (plazo_de_pago -> plazo_pago, hijo_juan -> hijo, nota_viaje__2 -> nota_viaje)."""
    name = attribute.split(NOTE_SEPARATOR, 1)[0]
    if name in MEMBER_OF:  # the table of names that mean the same (domain.families)
        return MEMBER_OF[name]
    for prefix in (*MANY_VALUED, "evento"):
        if name.startswith(prefix + "_"):
            return prefix
    return name


def stored_attribute(fact: Fact) -> str:
    """The attribute a fact is stored under: two children or two dated events must not supersede
    each other, so their attribute carries the name or the date (hijo_juan, evento_2026-03-15)."""
    if fact.category == "event" and fact.event_date is not None and not fact.attribute.endswith(
            fact.event_date.isoformat()):
        return f"{fact.attribute}_{fact.event_date.isoformat()}"
    if fact.attribute in MANY_VALUED:
        return f"{fact.attribute}_{'_'.join(normalise(fact.value).split())}"
    return fact.attribute


def requested_level(fact: Fact) -> str:
    """The widest level a fact may get: personal for the person and their events (a meeting with a
    customer is the writer's), shared for the business, its own events included (its closing days)."""
    if fact.category in PERSONAL_CATEGORIES or fact.subject == "self":
        return "personal"
    if fact.category == "event" and fact.subject != "org":
        return "personal"
    return "shared"


# Facts told together that go together: a new job (or employer) replaces the employer (or job) told with the old one.
_TOLD_TOGETHER = {"trabajo": ("empleador",), "empleador": ("trabajo",)}
# The business's own opening hours and days, whatever the extractor named them (hora_apertura_viernes, horario,
# nota_horario_were_closed).
_HOURS = ("hora_apertura", "hora_cierre", "horario", "nota_horario")


def fact_area(fact: Fact) -> str:
    """The area a shared fact sits in: its category's, except the business's own hours, which are for every member
    as they are on its door (a shop assistant who may read only "general" tells a customer when the shop is shut)."""
    if fact.subject == "org" and fact.attribute.startswith(_HOURS):
        return "general"
    return CATEGORY_AREA.get(fact.category, "general")


# A word of substance: four letters or more, or a short name of kin ("my mum lives in Swansea", "Mum's moved").
_WORD = re.compile(r"[a-z]{4,}|\b(?:mum|dad|son|mam|tio|tia)\b")
_NEW = re.compile(r"\b(?:new|nuev[oa]s?)\b")
# "new" said of the value itself is a change of it: "a new number", "su nuevo teléfono", "email nuevo".
_NEW_VALUE = re.compile(r"\b(?:new|nuev[oa])\s+(?:phone\s+)?(?:number|phone|mobile|telefono|movil|tlf|e-?mail|correo|"
                        r"address|direccion|domicilio)\b|\b(?:numero|telefono|movil|e-?mail|correo|direccion)\s+nuev[oa]\b")


# Families of which a second value may be said beside the first: "kingsley timber now also delivers on thursdays".
_TRADING = {"customer", "supplier"}
ADDED_WITH_ALSO = frozenset({"dia_entrega", "telefono", "email"})
_OBJECT = re.compile(r"\b(?:for|por|per|para)\s+(?:the\s+|each\s+|every\s+|el\s+|la\s+|los\s+|las\s+|cada\s+)?"
                     r"([a-z]{4,})")


def _other_object(new: str, old: str) -> bool:
    """Two notes say what they are for, and it is not the same ("... for installation", "... for delivery")."""
    a, b = _OBJECT.search(fold(new)), _OBJECT.search(fold(old))
    return bool(a and b and a.group(1)[:5] != b.group(1)[:5])


def _rule_family(attribute: str) -> bool:
    """The attribute is a rule's: its family holds one value (plazo_pago, hora_cierre...) or the table names it;
    a dated event is not (a meeting moved to another day replaces it)."""
    family = attribute_family(attribute)
    return family != "evento" and (single_valued(family) or family in FAMILY_NAMES)


def _topic_words(sentence: str, subject: str) -> set[str]:
    """The words of four letters or more of a note's value (its words as said, not the sentence that frames them:
    "The person...") without its subject's name, its values and the words of change."""
    low = MAY_CHANGE.sub(" ", _KIDS.sub(" kids ", _RESIDES.sub(" resides ", value_shapes.without_values(
        fold(sentence)))))
    return set(_WORD.findall(low)) - set(_WORD.findall(fold(subject.split(":", 1)[-1]))) - _FILLER


# The children, by any word for them ("mis hijos", "los niños", "the kids"): one word of substance.
_KIDS = re.compile(r"\b(?:hij[oa]s|nin[oa]s|crios|peques|kids|children|chavales)\b")
# Where someone lives, said with any verb of living or moving: one word of substance ("my dad lives in Norwich", "Dad's
# moved into a care home in Ipswich").
_RESIDES = re.compile(r"\b(?:lives?|living|moved|moving|vive|viven|vivia|mudad[oa]s?|mudo|trasladad[oa]s?)\b")


# Words that say nothing of what a note is about: pronouns, articles, auxiliaries, adverbs of degree, words that
# frame a sentence ("even though", "it's important"), units and words of time.
_FILLER = frozenset("""the and with for you your our his her their its this that these those yes con los las una unos
unas del por para que mis tus sus nos nuestro nuestra nuestros have has had was were are can cant could would will
just really also always still been being very much too not never muy tambien siempre todavia aun pero some esta este
estan ahora they them from tiene tienen como todo todos days dias euros pounds week semana cada every solo even
though although important right""".split())


def _lead(value: str) -> tuple[str, ...]:
    """A note's first two words of substance, the words of change left out ("these days I take my coffee black":
    take, coffee); of a reply, those of the reply, not of the question it answers ("Anything new? — ..."); none of a
    described picture ("[image: a photo of ...]")."""
    if _pictured(value):
        return ()
    words = [w for w in re.findall(r"[a-z]{3,}", MAY_CHANGE.sub(" ", fold(_said(value)))) if w not in _FILLER]
    return tuple(words[:2])


def _said(value: str) -> str:
    """A note's own words: of a reply, the reply, not the question it answers ("Anything new? — ...")."""
    return value.rsplit(" — ", 1)[-1]


def _pictured(value: str) -> bool:
    """A described picture ("[image: a photo of ...]"): what one photo shows, which no later photo corrects."""
    return value.startswith("[")


def _same_topic(new: str, old: str, subject: str) -> bool:
    """Two notes speak of the same thing: their own words share two of substance (by their first four letters:
    "dance"/"dancing"), or the one the shorter says ("abrimos de 9 a 14"), and neither is a picture. "This is my
    go-to place for writing inspiration" and "Right now my writing is consuming me" share one of their two."""
    if _pictured(new) or _pictured(old):
        return False
    stems = [{w[:4] for w in _topic_words(_said(v), subject)} for v in (new, old)]
    return len(stems[0] & stems[1]) >= min(2, *map(len, stems)) > 0


def _same_schedule(topic: str | None, new: str, old: str) -> bool:
    """Two notes of a schedule topic both say that schedule (`_SCHEDULES`)."""
    words = _SCHEDULES.get(topic or "")
    return words is not None and bool(words.search(fold(new))) and bool(words.search(fold(old)))


def _restates(new: str, old: str) -> bool:
    """The new note says the same habit as the old one, another way: they open on the same two words of substance
    ("I drink my tea with honey", "nowadays I drink my tea plain"); two notes that only share a name do not ("It's
    amazing how books...", "it's been an amazing adventure")."""
    lead = _lead(new)
    return len(lead) == 2 and lead == _lead(old)


def _says_again(note: Memory, fact: Memory) -> bool:
    """A note says a rule's fact again: its name is of the fact's family (nota_forma_pago_pay_card beside
    forma_pago), or its words hold the fact's value (Leganés) or its numbers ("have gone to 60 days" beside 60 días)."""
    family = attribute_family(fact.attribute)
    said = fold(fact.value)
    numbers = re.findall(r"\d+", said)
    return f"_{family}_" in f"{note.attribute.split(NOTE_SEPARATOR, 1)[0]}_" or \
        re.search(rf"\b{re.escape(said)}\b", fold(note.value)) is not None or \
        bool(numbers and set(numbers) <= set(re.findall(r"\d+", fold(note.value))))


# The value a note says it replaces: "45 al día, no 30", "HT-5502 not 5520", "en vez de los lunes", "instead of oat",
# "he vendido el ibiza".
_ARTICLE = r"(?:(?:a|al|el|la|los|las|en|on|the|at|por|by|de|of)\s+)?"
_NOT_THAT = re.compile(rf"(?:,|\b(?:y|and|pero|but)|(?<=\d))\s*(?:no|not)\s+{_ARTICLE}([a-z0-9@.%-]*[a-z0-9%])|"
                       rf"\b(?:en vez de|en lugar de|instead of|rather than)\s+{_ARTICLE}([a-z0-9@.%-]*[a-z0-9%])|"
                       # what the person no longer has: "he vendido el ibiza", "sold the van", "ya no tengo el perro"
                       r"\b(?:he vendido|vendi|hemos vendido|sold|got rid of|ya no tengo|ya no tenemos|"
                       r"no longer have)\s+"
                       r"(?:(?:el|la|los|las|mi|mis|nuestr[oa]|the|my|our|a|an|un|una)\s+)?([a-z0-9-]*[a-z0-9])")
# Words after "no" that are no value: "no hay problema", "not sure".
_NOT_VALUES = frozenset("""mas hay yet far bad way one all any now sure only quite asi tan nada nadie lot lots
everything todo mucho muchos muchas bastante""".split())


def _named_as_replaced(value: str) -> set[str]:
    """The values a note says are replaced ("45 al día, no 30": {"30"}): numbers, or words of three letters or more."""
    said = {next(g for g in m.groups() if g) for m in _NOT_THAT.finditer(fold(value))}
    return {w for w in said if any(c.isdigit() for c in w) or (len(w) >= 3 and w not in _FILLER | _NOT_VALUES)}



_REPLACED_CLAUSE = re.compile(r"(?:,|\b(?:but|pero))\s*(?:not|no)\s+[^,.;:!?]*|\b(?:en vez de|en lugar de|instead of|"
                              r"rather than)\s+[^,.;:!?]*", re.IGNORECASE)


def _without_replaced(text: str) -> str:
    """A text without the values it says are replaced: "Tuesdays and Fridays now, not Wednesday and Saturday"."""
    return _REPLACED_CLAUSE.sub(" ", text)


def _value_words(value: str) -> set[str]:
    """A value's numbers and words, as _named_as_replaced reads them."""
    return set(re.findall(r"[a-z0-9@.%-]*[a-z0-9%]", fold(value))) | set(re.findall(r"\d+", fold(value)))


def _note_topic(attribute: str) -> str | None:
    """The topic a note's name starts with (nota_precios_cobra_litro: precios), or None."""
    parts = attribute.split(NOTE_SEPARATOR, 1)[0].split("_")
    return parts[1] if len(parts) > 2 and parts[0] == "nota" else None


def write_memory(session: Session, access: Access, org: Organization | None, fact: Fact, *,
                 source: Source | None = None, explicit: bool = False, level: str | None = None,
                 embed: Embed | None = None, embed_model: str | None = None, origin: str | None = None,
                 actor_label: str = "memoria worker", at: dt.datetime | None = None) -> WriteResult:
    """Write one fact for the principal in `access`, down the ladder. Does not commit.

    `at` is when the fact was said (its message's send time; default now): the new version is valid
    from then, and the one it replaces until then."""
    fact = dataclasses.replace(fact, attribute=stored_attribute(fact))
    wanted = requested_level(fact)
    if level == "private" and wanted == "shared":
        wanted = "private"  # the caller asked for less: honour it, never the reverse
    origin = origin or ("explicit" if explicit else "background")
    area = fact_area(fact)
    writer = _Writer(session, access, org, fact, source, embed, embed_model, origin, actor_label,
                     at or clock.now())

    if wanted == "personal":
        return writer.put_active(level="personal", area="general")
    if org is None:
        # A number with no org picked: only what is about the person can be kept.
        return WriteResult("refused", reason="No organization: only facts about the person are kept.")
    if wanted == "private":
        return writer.put_active(level="private", area=area)
    if fact.attribute in BANK_ATTRIBUTES and fact.subject.startswith(("contact:", "name:")):
        return writer.propose("bank_account", area,
                              "A customer's or supplier's new bank account is never learnt directly: "
                              "an owner or admin must verify it.")
    if org.memory_mode == "confirmation" and not explicit:
        return writer.propose("confirmation", area,
                              "Confirmation mode: business facts learnt in the background wait for their author.")
    if access.can_edit(area):
        return writer.put_active(level="shared", area=area)
    private = writer.put_active(level="private", area=area)
    proposal = writer.propose("low_permission", area,
                              f"The author may not edit {area}: someone who may edit it must share it.")
    return WriteResult("proposed", memory=private.memory, proposal=proposal.proposal,
                       superseded=private.superseded, reason=proposal.reason)


@dataclass(frozen=True)
class Match:
    """What a new fact does to the active facts of its subject: merge into one, supersede one, or add."""
    action: str  # merge | supersede | add
    memory: Memory | None = None
    attribute: str | None = None  # for add: the attribute to store it under (a note beside others)
    value: str | None = None  # for supersede: the new value as the replaced fact says it, when it was a note


@lru_cache(maxsize=64)
def _same_level_active_stmt(by_user: bool, by_phone: bool, in_org: bool, with_org: bool, nowait: bool):
    """The active rows of a fact's subject at one level and owner, locked: built once per shape (the worker
    runs it for every fact; building the statement and its cache key cost more than reading its few rows)."""
    # Their vectors are read in binary (the merge compares them with the new fact's), not printed as text.
    q = select(Memory, sent_vector(Memory.embedding)).options(defer(Memory.embedding)).where(
        Memory.status == "active", Memory.level == bindparam("level"), Memory.subject == bindparam("subject"),
        Memory.owner_user_id == bindparam("owner_user") if by_user else Memory.owner_user_id.is_(None),
        Memory.owner_phone == bindparam("owner_phone") if by_phone else Memory.owner_phone.is_(None))
    if in_org:
        q = q.where(Memory.org_id == bindparam("org_id") if with_org else Memory.org_id.is_(None))
    return q.with_for_update(nowait=nowait)


class _Writer:
    def __init__(self, session, access, org, fact, source, embed, embed_model, origin, actor_label, at):
        self.s, self.access, self.org, self.fact = session, access, org, fact
        self.source, self.embed, self.embed_model = source, embed, embed_model
        self.origin, self.actor_label, self.at = origin, actor_label, at
        self._vector: list[float] | None = None
        self._candidates: list[Memory] = []

    def vector(self) -> list[float] | None:
        if self._vector is None and self.embed is not None:
            self._vector = self.embed([self.fact.sentence])[0]
        return self._vector

    def _owner(self, level: str) -> tuple[uuid.UUID | None, str | None]:
        if level == "shared":
            return None, None
        p = self.access.principal
        return (p.user_id, None) if p.user_id is not None else (None, p.phone)

    def _new_row(self, level: str, area: str, status: str = "active", proposal_kind: str | None = None,
                 rule: str | None = None, replaces: Memory | None = None, attribute: str | None = None) -> Memory:
        owner_user, owner_phone = self._owner(level)
        f = self.fact
        row = Memory(
            org_id=None if level == "personal" else self.org.id if self.org else None, level=level,
            owner_user_id=owner_user, owner_phone=owner_phone, area=area, category=f.category,
            subject=f.subject, attribute=attribute or f.attribute, value=f.value, sentence=f.sentence,
            confidence=f.confidence, status=status, proposal_kind=proposal_kind, proposal_rule=rule,
            author_user_id=self.access.principal.user_id, author_phone=self.access.principal.phone,
            origin=self.origin, event_date=f.event_date, event_until=event_last_day(f.event_date, f.event_until),
            embedding=self.vector(), embed_model=self.embed_model, valid_from=self.at)
        if status == "active":
            versions.supersede(self.s, replaces, row, at=self.at)
        else:
            self.s.add(row)
            self.s.flush()
        self._add_source(row, new=True)
        return row

    def _add_source(self, row: Memory, *, new: bool = False) -> None:
        if self.source is None or (self.source.message_id is None and self.source.conversation_id is None):
            return
        if new:  # a row this writer just inserted has no source yet
            self.s.add(MemorySource(memory_id=row.id, message_id=self.source.message_id,
                                    conversation_id=self.source.conversation_id))
        elif self.source.message_id is not None:
            # One statement, not a look-up and an insert: (memory_id, message_id) is unique, so a message
            # merged into a row again (a retry, an edit) adds no second source.
            self.s.execute(pg_insert(MemorySource).values(
                memory_id=row.id, message_id=self.source.message_id, conversation_id=self.source.conversation_id)
                .on_conflict_do_nothing(index_elements=["memory_id", "message_id"]))
        elif self.s.scalar(select(MemorySource.id).where(
                MemorySource.memory_id == row.id, MemorySource.message_id.is_(None))) is None:
            self.s.add(MemorySource(memory_id=row.id, message_id=None, conversation_id=self.source.conversation_id))

    def _audit(self, action: str, row: Memory, **details) -> None:
        audit.record(self.s, actor_label=self.actor_label, actor_user_id=self.access.principal.user_id,
                     action=action, org_id=row.org_id, target_type="memory", target_id=row.id,
                     details={"level": row.level, "category": row.category, "attribute": row.attribute,
                              "origin": self.origin, **details})

    def _same_level_active(self, level: str) -> list[Memory]:
        owner_user, owner_phone = self._owner(level)
        # Two workers learning about one subject at once take turns (and never deadlock: subject_locks).
        subject_locks.lock_subject(self.s, subject_locks.subject_key(
            self.org.id if self.org is not None else None, level, owner_user, owner_phone, self.fact.subject))
        org_id = self.org.id if self.org is not None and level != "personal" else None
        q = _same_level_active_stmt(owner_user is not None, owner_phone is not None,
                                    level != "personal", org_id is not None, subject_locks.nowait(self.s))
        rows = self.s.execute(q, {"level": level, "subject": self.fact.subject, "owner_user": owner_user,
                                  "owner_phone": owner_phone, "org_id": org_id}).all()
        for m, vector in rows:
            set_committed_value(m, "embedding", vector)
        return [m for m, _ in rows]

    def _similarity(self, m: Memory) -> float:
        vec = self.vector()
        if vec is None or m.embedding is None or m.embed_model != self.embed_model:
            return 0.0
        return float(np.dot(np.asarray(m.embedding, dtype=float), np.asarray(vec, dtype=float)))

    def _closest(self, rows: list[Memory], threshold: float) -> Memory | None:
        scored = [(self._similarity(m), m) for m in rows]
        scored = [(sim, m) for sim, m in scored if sim >= threshold]
        return max(scored, key=lambda sm: sm[0])[1] if scored else None

    def find_match(self, level: str) -> Match:
        """What this fact does to its subject's active facts at this level.

        - the same value in the same family: merge;
        - a single-valued family (payment term, contact person, name...): the new value replaces the old;
        - a correction ("ahora...", "no longer...", the gate's corrects): it replaces the fact of the
          subject closest in meaning (CORRECTION_SIMILARITY), whatever its attribute;
        - a note that names what it replaces ("45 al día, no 30") replaces the note that said it; one that says it
          changed something ("have upped", "Mum's moved") the closest note on its topic (NOTE_CHANGE_SIMILARITY);
        - anything that means the same as a known fact (SAME_FACT_SIMILARITY): merge;
        - otherwise it is added beside the others: a note never replaces another note unasked."""
        candidates = self._candidates = self._same_level_active(level)
        family = attribute_family(self.fact.attribute)
        value = normalise(self.fact.value)
        same_family = sorted((m for m in candidates if attribute_family(m.attribute) == family),
                             key=lambda m: m.attribute != self.fact.attribute)
        for m in same_family:
            if normalise(m.value) == value:
                return Match("merge", m)
        if same_family and single_valued(family) and not (family in ADDED_WITH_ALSO and self.fact.adds):
            return Match("supersede", same_family[0])
        note_said = self.fact.attribute.startswith("nota")
        shaped = self._shaped_update(candidates)
        if shaped is not None:
            return shaped
        newest = max(same_family, key=lambda m: m.valid_from) if same_family else None
        if newest is not None and note_said and self._changes() and \
                not _other_object(self.fact.value, newest.value) and _restates(self.fact.value, newest.value):
            # A note of the same habit, said as a change ("nowadays I drink my tea plain" after "I drink my tea
            # with honey"): the newest one is replaced, not kept beside it.
            return Match("supersede", newest)
        replaced = _named_as_replaced(self.fact.value) if note_said else set()
        for m in sorted(candidates, key=lambda m: m.valid_from, reverse=True) if replaced else ():
            if m.attribute.startswith("nota") and m.category != "event" and replaced & _value_words(m.value):
                # "al final quieren 45 al día, no 30": the note that said 30 is replaced.
                return Match("supersede", m)
        if self.fact.corrects:
            # Two rule facts of different families never replace each other by meaning ("la tienda cierra a las 20:00"
            # is no new opening time): a correction by meaning replaces a note, or is one.
            # Nor does a note replace another note it is close to in meaning but not on the same topic ("It's
            # important to help people..." and "It's important to help family..."; two photos).
            closest = self._closest([m for m in candidates if self._replaceable(m)], CORRECTION_SIMILARITY)
            if closest is not None:
                return Match("supersede", closest)
        if note_said and SAYS_CHANGED.search(fold(self.fact.value)):
            # A note that says it changed something: the note of its subject on the same topic it is closest to; of a
            # customer's or supplier's few notes, the closest one.
            topic = _note_topic(self.fact.attribute)
            business = self.fact.subject.startswith(("contact:", "name:"))
            closest = self._closest([m for m in candidates if m.attribute.startswith("nota") and (
                business or self._replaceable(m) or (topic == _note_topic(m.attribute) and _same_schedule(
                    topic, self.fact.value, m.value)))], NOTE_CHANGE_SIMILARITY)
            if closest is not None:
                return Match("supersede", closest)
        closest = self._closest(candidates, SAME_FACT_SIMILARITY)
        if closest is not None:
            return Match("merge", closest)
        taken = {m.attribute for m in candidates}
        attribute, n = self.fact.attribute, 2
        while attribute in taken:
            attribute, n = f"{self.fact.attribute.split(NOTE_SEPARATOR, 1)[0]}{NOTE_SEPARATOR}{n}", n + 1
        return Match("add", attribute=attribute)

    def _replaceable(self, m: Memory) -> bool:
        """What a correction may replace by meaning: not a rule's fact of another family, nor the rule's fact a note
        says again ("al final nos pagan a 90 días"), nor a note on another topic."""
        typed, note = _rule_family(self.fact.attribute), self.fact.attribute.startswith("nota")
        if typed and _rule_family(m.attribute):
            return False
        if note and _rule_family(m.attribute) and fold(m.value) in fold(self.fact.value):
            return False
        return not (note and m.attribute.startswith("nota")) or _same_topic(self.fact.value, m.value, m.subject)

    def _changes(self) -> bool:
        """The fact is said as a change: the message corrects, or its sentence says something changed."""
        return self.fact.corrects or bool(MAY_CHANGE.search(fold(self.fact.sentence)))

    def _shaped_update(self, candidates: list[Memory]) -> Match | None:
        """A sentence saying something changed, with a value of the shape of a known fact of its subject but
        another value (a term in days, a phone, an email, an amount, a time, weekdays), updates that fact: a
        rule's fact keeps its attribute and takes the new value; two notes must share a word beyond the value.
        The newest such fact is the one updated."""
        f = self.fact
        if not self._changes() or f.adds:
            return None
        told = _without_replaced(f"{f.value} {f.sentence}")
        new = value_shapes.shapes(told)
        own = value_shapes.family_shape(f.attribute)
        if not new or (own is not None and own not in new):
            return None
        words = _topic_words(f.value, f.subject)
        # "new" alone may be a new thing beside the old one ("la tienda nueva de X está en..."), not a change of it.
        said_changed = f.corrects or bool(MAY_CHANGE.search(_NEW.sub(" ", fold(f.sentence)))
                                          or _NEW_VALUE.search(fold(f"{f.value} {f.sentence}")))
        for m in sorted(candidates, key=lambda m: m.valid_from, reverse=True):
            if m.category == "event":
                continue
            theirs = value_shapes.family_shape(m.attribute)
            old = value_shapes.shapes(f"{m.value} {m.sentence}")
            kinds = [k for k in ((own,) if own else (theirs,) if theirs else tuple(new))
                     if k in new and k in old and not new[k] <= old[k]]
            if not kinds:
                continue
            topic = _note_topic(f.attribute)
            identifying = bool(set(kinds) & value_shapes.IDENTIFYING) and said_changed
            if own is None and theirs is None and (_other_object(f.value, m.value) or not said_changed):
                # "now we charge 15 euros for delivery" is no new price for installation; "a new catalogue with
                # boxes at 35 euros" no new price of a box.
                continue
            if own is None and theirs is None and not identifying \
                    and not words & _topic_words(m.value, m.subject) \
                    and (topic is None or topic != _note_topic(m.attribute)):
                continue
            if theirs is not None and own is None:
                value = value_shapes.value_of(told, theirs, f"{m.value} {m.sentence}")
                return Match("supersede", m, value=value) if value else None
            # A rule's fact replacing a note keeps its own attribute.
            return Match("supersede", m, attribute=f.attribute if own is not None else None)
        return None

    def _merge(self, match: Memory) -> WriteResult:
        self._add_source(match)
        confidence = min(1.0, max(match.confidence, self.fact.confidence) + 0.05)
        if confidence != match.confidence:
            # A fact already held at full confidence is left as it is: its new source and audit row say
            # it was heard again, and an UPDATE would put its vector in the HNSW graph once more for nothing.
            match.confidence, match.updated_at = confidence, clock.now()
        self._audit("memory.merged", match)
        return WriteResult("merged", memory=match, reason="Already known: added this message as a source.")

    def put_active(self, level: str, area: str) -> WriteResult:
        match = self.find_match(level)
        if match.action == "merge":
            return self._merge(match.memory)
        if match.action == "supersede":
            if match.value is not None:
                self.fact = dataclasses.replace(self.fact, value=match.value, category=match.memory.category)
            elif {self.fact.category, match.memory.category} == _TRADING:
                # A business is a customer unless something says it sells to us (a registered contact's kind,
                # "nos factura", "we buy from"): a new value that says nothing of it ("they moved their invoicing
                # to the 15th") leaves a supplier one.
                self.fact = dataclasses.replace(self.fact, category="supplier")
            row = self._new_row(level, area, replaces=match.memory, attribute=match.attribute or match.memory.attribute)
            self._audit("memory.superseded", row, superseded=str(match.memory.id))
            for note in self._companions(match.memory):
                versions.supersede(self.s, note, row, at=self.at)
                self._audit("memory.superseded", row, superseded=str(note.id))
            return WriteResult("superseded", memory=row, superseded=match.memory,
                               reason="Replaces an older value, kept as a version.")
        row = self._new_row(level, area, attribute=match.attribute)
        self._audit("memory.learnt", row)
        return WriteResult("learnt", memory=row, reason="Learnt.")

    def _companions(self, old: Memory) -> list[Memory]:
        """The notes told in the same message as a rule's fact now replaced, that say that fact again in their own
        words ("Bloom & Co pay by card over the phone, ring Hannah on the 1st" beside its payment method, card;
        "Vivo en Leganés con mis padres" beside where the person lives), and the facts that go with it (a job's
        employer): they go with it, or the block would still serve the old value beside the new one."""
        if not _rule_family(old.attribute):
            return []
        family = attribute_family(old.attribute)
        notes = [m for m in self._candidates if m.id != old.id and m.status == "active" and (
            (m.attribute.startswith("nota") and _says_again(m, old)) or attribute_family(m.attribute) in
            _TOLD_TOGETHER.get(family, ()))]
        same_message = select(MemorySource.message_id).where(MemorySource.memory_id == old.id,
                                                             MemorySource.message_id.is_not(None))
        told_with = set(self.s.scalars(select(MemorySource.memory_id).where(
            MemorySource.memory_id.in_([m.id for m in notes]), MemorySource.message_id.in_(same_message)))) \
            if notes else set()
        return [m for m in notes if m.id in told_with] + self._notes_on_the_value(old, same_message)

    def _notes_on_the_value(self, old: Memory, same_message) -> list[Memory]:
        """The notes told in the same message about the one the old fact named, kept with the fact's owner: the old
        supplier's note beside "we buy our oil from Aceites Cazorla" when the business buys it from another now."""
        named = f"name:{normalise_name(old.value)}"
        if not old.value or named == old.subject:
            return []
        return list(self.s.scalars(select(Memory).where(
            Memory.status == "active", Memory.subject == named, Memory.attribute.startswith("nota"),
            Memory.level == old.level, Memory.org_id.is_not_distinct_from(old.org_id),
            Memory.owner_user_id.is_not_distinct_from(old.owner_user_id),
            Memory.owner_phone.is_not_distinct_from(old.owner_phone),
            Memory.id.in_(select(MemorySource.memory_id).where(MemorySource.message_id.in_(same_message))))))

    def propose(self, kind: str, area: str, rule: str) -> WriteResult:
        match = self.find_match("shared")
        if match.action == "merge":
            self._add_source(match.memory)
            return WriteResult("merged", memory=match.memory, reason="Already known: nothing to propose.")
        current = match.memory if match.action == "supersede" else None
        attribute = current.attribute if current is not None else match.attribute or self.fact.attribute
        pending = self.s.scalar(select(Memory).where(
            Memory.status == "proposed", Memory.org_id == (self.org.id if self.org else None),
            Memory.subject == self.fact.subject, Memory.attribute == attribute,
            Memory.proposal_kind == kind))
        if pending is not None and normalise(pending.value) == normalise(self.fact.value):
            self._add_source(pending)
            return WriteResult("proposed", proposal=pending, reason=pending.proposal_rule or rule)
        row = self._new_row("shared", area, status="proposed", proposal_kind=kind, rule=rule, attribute=attribute)
        row.replaces_id = current.id if current is not None else None
        self._audit("memory.proposed", row, proposal_kind=kind)
        return WriteResult("proposed", proposal=row, reason=rule)


def activate_proposal(session: Session, proposal: Memory, *, decided_by: uuid.UUID | None,
                      value: str | None = None, sentence: str | None = None) -> WriteResult:
    """Approve a proposal: it becomes the active shared fact, superseding (never overwriting) the
    memory it replaces, or merging into an identical one. Does not commit."""
    now = clock.now()
    if value is not None:
        proposal.value, proposal.hand_edited = value, True
    if sentence is not None:
        proposal.sentence, proposal.hand_edited = sentence, True
    current = session.scalar(select(Memory).where(
        Memory.status == "active", Memory.level == "shared", Memory.org_id == proposal.org_id,
        Memory.subject == proposal.subject, Memory.attribute == proposal.attribute).with_for_update())
    proposal.decided_by, proposal.decided_at = decided_by, now
    if current is not None and normalise(current.value) == normalise(proposal.value):
        for src in session.scalars(select(MemorySource).where(MemorySource.memory_id == proposal.id)):
            if src.message_id is None or session.scalar(select(MemorySource.id).where(
                    MemorySource.memory_id == current.id, MemorySource.message_id == src.message_id)) is None:
                src.memory_id = current.id
        proposal.status, proposal.decision_reason = "rejected", "Same as the active memory: merged."
        return WriteResult("merged", memory=current, proposal=proposal)
    proposal.valid_from = now
    versions.supersede(session, current, proposal, at=now)
    return WriteResult("superseded" if current else "learnt", memory=proposal, proposal=proposal,
                       superseded=current)
