"""The erasure plan, built with SQLAlchemy Core: who a request is about (`Subject`) and what erasure does
to each table (`plan`): a list of steps, each a table, a predicate on the subject's rows, and what happens
to them (deleted, anonymised, or kept and why). Preview, execution and export (`privacy.requests`) all run
these steps, so the export holds exactly the rows the preview counted and the receipt counts what
execution did. The subject's values are bound parameters of the statements, never text in them.

A subject without an identifier (a phone has no user id) matches nothing on it: `_is` answers false,
as SQL's `= NULL` would, never `IS NULL`. Every sub-select is uncorrelated (`correlate(None)`): it reads
its own table, even inside a statement on that same table.
"""
from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Delete,
    Select,
    Table,
    Text,
    Update,
    and_,
    case,
    cast,
    delete,
    exists,
    false,
    func,
    literal_column,
    not_,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters.security import keyed_digest, secret
from memory_core.domain import models
from memory_core.tenancy.accounts import email_key

ERASED = "[erased]"


def _t(model: type[models.Base]) -> Table:
    return model.__table__  # type: ignore[return-value]


USERS, CONTACTS, CONVERSATIONS, MESSAGES = _t(models.User), _t(models.Contact), _t(models.Conversation), \
    _t(models.Message)
MEMORIES, SOURCES, TRACES, TRACE_ITEMS = _t(models.Memory), _t(models.MemorySource), _t(models.MemoryTrace), \
    _t(models.TraceItem)
NOTIFICATIONS, DOCUMENTS, OUTBOX, SUMMARIES = _t(models.Notification), _t(models.Document), _t(models.Outbox), \
    _t(models.ConversationSummary)


# ------------------------------------------------------------------------------------------ subject

@dataclass
class Subject:
    """Who or what a request is about, and every identifier the scan looks for."""
    type: str
    params: dict[str, Any]
    ids: list[uuid.UUID] = field(default_factory=list)  # matched against uuid columns and as text
    strings: list[str] = field(default_factory=list)  # matched as substrings (email, phone, tax id)
    names: list[str] = field(default_factory=list)  # matched as whole words, case-insensitively

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "params": {k: str(v) if isinstance(v, uuid.UUID) else v
                                              for k, v in self.params.items()},
                "ids": [str(i) for i in self.ids], "strings": self.strings, "names": self.names}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Subject:
        return cls(type=data["type"], params=data["params"], ids=[uuid.UUID(i) for i in data["ids"]],
                   strings=data["strings"], names=data["names"])


def mention_pattern(subject: Subject) -> str | None:
    """One case-insensitive POSIX regex for every identifier that may appear in free text."""
    parts = [re.escape(s) for s in subject.strings] + [r"\m" + re.escape(n) + r"\M" for n in subject.names]
    return "(" + "|".join(parts) + ")" if parts else None


def values(subject: Subject) -> dict[str, Any]:
    """The subject's identifiers, each with a value (None when the subject has none): ids as UUIDs (a
    snapshot taken before execution holds them as text), and the sign-in rate-limit keys."""
    p = dict(subject.params)
    for k in ("uid", "cid", "org", "conv"):
        if isinstance(p.get(k), str):
            p[k] = uuid.UUID(p[k])
    for k in ("uid", "phone", "email", "name_subject", "cid", "org", "mem_subject", "conv"):
        p.setdefault(k, None)
    p["email_key"] = email_key(p["email"]) if p["email"] else None
    p["phone_key"] = ("link:" + keyed_digest(secret("link_code_key"), "phone:" + p["phone"])) if p["phone"] else None
    return p


# ---------------------------------------------------------------------------------------------- plan

@dataclass(frozen=True)
class Step:
    table: Table
    category: str  # delete | anonymise | keep
    where: ColumnElement[bool]
    set: dict[str, Any] | None = None  # for anonymise/keep-with-update: column -> new value; None: no change
    reason: str = ""
    pk: str = "id"


Within = Callable[[ColumnElement], ColumnElement[bool]]


def _is(column: ColumnElement, value: Any) -> ColumnElement[bool]:
    """column = value; false for a subject without that identifier (never `IS NULL`)."""
    return false() if value is None else column == value


