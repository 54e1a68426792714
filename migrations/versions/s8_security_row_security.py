"""row security on every table with tenant or personal data; system scope only for the worker role

Until now six tables had policies, and any session of the app role could set memoria.mode to
'system' and read everything, so one SQL injection would have undone row security. Now:

- a login role `memoria_worker` (member of memoria_app, so it has its grants and its policies) is
  the only one whose 'system' scope counts: a restrictive policy on every table ANDs "not system,
  or the current role is memoria_worker" with the permissive ones. The worker, the jobs and erasure
  connect as it; memoria_app can set the setting but then sees nothing;
- every other table with tenant or personal data gets a policy (forced, so its owner obeys it too);
  tables only the system writes (outbox, login attempts, privacy requests) have a system-only one;
- trigger functions that must reach rows beyond the caller's scope run as memoria_worker.

Revision ID: s8_security_row_security
Revises: s8_security_redact
Create Date: 2026-12-01
"""
from alembic import op
from sqlalchemy import text

revision = "s8_security_row_security"
down_revision = "s8_security_redact"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"

# Read once per query (an init plan), as r7 made every policy do.
MODE = "(SELECT current_setting('memoria.mode', true))"
ORG = "(SELECT nullif(current_setting('memoria.org_id', true), '')::uuid)"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"
PHONE = "(SELECT nullif(current_setting('memoria.phone', true), ''))"
SYSTEM = f"{MODE} = 'system'"
SCOPED = f"{MODE} in ('org', 'principal')"
IS_WORKER = f"(SELECT pg_has_role(current_user, '{WORKER_ROLE}', 'MEMBER'))"

# table -> (using, with check or None for the same)
POLICIES: dict[str, tuple[str, str | None]] = {
    "organizations": (f"{SYSTEM} or ({SCOPED} and id = {ORG})", f"{SYSTEM} or ({MODE} = 'org' and id = {ORG})"),
    "users": (f"""{SYSTEM} or ({SCOPED} and (id = {USER}
                 or exists (select 1 from memberships m where m.user_id = users.id and m.org_id = {ORG})))""",
              f"{SYSTEM} or ({SCOPED} and id = {USER})"),
    "memberships": (f"{SYSTEM} or ({SCOPED} and (org_id = {ORG} or user_id = {USER}))",
                    f"{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})"),
    "api_keys": (f"{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})", None),
    "conversations": (f"""{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})
                 or ({MODE} = 'principal' and (org_id = {ORG}
                     or (org_id is null and (user_id = {USER} or phone = {PHONE}))))""", None),
    "conversation_summaries": ("exists (select 1 from conversations c where c.id = conversation_id)", None),
    "link_codes": (f"{SYSTEM} or ({SCOPED} and user_id = {USER})", None),
    "phone_authorizations": (f"""{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})
                 or ({MODE} = 'principal' and (phone = {PHONE} or user_id = {USER}))""", None),
    "notifications": (f"""{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})
                 or ({MODE} = 'principal' and (user_id = {USER} or phone = {PHONE})
                     and (org_id is null or org_id = {ORG}))""", None),
    "memory_sources": ("exists (select 1 from memories m where m.id = memory_id)", None),
    "usage_ledger": (f"{SYSTEM} or ({SCOPED} and org_id = {ORG})", None),
    # A person may read back the rows of their own actions (an insert ... returning needs it).
    "audit_log": (f"{SYSTEM} or ({MODE} = 'org' and org_id = {ORG}) or ({SCOPED} and actor_user_id = {USER})",
                  f"{SYSTEM} or ({SCOPED} and (org_id = {ORG} or (org_id is null and actor_user_id = {USER})))"),
    "job_runs": (f"{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})", f"{SYSTEM}"),
    "policy_exclusions": (f"{SYSTEM} or ({SCOPED} and (org_id is null or org_id = {ORG}))",
                          f"{SYSTEM} or ({MODE} = 'org' and org_id = {ORG})"),
    # Written and read by the system only (the outbox: also written by ingest in the writer's scope).
    "outbox": (f"{SYSTEM} or ({SCOPED} and exists (select 1 from messages m where m.id = message_id))", None),
    "login_attempts": (SYSTEM, None),
    "privacy_requests": (SYSTEM, None),
}
EXISTING = ("memories", "messages", "documents", "contacts", "memory_traces", "trace_items")


def upgrade() -> None:
    op.execute(f"""
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = '{WORKER_ROLE}') then
        create role {WORKER_ROLE} login nosuperuser nobypassrls nocreatedb nocreaterole inherit;
      end if;
    end $$;
    grant {APP_ROLE} to {WORKER_ROLE};
    """)
    for table, (using, check) in POLICIES.items():
        op.execute(f"""
        alter table {table} enable row level security;
        alter table {table} force row level security;
        create policy {table}_ownership on {table} for all to {APP_ROLE}
          using ({using}) with check ({check or using});
        """)
    for table in (*EXISTING, *POLICIES):
        op.execute(f"""
        create policy {table}_system_is_the_worker on {table} as restrictive for all to {APP_ROLE}
          using ({MODE} is distinct from 'system' or {IS_WORKER})
          with check ({MODE} is distinct from 'system' or {IS_WORKER});
        """)
    # Triggers that reach beyond the caller's scope run as the worker, in system scope.
    op.execute("""
    create or replace function memberships_revoke_sessions() returns trigger
      language plpgsql security definer set search_path = public, pg_temp as $$
    declare
      scope text := current_setting('memoria.mode', true);
    begin
      perform set_config('memoria.mode', 'system', true);
      if tg_op = 'DELETE' then
        update users set session_version = session_version + 1 where id = old.user_id;
      elsif new.role is distinct from old.role or new.left_at is distinct from old.left_at
            or new.permissions is distinct from old.permissions or new.user_id is distinct from old.user_id then
        update users set session_version = session_version + 1 where id in (old.user_id, new.user_id);
      end if;
      perform set_config('memoria.mode', coalesce(scope, ''), true);
      return null;
    end $$;
    """)
    for fn in ("memberships_revoke_sessions()", "memories_forget_trace_items()"):
        op.execute(f"alter function {fn} security definer; alter function {fn} owner to {WORKER_ROLE}; "
                   f"revoke all on function {fn} from public")


def downgrade() -> None:
    bind = op.get_bind()
    for table in (*EXISTING, *POLICIES):
        op.execute(f"drop policy if exists {table}_system_is_the_worker on {table}")
    for table in POLICIES:
        op.execute(f"drop policy if exists {table}_ownership on {table}; "
                   f"alter table {table} no force row level security; alter table {table} disable row level security;")
    owner = bind.execute(text("select current_user")).scalar_one()
    for fn in ("memberships_revoke_sessions()", "memories_forget_trace_items()"):
        op.execute(f'alter function {fn} owner to "{owner}"; alter function {fn} security invoker')
    op.execute(f"revoke {APP_ROLE} from {WORKER_ROLE}")
