"""indexes for the date retriever's arms: a principal's memories of a span read from a range, in order

The date retriever (memory_core/reading/search.py, _date_memory_stmt) reads the memories dated inside
the span a query names ("ayer", "in September") arm by arm of the visibility rule: the org's rows and
the person's own (by user or by number), each by event date and by the moment it was said. Without
these, a principal of a big org fetched every visible row (27,000 heap rows for 43 matches).
- said: (owner, valid_from, id) for active rows, one per owner column and one for the org;
- events: (owner, event_date) for active rows with an event date (few: these are small).
Each btree led by the org or the owner is that org's (person's) own range: no per-org copy is needed.

Revision ID: t5_bigorg17_date_indexes
Revises: t3_perf_bigorg_profile_indexes
Create Date: 2026-12-02
"""
from alembic import op

revision = "t5_bigorg17_date_indexes"
down_revision = "t3_perf_bigorg_profile_indexes"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_memories_said_org": "(org_id, valid_from, id) where status = 'active' and org_id is not null",
    "ix_memories_said_user": "(owner_user_id, valid_from, id) where status = 'active' and owner_user_id is not null",
    "ix_memories_said_phone": "(owner_phone, valid_from, id) where status = 'active' and owner_phone is not null",
    "ix_memories_event_org": "(org_id, event_date) where status = 'active' and event_date is not null "
                             "and org_id is not null",
    "ix_memories_event_user": "(owner_user_id, event_date) where status = 'active' and event_date is not null "
                              "and owner_user_id is not null",
    "ix_memories_event_phone": "(owner_phone, event_date) where status = 'active' and event_date is not null "
                               "and owner_phone is not null",
}


def upgrade() -> None:
    for name, shape in INDEXES.items():
        op.execute(f"create index if not exists {name} on memories {shape}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"drop index if exists {name}")
