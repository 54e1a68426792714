"""The memory block of one turn: core, profile and related memories, fenced, with its trace.

One module on purpose (~620 lines): the three blocks share one candidate query, one ranking and one
character budget; split apart, each would re-read what the others decided.

- core: the person's stable facts (who they are, tone, family, key preferences), at most 15 lines in
  a fixed order with no dates or ids, so it is byte-identical from turn to turn while the facts do
  not change (a provider's prompt cache hits);
- related: a search with the message, at most 36 memories in 3,400 characters above a minimum
  relevance (or among the message's nearest by meaning), then what was told right before and after the
  best of them in the same conversation, none already in the core or sent in the last two turns; trivial
  turns ("gracias", "ok") skip the search;
- profile: up to 20 visible memories in at most 2,000 characters, none already related, pinned first,
  then the person and their preferences, then the company, then customers and suppliers, then events;
  within a group by confidence discounted by age; events whose date has passed are left out.

The whole block stays within 4,600 characters (~1,150 tokens): the related memories are fitted first
and the profile gets what they leave, up to its own limits; the sections are shown core, profile, related.

Every remembered value (and every contact name) is fenced; the block starts with a header saying it
is data and that the person's current message outranks it.
"""
from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import lru_cache, partial

from sqlalchemy import (
    Date,
    DateTime,
    Integer,
    Interval,
    Row,
    String,
    Text,
    and_,
    bindparam,
    cast,
    func,
    or_,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.orm import Session, aliased

from memory_core.adapters import threads
from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.beside import beside
from memory_core.adapters.planner import out_of_index_reach, planned_once, sorting_disabled
from memory_core.adapters.rows import records
from memory_core.adapters.rows import rows as read_rows
from memory_core.domain import clock
from memory_core.domain.access import Access, contact_visible, memory_visible, shape, template, template_params
from memory_core.domain.errors import NotFound
from memory_core.domain.exclusions import from_column, list_column, load_exclusions
from memory_core.domain.labels import ENGLISH_LABELS, NOTE_PREFIXES, SPANISH_LABELS, english_value, value_named_family
from memory_core.domain.models import (
    Contact,
    Conversation,
    Memory,
    MemorySource,
    MemoryTrace,
    Message,
    Organization,
    TraceItem,
    User,
)
from memory_core.domain.policy import Exclusion, redact
from memory_core.domain.text import LANGUAGE_SETTING, fold, language_of
from memory_core.domain.vocabulary import Level, Status
from memory_core.reading import profile_query, subject_query
from memory_core.reading.dating import asks_when, line_date, tells_date
from memory_core.reading.fence import MEMORY_HEADERS, RELATED_HEADERS, fenced, safe_label
from memory_core.reading.salience import DUPLICATE_MIN_WORDS, near_duplicate, salient_words, shares_salient_word
from memory_core.reading.search import PER_RETRIEVER, Embed, embed_query, fuse, retrieve

CORE_MAX_LINES = 15
PROFILE_MAX_ITEMS = 20
PROFILE_MAX_CHARS = 2_000
RELATED_MAX_ITEMS = 36
RELATED_MAX_CHARS = 3_400
# The whole block (header, core, profile, related) stays within this many characters (~1,150 tokens): related
# memories are fitted first, the profile gets what they leave, each up to its own limits.
BLOCK_MAX_CHARS = 4_600
RECENT_TURNS = 2
# Visible memories read per turn for the core and the profile (ordered in SQL, re-ranked with age).
CANDIDATES = 300
VALUE_MAX_CHARS = 300
NAME_MAX_CHARS = 120

# Minimum relevance for a related memory: any one of these. A single shared word ("días") is not
# enough; two distinct words, an exact ID, a close name or a close meaning are.
RELATED_MIN_COSINE = 0.40
RELATED_MIN_WORDS = 2
RELATED_MIN_TRIGRAM = 0.6
# The best-fused memories read to check for one shared word that is not a common one (see salience.py).
RELATED_READ = 40
RELATED_MIN_SALIENT = 2
# A message that names its topic (two salient words): its nearest memories by meaning are related from this
# cosine on (a question and the sentence that answers it share few words and, with the local model, a modest
# cosine: "What did I do on the camping trip?" / "I roasted marshmallows by the campfire" is 0.36).
RELATED_NEAREST = 24
RELATED_NEAR_COSINE = 0.2
# A turn that asks when, or about a period: related memories whose words or event tell a date weigh this much more.
WHEN_DATED_BOOST = 2.0

# Ageing: the weight lost per period (a quarter), the period by category, and the floor.
AGE_LOSS = 0.25
AGE_PERIOD_DAYS = {"preference": 182.5, "customer": 182.5, "supplier": 182.5, "company": 182.5,
                   "sheet": 182.5, "event": 91.25}
AGE_FLOOR = 0.5

# Profile groups, in order; pinned memories go before all of them.
GROUP_OF = {"person": 1, "preference": 1, "company": 2, "customer": 3, "supplier": 3, "sheet": 3, "event": 4}
OTHER_GROUP = 5

# Core: these attributes first, in this order; the rest after them by when they were learnt.
CORE_ORDER = ("nombre", "name", "apodo", "tono", "tratamiento", "idioma", "language", "pareja", "esposa",
              "esposo", "marido", "mujer", "hijo", "hija", "hijos", "madre", "padre", "hermano", "hermana",
              "ciudad", "profesion", "cargo", "empresa")

_TRIVIAL_WORDS = frozenset("""gracias muchas mil ok okay okey vale si sí no perfecto genial bien muy de acuerdo
hola adios adiós buenas buenos dias días tardes noches hasta luego venga dale claro confirmalo confírmalo
confirmado confirma hecho listo entendido estupendo fenomenal guay correcto exacto eso es thanks thank you
yes yep nope sure fine great cool done hi hello bye please porfa por favor jaja jeje""".split())

# The block's own words, in each language it speaks (never mixed within one block).
WORDS = {
    "es": {"core": "Sobre la persona:", "profile": "Perfil:", "self": "Tú", "org": "Tu empresa",
           "customer": "cliente", "supplier": "proveedor", "contact": "contacto", "fact": "Dato"},
    "en": {"core": "About the person:", "profile": "Profile:", "self": "You", "org": "Your company",
           "customer": "customer", "supplier": "supplier", "contact": "contact", "fact": "Fact"},
}
# Memories told next to a related one (see _neighbours): of the best NEIGHBOUR_SEEDS related memories, those of
# the NEIGHBOUR_MESSAGES nearest messages that taught something on either side, sent within NEIGHBOUR_WINDOW of
# it in the same conversation, at NEIGHBOUR_WEIGHT of its score.
NEIGHBOUR_SEEDS = 6
NEIGHBOUR_MESSAGES = 2
NEIGHBOUR_WINDOW = dt.timedelta(minutes=30)
NEIGHBOUR_WEIGHT = 0.5
# Recent messages of the conversation read for its language and the subjects it is about.
RECENT_MESSAGES = 6
# Memories of each subject the conversation named, offered to the related section after its own hits.
PER_SUBJECT = 4

# The message is embedded on another thread while the core and profile queries run (the model and
# the network release the GIL), so the embedding does not add to the turn's latency.
EMBED_THREADS = 4


@dataclass(frozen=True)
class ContextItem:
    memory_id: uuid.UUID
    block: str  # core | profile | related
    rank: int
    score: float
    chars: int


@dataclass(frozen=True)
class MemoryBlock:
    """The memory block of one turn: the whole text, its parts, what went in and its trace."""
    text: str
    core: str
    profile: str
    related: str
    items: list[ContextItem] = field(default_factory=list)
    trace_id: uuid.UUID | None = None
    tokens: int = 0

    @property
    def memory_ids(self) -> list[uuid.UUID]:
        return [i.memory_id for i in self.items]


# ------------------------------------------------------------------------------------ helpers

_TRIVIAL_FOLDED = frozenset(fold(w) for w in _TRIVIAL_WORDS)


def is_trivial(message: str) -> bool:
    """A turn that carries nothing to search for: thanks, acknowledgements, a bare yes or no."""
    words = re.findall(r"\w+", fold(message))
    return not words or (len(words) <= 4 and all(w in _TRIVIAL_FOLDED for w in words))


def age_weight(category: str, learnt: dt.datetime | None, now: dt.datetime) -> float:
    """Identity never fades; preference and customer facts lose a quarter in six months, events in three."""
    period = AGE_PERIOD_DAYS.get(category)
    if period is None or learnt is None:
        return 1.0
    days = max(0.0, (now - learnt).total_seconds() / 86400)
    return max(AGE_FLOOR, (1 - AGE_LOSS) ** (days / period))


def _not_past_event(today: dt.date):
    """Not an event whose day, or whose span's last day, has gone."""
    return or_(Memory.category != "event", Memory.event_date.is_(None),
               func.coalesce(Memory.event_until, Memory.event_date) >= today)


def _label(attribute: str, lang: str = "es", value: str | None = None) -> str:
    """The attribute as a label in the block's language ("" for a generic note); an attribute named after its value
    by its family's (mascota_coco of "perro Coco": "mascota", "pet"). A name that does not have a label's shape (an
    attribute is text a model chose) is fenced, never rendered as an instruction."""
    from memory_core.domain.ladder import NOTE_SEPARATOR, attribute_family

    name = attribute.split(NOTE_SEPARATOR, 1)[0]
    if name.startswith(NOTE_PREFIXES):
        return ""
    if not name.strip():
        return "Fact" if lang == "en" else "Dato"
    name = value_named_family(name, value) or name
    labels = ENGLISH_LABELS if lang == "en" else SPANISH_LABELS
    return safe_label(labels.get(name) or labels.get(attribute_family(name)) or name)


def _item_text(m: Memory, *, with_date: bool = True, lang: str = "es") -> str:
    label = _label(m.attribute, lang, m.value).lower()
    # A rule's value is stored in one (Spanish) form: an English block says it in English ("45 days").
    value = english_value(m.value) if lang == "en" and label else m.value
    text = f"{label} {fenced(value, VALUE_MAX_CHARS)}" if label else fenced(value, VALUE_MAX_CHARS)
    if with_date and (when := line_date(m.value, m.sentence, m.event_date, m.valid_from)) is not None:
        text += f" {when.render(lang)}"
    return text


# The rows a turn reads by id (a list of any length) are one array parameter: one statement text per access form,
# which the driver prepares once it has run a few times and PostgreSQL then plans once for all values, instead of
# planning it on every turn (row security makes these statements cost more to plan than to run).
_IDS = bindparam("ids", type_=ArrayParam("uuid"))


@lru_cache(maxsize=64)
def _contacts_statement(form: tuple):
    """The visible contacts of these ids (`ids`), with their names and kinds (see _IDS)."""
    return select(Contact.id, Contact.name, Contact.kind).where(Contact.id == func.any(_IDS),
                                                                contact_visible(template(form)))


class _Subjects:
    """Subject labels: the person, the company, or a contact's (fenced) name and role."""

    def __init__(self, session: Session, access: Access, memories: Iterable[Memory], lang: str = "es"):
        self.lang, self.words = lang, WORDS[lang]
        ids = set()
        for m in memories:
            if m.subject.startswith("contact:"):
                try:
                    ids.add(uuid.UUID(m.subject.split(":", 1)[1]))
                except ValueError:
                    pass
        self.contacts: dict[str, tuple[str, str]] = {}
        self._texts: dict[tuple[uuid.UUID, bool], str] = {}
        if ids:
            rows = read_rows(session, _contacts_statement(shape(access)), template_params(access) | {"ids": list(ids)})
            self.contacts = {f"contact:{r.id}": (r.name, r.kind) for r in rows}

    def item_text(self, m: Memory, with_date: bool = True) -> str:
        """`_item_text` in the block's language, worked out once per memory and block (a memory is measured
        for its section, rendered, then counted in the trace)."""
        key = (m.id, with_date)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = _item_text(m, with_date=with_date, lang=self.lang)
        return text

    def label(self, m: Memory) -> str:
        if m.subject == "self":
            return self.words["self"]
        if m.subject == "org":
            return self.words["org"]
        role = self.words.get(m.category) if m.category in ("customer", "supplier") else None
        if m.subject in self.contacts:
            name, kind = self.contacts[m.subject]
            return f"{fenced(name, NAME_MAX_CHARS)} ({self.words.get(kind, kind)})"
        name = m.subject.split(":", 1)[1] if ":" in m.subject else m.subject
        if m.subject.startswith("contact:"):
            name = self.words["contact"]
        return f"{fenced(name, NAME_MAX_CHARS)}" + (f" ({role})" if role else "")


def _render_lines(subjects: _Subjects, memories: Sequence[Memory]) -> list[str]:
    """Compact lines grouped by subject, subjects in order of first appearance."""
    groups: dict[str, list[Memory]] = {}
    for m in memories:
        groups.setdefault(m.subject, []).append(m)
    return [f"- {subjects.label(ms[0])}: " + "; ".join(subjects.item_text(m) for m in ms)
            for ms in groups.values()]


def _fit(subjects: _Subjects, ranked: Sequence[tuple[Memory, float]], max_items: int, max_chars: int,
         title: str, shown: dict[str, list[frozenset[str]]] | None = None) -> list[tuple[Memory, float]]:
    """Take memories in order while the rendered section (see _render_lines) stays within its limits,
    leaving out one that says nearly what a memory already shown says (`shown`: the salient words of each
    subject's memories shown, updated).

    The length is kept incrementally: a new subject adds a line "- label: item", a known one "; item"."""
    chosen: list[tuple[Memory, float]] = []
    seen: set[str] = set()
    shown = {} if shown is None else shown
    total = len(title) + 1  # the title and its newline
    for m, score in ranked:
        if len(chosen) >= max_items:
            break
        said = (m.subject, salient_words(m.value))
        if len(said[1]) >= DUPLICATE_MIN_WORDS and any(
                near_duplicate(said, (m.subject, words)) for words in shown.get(m.subject, ())):
            continue
        item = len(subjects.item_text(m))
        if m.subject in seen:
            add = 2 + item
        else:
            add = (1 if seen else 0) + 4 + len(subjects.label(m)) + item
        if total + add <= max_chars:
            chosen.append((m, score))
            seen.add(m.subject)
            shown.setdefault(m.subject, []).append(said[1])
            total += add
    return chosen


def _section(title: str, lines: list[str]) -> str:
    return f"{title}\n" + "\n".join(lines) if lines else ""


# ------------------------------------------------------------------------------------ the blocks

def _is_core(m: Memory) -> bool:
    """The person's own stable facts; a generic note ("nota_...") is something they told, not who they are."""
    return m.subject == "self" and m.level == Level.PERSONAL and m.category in ("person", "preference") \
        and not m.attribute.startswith(NOTE_PREFIXES)


def _core_order(rows: Iterable[Memory]) -> list[Memory]:
    """The fixed core order (no ageing, so it never drifts): known attributes first, then by age."""
    order = {a: i for i, a in enumerate(CORE_ORDER)}
    rows = sorted(rows, key=lambda m: (order.get(fold(m.attribute), len(order)), m.category != "person",
                                       m.created_at, m.id.int))
    return rows[:CORE_MAX_LINES]


# What a block line needs of a memory, read as plain rows (no ORM objects: a turn reads hundreds).
_LINE = (Memory.id, Memory.level, Memory.category, Memory.subject, Memory.attribute, Memory.value, Memory.sentence,
         Memory.confidence, Memory.pinned, Memory.valid_from, Memory.created_at, Memory.event_date)


@lru_cache(maxsize=64)
def _visible_statement(form: tuple):
    """Core and profile candidates for principals of one access form (see access.template), each arm of
    the visibility rule read in the order of its index and cut at CANDIDATES (reading/profile_query.py)."""
    return profile_query.candidates_statement(form, _LINE, group_of=GROUP_OF, other_group=OTHER_GROUP,
                                              note_prefixes=NOTE_PREFIXES, limit=CANDIDATES,
                                              not_past_event=_not_past_event(bindparam("today", type_=Date)))


def _visible_memories(session: Session, access: Access, today: dt.date) -> tuple[list[Row], list[Row]]:
    """The core and the profile candidates, in one query: the person's own stable facts come first,
    then the rest by pinned, group, confidence, newest and id (re-ranked with age in Python)."""
    rows = profile_query.read(session, _visible_statement(shape(access)), template_params(access)
                              | {"today": today, "profile_areas": list(access.read_areas)})
    core = _core_order(m for m in rows if _is_core(m))
    core_ids = {m.id for m in core}
    candidates = [m for m in rows if m.id not in core_ids]
    # A subject folded into a sheet is sent as the sheet, not as its loose facts too.
    sheets = [m.id for m in candidates if m.category == "sheet"]
    if sheets:
        folded = set(read_rows(session, select(MemorySource.source_memory_id).where(
            MemorySource.memory_id.in_(sheets), MemorySource.source_memory_id.isnot(None))).scalars())
        candidates = [m for m in candidates if m.id not in folded]
    return core, candidates


@lru_cache(maxsize=64)
def _subjects_statement(form: tuple):
    return subject_query.subjects_statement(form, _LINE, MAX_NAMES)


def subject_memories(session: Session, access: Access, subjects: Sequence[str], per_subject: int,
                     words: Sequence[str] = ()) -> list[Row]:
    """The first `per_subject` × subjects visible active memories of the `subjects` and of the visible contacts
    whose name, alias or tax ID holds one of the `words`, pinned, most confident, newest first
    (then by id), read subject by subject in an index's order: one statement (reading/subject_query.py)."""
    with sorting_disabled(session):
        return records(read_rows(session, _subjects_statement(shape(access)), template_params(access) | {
            subject_query.SUBJECTS: list(subjects), subject_query.WORDS: list(words),
            subject_query.PER_SUBJECT: per_subject}))


def render_core(memories: Sequence[Memory], lang: str = "es") -> str:
    lines = [f"- {_label(m.attribute, lang, m.value) or WORDS[lang]['fact']}: {fenced(m.value, VALUE_MAX_CHARS)}"
             for m in memories]
    return _section(WORDS[lang]["core"], lines)


def rank_profile(memories: Iterable[Memory], now: dt.datetime) -> list[tuple[Memory, float]]:
    """Pinned first, then by group, then by confidence discounted by age."""
    scored = [(m, round(m.confidence * age_weight(m.category, m.valid_from, now), 4)) for m in memories]
    return sorted(scored, key=lambda ms: (not ms[0].pinned, GROUP_OF.get(ms[0].category, OTHER_GROUP), -ms[1],
                                          -(ms[0].valid_from.timestamp() if ms[0].valid_from else 0), ms[0].id.int))


def relevant(signals: dict[str, float]) -> bool:
    """Above the minimum relevance: more than one shared common word, an exact ID, a close meaning or name,
    or a date the message names."""
    s = signals
    # "date": a memory dated on the day the message points at ("what did I do yesterday?").
    return ("exact" in s or "date" in s or s.get("vector", 0.0) >= RELATED_MIN_COSINE
            or s.get("fts_words", 0) >= RELATED_MIN_WORDS or s.get("trigram", 0.0) >= RELATED_MIN_TRIGRAM)


class _RelatedSearch:
    """The related section's search, started as the turn begins (unless the turn skips it: a trivial message)
    and run beside the turn's other reads (adapters.beside): PostgreSQL runs it while the turn's thread reads the
    conversation, the profile and the named subjects (a typical block at 1M: p50 19.3 -> 16.2 ms, bench/turns_ab.py).
    Every caller has committed what the block must find (the API's ingest is a request of its own). It waits for
    the message's vector and for the turn's time (`at`, known once the conversation is read) only just before the
    statements that need them."""

    def __init__(self, session: Session, access: Access, message: str, embed: Embed | None,
                 embed_model: str | None, redacted_already: bool):
        self.access, self.message, self.embed, self.embed_model = access, message, embed, embed_model
        self.redacted_already = redacted_already
        self.now: Future = Future()
        # The message's vector: embedded once the turn knows its exclusion list (`embed_with`).
        self.vector: Future | None = Future() if embed is not None and not is_trivial(message) else None
        self._embedding = False
        if redacted_already:
            self.embed_with([], session)
        self.lists = (lambda: {}) if is_trivial(message) else beside(session, self._search, lazy=True)

    def at(self, now: dt.datetime) -> None:
        """The turn's time, which relative dates in the message are read against; the first one given counts."""
        if not self.now.done():
            self.now.set_result(now)

    def embed_with(self, exclusions: list[Exclusion] | None, session: Session) -> None:
        """Start embedding the message with its secrets as marks (the model never sees them): `exclusions` is the
        org's list the conversation's read brought, None to read it in `session` (a turn without a conversation).
        A message redacted already (the API's /turns passes the stored text) is embedded as the turn begins."""
        if self.vector is None or self._embedding:
            return
        self._embedding = True
        query = self.message if self.redacted_already else redact(
            self.message, exclusions if exclusions is not None else load_exclusions(session, self.access.org_id))
        embedding = threads.pool("context-embed", EMBED_THREADS).submit(embed_query, self.embed, query)
        embedding.add_done_callback(partial(_settle, self.vector))

    def failed(self, error: BaseException) -> None:
        """The turn failed: the search beside it must not wait for a time or a vector that will not come."""
        self.at(clock.now())
        if self.vector is not None and not self._embedding:
            self._embedding = True
            self.vector.set_exception(error)

    def _search(self, session: Session) -> dict:
        return retrieve(session, self.access, self.message, kinds=["memory"], per_retriever=PER_RETRIEVER,
                        vector=self.vector, embed_model=self.embed_model, now=self.now)


def _settle(target: Future, done: Future) -> None:
    error = done.exception()
    if error is not None:
        target.set_exception(error)
    else:
        target.set_result(done.result())


def _related(session: Session, access: Access, message: str, exclude: set[uuid.UUID], known: dict[uuid.UUID, Memory],
             now: dt.datetime, lists: dict, of_subjects: Sequence[Row] = ()) -> list[tuple[Memory, float]]:
    """Memories the message is about (searched with it), then memories of the subjects the conversation
    named lately (`of_subjects`, read by subject_memories: "and how much do I owe him?" goes on about the
    customer named two turns ago).

    A past event found here stays: the message asks about it (its date is shown); the profile drops it."""
    if not lists:
        return []
    fused = [(key[1], score, signals) for key, score, ranks, signals in fuse(lists) if key[1] not in exclude]
    # The message's nearest memories by meaning count at a lower cosine than any memory does (a question and
    # the sentence that answers it share few words and, with a small model, a modest cosine).
    nearest = {f.id for f in lists.get("vector", [])[:RELATED_NEAREST] if f.score >= RELATED_NEAR_COSINE} \
        if len(salient_words(message)) >= RELATED_MIN_SALIENT else set()
    rows = dict(known)
    # One shared word that is not a common one is enough too ("book", "Valencia"): read the best few.
    unread = [i for i, _, signals in fused[:RELATED_READ] if i not in rows and not relevant(signals)]
    if unread:
        rows |= {m.id: m for m in memories_by_id(session, access, unread)}
    # ... when the message says enough to name its topic: "¿y cuándo nos pagan?" leans on the conversation's subject.
    wanted = salient_words(message)
    wanted = wanted if len(wanted) >= RELATED_MIN_SALIENT else frozenset()
    hits = [(i, score) for n, (i, score, signals) in enumerate(fused)
            if relevant(signals) or i in nearest or (n < RELATED_READ and i in rows
                                     and shares_salient_word(wanted, f"{rows[i].value} {rows[i].sentence}"))]
    if of_subjects:
        # After the message's own hits, below their scores.
        floor = min((score for _, score in hits), default=1.0)
        taken = {i for i, _ in hits}
        per: dict[str, int] = {}
        for m in of_subjects:
            if m.id in exclude or m.id in taken or per.get(m.subject, 0) >= PER_SUBJECT:
                continue
            per[m.subject] = per.get(m.subject, 0) + 1
            rows[m.id] = m
            hits.append((m.id, round(floor * 0.5, 6)))
    if not hits:
        return []
    hits += _neighbours(session, access, hits[:NEIGHBOUR_SEEDS], exclude | {i for i, _ in hits}, rows)
    missing = [i for i, _ in hits if i not in rows]
    if missing:
        rows |= {m.id: m for m in memories_by_id(session, access, missing)}
    found = [(rows[i], score) for i, score in hits if i in rows]
    if asks_when(message, now):
        # "When did I go to Valencia?": of the memories about it, those that tell a date come first.
        found.sort(key=lambda ms: -ms[1] * (WHEN_DATED_BOOST if tells_date(ms[0]) else 1.0))
    return found


@lru_cache(maxsize=64)
def _by_id_statement(form: tuple):
    """Visible active memories by ids, read by primary key: the visibility rule and the status sit inside
    coalesce(..., false) (the same rows), out of the planner's index matching. Matched, they led a plan for the
    principal's values to scan the whole range of their own rows and of the org's active ones for the ids
    (17-48 ms for 116 ids of a big org's principal, against one primary key lookup an id)."""
    return select(*_LINE).where(Memory.id == func.any(_IDS), out_of_index_reach(
        and_(memory_visible(template(form)), Memory.status == Status.ACTIVE)))


def memories_by_id(session: Session, access: Access, ids: Sequence[uuid.UUID]) -> list[Row]:
    """The visible active memories of these ids, as block lines."""
    return records(read_rows(session, _by_id_statement(shape(access)), template_params(access) | {"ids": list(ids)}))


@lru_cache(maxsize=64)
def _neighbours_statement(form: tuple):
    """The memories learnt from the messages sent near each seed's (`ids`) in its conversation (see _neighbours)."""
    window = cast(NEIGHBOUR_WINDOW, Interval)
    # Each seed's window worked out first, in a materialized CTE: under row security a condition reaches an index
    # only through LEAKPROOF functions, and timestamp ± interval is not one (it can raise on overflow), so written
    # in the join the window was checked on every message of the conversation; compared as plain values, it
    # bounds the conversation's (conversation_id, created_at) index.
    seeds = select(MemorySource.memory_id.label("seed"), Message.id.label("message_id"), Message.conversation_id,
                   Message.created_at, Message.sent_at,
                   (Message.created_at - window).label("stored_from"), (Message.created_at + window).label("stored_to"),
                   (Message.sent_at - window).label("sent_from"), (Message.sent_at + window).label("sent_to")) \
        .join(Message, Message.id == MemorySource.message_id) \
        .where(MemorySource.memory_id == func.any(_IDS), Message.deleted_at.is_(None)) \
        .cte("seeds").prefix_with("MATERIALIZED")

    def nearest(before: bool):
        """Of each seed, the messages on one side of it that taught something, nearest first, read off the
        conversation's index until there are enough: a busy conversation (or an imported history) holds hundreds
        in the window. A few more than NEIGHBOUR_MESSAGES, for messages whose memories the reader may not see."""
        near, taught = aliased(Message), aliased(MemorySource)
        side = select(near.id).where(
            near.conversation_id == seeds.c.conversation_id,
            near.created_at.between(seeds.c.stored_from, seeds.c.created_at) if before
            else near.created_at.between(seeds.c.created_at, seeds.c.stored_to),
            near.sent_at.between(seeds.c.sent_from, seeds.c.sent_at) if before
            else near.sent_at.between(seeds.c.sent_at, seeds.c.sent_to),
            near.sent_at != seeds.c.sent_at, near.deleted_at.is_(None),
            select(taught.id).where(taught.message_id == near.id).exists())
        order = (near.created_at.desc(), near.sent_at.desc()) if before else (near.created_at, near.sent_at)
        lateral = side.order_by(*order).limit(NEIGHBOUR_MESSAGES + 2).lateral("before" if before else "after")
        return select(seeds.c.seed, seeds.c.sent_at, lateral.c.id).select_from(seeds).join(lateral, true())

    # The seed's own message (the other facts it taught) and its nearest on each side, worked out once.
    picked = union_all(select(seeds.c.seed, seeds.c.sent_at, seeds.c.message_id), nearest(True), nearest(False)) \
        .cte("picked").prefix_with("MATERIALIZED")
    return (select(*_LINE, picked.c.seed, Message.id.label("message_id"), Message.sent_at.label("told_at"),
                   picked.c.sent_at.label("seed_at"))
            .join(MemorySource, MemorySource.memory_id == Memory.id)
            .join(Message, Message.id == MemorySource.message_id)
            .join(picked, picked.c.message_id == Message.id)
            # Out of index reach: matched against the ownership indexes, a plan started from every visible memory
            # of the principal and the org and joined each to its messages (2,600-8,400 buffers a call on the API
            # bench) where the seeds' few messages lead to the few memories told near them.
            .where(out_of_index_reach(and_(memory_visible(template(form)), Memory.status == Status.ACTIVE))))


def _neighbours(session: Session, access: Access, seeds: Sequence[tuple[uuid.UUID, float]], exclude: set[uuid.UUID],
                rows: dict[uuid.UUID, Row]) -> list[tuple[uuid.UUID, float]]:
    """Memories told just before or after a related one, in the same conversation: what answers a question
    often sits in the sentence next to the one it matches ("I went to the waterfall in Oregon" / "I felt
    like I was in a fairy tale"). Of each seed, the memories of the NEIGHBOUR_MESSAGES nearest messages
    on either side (within NEIGHBOUR_WINDOW) that taught something, scored below it (rows is updated)."""
    if not seeds:
        return []
    score_of = dict(seeds)
    by_seed: dict[uuid.UUID, list[Row]] = {}
    params = template_params(access) | {"ids": list(score_of)}
    for r in records(read_rows(session, _neighbours_statement(shape(access)), params)):
        by_seed.setdefault(r.seed, []).append(r)
    out: dict[uuid.UUID, float] = {}
    for seed, found in by_seed.items():
        # Messages that taught something, in the order they were sent; the seed's own at offset 0.
        before = sorted({(r.told_at, r.message_id) for r in found if r.told_at < r.seed_at}, reverse=True)
        after = sorted({(r.told_at, r.message_id) for r in found if r.told_at > r.seed_at})
        near = {m for _, m in before[:NEIGHBOUR_MESSAGES]} | {m for _, m in after[:NEIGHBOUR_MESSAGES]} \
            | {r.message_id for r in found if r.told_at == r.seed_at}
        for r in found:
            if r.message_id in near and r.id not in exclude and r.id != seed:
                out[r.id] = max(out.get(r.id, 0.0), round(score_of[seed] * NEIGHBOUR_WEIGHT, 6))
                rows.setdefault(r.id, r)
    return sorted(out.items(), key=lambda kv: -kv[1])


# Capitalised runs of words: the names a message may mention ("Hierros Olano", "Lucía", "Acme").
_NAME_RUN = re.compile(r"[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü'’&-]+(?:\s+(?:de|del|y|&)?\s*[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü'’&-]+)*")
_NOT_NAMES = _TRIVIAL_FOLDED | frozenset("""el la los las un una esto este esta ese esa eso yo tu usted nosotros
the this that and but so what when where who how why i'm i've it's we our my your you he she they ok oh wow yeah hey
pues bueno oye mira por cierto ahora tambien ya""".split())
MAX_NAMES = 12


def named_subjects(texts: Sequence[str]) -> tuple[list[str], list[str]]:
    """The subjects the texts may name: subjects remembered by name ("name:lucia sanchis"), and the words that
    find the visible contacts named (a word of their name or an alias, so "Olano" is "Hierros Olano";
    subject_memories reads them)."""
    names: dict[str, None] = {}
    for text in texts:
        for run in _NAME_RUN.findall(text or ""):
            words = [w for w in re.findall(r"\w+", fold(run)) if w not in _NOT_NAMES and len(w) >= 3]
            if words:
                names[" ".join(words)] = None
                names.update((w, None) for w in words)
    candidates = list(names)[:MAX_NAMES]
    return [f"name:{c}" for c in candidates], list(dict.fromkeys(w for c in candidates for w in c.split()))


def _conversation_statement():
    """The conversation's owner columns and the memories sent in its last two turns (built once)."""
    last = (select(MemoryTrace.id.label("trace_id")).where(MemoryTrace.conversation_id == Conversation.id)
            .order_by(MemoryTrace.created_at.desc(), MemoryTrace.id.desc()).limit(RECENT_TURNS)
            .correlate(Conversation).subquery("last_turns"))
    # Each trace's items read apart (a lateral join): trace_items' row security asks, row by row, whether the
    # item's trace is visible, and for a trace's ~40 items PostgreSQL probes memory_traces' key for each. Read
    # as one list for both traces (trace_id = any(...)), it was planned for ~200 items and hashed every
    # visible trace instead: a scan of the whole table each turn (2.0 ms at 3,000 traces, bench/turn_profile.py).
    items = (select(TraceItem.memory_id).where(TraceItem.trace_id == last.c.trace_id, TraceItem.memory_id.isnot(None))
             .lateral("last_items"))
    sent = func.array(select(items.c.memory_id).select_from(last.join(items, true())).scalar_subquery())
    recent = func.array(select(Message.text).where(
        Message.conversation_id == Conversation.id, Message.deleted_at.is_(None))
        .order_by(Message.created_at.desc(), Message.id.desc()).limit(RECENT_MESSAGES)
        .correlate(Conversation).scalar_subquery())
    message_id = bindparam("message_id", type_=PG_UUID(as_uuid=True))
    sent_at = (select(Message.sent_at).where(Message.id == message_id, Message.conversation_id == Conversation.id)
               .correlate(Conversation).scalar_subquery())
    # Read here to save the turn three round trips: whether the current message is one the principal may
    # see (any of its conversations), the org's block language (block_language) and its exclusion list.
    message_found = select(Message.id).where(Message.id == message_id).exists()
    language = (select(Organization.settings[LANGUAGE_SETTING].astext).where(Organization.id == Conversation.org_id)
                .correlate(Conversation).scalar_subquery())
    return (select(Conversation.id, Conversation.org_id, Conversation.user_id, Conversation.phone,
                   Conversation.channel, Conversation.temporary, sent.label("sent"), recent.label("recent"),
                   sent_at.label("message_sent_at"), message_found.label("message_found"),
                   language.label("org_language"), list_column(Conversation.org_id).label("exclusions"))
            .where(Conversation.id == bindparam("conversation_id")))


def _trace_statement():
    """The trace and its items, stored by one function call (migration v4_trace_in_one_statement): the items go as
    five arrays the server unnests (built once)."""
    uid = PG_UUID(as_uuid=True)
    return select(func.memoria_store_trace(
        bindparam("id", type_=uid), bindparam("org_id", type_=uid), bindparam("conversation_id", type_=uid),
        bindparam("message_id", type_=uid), bindparam("user_id", type_=uid), bindparam("phone", type_=String),
        bindparam("channel", type_=String), bindparam("block_text", type_=Text), bindparam("tokens", type_=Integer),
        bindparam("created_at", type_=DateTime(timezone=True)),
        bindparam("ids", type_=ArrayParam("uuid")), bindparam("blocks", type_=ArrayParam("varchar")),
        bindparam("ranks", type_=ArrayParam("integer")), bindparam("scores", type_=ArrayParam("float")),
        bindparam("chars", type_=ArrayParam("integer"))))


# Statements a turn runs whatever the principal, built once: building them costs more than running them.
_CONVERSATION = _conversation_statement()
_TRACE = _trace_statement()


def _conversation(session: Session, access: Access, conversation_id: uuid.UUID | None,
                  message_id: uuid.UUID | None = None) -> tuple[Row | None, set[uuid.UUID]]:
    """The conversation (if the principal owns it) with its recent messages and the current message's
    send time, and the memories sent in its last two turns: one query. Run with sorting priced out
    (assemble_context): row security makes the planner expect a handful of the conversation's messages,
    and it would fetch and sort all of them (17,000 in a long one: 70-200 ms) instead of reading the last
    few backwards from (conversation_id, created_at)."""
    if conversation_id is None:
        return None, set()
    conv = read_rows(session, _CONVERSATION, {"conversation_id": conversation_id,
                                              "message_id": message_id}).one_or_none()
    p = access.principal
    owns = conv is not None and ((conv.user_id is not None and conv.user_id == p.user_id)
                                 or (conv.phone is not None and conv.phone == p.phone))
    if not owns or conv.org_id != access.org_id:
        raise NotFound("No such conversation.")
    if message_id is not None and not conv.message_found:
        raise NotFound("No such message.")
    return conv, set(conv.sent or ())


def estimate_tokens(text: str) -> int:
    """About four characters a token: enough to compare blocks and watch the budget."""
    return math.ceil(len(text) / 4)


_UNREAD = object()


def block_language(session: Session, access: Access, texts: Sequence[str], language: str | None = None,
                   org_setting: str | None | object = _UNREAD) -> str:
    """The language the block speaks: the caller's choice, else the org's setting (`org_setting` when the
    caller read it already), else the language the conversation is in (its recent messages and this one),
    else the person's locale, else Spanish."""
    if language in WORDS:
        return language
    if org_setting is _UNREAD:
        org_setting = session.scalar(select(Organization.settings[LANGUAGE_SETTING].astext)
                                     .where(Organization.id == access.org_id)) if access.org_id else None
    setting = org_setting
    if setting in WORDS:
        return setting
    detected = language_of(texts)
    if detected in WORDS:
        return detected
    locale = session.scalar(select(User.locale).where(User.id == access.principal.user_id)) \
        if access.principal.user_id else None
    return locale[:2] if locale and locale[:2] in WORDS else "es"


def assemble_context(session: Session, access: Access | None, conversation_id: uuid.UUID | None, message_text: str,
                     *, now: dt.datetime | None = None, embed: Embed | None = None, embed_model: str | None = None,
                     message_id: uuid.UUID | None = None, language: str | None = None,
                     primary: Session | None = None, redacted: bool = False) -> MemoryBlock:
    """The memory block for one turn, and its trace (added to the session; the caller commits).

    `now` defaults to the current message's send time (`message_id`), else the clock: relative dates in
    the message ("what did I say yesterday?") are resolved against it. `language` (es, en) overrides the
    org's setting and the conversation's language. A temporary conversation reads memory but stores
    nothing, not even the trace. `primary`: when `session` reads a standby, the primary's session, which
    reads the conversation (the standby may not have the message just ingested) and stores the trace.
    The message's embedding is made from it with its secrets as marks, unless it is `redacted` already."""
    if access is None:
        return MemoryBlock(text="", core="", profile="", related="")
    search = _RelatedSearch(session, access, message_text or "", embed, embed_model, redacted)
    try:
        return _assemble(session, access, conversation_id, message_text, now, message_id, language,
                         primary or session, search)
    except BaseException as error:
        search.failed(error)
        raise


def _assemble(session: Session, access: Access, conversation_id: uuid.UUID | None, message_text: str,
              now: dt.datetime | None, message_id: uuid.UUID | None, language: str | None, primary: Session,
              search: _RelatedSearch) -> MemoryBlock:
    planned_once(session)
    # The conversation's recent messages, the profile's arms and the named subjects' memories are read in the
    # order of their indexes (see _conversation, profile_query, subject_query): one window with sorting priced
    # out serves them all (nested, a no-op when `primary` is `session`).
    with sorting_disabled(session), sorting_disabled(primary):
        conv, sent = _conversation(primary, access, conversation_id, message_id)
        search.embed_with(from_column(conv.exclusions) if conv is not None else None, session)
        now = now or (conv.message_sent_at if conv is not None and conv.message_sent_at else None) \
            or clock.now()
        search.at(now)
        today = now.date()
        recent = [t for t in (conv.recent or ()) if t] if conv is not None else []
        lang = block_language(session, access, [message_text or "", *recent], language,
                              conv.org_language if conv is not None else _UNREAD)
        core, candidates = _visible_memories(session, access, today)
        named, name_words = named_subjects([message_text or "", *recent]) \
            if not is_trivial(message_text or "") else ([], [])
        of_subjects = subject_memories(session, access, named, PER_SUBJECT, name_words) if named else []
    words = WORDS[lang]
    related_header = RELATED_HEADERS[lang]

    core_ids = {m.id for m in core}
    related_ranked = _related(session, access, message_text or "", core_ids | sent, {m.id: m for m in candidates},
                              now, search.lists(), of_subjects)
    subjects = _Subjects(session, access, [*candidates, *(m for m, _ in related_ranked)], lang)

    # The memories the message is about are fitted first, within the block's budget; the profile gets what
    # they leave, up to its own limits (a bare "hola" leaves it all), so a question never loses them to it.
    shown: dict[str, list[frozenset[str]]] = {}
    for m in core:
        shown.setdefault(m.subject, []).append(salient_words(m.value))
    core_text = render_core(core, lang)
    room = BLOCK_MAX_CHARS - sum(len(p) + 2 for p in (MEMORY_HEADERS[lang], core_text) if p)
    related = _fit(subjects, related_ranked, RELATED_MAX_ITEMS, min(RELATED_MAX_CHARS, room), related_header, shown)
    in_related = {m.id for m, _ in related}
    related_text = _section(related_header, _render_lines(subjects, [m for m, _ in related]))
    room -= len(related_text) + 2 if related_text else 0
    profile = _fit(subjects, [(m, s) for m, s in rank_profile(candidates, now) if m.id not in in_related],
                   PROFILE_MAX_ITEMS, min(PROFILE_MAX_CHARS, room), words["profile"], shown)
    profile_text = _section(words["profile"], _render_lines(subjects, [m for m, _ in profile]))
    parts = [p for p in (core_text, profile_text, related_text) if p]
    text = "\n\n".join([MEMORY_HEADERS[lang], *parts]) if parts else ""

    items = [ContextItem(m.id, "core", i, 1.0, len(subjects.item_text(m, with_date=False)))
             for i, m in enumerate(core, 1)]
    items += [ContextItem(m.id, "profile", i, s, len(subjects.item_text(m))) for i, (m, s) in enumerate(profile, 1)]
    items += [ContextItem(m.id, "related", i, s, len(subjects.item_text(m))) for i, (m, s) in enumerate(related, 1)]
    tokens = estimate_tokens(text)
    trace_id = None
    if conv is not None and not conv.temporary:
        trace_id = _store_trace(primary, conv, message_id, text, tokens, items)
    return MemoryBlock(text=text, core=core_text, profile=profile_text, related=related_text, items=items,
                       trace_id=trace_id, tokens=tokens)


def _store_trace(session: Session, conv: Row, message_id: uuid.UUID | None, text: str, tokens: int,
                 items: list[ContextItem]) -> uuid.UUID:
    """The trace and its items, in one round trip (_trace_statement)."""
    trace_id = uuid.uuid4()
    read_rows(session, _TRACE, dict(
        id=trace_id, org_id=conv.org_id, conversation_id=conv.id, message_id=message_id, user_id=conv.user_id,
        phone=conv.phone, channel=conv.channel, block_text=text, tokens=tokens, created_at=clock.now(),
        ids=[i.memory_id for i in items], blocks=[i.block for i in items], ranks=[i.rank for i in items],
        scores=[float(i.score) for i in items], chars=[i.chars for i in items]))
    return trace_id


def _usage_statement(with_org: bool):
    """Whether the trace is there (in the org, `with_org`) and how many of its items were marked used: one
    round trip (the UPDATE in the WITH runs whether or not the outer query reads it)."""
    traces, items = MemoryTrace.__table__, TraceItem.__table__
    # Parameters are not named after the updated table's columns: those would become SET values.
    trace_id = bindparam("the_trace", type_=PG_UUID(as_uuid=True))
    found = select(traces.c.id).where(traces.c.id == trace_id)
    if with_org:
        found = found.where(traces.c.org_id == bindparam("the_org", type_=PG_UUID(as_uuid=True)))
    trace = found.cte("trace")
    ids = bindparam("the_ids", type_=ArrayParam("uuid"))
    marked = (update(items).where(items.c.trace_id.in_(select(trace.c.id)), items.c.memory_id == func.any(ids))
              .values(used=true()).returning(items.c.memory_id).cte("marked"))
    return select(select(trace.c.id).exists().label("found"),
                  select(func.count()).select_from(marked).scalar_subquery().label("marked"))


_USAGE = {with_org: _usage_statement(with_org) for with_org in (False, True)}


def record_usage(session: Session, trace_id: uuid.UUID, memory_ids: Iterable[uuid.UUID],
                 org_id: uuid.UUID | None = None) -> int:
    """Mark which memories of a trace (of the org `org_id`, when given) the agent used; returns how many
    were marked. NotFound when there is no such trace. Does not commit."""
    ids = list({uuid.UUID(str(i)) for i in memory_ids})
    params = {"the_trace": trace_id, "the_ids": ids} | ({"the_org": org_id} if org_id is not None else {})
    found, marked = session.execute(_USAGE[org_id is not None], params).one()
    if not found:
        raise NotFound("No such trace.")
    return marked


def memories_for_subjects(session: Session, access: Access | None, subject_ids: Iterable[uuid.UUID | str],
                          per_subject: int = 3, *, now: dt.datetime | None = None) -> dict[str, list[Memory]]:
    """The few most relevant visible memories of each subject (a contact id or "contact:<id>"), for an
    agent to attach to a tool result that returns that subject."""
    if access is None:
        return {}
    now = now or clock.now()
    subjects = [s if isinstance(s, str) and ":" in s or s in ("self", "org") else f"contact:{s}" for s in subject_ids]
    if not subjects:
        return {}
    rows = session.scalars(select(Memory).where(
        memory_visible(access), Memory.status == Status.ACTIVE, Memory.subject.in_(subjects),
        _not_past_event(now.date()))).all()
    out: dict[str, list[Memory]] = {s: [] for s in subjects}
    for m, _ in rank_profile(rows, now):
        if len(out[m.subject]) < per_subject:
            out[m.subject].append(m)
    return out


def render_subject_memories(session: Session, access: Access, memories: dict[str, list[Memory]],
                            language: str | None = None) -> str:
    """The lines an agent attaches to a tool result, fenced like the block, in the block's language."""
    flat = [m for ms in memories.values() for m in ms]
    lang = block_language(session, access, [], language)
    return "\n".join(_render_lines(_Subjects(session, access, flat, lang), flat))
