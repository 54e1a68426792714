"""Ingest: every message from every channel becomes one row of the unified message table, with its
outbox row in the same transaction. Idempotent on (channel, external_id) within the writer's org (or
phone, or user, for org-less traffic: `id_scope`, so orgs never collide); edits and deletes are
messages too. A temporary conversation stores nothing. Secrets (cards, passwords, codes, keys: the
policy's exclusion list) are redacted before anything is stored. A WhatsApp `VINCULAR <code>` is answered here,
before any model sees it, and is not stored.

The caller commits, then kicks the worker (`jobs.outbox.enqueue_drain()`); the per-minute safety net
drains the outbox anyway if the kick is lost.
"""
from __future__ import annotations

import datetime as dt
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Row, String, Text, bindparam, func, select
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from memory_core.adapters.rows import rows as read_rows
from memory_core.domain import clock
from memory_core.domain.errors import Conflict, InvalidInput, InvalidSentAt
from memory_core.domain.exclusions import from_column, list_column, load_exclusions
from memory_core.domain.ledger import record_usage
from memory_core.domain.model_port import ModelBackend
from memory_core.domain.models import Conversation, Message, Outbox
from memory_core.domain.phones import normalise_phone
from memory_core.domain.policy import check_text, redact
from memory_core.domain.vocabulary import AREAS, MESSAGE_ROLES

log = logging.getLogger(__name__)

# Long enough for a pasted email or a voice-note transcript; longer is a document, not a message.
MAX_TEXT_CHARS = 20_000
MAX_ID_CHARS = 200
EVENTS = ("new", "edited", "deleted")
VISIBILITIES = ("private_in_org", "shared_in_org")
# Any channel joins by name alone: a short lowercase identifier.
CHANNEL_RE = re.compile(r"^[a-z][a-z0-9_]{1,29}$")
# "VINCULAR ABC123", "vincular abc 123", " Vincular: abc-123 ": the code is 6 letters or digits.
LINK_RE = re.compile(r"^\s*vincular\s*[:\-]?\s*((?:[A-Za-z0-9][\s\-]?){6})\s*$", re.IGNORECASE)
LINK_CHANNELS = ("whatsapp",)
# A send time this far ahead of our clock is a client's clock drifting; further is a wrong date.
MAX_FUTURE = dt.timedelta(minutes=5)


class LinkHandler(Protocol):
    """Links the sending phone to the account that asked for `code`, within the org the message came
    to (None: any); returns the reply to send."""

    def __call__(self, session: Session, phone: str, code: str, org_id: uuid.UUID | None = None) -> str: ...


def default_link_handler(session: Session, phone: str, code: str, org_id: uuid.UUID | None = None) -> str:
    """Identity linking (memory_core.tenancy.linking.confirm_link)."""
    from memory_core.tenancy.linking import confirm_link

    return confirm_link(session, phone, code, org_id=org_id)


@dataclass(frozen=True)
class IngestResult:
    """What ingest did. `reply` is set when the agent must answer with it instead of a model turn."""
    message_id: uuid.UUID | None = None
    conversation_id: uuid.UUID | None = None
    stored: bool = False  # a row was written or changed
    queued: bool = False  # an outbox row was written: kick the worker after commit
    duplicate: bool = False  # a retry of something already ingested: nothing changed
    temporary: bool = False
    link_request: bool = False  # a VINCULAR message: answered here, never stored nor learnt
    reply: str | None = None
    text: str | None = None  # the text stored, its secrets replaced by their marks
    embedded: tuple[list[float], str] | None = None  # the stored text's vector and model, when made at ingest


def link_code_of(text: str | None) -> str | None:
    """The code of a `VINCULAR <code>` message (upper case, separators removed), or None."""
    match = LINK_RE.match(text or "")
    if not match:
        return None
    return re.sub(r"[\s\-]", "", match.group(1)).upper()


