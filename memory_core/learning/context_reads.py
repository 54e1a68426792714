"""What the extractor reads from the database besides the message: the names the message may be about, what the
conversation has just been about, and the attribute names already stored for those subjects (so corrections
reuse them). Everything with the writer's visibility.

A writer may know thousands of names (an org's customers learnt without a contact). The extractor is shown those
sharing a significant word with the message (or the assistant's message before it), found by PostgreSQL among
the writer's names (a name subject is its normalised words, space-separated) and ranked as an org's contacts
are (learning/contact_candidates.py): all of a few; of many, the whole name first, then by the rarity of the
words shared, at most MAX_CONTACTS (PostgreSQL ranks them too, to keep the best NAMES_READ of thousands). A
name that shares no word cannot be the one a mention in the message means (`resolve_subject` asks for every
word of it), and what the extractor is shown (a model's prompt) stays the size of the message, not of
everything the writer knows.

`KnownToWriters` keeps what each writer may see for one worker batch (one transaction): the attributes of a
subject are read once, when a message first needs them, and kept up to date with what the batch writes. The
writer's first message reads its names, recent subjects and attributes in one statement; each later one reads
its conversation's recent subjects together with whichever rows the batch wrote since that this writer may see
(by primary key), then the names it may mean (by their keys' index), then, only for subjects the batch
has not read yet, their attributes. Row security and `memory_visible` decide what a writer sees, as in every read:
no second copy of the rule. The write ladder only adds live (subject, attribute) pairs: a merge adds a source, a
supersede keeps its subject and attribute; what could take one away (a forgotten message, a supersede that moved
a fact to another area) drops the whole cache, and the next message reads afresh. A message whose savepoint
rolled back leaves rows that no longer exist, which the check by id then does not find.
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from sqlalchemy import (
    DateTime,
    Float,
    and_,
    bindparam,
    cast,
    func,
    literal,
    literal_column,
    null,
    select,
    true,
    union,
    union_all,
)
from sqlalchemy.dialects.postgresql import array as pg_array
from sqlalchemy.orm import Session

from memory_core.adapters import planner
from memory_core.adapters.array_param import ArrayParam
from memory_core.domain import clock
from memory_core.domain.access import Access, Principal, memory_visible
from memory_core.domain.ladder import WriteResult
from memory_core.domain.models import Memory
from memory_core.learning.contact_candidates import ContactIndex, significant, word_list
from memory_core.learning.subjects import LIVE, recent_of, recent_since, recent_subjects_query

TIMESTAMPTZ = DateTime(timezone=True)

Reads = tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[str, ...]]]


def _access(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]) -> Access:
    return Access(principal, org_id, permissions={a: "read" for a in read_areas})


# Each statement is built once per writer (and its cache key computed once): the ownership filter only reads the
# principal, the org and the readable areas. Rows (kind, subject, at, attribute).

def _recent_cte(access: Access):
    return recent_subjects_query(access, bindparam("conversation_id"), bindparam("since", type_=TIMESTAMPTZ),
                                 bindparam("until", type_=TIMESTAMPTZ)).cte("recent")


# Names a message may mean, read at most this many (the whole names it holds first); the extractor is shown at
# most MAX_CONTACTS of them.
NAMES_READ = 200
# Of the names sharing only one word with a message, at most this many rows a word: "talleres", held by 1,474 of
# an org's 10,000 names, said no more of the one meant than any of them (ContactIndex ranks them alike).
PER_WORD = 50
# A name subject's keys ("name:hierros olano" -> {hierros, olano, hierros+olano}): ix_memories_name_keys's
# expression (migration v7_name_keys_index), so `&&` reads that index, not the writer's whole org.
_NAME_KEYS = func.public.memoria_name_keys(Memory.subject)
# A literal, not a bound value: a prepared statement's generic plan must see that it only reads the rows the
# index holds (its predicate).
_A_NAME = Memory.subject.like(literal_column("'name:%'"))


def _named_cte(access: Access):
    """The `name:` subjects this writer may see that the message may mean, at most NAMES_READ: every one holding a
    pair of its significant words (`name_pairs`) or being one of them, and at most PER_WORD rows a word of those
    sharing one (`name_words`). Ranked as ContactIndex ranks them: those whose every word the message holds
    (`message_words`) first, then by the rarity among them of the words they share with it (a sum of log(1 +
    names / names holding the word)), so that the cut keeps "talleres zubia hermanos" for "Talleres Zubia" among
    1,000 "talleres ...": in name order it was cut."""
    name_words = bindparam("name_words", type_=ArrayParam("text"))
    a_name = (_A_NAME, Memory.status.in_(LIVE), memory_visible(access))
    paired = select(Memory.subject).where(*a_name, _NAME_KEYS.op("&&")(bindparam("name_pairs",
                                                                                 type_=ArrayParam("text"))))
    said = func.unnest(name_words).table_valued("w").render_derived("said")
    by_word = (select(Memory.subject).where(*a_name, _NAME_KEYS.op("&&")(pg_array([said.c.w])))
               .limit(PER_WORD).lateral("by_word"))
    found = union(paired, select(by_word.c.subject).select_from(said.join(by_word, true()))).subquery("found")
    hits = select(found.c.subject, func.public.memoria_name_words(found.c.subject).label("words")).cte("hits")
    word = func.unnest(hits.c.words).table_valued("w").render_derived()
    shared = (select(hits.c.subject, word.c.w).select_from(hits.join(word, true()))
              .where(word.c.w == func.any(name_words)).distinct().cte("shared"))
    holding = select(shared.c.w, func.count().label("n")).group_by(shared.c.w).cte("holding")
    names = select(func.count()).select_from(hits).scalar_subquery()
    score = func.sum(func.ln(1.0 + cast(names, Float) / holding.c.n))
    scored = (select(shared.c.subject, score.label("score")).join_from(shared, holding, shared.c.w == holding.c.w)
              .group_by(shared.c.subject).cte("scored"))
    whole = hits.c.words.op("<@")(bindparam("message_words", type_=ArrayParam("text")))
    return (select(hits.c.subject).join_from(hits, scored, hits.c.subject == scored.c.subject)
            .order_by(whole.desc(), scored.c.score.desc(), hits.c.subject).limit(NAMES_READ).cte("named"))


def _attributes_of(access: Access, *among):
    """The live (subject, attribute) pairs this writer may see of the `subjects` array and of `among` (columns)."""
    # An array, not an expanding IN: one statement text whatever the count, so it is prepared once and planned
    # once (row security makes planning it cost more than running it). One array of every subject wanted, so
    # each arm of the ownership rule reads its index by subject, not the writer's and the org's whole range
    # (3-4 µs a row: 58 ms at 20,000 rows in the org, whatever the message).
    wanted = union_all(select(func.unnest(bindparam("subjects", type_=ArrayParam("varchar")))),
                       *(select(column) for column in among))
    return select(Memory.subject, Memory.attribute).where(
        Memory.subject == func.any(func.array(wanted.scalar_subquery())),
        Memory.status.in_(LIVE), memory_visible(access)).distinct().cte("attributes")


@lru_cache(maxsize=1024)
def _first_read_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """A writer's first read: the names (kind n), the conversation's recent subjects (kind r) and the
    attributes (kind a) of `subjects`, of those names and of the recent subjects."""
    access = _access(principal, org_id, read_areas)
    named, recent = _named_cte(access), _recent_cte(access)
    attributes = _attributes_of(access, named.c.subject, recent.c.subject)
    return union_all(
        select(literal("n").label("kind"), named.c.subject, null().label("at"), null().label("attribute")),
        select(literal("r"), recent.c.subject, recent.c.at, null()),
        select(literal("a"), attributes.c.subject, null(), attributes.c.attribute))


@lru_cache(maxsize=1024)
def _names_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """A later message's names (rows: subject), through their keys' index."""
    return select(_named_cte(_access(principal, org_id, read_areas)).c.subject)


@lru_cache(maxsize=1024)
def _attributes_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """The attributes (kind a) of `subjects` a later message needs and the batch has not read yet. Its owner arm
    reads the writer's personal rows (their index holds no subject), so it runs only for subjects not read yet."""
    attributes = _attributes_of(_access(principal, org_id, read_areas))
    return select(literal("a").label("kind"), attributes.c.subject, null().label("at"), attributes.c.attribute)


