"""a conversation's sources ordered by when they were added: its recent subjects read from a range

Before writing a fact, the worker reads what the conversation has just been about: the subjects of the sources
from the messages sent in the half hour before the message (memory_core/learning/subjects.py). It read every
source the conversation ever had and kept the window's, so a long conversation (a WhatsApp number's lasts for
years) made each of its facts dearer (bench/long_conversation.py: the worker's read p50 7 ms with no history,
28.6-48.3 ms with 3,000 earlier sources; now 10.0-15.1). A source is added when its message is learnt, after it
was sent, so the window's are among those added since it began: the conversation's index now holds that time,
and the read is a range of it.

Revision ID: v3_recent_subjects_window
Revises: v2_trace_check_as_function
Create Date: 2026-12-05
"""
from alembic import op

revision = "v3_recent_subjects_window"
down_revision = "v2_trace_check_as_function"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("drop index if exists ix_memory_sources_conversation")
    op.execute("create index ix_memory_sources_conversation on memory_sources (conversation_id, created_at)")


def downgrade() -> None:
    op.execute("drop index if exists ix_memory_sources_conversation")
    op.execute("create index ix_memory_sources_conversation on memory_sources (conversation_id)")
