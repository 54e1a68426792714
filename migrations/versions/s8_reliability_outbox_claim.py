"""outbox: conversation_id and partial indexes, so a claim finds each conversation's oldest pending row
through an index instead of probing every pending row of the conversation through messages; and
memoria_outbox_backlog(), the platform-wide backlog (count and oldest row's time, nothing else) that
/readyz and the Jobs page read in any scope

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
    # The gate's context, the assistant's last turn before a message: without this index a long run of
    # user messages (a backlog) is walked back to its start for every message.
    op.create_index("ix_messages_assistant_turns", "messages", ["conversation_id", "created_at", "id"],
                    postgresql_where=sa.text("role = 'assistant' and deleted_at is null"))
    # Security definer: the web's role reads the backlog's size and age whatever its row-security scope,
    # and nothing else of the outbox (no ids, no messages, no orgs).
    op.execute("""
        create function memoria_outbox_backlog(out pending bigint, out oldest timestamptz)
        language sql stable security definer set search_path = public as $$
          select (select count(*) from outbox where processed_at is null),
                 (select created_at from outbox where processed_at is null order by id limit 1)
        $$""")
    op.execute("revoke all on function memoria_outbox_backlog() from public")
    op.execute("grant execute on function memoria_outbox_backlog() to memoria_app")


def downgrade() -> None:
    op.execute("drop function memoria_outbox_backlog()")
    op.drop_index("ix_messages_assistant_turns", table_name="messages")
    op.drop_index("ix_outbox_retry", table_name="outbox")
    op.drop_index("ix_outbox_first_try", table_name="outbox")
    op.drop_constraint("fk_outbox_conversation", "outbox", type_="foreignkey")
    op.drop_column("outbox", "conversation_id")
