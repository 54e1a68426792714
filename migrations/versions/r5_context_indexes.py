"""index for the memory block of a turn: the shared memories of an org by area

The core, the profile and every retriever of the related search filter memories with the ownership
rule, whose shared arm is (level = 'shared', org_id, area in the readable areas, status). Served by
the org-wide (org_id, status) index it also returned every other member's private rows and the
unreadable areas, each a heap page fetched and thrown away; this partial index returns only the
shared rows a principal may read.

Revision ID: r5_context_indexes
Revises: 0003
Create Date: 2026-11-29
"""
from alembic import op

revision = "r5_context_indexes"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("create index if not exists ix_memories_shared_area on memories (org_id, area, status) "
               "where level = 'shared'")


def downgrade() -> None:
    op.execute("drop index if exists ix_memories_shared_area")
