"""indexes for the date retriever's messages: a principal's messages sent in a span, read from ranges

The date retriever (memory_core/reading/search.py, _date_stmt) finds the messages sent in the span a query
names ("ayer", "in September"). With no index on sent_at, a big org's principal read the whole table
(a sequential scan of 60,000 messages, 120 ms, for none in the span). The visibility rule's arms are each a
range of one of these: the org's messages shared in it (org_id, sent_at) and the person's own (user_id,
sent_at); a number's own are few and read from ix_messages_phone. Only rows not deleted, as the retriever reads.

Revision ID: t7_bigorg7_message_date_indexes
Revises: t7_bigorg7_subject_indexes
Create Date: 2026-12-02
"""
from alembic import op

revision = "t7_bigorg7_message_date_indexes"
down_revision = "t7_bigorg7_subject_indexes"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_messages_sent_org": "(org_id, sent_at) where deleted_at is null and org_id is not null",
    "ix_messages_sent_user": "(user_id, sent_at) where deleted_at is null and user_id is not null",
}


def upgrade() -> None:
    for name, shape in INDEXES.items():
        op.execute(f"create index if not exists {name} on messages {shape}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"drop index if exists {name}")