def _in(sub: Select) -> Within:
    sub = sub.correlate(None)
    return lambda column: column.in_(sub)


def _nothing(_column: ColumnElement) -> ColumnElement[bool]:
    return false()


@dataclass(frozen=True)
class _Own:
    """The subject's own rows, per kind, as membership tests on a column: conversations, messages,
    memories and traces."""
    conv: Within
    msg: Within
    mem: Within
    trace: Within


def _own(subject: Subject, v: dict[str, Any]) -> _Own:
    uid, phone = v["uid"], v["phone"]
    if subject.type in ("user", "phone"):
        conv_rows = select(CONVERSATIONS.c.id).where(or_(_is(CONVERSATIONS.c.user_id, uid),
                                                         _is(CONVERSATIONS.c.phone, phone)))
        conv = _in(conv_rows)
        msg = _in(select(MESSAGES.c.id).where(or_(_is(MESSAGES.c.user_id, uid), _is(MESSAGES.c.phone, phone),
                                                  conv(MESSAGES.c.conversation_id))))
        mem = _in(select(MEMORIES.c.id).where(or_(_is(MEMORIES.c.owner_user_id, uid),
                                                  _is(MEMORIES.c.owner_phone, phone),
                                                  _is(func.lower(MEMORIES.c.subject), v["name_subject"]))))
        trace = _in(select(TRACES.c.id).where(or_(_is(TRACES.c.user_id, uid), _is(TRACES.c.phone, phone),
                                                  conv(TRACES.c.conversation_id))))
        return _Own(conv, msg, mem, trace)
    if subject.type == "contact":
        mem = _in(select(MEMORIES.c.id).where(MEMORIES.c.org_id == v["org"], or_(
            MEMORIES.c.subject == v["mem_subject"], _is(func.lower(MEMORIES.c.subject), v["name_subject"]))))
        return _Own(_nothing, _nothing, mem, _nothing)
    conv_id = v["conv"]

    def conv(column: ColumnElement) -> ColumnElement[bool]:
        return column == conv_id

    here = SOURCES.alias("here")
    other = SOURCES.alias("other")
    # Erasure takes the personal and private memories that came only from it, edited or not.
    mem = _in(select(MEMORIES.c.id).where(
        MEMORIES.c.level.in_(("personal", "private")),
        exists().where(here.c.memory_id == MEMORIES.c.id, here.c.conversation_id == conv_id),
        not_(exists().where(other.c.memory_id == MEMORIES.c.id,
                            or_(other.c.conversation_id.is_(None), other.c.conversation_id != conv_id)))))
    return _Own(conv, _in(select(MESSAGES.c.id).where(MESSAGES.c.conversation_id == conv_id)), mem,
                _in(select(TRACES.c.id).where(TRACES.c.conversation_id == conv_id)))


# Free text where the subject may be mentioned by others: scrubbed (anonymised) where it stays.
MENTION_COLUMNS = [
    (MESSAGES, "text", "id"), (MEMORIES, "sentence", "id"), (MEMORIES, "value", "id"),
    (MEMORIES, "decision_reason", "id"), (NOTIFICATIONS, "text", "id"), (NOTIFICATIONS, "data", "id"),
    (TRACES, "block_text", "id"), (SUMMARIES, "content", "conversation_id"),
    (DOCUMENTS, "title", "id"), (DOCUMENTS, "text", "id"), (OUTBOX, "last_error", "id"),
]
JSON_COLUMNS = {("notifications", "data"), ("conversation_summaries", "content")}
# Rows whose text changed: their vectors describe the old text, so they leave the vector index.
REINDEX = {"messages", "memories", "documents"}


