"""outbox: next_attempt_at, the backoff of a failed message

Revision ID: p3_outbox_retry
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = "p3_outbox_retry"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("outbox", sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("outbox", "next_attempt_at")
