"""a person may pause learning: users.learning_paused_at

While it is set, the worker (and the explicit "remember that" path) learns nothing from that
person's messages; messages are still stored and indexed for search.

Revision ID: s8_my_memory_pause
Revises: r7_policy_settings_once
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa

revision = "s8_my_memory_pause"
down_revision = "r7_policy_settings_once"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("learning_paused_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("users", "learning_paused_at")