@lru_cache(maxsize=1024)
def _recent_and_written_stmt(principal: Principal, org_id: uuid.UUID | None, read_areas: tuple[str, ...]):
    """The conversation's recent subjects (kind r) and, of the rows written since (`written`, ids), the live
    ones this writer may see (kind w: subject, attribute)."""
    access = _access(principal, org_id, read_areas)
    recent = _recent_cte(access)
    written = select(Memory.subject, Memory.attribute).where(
        Memory.id == func.any(bindparam("written", type_=ArrayParam("uuid"))),
        # by primary key: see recent_subjects_query
        planner.out_of_index_reach(and_(Memory.status.in_(LIVE), memory_visible(access)))).cte("written")
    return union_all(
        select(literal("r").label("kind"), recent.c.subject, recent.c.at, null().label("attribute")),
        select(literal("w"), written.c.subject, null(), written.c.attribute))


def _recent(rows, conversation_id) -> tuple[str, ...]:
    if conversation_id is None:
        return ()
    return recent_of(sorted(((subject, at) for kind, subject, at, _ in rows if kind == "r"),
                            key=lambda r: r[1], reverse=True))


def context_reads(session: Session, access: Access, subjects: list[str], conversation_id: uuid.UUID | None,
                  sent_at: dt.datetime | None = None, known: KnownToWriters | None = None,
                  mentioned_in: str = "") -> Reads:
    """(the names this writer may see that `mentioned_in` (the message) may be about (see the module's
    docstring), the conversation's recent subjects, the attribute names already stored for `subjects`, those
    names and the recent subjects). Recent means sent in the half hour before `sent_at` (the message's send
    time, default now). `known`: the batch's cache of what each writer may see (the outbox worker's)."""
    return (known or KnownToWriters()).reads(session, access, subjects, conversation_id, sent_at or clock.now(),
                                             mentioned_in)


