"""a "platform" row-security scope for staff and privacy officers' console pages, instead of system scope

The scope names the signed-in person (memoria.user_id); each table's policy gains one arm that lets it
through only for the platform roles that may read that table, checked against the users table by a
SECURITY DEFINER function (`memoria_platform_role`), so setting the mode alone, or naming a person
without that role, shows nothing. Staff read organizations, people, job runs, usage, traces (with the
memories a trace holds) and the audit log; privacy officers read organizations, people, the audit log
and privacy requests. The only write it allows is the audit row of the viewer's own view. Everything
else (intake, preview, execution, export) still runs in system scope.

Revision ID: t1_sysscope_platform_scope
Revises: t1_sysscope_definer_lookups
Create Date: 2026-12-01
"""
from alembic import op

revision = "t1_sysscope_platform_scope"
down_revision = "t1_sysscope_definer_lookups"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
MODE = "(SELECT current_setting('memoria.mode', true))"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"
ROLE = f"(SELECT memoria_platform_role({USER}))"

STAFF = ("staff",)
OFFICER = ("privacy_officer",)
BOTH = ("staff", "privacy_officer")
# table -> (platform roles that read it, extra condition on the row or None)
READS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "organizations": (BOTH, None),
    "users": (BOTH, None),
    "job_runs": (STAFF, None),
    "usage_ledger": (STAFF, None),
    "memory_traces": (STAFF, None),
    "trace_items": (STAFF, None),
    "memories": (STAFF, "exists (select 1 from trace_items ti where ti.memory_id = memories.id)"),
    "audit_log": (BOTH, None),
    "privacy_requests": (OFFICER, None),
}


def _arm(roles: tuple[str, ...], extra: str | None = None) -> str:
    names = ", ".join(f"'{r}'" for r in roles)
    return f"({MODE} = 'platform' and {ROLE} in ({names}){' and ' + extra if extra else ''})"


def upgrade() -> None:
    op.execute(f"""
    create or replace function memoria_platform_role(p_user uuid) returns text
      language plpgsql security definer set search_path = public, pg_temp as $$
    -- The platform role of a person (or null): what the platform scope's policies let through.
    declare caller text := current_setting('memoria.mode', true); found text;
    begin
      perform set_config('memoria.mode', 'system', true);
      select u.platform_role into found from users u where u.id = p_user;
      perform set_config('memoria.mode', coalesce(caller, ''), true);
      return found;
    end $$;
    alter function memoria_platform_role(uuid) owner to {WORKER_ROLE};
    revoke all on function memoria_platform_role(uuid) from public;
    grant execute on function memoria_platform_role(uuid) to {APP_ROLE};
    """)
    for table, (roles, extra) in READS.items():
        # A permissive policy of its own, for reads only: PostgreSQL ORs it with the table's others.
        op.execute(f"create policy {table}_platform on {table} for select to {APP_ROLE} using ({_arm(roles, extra)})")
    # The one write: the audit row of the viewer's own view ("staff.view.*").
    op.execute(f"create policy audit_log_platform_view on audit_log for insert to {APP_ROLE} "
               f"with check ({_arm(BOTH)} and actor_user_id = {USER})")


def downgrade() -> None:
    op.execute("drop policy if exists audit_log_platform_view on audit_log")
    for table in READS:
        op.execute(f"drop policy if exists {table}_platform on {table}")
    op.execute("drop function if exists memoria_platform_role(uuid)")
