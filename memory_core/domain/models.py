"""The data model: SQLAlchemy 2.x typed ORM. Alembic migrations in migrations/ create it; nothing calls create_all.

One module on purpose (~630 lines): the whole schema in one declarative metadata, read beside the
migrations and the row-security policies; the check constraints come from vocabulary.py.

Every row that holds what a person said or what was learnt carries who it belongs to: organization,
owner user or owner phone, level or visibility, and area. The ownership filter in access.py and the
row-level security policies in the migrations both read those columns.
"""
from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, defer, mapped_column

from memory_core.adapters.vector_binary import BinaryVectorColumn
from memory_core.domain import clock
from memory_core.domain.dates import EVENT_SPAN_MAX_DAYS
from memory_core.domain.vocabulary import (
    EMBED_DIM,
    TEXT_SEARCH_CONFIG,
    Category,
    ContactKind,
    DocumentKind,
    ExclusionKind,
    Level,
    MemoryMode,
    MessageRole,
    PlatformRole,
    PrivacyKind,
    PrivacyStatus,
    PrivacySubjectType,
    ProposalKind,
    Role,
    Status,
    Visibility,
    one_of,
)

# Every GIN index is kept without a pending list (migration v8): a row written is in it at once.
_NO_PENDING_LIST = {"fastupdate": "off"}


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSONB, uuid.UUID: UUID(as_uuid=True)}


def _pk() -> Mapped[uuid.UUID]:
    return mapped_column(UUID(as_uuid=True), primary_key=True, server_default=sql_text("uuidv7()"))


def _timestamp() -> Mapped[dt.datetime]:
    """A row's time, from the clock (memory_core.domain.clock) like every time compared with it; the
    server default only stamps rows written outside the app (migrations, hand-written SQL)."""
    return mapped_column(DateTime(timezone=True), default=clock.now, server_default=func.now(), nullable=False)


# Full-text: Spanish stemming over unaccented text. `f_unaccent` is an IMMUTABLE wrapper the
# migration creates, so the expression can be a stored generated column and be indexed. Deferred: only
# statements search it, no code reads it from a row, and loading it made every listed row carry its words twice.
def _tsv(source: str) -> Mapped[Any]:
    return mapped_column(
        TSVECTOR, Computed(f"to_tsvector('{TEXT_SEARCH_CONFIG}', coalesce({source}, ''))", persisted=True),
        deferred=True,
    )


class Organization(Base):
    __tablename__ = "organizations"
    id: Mapped[uuid.UUID] = _pk()
    name: Mapped[str] = mapped_column(String(200))
    memory_mode: Mapped[str] = mapped_column(String(20), server_default="automatic")
    # Retention knobs an owner/admin may tighten; None means the platform default in defaults.py.
    settings: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    # The provisioning host's own id for the org (a platform key creates orgs idempotently by it).
    external_id: Mapped[str | None] = mapped_column(String(200))
    # A suspended org's keys and console pages stop working; nothing is deleted.
    suspended_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    # A big org's most common search words, most common first (jobs/org_indexes.py; reading/search.py's full text
    # reads only the others one by one). None for an org without its own indexes.
    common_words: Mapped[list[str] | None] = mapped_column(ARRAY(Text))
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (CheckConstraint(one_of("memory_mode", MemoryMode), name="memory_mode_valid"),
                      Index("uq_organizations_external_id", "external_id", unique=True))


class User(Base):
    __tablename__ = "users"
    id: Mapped[uuid.UUID] = _pk()
    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str | None] = mapped_column(String(300))
    # Platform roles, outside any org: platform_admin (creates orgs, grants roles), staff (read-only
    # across orgs), privacy_officer.
    platform_role: Mapped[str | None] = mapped_column(String(30))
    # A verified WhatsApp number; set only by linking with a code sent from that number.
    phone: Mapped[str | None] = mapped_column(String(32), unique=True)
    locale: Mapped[str] = mapped_column(String(10), server_default="es")
    # The console's language the person chose (es, en); None until they pick one: the browser's then decides.
    ui_locale: Mapped[str | None] = mapped_column(String(5))
    # Bumped on sign-out and (by trigger) on a password, role or membership change: a console session
    # signed with an older version is refused.
    session_version: Mapped[int] = mapped_column(Integer, server_default="0")
    # Set while the person has paused learning: the worker learns nothing from their messages.
    learning_paused_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (
        CheckConstraint(one_of("platform_role", PlatformRole, nullable=True), name="platform_role_valid"),
        CheckConstraint("ui_locale in ('es', 'en')", name="ui_locale_valid"),
    )


