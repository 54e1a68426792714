"""indexes for the console's lists: newest memories of an org, and the oldest pending proposals

Without them the memory list sorts every visible row of the org (a million rows: seconds) and the
review queue sorts every pending proposal; with them both read the first page in index order.

Revision ID: c5_console_indexes
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op

revision = "c5_console_indexes"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("create index if not exists ix_memories_org_status_created "
               "on memories (org_id, status, created_at, id)")
    op.execute("create index if not exists ix_memories_proposed_queue "
               "on memories (org_id, created_at, id) where status = 'proposed'")


def downgrade() -> None:
    op.execute("drop index if exists ix_memories_proposed_queue")
    op.execute("drop index if exists ix_memories_org_status_created")