def _check_id(value: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS or "\x00" in value:
        raise InvalidInput(f"{field} must be a non-empty string of at most {MAX_ID_CHARS} characters", field=field)
    return value


def _check_text(text: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string", field="text")
    if "\x00" in text:
        raise InvalidInput("text must not contain NUL bytes", field="text")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(f"text is longer than {MAX_TEXT_CHARS} characters", field="text")
    return text


def check_sent_at(sent_at: dt.datetime | None, now: dt.datetime) -> dt.datetime:
    """The message's own send time: given with its zone and not in the future (a few minutes of clock
    drift allowed), else now."""
    if sent_at is None:
        return now
    if not isinstance(sent_at, dt.datetime) or sent_at.tzinfo is None or sent_at.utcoffset() is None:
        raise InvalidSentAt("sent_at must be an ISO 8601 time with its zone, like 2026-03-02T09:15:00+01:00")
    if sent_at > now + MAX_FUTURE:
        raise InvalidSentAt(f"sent_at is in the future ({sent_at.isoformat()}); a message cannot be sent "
                            f"more than {int(MAX_FUTURE.total_seconds() // 60)} minutes from now")
    return sent_at


def ingest_message(session: Session, *, channel: str, conversation: str, external_id: str,
                   org_id: uuid.UUID | None, user_id: uuid.UUID | None, phone: str | None, role: str,
                   text: str, visibility: str = "private_in_org", area: str = "general",
                   temporary: bool = False, event: str = "new", sent_at: dt.datetime | None = None,
                   link_handler: LinkHandler | None = None, now: dt.datetime | None = None,
                   embedder: ModelBackend | None = None) -> IngestResult:
    """Store one message event (new, edited, deleted) and queue it for the worker. Does not commit.

    `sent_at` is when the person sent it (imported history keeps its dates; default now): relative
    dates in it are resolved against it. `now` is the clock. `embedder`: a new message's vector is made with it
    now and stored with the row, so the worker does not embed it (a turn's block reuses it as its query's)."""
    if not isinstance(channel, str) or not CHANNEL_RE.match(channel):
        raise InvalidInput("channel must be a short lowercase identifier like 'web' or 'whatsapp'", field="channel")
    _check_id(conversation, "conversation")
    _check_id(external_id, "external_id")
    if role not in MESSAGE_ROLES:
        raise InvalidInput(f"role must be one of {', '.join(MESSAGE_ROLES)}", field="role")
    if visibility not in VISIBILITIES:
        raise InvalidInput(f"visibility must be one of {', '.join(VISIBILITIES)}", field="visibility")
    if area not in AREAS:
        raise InvalidInput(f"area must be one of {', '.join(AREAS)}", field="area")
    if event not in EVENTS:
        raise InvalidInput(f"event must be one of {', '.join(EVENTS)}", field="event")
    text = _check_text(text if event != "deleted" else (text or ""))
    now = now or clock.now()
    sent_at = check_sent_at(sent_at, now)
    phone = normalise_phone(phone)
    if user_id is None and phone is None:
        raise InvalidInput("a message needs its writer: a user, a phone, or both", field="user_id")

    if role == "user" and channel in LINK_CHANNELS and event == "new":
        code = link_code_of(text)
        if code is not None:
            if phone is None:
                raise InvalidInput("a link code must come from a phone", field="phone")
            # Not stored: the message is a one-time credential, and linking keeps its own record.
            reply = (link_handler or default_link_handler)(session, phone, code, org_id=org_id)
            return IngestResult(link_request=True, reply=reply)

    if temporary:
        # May read memory, never add to it: no conversation, message or outbox row.
        return IngestResult(temporary=True)

    # The conversation, read with the org's exclusion list (one statement where there were two); a new one's
    # list is read alone.
    conv = read_rows(session, _CONVERSATION_WITH_EXCLUSIONS,
                     _writer_key(channel, conversation, org_id, user_id, phone) | {"exclusions_org": org_id}).first()
    exclusions = from_column(conv.exclusions) if conv is not None else load_exclusions(session, org_id)
    text = redact(text, exclusions)  # every secret replaced by its mark before anything stores or indexes it
    find = _writer_key(channel, external_id, org_id, user_id, phone)
    if event != "new":
        existing = read_rows(session, _MESSAGE_BY_EXTERNAL_ID, find).first()
        if existing is not None:
            _check_same_writer(existing, org_id, user_id, phone)
            # An edit or a delete changes the stored message: loaded whole.
            message = session.get(Message, existing.id)
            return _delete(session, message) if event == "deleted" else _edit(session, message, text)
        if event == "deleted":
            return IngestResult()  # nothing was stored, so nothing to delete
        # An edit that arrives before its original (webhooks do that) is simply the message's first version.

    conv = _conversation(session, channel, conversation, org_id, user_id, phone, conv)
    values = dict(conversation_id=conv.id, channel=channel, external_id=external_id, org_id=org_id,
                  user_id=user_id, phone=phone, visibility=visibility, area=area, role=role, text=text,
                  sent_at=sent_at, edited_at=now if event == "edited" else None)
    # As the worker: no message holding a secret is embedded (no model sees it).
    vector, usage = None, None
    if embedder is not None and text.strip() and check_text(text, exclusions).secret is None:
        try:
            (vector,), usage = embedder.embed([text])
        except Exception as exc:  # noqa: BLE001 - the message is stored all the same; the worker embeds it
            log.warning("embedding a message at ingest failed (%s); the worker will", type(exc).__name__)
        else:
            values |= {"embedding": vector, "embed_model": embedder.embed_model}
    message_id = session.scalar(_MESSAGE_INSERT, values)
    if message_id is not None and usage is not None:
        record_usage(session, usage, org_id=org_id, message_id=message_id)
    if message_id is None:
        # Stored already (a retry, or a concurrent one that won the race): theirs is the row.
        row = read_rows(session, _MESSAGE_BY_EXTERNAL_ID, find).first()
        if row is None:  # the row is there but not ours to see: another writer's message
            raise Conflict("this external_id already belongs to another writer's message")
        _check_same_writer(row, org_id, user_id, phone)
        return IngestResult(message_id=row.id, conversation_id=row.conversation_id, duplicate=True, text=text)
    session.execute(_OUTBOX_INSERT, {"message_id": message_id, "conversation_id": conv.id, "event": "new"})
    return IngestResult(message_id=message_id, conversation_id=conv.id, stored=True, queued=True, text=text,
                        embedded=(vector, embedder.embed_model) if vector is not None else None)


def _id_scope_param():
    """The namespace of a writer's external ids (parameters scope_org, scope_phone, scope_user), computed by
    the same SQL function as the column."""
    uid = PG_UUID(as_uuid=True)
    return func.external_id_scope(bindparam("scope_org", type_=uid), bindparam("scope_phone", type_=Text),
                                  bindparam("scope_user", type_=uid))


# A message or conversation by its external id in the writer's namespace: every ingest reads them (built once).
_MESSAGE_BY_EXTERNAL_ID = select(Message.id, Message.conversation_id, Message.org_id, Message.user_id, Message.phone)\
    .where(Message.channel == bindparam("channel", type_=String), Message.id_scope == _id_scope_param(),
           Message.external_id == bindparam("external_id", type_=String))
_CONVERSATION_BY_EXTERNAL_ID = select(Conversation.id, Conversation.user_id, Conversation.phone,
                                      Conversation.temporary).where(
    Conversation.channel == bindparam("channel", type_=String), Conversation.id_scope == _id_scope_param(),
    Conversation.external_id == bindparam("external_id", type_=String))
_CONVERSATION_WITH_EXCLUSIONS = _CONVERSATION_BY_EXTERNAL_ID.add_columns(
    list_column(bindparam("exclusions_org", type_=PG_UUID(as_uuid=True))).label("exclusions"))


# A new message and its outbox row (Core statements built once: the ORM's unit of work is not needed for two
# plain inserts, and building them cost more than running them). Two statements, not one with a data-modifying
# WITH: the outbox's row security checks its message, which a sibling part of the same statement cannot see.
_MESSAGE_INSERT = (pg_insert(Message.__table__)
                   .on_conflict_do_nothing(index_elements=["channel", "id_scope", "external_id"])
                   .returning(Message.__table__.c.id))
_OUTBOX_INSERT = Outbox.__table__.insert()


def _check_same_writer(existing: Row, org_id, user_id, phone) -> None:
    # An external id reused by someone else is a client bug or an attack, never a retry.
    if (existing.org_id != org_id
            or (existing.user_id is not None and user_id is not None and existing.user_id != user_id)
            or (existing.phone is not None and phone is not None and existing.phone != phone)):
        raise Conflict("this external_id already belongs to another writer's message")


def _edit(session: Session, message: Message, text: str) -> IngestResult:
    if message.deleted_at is not None or message.text == text:
        # A deleted message stays deleted; the same edit twice is one edit.
        return IngestResult(message_id=message.id, conversation_id=message.conversation_id, duplicate=True)
    message.text = text
    message.edited_at = clock.now()
    # The old vector describes the old text: the worker re-indexes.
    message.embedding, message.embed_model = None, None
    session.add(Outbox(message_id=message.id, conversation_id=message.conversation_id, event="edited"))
    session.flush()
    return IngestResult(message_id=message.id, conversation_id=message.conversation_id, stored=True, queued=True)


def _delete(session: Session, message: Message) -> IngestResult:
    if message.deleted_at is not None:
        return IngestResult(message_id=message.id, conversation_id=message.conversation_id, duplicate=True)
    message.deleted_at = clock.now()
    message.text = ""
    message.embedding, message.embed_model = None, None
    session.add(Outbox(message_id=message.id, conversation_id=message.conversation_id, event="deleted"))
    session.flush()
    return IngestResult(message_id=message.id, conversation_id=message.conversation_id, stored=True, queued=True)


def _writer_key(channel: str, external_id: str, org_id, user_id, phone) -> dict:
    """The bind parameters that find a message or a conversation by its external id in its writer's namespace."""
    return {"channel": channel, "external_id": external_id, "scope_org": org_id, "scope_phone": phone,
            "scope_user": user_id}


def _conversation(session: Session, channel: str, external_id: str, org_id, user_id, phone, conv: Row | None) -> Row:
    """The conversation's id, user_id, phone and temporary (`conv`, as read a moment ago), created if it is new."""
    find = _writer_key(channel, external_id, org_id, user_id, phone)
    # Most messages join a conversation that exists: it was read first, and is inserted only when it is not there.
    if conv is None:
        session.execute(
            pg_insert(Conversation).values(channel=channel, external_id=external_id, org_id=org_id, user_id=user_id,
                                           phone=phone)
            .on_conflict_do_nothing(index_elements=["channel", "id_scope", "external_id"]))
        conv = read_rows(session, _CONVERSATION_BY_EXTERNAL_ID, find).first()
        if conv is None:  # there, but not ours to see: another writer's conversation
            raise Conflict("this conversation belongs to another person")
    if (conv.user_id is not None and user_id is not None and conv.user_id != user_id) or (
            conv.phone is not None and phone is not None and conv.phone != phone):
        raise Conflict("this conversation belongs to another person")
    if conv.temporary:
        raise Conflict("this conversation is temporary: its messages are not stored")
    return conv
