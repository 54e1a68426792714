"""Memories: an event's last day comes after its first, within EVENT_SPAN_MAX_DAYS

A date search reads events from EVENT_SPAN_MAX_DAYS before the span it asks about, so that "what is on the 15th?"
finds "closed from the 10th to the 24th"; the table holds no span it could not find that way. A last day that
breaks the rule is dropped (the event keeps its first day).

Revision ID: w4_event_span_check
Revises: w3_event_until
Create Date: 2026-12-06
"""
from alembic import op

revision = "w4_event_span_check"
down_revision = "w3_event_until"
branch_labels = None
depends_on = None

EVENT_SPAN_MAX_DAYS = 183  # memory_core.domain.dates, as of this revision
RULE = f"event_until is null or (event_until > event_date and event_until <= event_date + {EVENT_SPAN_MAX_DAYS})"


def upgrade() -> None:
    op.execute(f"update memories set event_until = null where not ({RULE})")
    op.create_check_constraint("memory_event_span_valid", "memories", RULE)


def downgrade() -> None:
    op.drop_constraint("memory_event_span_valid", "memories", type_="check")
