"""Memories: the last day of an event that spans days

"La oficina cierra del 10 al 24 de agosto" was an event on the 10th only: from the 11th the block stopped
serving it ("past events drop out") while the office was still closed. `event_until` holds the span's last day
(null for an event of one day); an event is past once that day is.

Revision ID: w3_event_until
Revises: w2_special_patterns
Create Date: 2026-12-06
"""
import sqlalchemy as sa
from alembic import op

revision = "w3_event_until"
down_revision = "w2_special_patterns"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("event_until", sa.Date(), nullable=True))


def downgrade() -> None:
    op.drop_column("memories", "event_until")
