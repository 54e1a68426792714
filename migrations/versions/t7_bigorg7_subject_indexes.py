"""indexes for the memories of the subjects a conversation named, read in the related section's order

The memory block offers the memories of each subject the conversation named (a contact, a name) after the
message's own hits (memory_core/reading/subject_query.py). Read as one query over the whole visibility
rule, a big org's principal fetched every visible row of those subjects to sort them and keep a few
(6,980 rows, 130 ms, for two customers of a 37,000-memory org). These hold active rows in that order:
- an org's rows of one subject: (org_id, subject, pinned desc, confidence desc, valid_from desc, id),
  read subject by subject, in order, until the few visible ones are found;
- a person's personal rows of one subject by user or by number: (owner, subject) (they are few).

Revision ID: t7_bigorg7_subject_indexes
Revises: t5_merge_session6
Create Date: 2026-12-02
"""
from alembic import op

revision = "t7_bigorg7_subject_indexes"
down_revision = "t5_merge_session6"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_memories_subject_org": "(org_id, subject, pinned desc, confidence desc, valid_from desc, id) "
                               "where status = 'active' and org_id is not null",
    "ix_memories_subject_user": "(owner_user_id, subject) where status = 'active' and level = 'personal' "
                                "and owner_user_id is not null",
    "ix_memories_subject_phone": "(owner_phone, subject) where status = 'active' and level = 'personal' "
                                 "and owner_phone is not null",
}


def upgrade() -> None:
    for name, shape in INDEXES.items():
        op.execute(f"create index if not exists {name} on memories {shape}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"drop index if exists {name}")
