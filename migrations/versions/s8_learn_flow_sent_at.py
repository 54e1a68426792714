"""messages keep their own send time

A message imported from history, or delivered late by a channel, was dated by when memoria stored it;
relative dates ("yesterday", "el lunes") were then resolved against the wrong day. `sent_at` is the
time the person sent it (the client says so at ingest; now by default). Existing rows take their
storage time, which is what they were dated by until now.

Revision ID: s8_learn_flow_sent_at
Revises: s8_console_privacy_kinds
Create Date: 2026-12-01
"""
from alembic import op

revision = "s8_learn_flow_sent_at"
down_revision = "s8_console_privacy_kinds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("alter table messages add column if not exists sent_at timestamptz")
    op.execute("update messages set sent_at = created_at where sent_at is null")
    op.execute("alter table messages alter column sent_at set default now(), alter column sent_at set not null")


def downgrade() -> None:
    op.execute("alter table messages drop column if exists sent_at")
