"""Hybrid search over messages, memories, contacts and host records, fused by reciprocal rank.

One module on purpose (~690 lines): six retrievers built once per access form and fused by one rank;
their SQL shares the ownership filter and the candidate counts that choose exact or HNSW scans.

Six retrievers, each filtering on ownership INSIDE its own query (the filter from access.py is part
of the WHERE that the index scan serves; RLS repeats it from the session's scope). Each is one SQL
statement, a UNION ALL over the tables asked for:

- full text: Spanish stemming over unaccented words (the stored `search_tsv` columns); any query word
  may match, rows are ranked by the summed rarity (IDF) of the words they contain, so one shared
  common word weighs little; for a principal with many rows, the rows holding every query word and
  each word's own share of rows are weighed, so the few rows holding a rare word (a supplier's name) are
  never crowded out by the thousands holding a common one;
- trigrams: typos and partial names ("Talleres Garsia", "Garc");
- name: a short query that a contact's name (or alias) covers is a lookup of that contact;
- exact: tax IDs and references, compared without separators ("B-12345678" == "B12345678"); an exact
  match is a tier of its own in the fused order;
- date: a relative date in the query ("ayer", "la semana pasada", "in September") picks the messages,
  host records and events of those days;
- vectors: pgvector cosine similarity. pgvector's HNSW applies a WHERE after the graph has produced
  its candidates, so a principal holding a small share of a big table would get few or no rows. The
  search counts the principal's candidate rows per table (indexed, capped at EXACT_SCAN_MAX + 1, in
  the same round trip as its settings) and scans them exactly when there are at most EXACT_SCAN_MAX;
  above that it walks HNSW with an iterative, relaxed-order scan and a raised ef_search and
  max_scan_tuples, re-sorted exactly. bench/scale.py prints the recall of both paths against an exact
  scan.
"""
from __future__ import annotations

import datetime as dt
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache, partial