def _mention_steps(pattern: str) -> list[Step]:
    by_table: dict[Table, list[str]] = {}
    for table, col, _pk in MENTION_COLUMNS:
        by_table.setdefault(table, []).append(col)
    steps = []
    for table, cols in by_table.items():
        json = {c for c in cols if (table.name, c) in JSON_COLUMNS}
        exprs = {c: cast(table.c[c], Text) if c in json else table.c[c] for c in cols}
        where = or_(*(e.op("~*")(pattern) for e in exprs.values()))
        if table is DOCUMENTS:
            where = and_(where, not_(DOCUMENTS.c.legal_hold))
        sets: dict[str, Any] = {}
        for c, e in exprs.items():
            scrubbed = func.regexp_replace(e, pattern, ERASED, "gi")
            sets[c] = cast(scrubbed, JSONB) if c in json else scrubbed
        if table.name in REINDEX:
            sets |= {"embedding": None, "embed_model": None}
        pk = next(k for t, _c, k in MENTION_COLUMNS if t is table)
        steps.append(Step(table, "anonymise", where, sets, "mentions of the subject replaced by " + ERASED, pk=pk))
    return steps


def _unless(column: ColumnElement, value: Any) -> ColumnElement:
    """The column, emptied where it holds the subject's value."""
    return case((_is(column, value), null()), else_=column)


def plan(subject: Subject) -> list[Step]:
    """What erasure does, table by table, children before parents."""
    v = values(subject)
    uid, phone, email = v["uid"], v["phone"], v["email"]
    own = _own(subject, v)
    person = subject.type in ("user", "phone")
    steps: list[Step] = []
    hold = "legal hold: the law requires keeping it; owner detached, required fields kept"
    d, m, at = DOCUMENTS.c, MEMORIES.c, _t(models.AccountToken).c
    owned_document = or_(_is(d.owner_user_id, uid), _is(d.owner_phone, phone))
    if person:
        steps += [
            Step(DOCUMENTS, "keep", and_(owned_document, d.legal_hold),
                 {"owner_user_id": None, "owner_phone": None}, hold),
            Step(_t(models.UsageLedger), "keep", own.msg(_t(models.UsageLedger).c.message_id),
                 {"message_id": None}, "usage and cost accounting: kept without identifiers"),
            Step(MEMORIES, "anonymise",
                 and_(or_(_is(m.author_user_id, uid), _is(m.author_phone, phone), _is(m.decided_by, uid)),
                      not_(own.mem(m.id))),
                 {"author_user_id": _unless(m.author_user_id, uid), "author_phone": _unless(m.author_phone, phone),
                  "decided_by": _unless(m.decided_by, uid)},
                 "shared knowledge of the org: kept without its author"),
            Step(_t(models.ApiKey), "anonymise", _is(_t(models.ApiKey).c.created_by, uid), {"created_by": None},
                 "org key: kept without its creator"),
            Step(_t(models.PlatformApiKey), "anonymise", _is(_t(models.PlatformApiKey).c.created_by, uid),
                 {"created_by": None}, "platform key: kept without its creator"),
            Step(_t(models.AccountToken), "anonymise",
                 and_(_is(at.created_by, uid), at.user_id.is_distinct_from(uid),
                      func.lower(at.email).is_distinct_from(email)),
                 {"created_by": None}, "a link sent to someone else: kept without who sent it"),
            Step(_t(models.PrivacyRequest), "anonymise", _is(_t(models.PrivacyRequest).c.handled_by, uid),
                 {"handled_by": None}, "another request: kept without its handler"),
            Step(USERS, "anonymise", and_(_is(USERS.c.phone, phone), USERS.c.id.is_distinct_from(uid)),
                 {"phone": None}, "the account stays; the erased number is unlinked"),
        ]
    elif subject.type == "contact":
        steps.append(Step(DOCUMENTS, "keep", and_(d.contact_id == v["cid"], d.legal_hold), {"contact_id": None},
                          hold))
    n, ti, ms = NOTIFICATIONS.c, TRACE_ITEMS.c, SOURCES.c
    steps += [
        Step(OUTBOX, "delete", own.msg(OUTBOX.c.message_id)),
        Step(NOTIFICATIONS, "delete",
             or_(own.mem(n.memory_id), own.conv(n.conversation_id),
                 *((_is(n.user_id, uid), _is(n.phone, phone)) if person else ()))),
        Step(TRACE_ITEMS, "delete", or_(own.trace(ti.trace_id), own.mem(ti.memory_id))),
        Step(TRACES, "delete", own.trace(TRACES.c.id)),
        Step(SOURCES, "delete", or_(own.mem(ms.memory_id), own.mem(ms.source_memory_id), own.msg(ms.message_id),
                                    own.conv(ms.conversation_id))),
        Step(MEMORIES, "delete", own.mem(m.id)),
    ]
    if subject.type != "contact":
        steps += [
            Step(SUMMARIES, "delete", own.conv(SUMMARIES.c.conversation_id), pk="conversation_id"),
            Step(MESSAGES, "delete", own.msg(MESSAGES.c.id)),
            Step(CONVERSATIONS, "delete", own.conv(CONVERSATIONS.c.id)),
        ]
    if person:
        lc, pa, la = _t(models.LinkCode).c, _t(models.PhoneAuthorization).c, _t(models.LoginAttempt).c
        ek = v["email_key"]
        steps += [
            Step(_t(models.LinkCode), "delete", or_(_is(lc.user_id, uid), _is(lc.used_by_phone, phone))),
            Step(_t(models.AccountToken), "delete", or_(_is(at.user_id, uid), _is(func.lower(at.email), email))),
            Step(_t(models.PhoneAuthorization), "delete", or_(_is(pa.user_id, uid), _is(pa.phone, phone))),
            Step(_t(models.Membership), "delete", _is(_t(models.Membership).c.user_id, uid)),
            Step(DOCUMENTS, "delete", and_(owned_document, not_(d.legal_hold))),
            Step(_t(models.LoginAttempt), "delete",
                 or_(_is(la.key, ek), _is(la.key, v["phone_key"]),
                     func.starts_with(la.key, ek + " from ") if ek is not None else false())),
        ]
    if subject.type == "user":
        steps.append(Step(USERS, "delete", USERS.c.id == uid))
    if subject.type == "contact":
        steps += [Step(DOCUMENTS, "delete", and_(d.contact_id == v["cid"], not_(d.legal_hold))),
                  Step(CONTACTS, "delete", CONTACTS.c.id == v["cid"])]
    pattern = mention_pattern(subject)
    if pattern:
        steps += _mention_steps(pattern)
    log = _t(models.AuditLog).c
    steps.append(Step(_t(models.AuditLog), "keep",
                      or_(log.actor_user_id.in_(subject.ids), log.target_id.in_([str(i) for i in subject.ids])),
                      None, "append-only audit log: opaque ids and counts only, no personal data; "
                            "the ids no longer resolve to anyone"))
    return steps


