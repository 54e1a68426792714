"""outbox: conversation_id and partial indexes, so a claim finds each conversation's oldest pending row
through an index instead of probing every pending row of the conversation through messages

Revision ID: s8_reliability_outbox_claim
Revises: r7_policy_settings_once
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

revision = "s8_reliability_outbox_claim"
down_revision = "r7_policy_settings_once"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("outbox", sa.Column("conversation_id", sa.Uuid(), nullable=True))
    op.execute("update outbox o set conversation_id = m.conversation_id from messages m where m.id = o.message_id")
    op.alter_column("outbox", "conversation_id", nullable=False)
    op.create_foreign_key("fk_outbox_conversation", "outbox", "conversations", ["conversation_id"], ["id"],
                          ondelete="CASCADE")
    # First tries, by conversation then age: DISTINCT ON reads each conversation's head from it.
    op.create_index("ix_outbox_first_try", "outbox", ["conversation_id", "id"],
                    postgresql_where=sa.text("processed_at is null and attempts = 0"))
    # Failed rows waiting for their retry: few, found without walking the backlog.
    op.create_index("ix_outbox_retry", "outbox", ["next_attempt_at"],
                    postgresql_where=sa.text("processed_at is null and attempts > 0"))


def downgrade() -> None:
    op.drop_index("ix_outbox_retry", table_name="outbox")
    op.drop_index("ix_outbox_first_try", table_name="outbox")
    op.drop_constraint("fk_outbox_conversation", "outbox", type_="foreignkey")
    op.drop_column("outbox", "conversation_id")