from sqlalchemy import (
    Date,
    Float,
    Integer,
    String,
    Text,
    and_,
    bindparam,
    case,
    cast,
    delete,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    union,
    union_all,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import TSQUERY, insert
from sqlalchemy.orm import Session

from memory_core.adapters.beside import beside
from memory_core.adapters.planner import custom_plans, out_of_index_reach, planned_once, sorting_disabled
from memory_core.adapters.rows import rows as read_rows
from memory_core.adapters.tx_settings import set_for_transaction
from memory_core.adapters.vector_binary import BinaryVector
from memory_core.domain import clock
from memory_core.domain.access import (
    Access,
    contact_visible,
    document_visible,
    level_is,
    memory_org_arm,
    memory_personal_arm,
    memory_visible,
    message_org_arm,
    message_personal_arm,
    message_visible,
    shape,
    template,
    template_params,
)
from memory_core.domain.dates import EVENT_SPAN_MAX_DAYS
from memory_core.domain.errors import InvalidInput
from memory_core.domain.exclusions import redacted
from memory_core.domain.models import Contact, Document, Memory, Message, Organization
from memory_core.domain.vocabulary import DOCUMENT_KINDS, EMBED_DIM, SEARCH_KINDS, TEXT_SEARCH_CONFIG, Level, Status
from memory_core.reading import principal_size
from memory_core.reading.dating import named_span
from memory_core.reading.org_indexes import indexed_orgs, indexed_owners, message_indexed_orgs

Embed = Callable[[list[str]], list[list[float]]]

# A principal with more candidate rows than this in a table is "big" there: the vector retriever walks
# the HNSW graph instead of scanning its rows exactly, and the typo retriever skips that table's long
# texts (matching trigrams over tens of thousands of rows costs hundreds of ms; contact and record
# names keep it). Counting stops at EXACT_SCAN_MAX + 1, so a big principal is never counted whole.
# Measured on the scale bench, an exact scan of 3,000 inline vectors stays under ~15 ms.
EXACT_SCAN_MAX = 3_000
# Scoring a name against the query costs ~40 µs a row (four trigram similarities and the aliases): a principal
# with more contacts (or records) than this has only those the name indexes find scored (_may_be_named). At
# 1,000 contacts, scoring them all made a search 55 ms against 13 at 40 (bench/address_book.py).
NAME_SCAN_MAX = 200
HNSW_EF_SEARCH = 200
# The HNSW walk stops after this many visible rows, re-sorted exactly: a relaxed-order walk that
# stopped at k could miss a closer row found later. Each row it visits costs a heap read for the
# ownership filter, so a big principal's vector list holds these few (fusion weighs the first ranks).
HNSW_CANDIDATES = 24
HNSW_MAX_SCAN_TUPLES = 200_000
# Reciprocal rank fusion: score = sum(weight / (RRF_K + rank)) over each retriever's top PER_RETRIEVER.
# k = 10 rather than the customary 60 lets a retriever's top ranks count (with 60, a row ranked 15th by
# two retrievers beats the first of one); the vector weighs half, since the local embedding is the
# weaker retriever on both the search set and LoCoMo (tuned on LoCoMo conversations 26 and 30 and on
# evals/search.json; the bench reports all ten). An exact ID match weighs the most.
RRF_K = 10
PER_RETRIEVER = 60
WEIGHTS = {"exact": 3.0, "name": 2.0, "fts": 1.0, "date": 1.0, "vector": 0.5, "trigram": 0.8}
RETRIEVERS = ("fts", "trigram", "name", "exact", "date", "vector")
# Trigram thresholds: a name against the query (both directions), and the query inside long text.
NAME_SIMILARITY = 0.45
TEXT_WORD_SIMILARITY = 0.55
TRIGRAM_MAX_WORDS = 6
# A query of at most this many words that a contact's name covers is a lookup of that contact (the
# "name" retriever): "Valdecielo", "trasportes lopez". Contacts have no vector, so without it a record
# that merely mentions the name would outrank the contact itself.
NAME_LOOKUP_MAX_WORDS = 3
NAME_LOOKUP_SIMILARITY = 0.5
# Rows the full-text retriever weighs per table before ranking (a word common to everything would
# otherwise make it rank the whole table).
FTS_CANDIDATES = 1_000
# ... and for a big principal (see EXACT_SCAN_MAX), whose matches are many: each one weighed is a heap
# read. Half of them are rows holding every query word, and half is shared out among the words, an equal
# share each: a rare word brings every row holding it, a common word an arbitrary sample of its thousands
# (300 arbitrary rows holding any query word held the one row naming a supplier in 2 of 40 queries on the 1M
# bench's big org).
FTS_CANDIDATES_BIG = 300
# ... of which the words' shares go to the words that are not among the org's common words (organizations.common_words:
# a common word's share would be an arbitrary sample of its thousands of rows, read at the cost of all of them), or,
# when fewer than this many are, to the least common words up to this many.
FTS_WORDS_READ_MIN = 2
MAX_QUERY_CHARS = 2_000
# A span the query names of at most this many days also finds the memories said in it ("what did I tell
# you on 16 June?"); a longer one ("this year") only the events dated in it: it would find nearly all.
SAID_SPAN_DAYS = 31

CONFIG = literal_column(f"'{TEXT_SEARCH_CONFIG}'::regconfig")
AREA_OF_KIND = {"invoice": "invoices", "quote": "quotes", "expense": "expenses", "document": "documents"}

# English function words: the Spanish configuration keeps them as lexemes (Spanish ones it drops).
_EN_STOP = frozenset("""a an and are as at be been but by can could did do does doing for from had has have
he her hers him his how i if in into is it its me my of on or our she so than that the their them then there
these they this those to was we were what when where which who whom why will with would you your""".split())
_WORD = re.compile(r"\w+", re.UNICODE)
_ID_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9./-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class Hit:
    """One result: what it is, where each retriever ranked it, and the fused score."""
    kind: str
    id: uuid.UUID
    title: str
    snippet: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    # Raw evidence per retriever: fts = summed IDF, vector = cosine similarity, trigram = similarity,
    # exact = strength of the ID match; fts_words = how many distinct query words the row contains.
    signals: dict[str, float] = field(default_factory=dict)
    subject: str | None = None


@dataclass(frozen=True)
class _Found:
    kind: str
    id: uuid.UUID
    score: float
    extra: float = 0.0


# ------------------------------------------------------------------------------------ query parsing

def normalise_reference(value: str) -> str:
    """Tax IDs and references compared the way a person means them: no case, no separators."""
    return re.sub(r"[^A-Z0-9]", "", value.upper())


def id_tokens(query: str) -> list[str]:
    """Tax-ID and reference candidates in a query: at least 4 digits and 5 characters, normalised.

    Adjacent tokens are joined too, so "B 12345678" or "F 2024 0012" still match."""
    raw = _ID_TOKEN.findall(query)
    candidates = list(raw) + [a + b for a, b in zip(raw, raw[1:])]
    candidates += [a + b + c for a, b, c in zip(raw, raw[1:], raw[2:])]
    out: list[str] = []
    for c in candidates:
        norm = normalise_reference(c)
        if len(norm) >= 5 and sum(ch.isdigit() for ch in norm) >= 4 and norm not in out:
            out.append(norm)
    return out[:12]


def fts_text(query: str) -> str:
    """The query with English function words dropped (Spanish ones the configuration drops itself)."""
    kept = [w for w in query.split() if _WORD.sub("", w) or w]
    kept = [w for w in kept if "".join(_WORD.findall(w.lower())) not in _EN_STOP]
    return " ".join(kept)


def date_range(query: str, now: dt.datetime) -> tuple[dt.date, dt.date] | None:
    """The days a date in the query points at, [start, end): a relative one ("ayer", "in September") or a
    day named outright ("on 16 June, 2023"); None when it names none (see `dating.named_span`)."""
    return named_span(query, now.date())


# Query values travel as bind parameters, so each retriever's statement is built once per form (which
# tables, the principal's shape of access, the query's number of IDs...) and then only executed: at 1M
# rows, building and hashing these statements cost as much as running them.
Q_WORDS = bindparam("q_words", type_=Text)
Q_TEXT = bindparam("q_text", type_=Text)
# The query's words one by one, for the trigram index of names (_may_be_named); unused ones are NULL.
Q_NAME_WORDS = tuple(bindparam(f"q_name_word_{i}", type_=Text) for i in range(TRIGRAM_MAX_WORDS))
Q_VECTOR = bindparam("q_vector", type_=BinaryVector())  # float32s in binary: as text, 0.5 ms a call to write
Q_MODEL = bindparam("q_model", type_=String)
Q_TOKENS = bindparam("q_tokens", expanding=True)


def _q_token(i: int):
    return bindparam(f"q_token_{i}", type_=Text)


def _quoted_lexeme(lexeme):
    """A stemmed word as tsquery text: quoted, so that it is taken as it is, not stemmed again."""
    quote, backslash = literal_column("''''"), literal_column(r"'\'")
    quoted = func.replace(func.replace(lexeme, backslash, literal_column(r"'\\'")), quote, literal_column("''''''"))
    return quote.concat(quoted).concat(quote)


def _or_tsquery(text_value):
    """plainto_tsquery with OR between words instead of AND (phrases from hyphenated words stay)."""
    plain = func.plainto_tsquery(CONFIG, text_value)
    return cast(func.replace(cast(plain, Text), " & ", " | "), TSQUERY)


# ------------------------------------------------------------------------------------ the sources

@dataclass(frozen=True)
class _Source:
    kind: str  # memory | message | contact | document (documents hold several kinds)
    model: type
    where: Callable[[object, Sequence[str]], list]
    kind_col: object | None = None
    long_text: object | None = None  # trigram: the query inside this text
    name_cols: tuple = ()  # trigram: these short names against the query, both directions
    has_vector: bool = True


def _memory_where(who, kinds: Sequence[str]) -> list:
    return [memory_visible(who), Memory.status == Status.ACTIVE]


def _message_where(who, kinds: Sequence[str]) -> list:
    return [message_visible(who), Message.deleted_at.is_(None), Message.text != ""]


def _contact_where(who, kinds: Sequence[str]) -> list:
    return [contact_visible(who)]


def _document_where(who, kinds: Sequence[str]) -> list:
    return [document_visible(who), Document.kind.in_([k for k in kinds if k in DOCUMENT_KINDS])]


SOURCES = {
    "memory": _Source("memory", Memory, _memory_where, long_text=Memory.sentence),
    "message": _Source("message", Message, _message_where, long_text=Message.text),
    "contact": _Source("contact", Contact, _contact_where, name_cols=(Contact.name,), has_vector=False),
    "document": _Source("document", Document, _document_where, kind_col=Document.kind,
                        name_cols=(Document.title,)),
}


def _sources(kinds: Sequence[str]) -> list[_Source]:
    out = [SOURCES[k] for k in ("memory", "message", "contact") if k in kinds]
    if any(k in DOCUMENT_KINDS for k in kinds):
        out.append(SOURCES["document"])
    return out


def _ident(src: _Source) -> list:
    """The id and kind columns every retriever statement starts with."""
    kind = src.kind_col if src.kind_col is not None else literal(src.kind, String)
    return [src.model.id.label("id"), cast(kind, String).label("kind")]


def _union(stmts: list, k: int):
    """One round trip for a retriever: its per-table statements, best k overall, as (id, kind, s, x) (_run)."""
    parts = [select(*st.subquery().c) for st in stmts]
    u = union_all(*parts).subquery() if len(parts) > 1 else parts[0].subquery()
    return select(u.c.id, u.c.kind, u.c.s, u.c.x).order_by(u.c.s.desc(), u.c.id).limit(k)


def _fts_own_indexes_where(who, mode: str) -> list:
    """memory_visible and active, for a principal whose org has its own text index (mode "org:<org>", and
    "org:<org>:user:<user>" when the user has indexes of their personal memories: reading/org_indexes.py), written
    so that the planner reads those indexes: one bitmap of the org's rows holding a query word and one of the
    person's, OR-ed, instead of the whole table's bitmap of every row holding a common word (18,000 of 60,000
    on the scale bench) AND-ed with bitmaps of the org's readable areas (30,000). The same rows: the org and the
    user as constants (the indexes' predicates are proved from constants only), and the org arm's own
    comparisons inside coalesce(..., false), which keeps them out of index matching and filters the same rows."""
    parts = mode.split(":")
    org = org_literal(uuid.UUID(parts[1]))
    in_org = and_(Memory.org_id == org, out_of_index_reach(memory_org_arm(who, org_id=org)))
    personal = memory_personal_arm(who)
    if len(parts) >= 4:
        # The user's personal rows through their own index; a linked number's personal rows that are not the
        # user's (few) as before: together, memory_personal_arm.
        personal = and_(level_is(Level.PERSONAL),
                        Memory.owner_user_id == org_literal(uuid.UUID(parts[3])))
        if who.has_phone:
            personal = or_(personal, and_(memory_personal_arm(who), or_(Memory.owner_user_id.is_(None),
                                                                        Memory.owner_user_id != who.user_id)))
    return [or_(personal, in_org), Memory.status == literal_column("'active'")]


def _message_own_indexes_where(who, mode: str) -> list:
    """message_visible and not deleted, for a principal whose org has its own message indexes (mode
    "messages-org:<org>"): the org's messages as one arm with the org as a constant (the indexes' predicate,
    `org_id = '<org>' AND deleted_at IS NULL`, is proved from constants only), its own comparisons inside
    coalesce(..., false) as in _fts_own_indexes_where, and the person's messages outside any org apart."""
    org = org_literal(uuid.UUID(mode.split(":")[1]))
    in_org = and_(Message.org_id == org, out_of_index_reach(message_org_arm(who, org_id=org)))
    return [or_(message_personal_arm(who), in_org), Message.deleted_at.is_(None), Message.text != ""]


def _fts_stmt(who, src: _Source, kinds, k: int, big: bool = False, org: str | None = None, small: bool = False):
    """`small`: the principal has few rows here (counted, see EXACT_SCAN_MAX): they are read by the ownership
    indexes and matched one by one, the text index out of the planner's reach (coalesce), so the statement's
    generic plan is right for any words (with the index it read every row holding a common word). `big`: the
    principal has many (counted): rows holding every query word, and each word's own rows up to its share
    (FTS_CANDIDATES_BIG), but an org's common words' (FTS_WORDS_READ_MIN)."""
    m, tag = src.model, src.kind
    q = _or_tsquery(Q_WORDS)
    tsv = func.coalesce(m.search_tsv, literal_column("''::tsvector")) if small else m.search_tsv
    where = src.where(who, kinds)
    own_org = org is not None and m is Memory and org.startswith("org:")
    if own_org:
        where = _fts_own_indexes_where(who, org)
    elif org is not None and m is Message and org.startswith("messages-org:"):
        where = _message_own_indexes_where(who, org)
    lex = select(func.unnest(func.tsvector_to_array(func.to_tsvector(CONFIG, Q_WORDS))).label("l"))\
        .cte(f"fts_lex_{tag}")
    columns = (*_ident(src), func.tsvector_to_array(m.search_tsv).label("arr"),
               func.ts_rank(m.search_tsv, q, 1).label("tsr"))
    if big:
        # Through the text index: half the candidates hold every query word (the rows a query of common words is
        # after), the other half is shared out equally among the words, read word by word (a rare word's rows; in an
        # org with its own indexes, not its common words': _words_read).
        # Both queries are built from the words (fts_lex): the planner, not knowing them, reads the smaller of the
        # text indexes it may use (the org's own); knowing every common word of a query, it read the whole table's.
        words = select(func.count()).select_from(lex).scalar_subquery()
        all_words = select(cast(func.string_agg(_quoted_lexeme(lex.c.l), literal_column("' & '")), TSQUERY))
        every = select(*columns).where(*where, m.search_tsv.op("@@")(all_words.scalar_subquery()),
                                       words > 1).limit(FTS_CANDIDATES_BIG // 2)
        read = _words_read(lex, org, tag) if own_org else lex
        share = cast(func.ceil(literal(FTS_CANDIDATES_BIG / 2) / words), Integer)
        arm = (select(*columns).where(*where, m.search_tsv.op("@@")(cast(_quoted_lexeme(read.c.l), TSQUERY)))
               .limit(share).lateral(f"fts_word_{tag}"))
        cand = union(every, select(*arm.c).select_from(read.join(arm, true())))  # a row found twice: once
    else:
        cand = select(*columns).where(*where, tsv.op("@@")(q)).limit(FTS_CANDIDATES)
    cand = cand.cte(f"fts_cand_{tag}").prefix_with("MATERIALIZED")
    n = select(func.count()).select_from(cand).scalar_subquery()
    df = (select(lex.c.l, func.count().label("df")).select_from(cand.join(lex, lex.c.l == func.any(cand.c.arr)))
          .group_by(lex.c.l).cte(f"fts_df_{tag}"))
    # BM25's rarity weight with binary term frequency: rows holding the rare words of the query win.
    idf = func.ln(1.0 + (n + 1.0) / df.c.df)
    return (select(cand.c.id, cand.c.kind, (func.sum(idf) + 0.01 * func.max(cand.c.tsr)).label("s"),
                   cast(func.count(), Float).label("x"))
            .select_from(cand.join(df, df.c.l == func.any(cand.c.arr)))
            .group_by(cand.c.id, cand.c.kind).order_by(sql_text("s desc")).limit(k))


def _words_read(lex, org: str, tag: str):
    """The query's words (`lex`) whose rows a big org's principal reads word by word from the org's own text index
    (mode "org:<org>..."): those not among the org's common words, or the least common ones, FTS_WORDS_READ_MIN at
    least (see FTS_WORDS_READ_MIN; an org whose words are not listed has none)."""
    common = select(Organization.common_words).where(
        Organization.id == org_literal(uuid.UUID(org.split(":")[1]))).scalar_subquery()
    position = func.array_position(common, lex.c.l)
    uncommon = select(func.count()).select_from(lex).where(position.is_(None)).scalar_subquery()
    return (select(lex.c.l).order_by(position.desc().nulls_first())
            .limit(func.greatest(uncommon, FTS_WORDS_READ_MIN)).cte(f"fts_read_{tag}"))


def _unaccent_lower(col):
    return func.unaccent(func.lower(col))


def _names_similarity(src: _Source, uq, both_ways: bool):
    """How well the query matches the row's names: the query inside the name, and (both_ways) the name
    inside the query."""
    parts = []
    for col in src.name_cols:
        ucol = _unaccent_lower(col)
        parts.append(func.word_similarity(uq, ucol))
        if both_ways:
            parts += [func.word_similarity(ucol, uq), func.similarity(ucol, uq)]
    if src.model is Contact:
        a = _unaccent_lower(literal_column("alias"))
        alias_parts = [func.word_similarity(uq, a)] + ([func.word_similarity(a, uq)] if both_ways else [])
        alias = (select(func.max(func.greatest(*alias_parts) if len(alias_parts) > 1 else alias_parts[0]))
                 .select_from(func.unnest(Contact.aliases).alias("alias")).scalar_subquery())
        parts.append(func.coalesce(alias, 0.0))
    return func.greatest(*parts) if len(parts) > 1 else parts[0]


def _may_be_named(src: _Source):
    """Rows a name search can find through the table's indexes, not by scoring every name: a word of the query
    similar to a word of a name (each `<%` its trigram index), or sharing a stem with its name, alias or tax ID
    (the text index). For a principal with many rows (thousands of contacts); one with few has every name scored."""
    return or_(src.model.search_tsv.op("@@")(_or_tsquery(Q_WORDS)),
               *(word.op("<%")(col) for col in src.name_cols for word in Q_NAME_WORDS))


def _trigram_stmt(who, src: _Source, kinds, k: int, small: bool = False):
    """`small`: as in _fts_stmt, the principal's few long texts are matched one by one, not through the
    trigram index; a big principal's names are scored only where `_may_be_named` finds them."""
    if src.name_cols:
        score = _names_similarity(src, _unaccent_lower(Q_TEXT), both_ways=True)
        where = src.where(who, kinds) + ([] if small else [_may_be_named(src)])
        inner = select(*_ident(src), score.label("s")).where(*where).subquery()
        return (select(inner.c.id, inner.c.kind, inner.c.s, literal(0.0, Float).label("x"))
                .where(inner.c.s >= NAME_SIMILARITY).order_by(inner.c.s.desc()).limit(k))
    # "<%" can use the trigram GIN index; its threshold is set once per transaction (see _KNOBS).
    return (select(*_ident(src), func.word_similarity(Q_TEXT, src.long_text).label("s"), literal(0.0, Float).label("x"))
            .where(*src.where(who, kinds), Q_TEXT.op("<%")(
                func.coalesce(src.long_text, literal_column("''")) if small else src.long_text))
            .order_by(sql_text("s desc")).limit(k))


def _name_stmt(who, src: _Source, kinds, k: int, small: bool = False):
    """Short queries are lookups: the contact or record whose name covers the query (`small`: see _trigram_stmt)."""
    score = _names_similarity(src, _unaccent_lower(Q_TEXT), both_ways=False)
    where = src.where(who, kinds) + ([] if small else [_may_be_named(src)])
    inner = select(*_ident(src), score.label("s")).where(*where).subquery()
    return (select(inner.c.id, inner.c.kind, inner.c.s, literal(0.0, Float).label("x"))
            .where(inner.c.s >= NAME_LOOKUP_SIMILARITY).order_by(inner.c.s.desc()).limit(k))


def _normalised(col):
    return func.regexp_replace(func.upper(col), "[^A-Z0-9]", "", "g")


def _exact_stmt(who, src: _Source, kinds, n_tokens: int, k: int):
    tokens = [_q_token(i) for i in range(n_tokens)]
    if src.model is Contact:
        conds = [_normalised(Contact.tax_id).in_(Q_TOKENS)]
        strength = literal(3.0, Float)
    elif src.model is Document:
        ref, tax = _normalised(Document.external_ref), _normalised(Document.tax_id)
        conds = [or_(ref.in_(Q_TOKENS), tax.in_(Q_TOKENS), *[ref.like(func.concat("%", t)) for t in tokens])]
        # The record itself beats a record that merely carries the customer's tax ID.
        strength = case((ref.in_(Q_TOKENS), 3.0), (tax.in_(Q_TOKENS), 2.0), else_=1.5)
    else:
        norm = _normalised(Message.text if src.model is Message else Memory.value + " " + Memory.sentence)
        conds = [or_(*[func.strpos(norm, t) > 0 for t in tokens])]
        strength = literal(1.0, Float)
    return (select(*_ident(src), cast(strength, Float).label("s"), literal(0.0, Float).label("x"))
            .where(*src.where(who, kinds), *conds).limit(k))


def _date_stmt(who, src: _Source, kinds, k: int, said: bool = False, arms: bool = False):
    """Rows dated inside the span the query names, latest first: messages by when they were sent,
    host records by their date, memories by the days of their event or else the day they were said (`said`).
    A big principal's memories (`arms`) are read arm by arm from index ranges (_date_memory_stmt): the
    same rows in the same order, for a statement that costs more to plan and far less to run there."""
    if src.model is Memory and arms:
        return _date_memory_stmt(who, k, said)
    said_on = cast(func.timezone("UTC", Memory.valid_from), Date)
    col = {Message: Message.sent_at, Document: Document.doc_date,
           Memory: func.coalesce(Memory.event_date, said_on) if said else Memory.event_date}.get(src.model)
    if col is None:
        return None
    if src.model is Message:
        start, end = bindparam("q_from_ts", type_=col.type), bindparam("q_to_ts", type_=col.type)
    else:
        start, end = bindparam("q_from", type_=col.type), bindparam("q_to", type_=col.type)
    # Later rows score higher, all within (0, 1]: the fused order breaks ties by the other retrievers.
    age = func.extract("epoch", end - col) if src.model is Message else (end - col)
    score = 1.0 / (1.0 + cast(age, Float) / (86400.0 if src.model is Message else 1.0))
    # Memories of one day: the latest said, then the higher id (as the arms read them).
    ties = (Memory.valid_from.desc(), Memory.id.desc()) if src.model is Memory else ()
    within = _overlapping(col, start, end) if src.model is Memory else (col >= start, col < end)
    return (select(*_ident(src), score.label("s"), literal(0.0, Float).label("x"))
            .where(*src.where(who, kinds), *within).order_by(sql_text("s desc"), *ties).limit(k))


def _overlapping(first, start, end) -> tuple:
    """A memory dated from `first` (to its event_until, when it spans days) that shares a day with the span
    [start, end): the index range of its first day widened by the longest span an event may have
    (EVENT_SPAN_MAX_DAYS), so "what is on the 15th?" finds "closed from the 10th to the 24th"."""
    return (first >= start - EVENT_SPAN_MAX_DAYS, first < end, func.coalesce(Memory.event_until, first) >= start)


def _date_memory_stmt(who, k: int, said: bool):
    """Memories dated inside the span, latest first: by their event date, or (`said`) a memory without
    one by the day it was said, i.e. `coalesce(event_date, valid_from's UTC day)` in the span.

    Read as disjoint arms, each a range of an index the planner can use under row security and in
    order (migration t5_bigorg17_date_indexes): the principal's personal rows and its org's rows
    (access.memory_personal_arm / memory_org_arm), each by event date and, when said, by the moment it
    was said (`event_date IS NULL AND valid_from` in the span's UTC midnights: the same rows as the
    day's comparison, written on the bare column, since an expression of valid_from is not leakproof and
    row security would keep it out of an index condition). Each arm stops at k; the merge keeps k.
    Written as one query over the whole rule, a big org's principal fetched every visible row to compare
    its date (27,000 heap rows for 43 matches). Ties on the day go to the latest said, then the id."""
    start, end = bindparam("q_from", type_=Date), bindparam("q_to", type_=Date)
    moment = Memory.valid_from.type
    start_ts, end_ts = bindparam("q_from_ts", type_=moment), bindparam("q_to_ts", type_=moment)
    said_on = cast(func.timezone("UTC", Memory.valid_from), Date)
    dated = [(Memory.event_date, [Memory.event_date.isnot(None), *_overlapping(Memory.event_date, start, end)],
              (Memory.event_date.desc(), Memory.valid_from.desc(), Memory.id.desc()))]
    if said:
        dated.append((said_on, [Memory.event_date.is_(None), Memory.valid_from >= start_ts, Memory.valid_from < end_ts],
                      (Memory.valid_from.desc(), Memory.id.desc())))
    owners = [memory_personal_arm(who)] + ([memory_org_arm(who)] if who.has_org else [])
    # A literal, so a generic plan of the prepared statement still proves the indexes' predicate.
    active = Memory.status == literal_column("'active'")
    src = SOURCES["memory"]
    arms = []
    for arm in owners:
        for col, when, order in dated:
            # Later rows score higher, all within (0, 1]: the fused order breaks ties by the other retrievers.
            score = 1.0 / (1.0 + cast(end - col, Float))
            arms.append(select(*_ident(src), score.label("s"), literal(0.0, Float).label("x"),
                               Memory.valid_from.label("k_from"))
                        .where(arm, active, *when).order_by(*order).limit(k))
    merged = union_all(*arms).subquery("dated")
    c = merged.c
    return select(c.id, c.kind, c.s, c.x).order_by(c.s.desc(), c.k_from.desc(), c.id.desc()).limit(k)


def _vector_where(who, src: _Source, kinds, with_model: bool) -> list:
    where = src.where(who, kinds) + [src.model.embedding.isnot(None)]
    if with_model:
        where.append(src.model.embed_model == Q_MODEL)
    return where


def org_literal(org_id: uuid.UUID):
    """An org id written into the statement: the planner proves an org index's predicate only from a
    constant (a bound parameter would leave it to the one graph of the whole table)."""
    return literal_column(f"'{uuid.UUID(str(org_id))}'::uuid")


def _vector_stmt(who, src: _Source, kinds, k: int, with_model: bool, mode: str):
    """Nearest rows among the principal's own: exact scan, or HNSW with an iterative scan; for an org
    with its own index (mode "org:<id>", memories only), its personal rows exactly and its org rows
    through the org's index (reading/org_indexes.py)."""
    m = src.model
    where = _vector_where(who, src, kinds, with_model)
    dist = m.embedding.cosine_distance(Q_VECTOR)
    if mode.startswith("messages-org:"):
        # The org's messages through the org's own index, the person's outside any org (few) exactly: together,
        # message_visible (reading/org_indexes.py).
        extra = [m.embedding.isnot(None), Message.deleted_at.is_(None), Message.text != ""]
        if with_model:
            extra.append(m.embed_model == Q_MODEL)
        in_org = (select(*_ident(src), (1.0 - dist).label("s"), literal(0.0, Float).label("x"))
                  .where(message_org_arm(who, org_id=org_literal(uuid.UUID(mode.split(":")[1]))), *extra)
                  .order_by(dist).limit(HNSW_CANDIDATES))
        d = dist + 0.0
        personal = (select(*_ident(src), (1.0 - d).label("s"), literal(0.0, Float).label("x"))
                    .where(message_personal_arm(who), *extra).order_by(d).limit(k))
        return union_all(personal, in_org)
    if mode.startswith("org:"):
        # "org:<org>" or "org:<org>:user:<user>" (the user has an index of their personal memories).
        parts = mode.split(":")
        # Literals, so a generic plan of the prepared statement still proves the partial indexes' predicates.
        extra = [m.embedding.isnot(None), Memory.status == literal_column("'active'")]
        if with_model:
            extra.append(m.embed_model == Q_MODEL)
        d = dist + 0.0
        in_org = (select(*_ident(src), (1.0 - dist).label("s"), literal(0.0, Float).label("x"))
                  .where(memory_org_arm(who, org_id=org_literal(uuid.UUID(parts[1]))), *extra)
                  .order_by(dist).limit(HNSW_CANDIDATES))
        if len(parts) < 4:
            personal = (select(*_ident(src), (1.0 - d).label("s"), literal(0.0, Float).label("x"))
                        .where(memory_personal_arm(who), *extra).order_by(d).limit(k))
            return union_all(personal, in_org)
        # The user's personal rows through their own index; a linked number's personal rows that are not
        # the user's (few) exactly: together, memory_personal_arm.
        own = (select(*_ident(src), (1.0 - dist).label("s"), literal(0.0, Float).label("x"))
               .where(level_is(Level.PERSONAL),
                      Memory.owner_user_id == org_literal(uuid.UUID(parts[3])), *extra)
               .order_by(dist).limit(k))  # every row of that index is visible: k of them, as the exact scan gave
        arms = [own, in_org]
        if who.has_phone:
            arms.append(select(*_ident(src), (1.0 - d).label("s"), literal(0.0, Float).label("x"))
                        .where(memory_personal_arm(who), *extra,
                               or_(Memory.owner_user_id.is_(None), Memory.owner_user_id != who.user_id))
                        .order_by(d).limit(k))
        return union_all(*arms)
    if mode == "exact":
        # "+ 0" keeps the planner off the HNSW index: the filtered rows are scanned and sorted exactly.
        d = dist + 0.0
        return select(*_ident(src), (1.0 - d).label("s"),
                      literal(0.0, Float).label("x")).where(*where).order_by(d).limit(k)
    # relaxed_order hands rows back roughly in order and a walk that stops at k may miss a closer row
    # found later: take more, and the union above re-sorts them exactly and keeps k.
    return (select(*_ident(src), (1.0 - dist).label("s"), literal(0.0, Float).label("x")).where(*where)
            .order_by(dist).limit(HNSW_CANDIDATES))


@lru_cache(maxsize=1024)
def _statement(retriever: str, form: tuple, kinds: tuple[str, ...], k: int, detail: tuple = ()):
    """A retriever's statement over the tables of `kinds`, for principals of one access form; None when
    no table takes part. `detail`: fts and trigram, the kinds in which the principal is big (fewer full
    text candidates, no long-text trigrams), and for fts the org's own indexes to read ("org:..." for
    memories, "messages-org:..." for messages); exact, how many IDs; vector, whether the model is compared
    and each vector table's mode; date, whether memories are also dated by when they were said and whether
    they are read arm by arm (a big principal's)."""
    who = template(form)
    sources = _sources(kinds)
    if retriever == "fts":
        org = {"memory": next((d for d in detail if d.startswith("org:")), None),
               "message": next((d for d in detail if d.startswith("messages-org:")), None)}
        stmts = [_fts_stmt(who, src, kinds, k, src.kind in detail, org.get(src.kind), f"small:{src.kind}" in detail)
                 for src in sources]
    elif retriever == "trigram":
        stmts = [_trigram_stmt(who, src, kinds, k, f"small:{src.kind}" in detail) for src in sources
                 if src.name_cols or src.kind not in detail]
    elif retriever == "name":
        stmts = [_name_stmt(who, src, kinds, k, f"small:{src.kind}" in detail) for src in sources
                 if src.model is Contact]
    elif retriever == "exact":
        stmts = [_exact_stmt(who, src, kinds, detail[0], k) for src in sources]
    elif retriever == "date":
        stmts = [st for src in sources if (st := _date_stmt(who, src, kinds, k, *detail)) is not None]
    else:
        with_model, modes = detail
        stmts = [_vector_stmt(who, src, kinds, k, with_model, mode)
                 for src, mode in zip([s for s in sources if s.has_vector], modes)]
    return _union(stmts, k) if stmts else None


# Per-transaction knobs of the trigram and HNSW scans, sent with the next statement (adapters.tx_settings).
_KNOBS = {
    "pg_trgm.word_similarity_threshold": str(TEXT_WORD_SIMILARITY),
    "hnsw.iterative_scan": "relaxed_order",
    "hnsw.ef_search": str(HNSW_EF_SEARCH),
    "hnsw.max_scan_tuples": str(HNSW_MAX_SCAN_TUPLES),
    # Parallel workers cost more to start than these small, indexed scans take on 2 shared cores.
    "max_parallel_workers_per_gather": "0",
}


@lru_cache(maxsize=256)
def _count_statement(form: tuple, kinds: tuple[str, ...], with_model: bool, counted: tuple[str, ...]):
    """The candidate rows for the principal of each table in `counted` (a vector table's rows with vectors, the
    contacts' rows), counted up to EXACT_SCAN_MAX + 1 (indexed): one round trip."""
    who = template(form)
    counts = []
    for src in _sources(kinds):
        if src.kind in counted:
            where = _vector_where(who, src, kinds, with_model) if src.has_vector else src.where(who, kinds)
            capped = select(src.model.id).where(*where).limit(EXACT_SCAN_MAX + 1).subquery()
            counts.append(select(func.count()).select_from(capped).scalar_subquery().label(f"n_{src.kind}"))
    return select(*counts)


def _run(session: Session, stmt, params: dict) -> list[_Found]:
    if stmt is None:
        return []
    return [_Found(kind, id_, float(s), float(x)) for id_, kind, s, x in read_rows(session, stmt, params)]


def _run_text(stmt, params: dict, session: Session, *, custom: bool) -> list[_Found]:
    """A statement that matches the query's text, planned for its words unless `custom` is false (see retrieve)."""
    set_for_transaction(session.connection(), _KNOBS)
    with custom_plans(session) if custom else nullcontext():
        return _run(session, stmt, params)


# ------------------------------------------------------------------------------------ search

def _check(query: str, kinds: Sequence[str] | None, limit: int) -> tuple[str, tuple[str, ...]]:
    if not isinstance(query, str):
        raise InvalidInput("the query must be text", field="query")
    query = query.replace("\x00", " ").strip()[:MAX_QUERY_CHARS]
    kinds = tuple(kinds) if kinds else SEARCH_KINDS
    unknown = [k for k in kinds if k not in SEARCH_KINDS]
    if unknown:
        raise InvalidInput(f"unknown kinds: {', '.join(unknown)}; use {', '.join(SEARCH_KINDS)}", field="kinds")
    if not 1 <= limit <= 100:
        raise InvalidInput("limit must be between 1 and 100", field="limit")
    return query, kinds


def embed_query(embed: Embed, query: str) -> list[float]:
    """The query's vector, made from the same cleaned text the retrievers search with."""
    vector = embed([_check(query, None, 10)[0]])[0]
    if len(vector) != EMBED_DIM:
        raise InvalidInput(f"the embedding has {len(vector)} dimensions, expected {EMBED_DIM}")
    return vector


def retrieve(session: Session, access: Access | None, query: str, *, kinds: Sequence[str] | None = None,
             per_retriever: int = 30, embed: Embed | None = None, vector: list[float] | Future | None = None,
             embed_model: str | None = None, retrievers: Sequence[str] = RETRIEVERS,
             vector_mode: str | None = None, now: dt.datetime | Future | None = None) -> dict[str, list[_Found]]:
    """Each retriever's ranked list (best first) across the requested kinds; `now` anchors relative
    dates in the query ("ayer", "la semana pasada", "in September"). `vector` and `now` may be Futures, awaited
    just before the statements that need them: the text retrievers run while they are computed."""
    query, kinds = _check(query, kinds, 10)
    out: dict[str, list[_Found]] = {r: [] for r in retrievers}
    if access is None or not query:
        return out
    sources = _sources(kinds)
    form, k = shape(access), per_retriever
    tokens = id_tokens(query)
    # Normalised IDs join the words: the stored text may spell "B-12345678" as "B12345678".
    words = " ".join([fts_text(query), *[t.lower() for t in tokens]]).strip()
    vector_sources = [src for src in sources if src.has_vector]
    want_vector = "vector" in retrievers and (vector is not None or embed is not None) and bool(vector_sources)
    counted = want_vector and vector_mode is None
    params = template_params(access) | {"q_words": words, "q_text": query,
                                        "q_model": embed_model, "q_tokens": tokens}
    params |= {f"q_token_{i}": t for i, t in enumerate(tokens)}
    name_words = [w for w in _WORD.findall(query) if len(w) >= 3][:TRIGRAM_MAX_WORDS]
    params |= {f"q_name_word_{i}": name_words[i] if i < len(name_words) else None for i in range(TRIGRAM_MAX_WORDS)}
    # A principal counted in a table a moment ago is not counted again (reading/principal_size.py). The
    # contacts, which have no vectors, are counted for their text statements (`small` below).
    size_keys = {src.kind: (access.org_id, access.principal, access.read_areas, src.kind, embed_model, EXACT_SCAN_MAX)
                 for src in sources}
    known = {kind: n for kind, key in size_keys.items() if counted and (n := principal_size.known(key)) is not None}
    to_count = tuple(src.kind for src in sources if counted and src.kind not in known)
    set_for_transaction(session.connection(), _KNOBS)
    counted_now = dict(zip(to_count, (int(v) for v in read_rows(
        session, _count_statement(form, kinds, bool(embed_model), to_count), params).one()))) if to_count else {}
    for kind, n in counted_now.items():
        principal_size.remember(size_keys[kind], n, EXACT_SCAN_MAX)
    every = known | counted_now  # in the sources' order below: one statement per shape
    found = {src.kind: every[src.kind] for src in sources if src.kind in every}
    counts = [found[src.kind] for src in vector_sources] if counted else []
    big = tuple(src.kind for src, n in zip(vector_sources, counts) if n > EXACT_SCAN_MAX)
    org_indexed = access.org_id is not None and access.org_id in indexed_orgs(session)
    # A big principal of an org with its own indexes reads its memories there, and the user's personal ones in
    # theirs when they have them (reading/org_indexes.py).
    user = access.principal.user_id
    org_mode = f"org:{access.org_id}" + (f":user:{user}" if user in indexed_owners(session) else "") \
        if org_indexed else None
    # ... and its messages in the org's message indexes when it has them.
    message_mode = f"messages-org:{access.org_id}" if "message" in big and access.org_id is not None \
        and access.org_id in message_indexed_orgs(session) else None
    # The retrievers that match the query's text plan for its words (planner.custom_plans); the others may
    # run their statement's generic plan. So may they where every table they read holds few of the principal's
    # rows (counted): those are matched one by one, whatever the words (_fts_stmt).
    few = {src.kind: NAME_SCAN_MAX if src.name_cols else EXACT_SCAN_MAX for src in sources}
    small = tuple(f"small:{kind}" for kind, n in found.items() if n <= few[kind])
    all_small = not tokens and all(f"small:{src.kind}" in small for src in _sources(kinds))
    fts = None
    if "fts" in retrievers and words:
        # The costliest retriever runs beside the others (adapters.beside): a big org's principal's search p50/p95
        # 37.1/62.6 -> 30.9/42.3 ms, a typical one's 10.0/15.2 -> 9.8/14.9 (bench/turns_ab.py, 2026-12-04).
        # A big address book (or set of documents) is read as big too: rows holding every word, then each word's
        # share, not the first rows holding any word (which could leave out the one the query names).
        big_text = tuple(kind for kind, n in found.items() if n > EXACT_SCAN_MAX and kind not in big)
        fts_detail = big + big_text + ((org_mode,) if org_indexed and "memory" in big else ()) \
            + ((message_mode,) if message_mode else ()) + small
        fts = beside(session, partial(_run_text, _statement("fts", form, kinds, k, fts_detail), dict(params),
                                      custom=not all_small))
    with nullcontext() if all_small else custom_plans(session):
        if "trigram" in retrievers and (len(_WORD.findall(query)) <= TRIGRAM_MAX_WORDS):
            out["trigram"] = _run(session, _statement("trigram", form, kinds, k, big + small), params)
        if "name" in retrievers and len(_WORD.findall(query)) <= NAME_LOOKUP_MAX_WORDS:
            out["name"] = _run(session, _statement("name", form, kinds, k, small), params)
        if "exact" in retrievers and tokens:
            out["exact"] = _run(session, _statement("exact", form, kinds, k, (len(tokens),)), params)
    if isinstance(now, Future):
        now = now.result()
    span = date_range(query, now or clock.now()) if "date" in retrievers else None
    want_date = span is not None
    if want_vector:
        if counted:
            modes = tuple("exact" if n <= EXACT_SCAN_MAX else "hnsw" for n in counts)
        else:
            modes = (vector_mode,) * len(vector_sources)
        if "hnsw" in modes and org_indexed:
            # The org has its own index: its memories are walked there, not in the whole table's graph; and
            # so are the user's personal ones when they have theirs.
            modes = tuple(org_mode if mode == "hnsw" and src.model is Memory else mode
                          for src, mode in zip(vector_sources, modes))
        if "hnsw" in modes and message_mode:
            modes = tuple(message_mode if mode == "hnsw" and src.model is Message else mode
                          for src, mode in zip(vector_sources, modes))
    # The planner underestimates how many rows the ownership filter keeps and would rather sort them all
    # than read an index in order: with sorting priced out it walks the HNSW graph for a big principal,
    # and reads a big principal's dated memories latest first from their ranges (_date_memory_stmt).
    walk = want_vector and any(mode != "exact" for mode in modes)
    with sorting_disabled(session) if walk or (want_date and "memory" in big) else nullcontext():
        if want_date:
            start, end = span
            params |= {"q_from": start, "q_to": end,
                       **{f"q_{name}_ts": dt.datetime.combine(d, dt.time(), tzinfo=dt.timezone.utc)
                          for name, d in (("from", start), ("to", end))}}
            out["date"] = _run(session, _statement("date", form, kinds, k,
                                                   ((end - start).days <= SAID_SPAN_DAYS, "memory" in big)), params)
        if want_vector:
            # A walk of an HNSW graph plans for the principal's values too: on its generic plan a big org's
            # principal waited 4x longer (bench/scale.py, 2026-12-02).
            # Embedded (or a Future's vector awaited) only now, while full text runs beside (adapters.beside).
            if vector is None:  # the model is shown the query with its secrets as marks
                vector = embed_query(embed, redacted(session, access.org_id, query))
            params["q_vector"] = vector.result() if isinstance(vector, Future) else vector
            with custom_plans(session) if walk else nullcontext():
                out["vector"] = _run(session, _statement("vector", form, kinds, k, (bool(embed_model), modes)),
                                     params)
    if fts is not None:
        out["fts"] = fts()
    return out


def fuse(lists: dict[str, list[_Found]],
         weights: dict[str, float] | None = None) -> list[tuple[tuple[str, uuid.UUID], float, dict, dict]]:
    """Reciprocal rank fusion: (key, score, ranks, signals), best first."""
    weights = weights or WEIGHTS
    scores: dict[tuple[str, uuid.UUID], float] = {}
    ranks: dict[tuple[str, uuid.UUID], dict[str, int]] = {}
    signals: dict[tuple[str, uuid.UUID], dict[str, float]] = {}
    for name, found in lists.items():
        for rank, f in enumerate(found, start=1):
            key = (f.kind, f.id)
            scores[key] = scores.get(key, 0.0) + weights.get(name, 1.0) / (RRF_K + rank)
            ranks.setdefault(key, {})[name] = rank
            sig = signals.setdefault(key, {})
            sig[name] = round(f.score, 4)
            if name == "fts":
                sig["fts_words"] = f.extra
    # An exact ID match is a tier of its own: the record whose tax ID or reference was typed comes
    # first, then records carrying it, then everything else by fused score. Ties go by id: its 128-bit number
    # orders as its fixed-width hex text does, without writing the text out.
    ordered = sorted(scores, key=lambda key: (-signals[key].get("exact", 0.0), -scores[key], key[1].int))
    return [(key, scores[key], ranks[key], signals[key]) for key in ordered]


def search(session: Session, access: Access | None, query: str, kinds: Sequence[str] | None = None,
           limit: int = 10, embed: Embed | None = None, *, embed_model: str | None = None,
           retrievers: Sequence[str] = RETRIEVERS, now: dt.datetime | None = None) -> list[Hit]:
    """Hybrid search for one principal; every retriever filters on its ownership inside its query.

    `embed` turns the query into a vector (see `query_embedder`); without it, no vector retriever."""
    query, kinds = _check(query, kinds, limit)
    planned_once(session)
    lists = retrieve(session, access, query, kinds=kinds, per_retriever=max(PER_RETRIEVER, limit * 3), embed=embed,
                     embed_model=embed_model, retrievers=retrievers, now=now)
    fused = fuse(lists)[:limit]
    return _describe(session, fused)


def _describe(session: Session, fused) -> list[Hit]:
    """Titles and snippets of the fused hits, in one round trip."""
    by_kind: dict[str, list[uuid.UUID]] = {}
    for (kind, id_), *_ in fused:
        by_kind.setdefault("document" if kind in DOCUMENT_KINDS else kind, []).append(id_)
    parts = []
    if by_kind.get("memory"):
        parts.append(select(Memory.id, func.replace(Memory.attribute, "_", " ").label("title"),
                            Memory.sentence.label("snippet"), Memory.subject.label("subject"))
                     .where(Memory.id.in_(by_kind["memory"])))
    if by_kind.get("message"):
        parts.append(select(Message.id,
                            (Message.role + " " + func.to_char(Message.sent_at, "YYYY-MM-DD")).label("title"),
                            func.left(Message.text, 300).label("snippet"), cast(None, String).label("subject"))
                     .where(Message.id.in_(by_kind["message"])))
    if by_kind.get("contact"):
        parts.append(select(Contact.id, Contact.name.label("title"),
                            func.concat_ws(" ", Contact.kind, Contact.tax_id).label("snippet"),
                            ("contact:" + cast(Contact.id, String)).label("subject"))
                     .where(Contact.id.in_(by_kind["contact"])))
    if by_kind.get("document"):
        parts.append(select(Document.id,
                            func.coalesce(func.nullif(Document.title, ""), Document.external_ref).label("title"),
                            func.left(Document.text, 300).label("snippet"),
                            ("contact:" + cast(Document.contact_id, String)).label("subject"))
                     .where(Document.id.in_(by_kind["document"])))
    info = {}
    if parts:
        stmt = union_all(*parts) if len(parts) > 1 else parts[0]
        info = {r.id: (r.title, r.snippet, r.subject) for r in read_rows(session, stmt)}
    hits = []
    for (kind, id_), score, ranks, signals in fused:
        if id_ not in info:
            continue  # gone between the retrievers and now
        title, snippet, subject = info[id_]
        hits.append(Hit(kind=kind, id=id_, title=title, snippet=snippet, score=round(score, 6), ranks=ranks,
                        signals=signals, subject=subject))
    return hits


# ------------------------------------------------------------------------------------ host records

def index_document(session: Session, *, org_id: uuid.UUID, kind: str, external_ref: str, title: str = "",
                   text: str = "", owner_user_id: uuid.UUID | None = None, owner_phone: str | None = None,
                   visibility: str = "shared_in_org", area: str | None = None, contact_id: uuid.UUID | None = None,
                   tax_id: str | None = None, doc_date: dt.date | None = None, legal_hold: bool = False,
                   embed: Embed | None = None, embed_model: str | None = None) -> uuid.UUID:
    """Index (or re-index) a host record for search, with its owner columns. Does not commit."""
    if kind not in DOCUMENT_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(DOCUMENT_KINDS)}", field="kind")
    if not external_ref or len(external_ref) > 200:
        raise InvalidInput("external_ref is required (at most 200 characters)", field="external_ref")
    if visibility not in ("private_in_org", "shared_in_org"):
        raise InvalidInput("visibility must be private_in_org or shared_in_org", field="visibility")
    if visibility == "private_in_org" and owner_user_id is None and not owner_phone:
        raise InvalidInput("a private record needs an owner", field="visibility")
    vector = embed([f"{title}\n{text}"[:4000]])[0] if embed is not None else None
    values = dict(org_id=org_id, kind=kind, external_ref=external_ref, title=title, text=text,
                  owner_user_id=owner_user_id, owner_phone=owner_phone, visibility=visibility,
                  area=area or AREA_OF_KIND[kind], contact_id=contact_id, tax_id=tax_id, doc_date=doc_date,
                  legal_hold=legal_hold, embedding=vector, embed_model=embed_model if vector is not None else None)
    stmt = insert(Document).values(**values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["org_id", "kind", "external_ref"],
        set_={k: stmt.excluded[k] for k in values if k not in ("org_id", "kind", "external_ref")}
        | {"updated_at": clock.now()}).returning(Document.id)
    return session.scalar(stmt)


def remove_document(session: Session, *, org_id: uuid.UUID, kind: str, external_ref: str) -> bool:
    """Drop a host record from the index; True when there was one. Does not commit."""
    result = session.execute(delete(Document).where(Document.org_id == org_id, Document.kind == kind,
                                                    Document.external_ref == external_ref))
    return result.rowcount > 0


# ------------------------------------------------------------------------------------ query embedding

_EMBEDDER_LOCK = threading.Lock()
_EMBEDDER: dict[str, object] = {}


def query_embedder(settings=None) -> tuple[Embed, str]:
    """The embedding the stored vectors were made with: the configured backend's, else the local one."""
    with _EMBEDDER_LOCK:
        cached = _EMBEDDER.get("e")
        if cached is None:
            cached = _build_embedder(settings)
            _EMBEDDER["e"] = cached
    return cached  # type: ignore[return-value]


def _build_embedder(settings) -> tuple[Embed, str]:
    try:
        from memory_core.backends import get_backend  # type: ignore[attr-defined]
    except ImportError:
        get_backend = None
    if get_backend is not None:
        backend = get_backend(settings)
        return (lambda texts: backend.embed(texts)[0]), backend.embed_model
    from memory_core.backends.local_embedder import LocalEmbedder

    local = LocalEmbedder()
    return local.embed, local.model_name