class Membership(Base):
    __tablename__ = "memberships"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(10), server_default="member")
    # {"contacts": "read", "invoices": "edit", ...}; owners and admins may edit every area.
    permissions: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    joined_at: Mapped[dt.datetime] = _timestamp()
    left_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    # The host application's own id for this person in this org (idempotent provisioning).
    external_id: Mapped[str | None] = mapped_column(String(200))
    # Paused by the host or an admin: no access, nothing forgotten (left_at is the end that forgets).
    deactivated_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    __table_args__ = (
        UniqueConstraint("org_id", "user_id"),
        Index("uq_memberships_org_external", "org_id", "external_id", unique=True),
        CheckConstraint(one_of("role", Role), name="role_valid"),
    )


class PhoneAuthorization(Base):
    """A WhatsApp number allowed to use an org, with at most the permissions of the user behind it."""
    __tablename__ = "phone_authorizations"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    phone: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    permissions: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    created_at: Mapped[dt.datetime] = _timestamp()
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    external_id: Mapped[str | None] = mapped_column(String(200))
    __table_args__ = (UniqueConstraint("org_id", "phone"), Index("ix_phone_auth_phone", "phone"),
                      Index("uq_phone_auth_org_external", "org_id", "external_id", unique=True))


class Contact(Base):
    __tablename__ = "contacts"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(300))
    tax_id: Mapped[str | None] = mapped_column(String(40))
    kind: Mapped[str] = mapped_column(String(10))
    aliases: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default=sql_text("'{}'"))
    area: Mapped[str] = mapped_column(String(30), server_default="contacts")
    created_at: Mapped[dt.datetime] = _timestamp()
    search_tsv: Mapped[Any] = _tsv("name || ' ' || coalesce(tax_id, '') || ' ' || public.memoria_words(aliases)")
    __table_args__ = (
        CheckConstraint(one_of("kind", ContactKind), name="contact_kind_valid"),
        Index("ix_contacts_org_tax", "org_id", "tax_id"),
        Index("ix_contacts_name_trgm", "name", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST,
              postgresql_ops={"name": "gin_trgm_ops"}),
        Index("ix_contacts_tsv", "search_tsv", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST),
    )


# The namespace of a channel's external ids: one SQL function (migration s8_security_external_id_scope).
ID_SCOPE = "external_id_scope(org_id, phone, user_id)"


class Conversation(Base):
    __tablename__ = "conversations"
    id: Mapped[uuid.UUID] = _pk()
    channel: Mapped[str] = mapped_column(String(30))
    # The channel's own id for the thread (web chat id, WhatsApp chat id).
    external_id: Mapped[str] = mapped_column(String(200))
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    phone: Mapped[str | None] = mapped_column(String(32))
    temporary: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    created_at: Mapped[dt.datetime] = _timestamp()
    # Whose namespace external_id lives in (the org; for org-less rows the phone, else the user).
    id_scope: Mapped[str | None] = mapped_column(Text, Computed(ID_SCOPE, persisted=True))
    __table_args__ = (UniqueConstraint("channel", "id_scope", "external_id"),)


