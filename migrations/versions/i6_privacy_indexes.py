"""indexes for erasure and retention: every foreign key a delete must check, and the subject lookups

Without them each deleted memory, message or conversation makes PostgreSQL scan the referencing
table (superseded_by, replaces_id, usage_ledger.message_id...): retention ran at ~140 rows/s.

Revision ID: i6_privacy_indexes
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op

revision = "i6_privacy_indexes"
down_revision = "0002"
branch_labels = None
depends_on = None

# (name, table, columns, partial predicate or None)
INDEXES = [
    ("ix_memories_superseded_by", "memories", "superseded_by", "superseded_by is not null"),
    ("ix_memories_replaces", "memories", "replaces_id", "replaces_id is not null"),
    ("ix_memories_author_user", "memories", "author_user_id", "author_user_id is not null"),
    ("ix_memories_decided_by", "memories", "decided_by", "decided_by is not null"),
    ("ix_notifications_memory", "notifications", "memory_id", "memory_id is not null"),
    ("ix_notifications_conversation", "notifications", "conversation_id", "conversation_id is not null"),
    ("ix_messages_user", "messages", "user_id", "user_id is not null"),
    ("ix_conversations_user", "conversations", "user_id", "user_id is not null"),
    ("ix_conversations_phone", "conversations", "phone", "phone is not null"),
    ("ix_usage_message", "usage_ledger", "message_id", "message_id is not null"),
    ("ix_traces_message", "memory_traces", "message_id", "message_id is not null"),
    ("ix_traces_user", "memory_traces", "user_id", "user_id is not null"),
    ("ix_traces_created", "memory_traces", "created_at", None),
    ("ix_link_codes_user", "link_codes", "user_id, created_at", None),
    ("ix_link_codes_expires", "link_codes", "expires_at", None),
    ("ix_phone_auth_user", "phone_authorizations", "user_id", "user_id is not null"),
    ("ix_documents_owner_user", "documents", "owner_user_id", "owner_user_id is not null"),
    ("ix_documents_contact", "documents", "contact_id", "contact_id is not null"),
    ("ix_memory_sources_memory", "memory_sources", "memory_id", None),
    ("ix_privacy_requests_due", "privacy_requests", "due_at", None),
]


def upgrade() -> None:
    for name, table, cols, where in INDEXES:
        op.execute(f"create index if not exists {name} on {table} ({cols})" + (f" where {where}" if where else ""))


def downgrade() -> None:
    for name, *_ in INDEXES:
        op.execute(f"drop index if exists {name}")