@dataclass(frozen=True)
class _Name:
    """A `name:` subject as contact_candidates ranks it."""
    subject: str
    aliases: tuple[str, ...] = ()
    tax_id: None = None

    @property
    def name(self) -> str:
        return self.subject[len("name:"):]


# A name is mentioned by words close together ("Talleres García", "García, de Talleres"): the message's pairs are
# of significant words at most this far apart, so a long message makes a few keys a word, not a word squared.
PAIR_WINDOW = 3


def _message_words(text: str) -> dict:
    """The bound word lists: a name shares a word of `name_words` (significant, three letters or more, as
    contact_candidates matches) or holds a key of `name_pairs` (a pair of them, or one that is the whole name:
    the keys of migration v7_name_keys_index), and the message holds every word of a whole name among
    `message_words`."""
    words = word_list(text)
    said = [w for w in words if significant(w)]
    pairs = {"+".join(sorted((a, b))) for i, a in enumerate(said) for b in said[i + 1:i + 1 + PAIR_WINDOW] if a != b}
    return {"message_words": sorted(set(words)), "name_words": sorted(set(said)),
            "name_pairs": sorted(pairs | {f"={w}" for w in said})}


@dataclass
class _Known:
    """What one writer may see: the attributes of the subjects read so far (every subject read is a key, with no
    attributes if it has none)."""
    seen: int  # how many of the batch's written rows this already accounts for
    attributes: dict[str, set[str]] = field(default_factory=dict)
    _sorted: dict[str, tuple[str, ...]] = field(default_factory=dict)  # as shown, until the subject's set changes

    def add(self, rows, read: Iterable[str]) -> None:
        """The attributes among `rows` (kind a) kept, `read` marked as read (complete: none of those subjects has
        other attributes this writer may see)."""
        for subject in read:
            self.attributes.setdefault(subject, set())
        for kind, subject, _, attribute in rows:
            if kind == "a":
                self.wrote(subject, attribute)

    def wrote(self, subject: str, attribute: str) -> None:
        if attribute not in self.attributes[subject]:
            self.attributes[subject].add(attribute)
            self._sorted.pop(subject, None)

    def shown(self, subject: str) -> tuple[str, ...]:
        """The subject's attributes, sorted (a person's own can run to thousands: sorted once, not per message)."""
        if subject not in self._sorted:
            self._sorted[subject] = tuple(sorted(self.attributes.get(subject, ())))
        return self._sorted[subject]


