"""row-level security on memory traces: a trace is owned like the conversation it belongs to

A trace's block text holds the memories that went into a prompt, the person's own among them, so it
gets the same second wall as messages: the principal sees the traces of its own conversations, an org
scope those of its org, the system scope all. Trace items follow their trace.

Revision ID: r4_trace_rls
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op

revision = "r4_trace_rls"
down_revision = "0002"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
S_MODE = "current_setting('memoria.mode', true)"
S_ORG = "nullif(current_setting('memoria.org_id', true), '')::uuid"
S_USER = "nullif(current_setting('memoria.user_id', true), '')::uuid"
S_PHONE = "nullif(current_setting('memoria.phone', true), '')"

TRACES = f"""
  {S_MODE} = 'system'
  or ({S_MODE} = 'org' and org_id = {S_ORG})
  or ({S_MODE} = 'principal' and (user_id = {S_USER} or phone = {S_PHONE})
      and (org_id is null or org_id = {S_ORG}))
"""
# The subquery on memory_traces is itself filtered by the policy above.
ITEMS = "exists (select 1 from memory_traces t where t.id = trace_id)"


def upgrade() -> None:
    for table, rule in (("memory_traces", TRACES), ("trace_items", ITEMS)):
        op.execute(f"""
        grant select, insert, update, delete on {table} to {APP_ROLE};
        alter table {table} enable row level security;
        alter table {table} force row level security;
        create policy {table}_ownership on {table} for all to {APP_ROLE} using ({rule}) with check ({rule});
        """)
    op.execute(f"grant usage, select on sequence trace_items_id_seq to {APP_ROLE}")


def downgrade() -> None:
    for table in ("trace_items", "memory_traces"):
        op.execute(f"drop policy if exists {table}_ownership on {table}; "
                   f"alter table {table} no force row level security; alter table {table} disable row level security;")
