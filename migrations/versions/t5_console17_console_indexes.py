"""console indexes shaped like the row-security policies and the pages' order (issue 17)

- the review history (proposals decided), for an admin (org, decided_at, id) and for a member (org, author,
  decided_at, id): the page and its capped total read only decided proposals, in the page's order, where they
  read the author's 66,000 rows or the org's (a member's history page: 218 ms a statement at 100k proposals);
- the pending counters per kind: (org, kind, author, area) holding every column the memories policies read,
  so counting up to 1,001 rows is an index-only scan (no heap page per proposal: 25-47 ms a kind at 100k);
- My memory's own lists: (owner, level, created_at, id) of active rows, newest first, where they read the
  person's 4,000 private rows and sorted them (26 ms);
- the contacts list by name or by date, read in order where the whole org's contacts were sorted;
- the platform's list of organizations: each org's messages since a date and its last one, from
  (org_id, created_at), where memoria_org_activity read every message of the org (96 ms at 50,000);
- the filter lists of the audit log (actions, people), the traces and the job runs (`paging.distinct_values`, a loose index
  scan): one index probe per distinct value instead of DISTINCT over every row of the org (110-160 ms).

Revision ID: t5_console17_console_indexes
Revises: t3_perf_bigorg_profile_indexes
Create Date: 2026-12-02
"""
from alembic import op

revision = "t5_console17_console_indexes"
down_revision = "t3_perf_bigorg_profile_indexes"
branch_labels = None
depends_on = None

DECIDED = "proposal_kind is not null and decided_at is not null"
INDEXES = {
    "ix_memories_decided": f"memories (org_id, decided_at, id) where {DECIDED}",
    "ix_memories_decided_author": f"memories (org_id, author_user_id, decided_at, id) where {DECIDED}",
    # Every column the memories policies read (org_id, level, status, owner_user_id, owner_phone, area, id):
    # row security is checked on the index tuple, so the count never visits the table.
    "ix_memories_proposed_counts": "memories (org_id, proposal_kind, author_user_id, area) "
                                   "include (level, status, owner_user_id, owner_phone, id) where status = 'proposed'",
    # My memory's personal and private lists, newest first (access.memory_level_arm): was every own row, sorted.
    "ix_memories_own_created": "memories (owner_user_id, level, created_at, id) "
                               "where status = 'active' and owner_user_id is not null",
    # The contacts list in its sort orders (and the memory list's contact filter, by name).
    "ix_contacts_org_name": "contacts (org_id, name, id)",
    "ix_contacts_org_created": "contacts (org_id, created_at, id)",
    # The platform's list of organizations (memoria_org_activity): messages since a day and the last one, per org.
    "ix_messages_org_created": "messages (org_id, created_at)",
    "ix_audit_org_action": "audit_log (org_id, action)",
    "ix_audit_org_actor": "audit_log (org_id, actor_user_id) where actor_user_id is not null",
    "ix_audit_actor": "audit_log (actor_user_id) where actor_user_id is not null",
    "ix_traces_org_channel": "memory_traces (org_id, channel) where channel is not null",
    "ix_traces_channel": "memory_traces (channel) where channel is not null",
    "ix_job_runs_org_job": "job_runs (org_id, job)",
}


def upgrade() -> None:
    for name, spec in INDEXES.items():
        op.execute(f"create index if not exists {name} on {spec}")


def downgrade() -> None:
    for name in INDEXES:
        op.execute(f"drop index if exists {name}")