@dataclass
class KnownToWriters:
    """The names and attributes each writer of one worker batch may see, read once and kept up to date
    with what the batch writes (`wrote`); see the module's docstring. Lives one batch (one transaction)."""
    _known: dict = field(default_factory=dict)
    # Ids of the rows the batch's messages wrote (new rows and merged ones), in order.
    written: list[uuid.UUID] = field(default_factory=list)

    def reads(self, session: Session, access: Access, subjects: list[str], conversation_id: uuid.UUID | None,
              sent_at: dt.datetime, mentioned_in: str) -> Reads:
        key = (access.principal, access.org_id, access.read_areas)
        params = {"conversation_id": conversation_id, "since": recent_since(sent_at), "until": sent_at}
        entry = self._known.get(key)
        # Row security expands into every reference to memories, memory_sources and messages: planning these
        # costs several times running them, and PostgreSQL kept planning them afresh for their parameters (their
        # generic plans look dearer to it). The generic plans read the writer's rows by the same indexes.
        words = _message_words(mentioned_in)
        with planner.generic_plan_window(session):
            if entry is None:
                entry = self._known[key] = _Known(seen=len(self.written))
                rows = session.execute(_first_read_stmt(*key), {"subjects": list(subjects), **words, **params}).all()
                recent = _recent(rows, conversation_id)
                names = [subject for kind, subject, _, _ in rows if kind == "n"]
                entry.add(rows, [*subjects, *names, *(s for k, s, _, _ in rows if k == "r")])
            else:
                rows = session.execute(_recent_and_written_stmt(*key),
                                       {"written": self.written[entry.seen:], **params}).all()
                entry.seen = len(self.written)
                for kind, subject, _, attribute in rows:
                    if kind == "w" and subject in entry.attributes:
                        entry.wrote(subject, attribute)
                recent = _recent(rows, conversation_id)
                names = []
                if words["name_words"]:
                    names = list(session.scalars(_names_stmt(*key), words))
                missing = sorted({*subjects, *recent, *names} - entry.attributes.keys())
                if missing:
                    entry.add(session.execute(_attributes_stmt(*key), {"subjects": missing}).all(), missing)
        named = [n.subject for n in ContactIndex(_Name(s) for s in names).candidates(mentioned_in)]
        wanted = sorted({*subjects, *named, *recent})
        return (tuple(sorted(n[len("name:"):] for n in named)), recent,
                {s: entry.shown(s) for s in wanted if entry.attributes.get(s)})

    def wrote(self, writes: list[WriteResult]) -> None:
        """A message's writes, once they are made: the rows to check at the next read of each writer."""
        for w in writes:
            for row in (w.memory, w.proposal):
                if row is not None and row.id is not None:
                    self.written.append(row.id)
            new = w.memory if w.memory is not None else w.proposal
            if w.superseded is not None and new is not None and (
                    w.superseded.area != new.area or w.superseded.attribute != new.attribute
                    or w.superseded.subject != new.subject):
                self.forget()  # the old row's pair may be gone for a writer who cannot see the new one

    def forget(self) -> None:
        """Something may have gone (a forgotten message): every writer reads afresh."""
        self._known.clear()
