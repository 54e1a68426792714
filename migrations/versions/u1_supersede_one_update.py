"""memories.superseded_by is checked at commit: closing a version and pointing it at its successor is one UPDATE

A supersede closed the current row (status, valid_to), inserted the new one, then pointed the old row at it
(superseded_by): two UPDATEs of the old row, each a new tuple in every index of memories, its vector in the
HNSW graph included (~0.9 ms each in the worker). The new row's id is now made before it is inserted
(domain.ids.uuid7), so the old row is closed and pointed at it in one UPDATE, before the new row exists: the
foreign key is checked at commit. ON DELETE SET NULL still acts at once (a referential action is never deferred).

Revision ID: u1_supersede_one_update
Revises: t7_bigorg7_message_date_indexes
Create Date: 2026-12-04
"""
from alembic import op

revision = "u1_supersede_one_update"
down_revision = "t7_bigorg7_message_date_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("alter table memories alter constraint memories_superseded_by_fkey deferrable initially deferred")


def downgrade() -> None:
    op.execute("alter table memories alter constraint memories_superseded_by_fkey not deferrable")