class Message(Base):
    """The unified message table: one row per message from any channel."""
    __tablename__ = "messages"
    id: Mapped[uuid.UUID] = _pk()
    conversation_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(30))
    external_id: Mapped[str] = mapped_column(String(200))
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    phone: Mapped[str | None] = mapped_column(String(32))
    visibility: Mapped[str] = mapped_column(String(20), server_default="private_in_org")
    area: Mapped[str] = mapped_column(String(30), server_default="general")
    role: Mapped[str] = mapped_column(String(20))
    text: Mapped[str] = mapped_column(Text, server_default="")
    created_at: Mapped[dt.datetime] = _timestamp()
    # When the person sent it (given at ingest, else now): relative dates in it are resolved against this.
    sent_at: Mapped[dt.datetime] = _timestamp()
    edited_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    deleted_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    # Set by the worker when it indexed the message; null until then.
    embedding: Mapped[Any] = mapped_column(BinaryVectorColumn(EMBED_DIM), nullable=True)
    embed_model: Mapped[str | None] = mapped_column(String(80))
    search_tsv: Mapped[Any] = _tsv("text")
    id_scope: Mapped[str | None] = mapped_column(Text, Computed(ID_SCOPE, persisted=True))
    __table_args__ = (
        UniqueConstraint("channel", "id_scope", "external_id"),
        CheckConstraint(one_of("role", MessageRole), name="message_role_valid"),
        CheckConstraint(one_of("visibility", Visibility), name="message_visibility_valid"),
        Index("ix_messages_conversation", "conversation_id", "created_at"),
        Index("ix_messages_assistant_turns", "conversation_id", "created_at", "id",
              postgresql_where=sql_text("role = 'assistant' and deleted_at is null")),
        Index("ix_messages_owner", "org_id", "user_id"),
        Index("ix_messages_phone", "phone"),
        Index("ix_messages_tsv", "search_tsv", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST),
        Index("ix_messages_text_trgm", "text", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST,
              postgresql_ops={"text": "gin_trgm_ops"}),
        Index("ix_messages_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )


class Outbox(Base):
    """Work for the worker, written in the same transaction as the message."""
    __tablename__ = "outbox"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    message_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    # The message's conversation, kept here so a claim finds each conversation's oldest row by index.
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE", name="fk_outbox_conversation"))
    # "new", "edited" or "deleted": what happened to the message.
    event: Mapped[str] = mapped_column(String(20), server_default="new")
    created_at: Mapped[dt.datetime] = _timestamp()
    processed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    # After a failure: not claimed again before this time (backoff). Null: claim at once.
    next_attempt_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    __table_args__ = (
        Index("ix_outbox_pending", "id", postgresql_where=sql_text("processed_at is null")),
        Index("ix_outbox_message", "message_id"),
        Index("ix_outbox_first_try", "conversation_id", "id",
              postgresql_where=sql_text("processed_at is null and attempts = 0")),
        Index("ix_outbox_retry", "next_attempt_at", postgresql_where=sql_text("processed_at is null and attempts > 0")),
    )


class Memory(Base):
    """One fact. Versions are rows: a superseded row keeps valid_to and superseded_by."""
    __tablename__ = "memories"
    id: Mapped[uuid.UUID] = _pk()
    # Null only for personal memories, which follow the person across orgs.
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    level: Mapped[str] = mapped_column(String(10))
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    owner_phone: Mapped[str | None] = mapped_column(String(32))
    area: Mapped[str] = mapped_column(String(30), server_default="general")
    category: Mapped[str] = mapped_column(String(20))
    # "self" for the person, "org" for the company, "contact:<uuid>" for a customer or supplier.
    subject: Mapped[str] = mapped_column(String(200))
    attribute: Mapped[str] = mapped_column(String(100))
    value: Mapped[str] = mapped_column(Text)
    sentence: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float, server_default="0.8")
    pinned: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    status: Mapped[str] = mapped_column(String(12), server_default="active")
    # For status=proposed: bank_account, confirmation or low_permission; why it waits.
    proposal_kind: Mapped[str | None] = mapped_column(String(20))
    proposal_rule: Mapped[str | None] = mapped_column(Text)
    # The memory a proposal would replace once approved.
    replaces_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("memories.id", ondelete="SET NULL"))
    decided_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    decided_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    decision_reason: Mapped[str | None] = mapped_column(Text)
    author_user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    author_phone: Mapped[str | None] = mapped_column(String(32))
    # Set when the author left the org: what they shared stays, attributed to a former member.
    author_former_member: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    # How it came in: background, explicit, console, restore, sheet.
    origin: Mapped[str] = mapped_column(String(12), server_default="background")
    valid_from: Mapped[dt.datetime] = _timestamp()
    valid_to: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    # Checked at commit: a version closed by a new one points at it before it is inserted (domain.versions).
    superseded_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("memories.id", ondelete="SET NULL",
                                                                       deferrable=True, initially="DEFERRED"))
    hand_edited: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    event_date: Mapped[dt.date | None] = mapped_column(Date)
    # The last day of an event that spans days ("cerramos del 10 al 24 de agosto"); null for one day.
    event_until: Mapped[dt.date | None] = mapped_column(Date)
    embedding: Mapped[Any] = mapped_column(BinaryVectorColumn(EMBED_DIM), nullable=True)
    embed_model: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[dt.datetime] = _timestamp()
    updated_at: Mapped[dt.datetime] = _timestamp()
    search_tsv: Mapped[Any] = _tsv("sentence || ' ' || value || ' ' || attribute")
    __table_args__ = (
        CheckConstraint(one_of("level", Level), name="memory_level_valid"),
        CheckConstraint(one_of("status", Status), name="memory_status_valid"),
        CheckConstraint(one_of("proposal_kind", ProposalKind, nullable=True),
                        name="memory_proposal_kind_valid"),
        CheckConstraint(one_of("category", Category),
                        name="memory_category_valid"),
        CheckConstraint("level = 'shared' or owner_user_id is not null or owner_phone is not null",
                        name="memory_owned"),
        CheckConstraint("level = 'personal' or org_id is not null", name="memory_org_scoped"),
        # An event that spans days ends after it starts, within dates.EVENT_SPAN_MAX_DAYS (w4_event_span_check).
        CheckConstraint(f"event_until is null or (event_until > event_date and event_until <= event_date + "
                        f"{EVENT_SPAN_MAX_DAYS})", name="memory_event_span_valid"),
        # Two active memories with the same org, level, owner, subject and attribute cannot exist.
        Index("uq_memories_active_fact",
              sql_text("coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)"), "level",
              sql_text("coalesce(owner_user_id, '00000000-0000-0000-0000-000000000000'::uuid)"),
              sql_text("coalesce(owner_phone, '')"), "subject", "attribute",
              unique=True, postgresql_where=sql_text("status = 'active'")),
        Index("ix_memories_org_subject", "org_id", "subject", "status"),
        Index("ix_memories_owner_user", "owner_user_id", "status"),
        Index("ix_memories_owner_phone", "owner_phone", "status"),
        Index("ix_memories_proposed", "org_id", "proposal_kind", "created_at",
              postgresql_where=sql_text("status = 'proposed'")),
        # The console's first pages in index order (migration c5_console_indexes).
        Index("ix_memories_org_status_created", "org_id", "status", "created_at", "id"),
        # The shared arm of memory_visible: only the shared rows of the readable areas (r5_context_indexes).
        Index("ix_memories_shared_area", "org_id", "area", "status", postgresql_where=sql_text("level = 'shared'")),
        # ix_memories_profile_shared / _own_user / _own_phone (expression indexes ordered like the profile) live in
        # migration t3_perf_bigorg_profile_indexes next to the text of reading/profile_query.py they must match.
        # ix_memories_said_* / ix_memories_event_* (the date retriever's arms: org, user, number) live in migration
        # t5_bigorg17_date_indexes.
        # A member's review queue: their own proposals in the queue's order (t3_perf_bigorg_profile_indexes).
        Index("ix_memories_proposed_author", "org_id", "author_user_id", "created_at", "id",
              postgresql_where=sql_text("status = 'proposed'")),
        Index("ix_memories_proposed_queue", "org_id", "created_at", "id",
              postgresql_where=sql_text("status = 'proposed'")),
        Index("ix_memories_superseded", "valid_to", postgresql_where=sql_text("status = 'superseded'")),
        Index("ix_memories_tsv", "search_tsv", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST),
        Index("ix_memories_sentence_trgm", "sentence", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST,
              postgresql_ops={"sentence": "gin_trgm_ops"}),
        Index("ix_memories_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )


# What a page listing memories loads: every column but the vector (a list shows none, and each row's 1.5 kB
# embedding would be sent and decoded for nothing). `select(Memory).options(LISTED_MEMORY)`.
LISTED_MEMORY = defer(Memory.embedding)


class MemorySource(Base):
    """Where a memory came from: a message (null once that message is erased) and its conversation."""
    __tablename__ = "memory_sources"
    id: Mapped[uuid.UUID] = _pk()
    memory_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"))
    message_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    # For a folded sheet: the loose memory it folds.
    source_memory_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"))
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (
        UniqueConstraint("memory_id", "message_id"),
        Index("ix_memory_sources_message", "message_id"),
        Index("ix_memory_sources_conversation", "conversation_id", "created_at"),
        Index("ix_memory_sources_source_memory", "source_memory_id"),
    )


class Document(Base):
    """A host record indexed for search: invoice, quote, expense or document, with the owner columns."""
    __tablename__ = "documents"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    # The host application's own id (invoice number, document id), unique per org and kind.
    external_ref: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text, server_default="")
    text: Mapped[str] = mapped_column(Text, server_default="")
    contact_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("contacts.id", ondelete="SET NULL"))
    tax_id: Mapped[str | None] = mapped_column(String(40))
    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    owner_phone: Mapped[str | None] = mapped_column(String(32))
    visibility: Mapped[str] = mapped_column(String(20), server_default="shared_in_org")
    area: Mapped[str] = mapped_column(String(30), server_default="documents")
    doc_date: Mapped[dt.date | None] = mapped_column(Date)
    # Kept under legal hold: erasure anonymises identifying fields instead of deleting.
    legal_hold: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    embedding: Mapped[Any] = mapped_column(BinaryVectorColumn(EMBED_DIM), nullable=True)
    embed_model: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[dt.datetime] = _timestamp()
    updated_at: Mapped[dt.datetime] = _timestamp()
    search_tsv: Mapped[Any] = _tsv("title || ' ' || text || ' ' || external_ref || ' ' || coalesce(tax_id, '')")
    __table_args__ = (
        UniqueConstraint("org_id", "kind", "external_ref"),
        CheckConstraint(one_of("kind", DocumentKind), name="document_kind_valid"),
        CheckConstraint(one_of("visibility", Visibility), name="document_visibility_valid"),
        Index("ix_documents_tsv", "search_tsv", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST),
        Index("ix_documents_title_trgm", "title", postgresql_using="gin", postgresql_with=_NO_PENDING_LIST,
              postgresql_ops={"title": "gin_trgm_ops"}),
        Index("ix_documents_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )


class LinkCode(Base):
    """A WhatsApp link code: only its HMAC is stored."""
    __tablename__ = "link_codes"
    id: Mapped[uuid.UUID] = _pk()
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    code_hmac: Mapped[str] = mapped_column(String(128), unique=True)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    used_by_phone: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[dt.datetime] = _timestamp()


class UsageLedger(Base):
    """Every model call: purpose, model, tokens and cost."""
    __tablename__ = "usage_ledger"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="SET NULL"))
    # Kept without identifiers after an erasure: message_id is set to null.
    message_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    purpose: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(String(120))
    input_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    output_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cost_usd: Mapped[Decimal] = mapped_column(Numeric(14, 8), server_default="0")
    run_tag: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (Index("ix_usage_org_day", "org_id", "created_at"), Index("ix_usage_run_tag", "run_tag"))


