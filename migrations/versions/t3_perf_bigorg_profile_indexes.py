"""indexes ordered like the profile: the core and profile candidates read in index order, cut at 300

The memory block's candidate query ranked every visible row to keep 300 (36,000 for a member of a big
org). These btree indexes hold active rows in the profile's order per arm of the visibility rule, so
each arm reads its first 300 and stops (memory_core/reading/profile_query.py, which renders the same
expressions: keep the two texts identical, tests/test_profile_query.py checks the plan):
- shared rows of an org, one area at a time: (org_id, area, pinned desc, group, confidence desc,
  valid_from desc, id);
- a person's own rows by user or by number: (owner, core rank, pinned desc, group, ...).
And the console's review queue for a member: their own pending proposals, (org_id, author_user_id,
created_at, id) where status = 'proposed'.

Revision ID: t3_perf_bigorg_profile_indexes
Revises: t4_merge_session5
Create Date: 2026-12-01
"""
from alembic import op

revision = "t3_perf_bigorg_profile_indexes"
down_revision = "t4_merge_session5"
branch_labels = None
depends_on = None

CORE_RANK = ("CASE WHEN level = 'personal' AND subject = 'self' AND category IN ('person', 'preference') "
             "AND NOT starts_with(attribute, 'nota_') AND NOT starts_with(attribute, 'note_') THEN 0 ELSE 1 END")
GROUP = ("CASE WHEN category = 'person' THEN 1 WHEN category = 'preference' THEN 1 WHEN category = 'company' THEN 2 "
         "WHEN category = 'customer' THEN 3 WHEN category = 'supplier' THEN 3 WHEN category = 'sheet' THEN 3 "
         "WHEN category = 'event' THEN 4 ELSE 5 END")
ORDER = f"pinned desc, ({GROUP}), confidence desc, valid_from desc, id"


def upgrade() -> None:
    op.execute(f"create index if not exists ix_memories_profile_shared on memories (org_id, area, {ORDER}) "
               "where status = 'active' and level = 'shared'")
    op.execute(f"create index if not exists ix_memories_profile_own_user on memories "
               f"(owner_user_id, ({CORE_RANK}), {ORDER}) where status = 'active' and owner_user_id is not null")
    op.execute(f"create index if not exists ix_memories_profile_own_phone on memories "
               f"(owner_phone, ({CORE_RANK}), {ORDER}) where status = 'active' and owner_phone is not null")


    # The review queue of a member: their own pending proposals in the queue's order (review/service.py).
    op.execute("create index if not exists ix_memories_proposed_author on memories (org_id, author_user_id, "
               "created_at, id) where status = 'proposed'")


def downgrade() -> None:
    for name in ("ix_memories_proposed_author", "ix_memories_profile_shared", "ix_memories_profile_own_user", "ix_memories_profile_own_phone"):
        op.execute(f"drop index if exists {name}")