# --------------------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class RowSet:
    """Distinct rows of one table in one category: the union of its steps, less rows a delete takes."""
    table: Table
    category: str
    where: ColumnElement[bool]
    pk: str
    reason: str


def row_sets(steps: list[Step]) -> list[RowSet]:
    groups: dict[tuple[str, str], list[Step]] = {}
    for st in steps:
        groups.setdefault((st.table.name, st.category), []).append(st)
    out = []
    for (_name, category), group in groups.items():
        table, pk = group[0].table, group[0].pk
        where = or_(*(st.where for st in group))
        deletes = groups.get((table.name, "delete"), []) if category != "delete" else []
        if deletes:
            taken = select(table.c[pk]).where(or_(*(st.where for st in deletes))).correlate(None)
            where = and_(where, table.c[pk].not_in(taken))
        out.append(RowSet(table, category, where, pk, group[0].reason))
    return out


def count(table: Table, where: ColumnElement[bool]) -> Select:
    return select(func.count()).select_from(table).where(where)


def rows(rs: RowSet) -> Select:
    """Every column of the row set's rows, as the database has them (for the export)."""
    return select(literal_column("*")).select_from(rs.table).where(rs.where)


def batch(step: Step, size: int) -> Delete | Update:
    """The statement that deletes or updates at most `size` of the step's rows, locked first."""
    pick = select(step.table.c[step.pk]).where(step.where).limit(size).with_for_update().correlate(None)
    if step.category == "delete":
        return delete(step.table).where(step.table.c[step.pk].in_(pick))
    return update(step.table).where(step.table.c[step.pk].in_(pick)).values(step.set)