class MemoryTrace(Base):
    """One assembled memory block: what went into a prompt. Owned like its conversation."""
    __tablename__ = "memory_traces"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    message_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    phone: Mapped[str | None] = mapped_column(String(32))
    channel: Mapped[str | None] = mapped_column(String(30))
    block_text: Mapped[str] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (Index("ix_traces_org_created", "org_id", "created_at"),
                      Index("ix_traces_conversation", "conversation_id", "created_at"))


class TraceItem(Base):
    __tablename__ = "trace_items"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("memory_traces.id", ondelete="CASCADE"))
    # No foreign key: a trigger on memories deletes the items of deleted memories (migration
    # r6_trace_items_memory_link), so showing a memory never locks its row.
    memory_id: Mapped[uuid.UUID | None] = mapped_column()
    block: Mapped[str] = mapped_column(String(10))
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    chars: Mapped[int] = mapped_column(Integer)
    used: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("false"))
    __table_args__ = (Index("ix_trace_items_trace", "trace_id"), Index("ix_trace_items_memory", "memory_id"))


class Notification(Base):
    """What a person hears about: a background save ("learnt", with undo) or a decision on their proposal."""
    __tablename__ = "notifications"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    phone: Mapped[str | None] = mapped_column(String(32))
    conversation_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    memory_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(30))
    text: Mapped[str] = mapped_column(Text)
    data: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    created_at: Mapped[dt.datetime] = _timestamp()
    delivered_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    undone_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    __table_args__ = (Index("ix_notifications_user", "user_id", "delivered_at"),
                      Index("ix_notifications_phone", "phone", "delivered_at"))


class PrivacyRequest(Base):
    """An erasure (GDPR art. 17), access (art. 15) or portability (art. 20) request."""
    __tablename__ = "privacy_requests"
    id: Mapped[uuid.UUID] = _pk()
    kind: Mapped[str] = mapped_column(String(12))
    subject_type: Mapped[str] = mapped_column(String(20))
    # The identifier while the request is open; replaced by a digest once executed.
    subject_ref: Mapped[str] = mapped_column(String(200))
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="SET NULL"))
    requested_by: Mapped[str] = mapped_column(String(300))
    basis: Mapped[str] = mapped_column(Text, server_default="")
    verification: Mapped[str] = mapped_column(Text, server_default="")
    status: Mapped[str] = mapped_column(String(12), server_default="received")
    due_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    preview: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    receipt: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    progress: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    handled_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = _timestamp()
    updated_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (
        CheckConstraint(one_of("kind", PrivacyKind), name="privacy_kind_valid"),
        CheckConstraint(one_of("subject_type", PrivacySubjectType), name="privacy_subject_valid"),
        CheckConstraint(one_of("status", PrivacyStatus),
                        name="privacy_status_valid"),
    )


class AuditLog(Base):
    """Append-only: a trigger refuses UPDATE and DELETE."""
    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    at: Mapped[dt.datetime] = _timestamp()
    actor_user_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    actor_label: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(80))
    org_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    target_type: Mapped[str | None] = mapped_column(String(40))
    target_id: Mapped[str | None] = mapped_column(String(80))
    # Never personal data: ids, counts, kinds and reasons.
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    __table_args__ = (Index("ix_audit_at", "at"), Index("ix_audit_org_at", "org_id", "at"),
                      Index("ix_audit_action", "action"))


class JobRun(Base):
    __tablename__ = "job_runs"
    id: Mapped[uuid.UUID] = _pk()
    job: Mapped[str] = mapped_column(String(80))
    status: Mapped[str] = mapped_column(String(12), server_default="running")
    started_at: Mapped[dt.datetime] = _timestamp()
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    counts: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    error: Mapped[str | None] = mapped_column(Text)
    triggered_by: Mapped[str] = mapped_column(String(200), server_default="schedule")
    # The org an admin ran it for (only that org's rows); None: a platform-wide run.
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    __table_args__ = (Index("ix_job_runs_job_started", "job", "started_at"),
                      Index("ix_job_runs_org_started", "org_id", "started_at"))


class PolicyExclusion(Base):
    """The exclusion list: what is never learnt. Seeded by the migration; owners/admins may add org rows."""
    __tablename__ = "policy_exclusions"
    id: Mapped[uuid.UUID] = _pk()
    # Null: platform-wide (seeded); set: an org's own addition.
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    # secret (refused outright) or special (GDPR art. 9: never learnt in the background).
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(80))
    # A regular expression (Python syntax), matched case-insensitively on the message.
    pattern: Mapped[str] = mapped_column(Text)
    # An optional check run on each match: "luhn" for card numbers, "dni" for Spanish ID letters.
    validator: Mapped[str | None] = mapped_column(String(20))
    description: Mapped[str] = mapped_column(Text, server_default="")
    enabled: Mapped[bool] = mapped_column(Boolean, server_default=sql_text("true"))
    created_at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (
        UniqueConstraint("org_id", "name"),
        CheckConstraint(one_of("kind", ExclusionKind), name="policy_kind_valid"),
    )


class ApiKey(Base):
    """A per-org API key; only its SHA-256 is stored, the key is shown once."""
    __tablename__ = "api_keys"
    id: Mapped[uuid.UUID] = _pk()
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = _timestamp()
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class PlatformApiKey(Base):
    """A platform-level API key (created by a platform admin): may create organizations. SHA-256 only."""
    __tablename__ = "platform_api_keys"
    id: Mapped[uuid.UUID] = _pk()
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(20))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = _timestamp()
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class AccountToken(Base):
    """A one-time link: an invitation, a password reset or the first platform admin's setup.

    Only the SHA-256 of the token is stored; it expires and is used once (used_at)."""
    __tablename__ = "account_tokens"
    id: Mapped[uuid.UUID] = _pk()
    purpose: Mapped[str] = mapped_column(String(12))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str] = mapped_column(String(320))
    name: Mapped[str] = mapped_column(String(200), server_default="")
    # A reset: the account. An invitation: set once the person accepted.
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    org_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    role: Mapped[str | None] = mapped_column(String(10))
    permissions: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    platform_role: Mapped[str | None] = mapped_column(String(30))
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = _timestamp()
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    __table_args__ = (
        CheckConstraint("purpose in ('invite','reset','setup')", name="account_token_purpose_valid"),
        Index("ix_account_tokens_org", "org_id", "created_at"),
    )


class ConversationSummary(Base):
    """The structured summary of a conversation's older part: points with ids and cited message ids."""
    __tablename__ = "conversation_summaries"
    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    # {"points": [{"id", "section", "text", "message_ids", "retired"}], "next_id": int}
    content: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=sql_text("'{}'::jsonb"))
    # Messages up to and including this one are covered by the summary.
    covered_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    compactions: Mapped[int] = mapped_column(Integer, server_default="0")
    updated_at: Mapped[dt.datetime] = _timestamp()


class LoginAttempt(Base):
    """Failed console logins, for rate limiting by email and by address."""
    __tablename__ = "login_attempts"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(400))
    at: Mapped[dt.datetime] = _timestamp()
    __table_args__ = (Index("ix_login_attempts_key_at", "key", "at"),)
