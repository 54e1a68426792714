"""the platform scope for platform admins, and the privacy officer's writes, so the web never needs system scope

t1_sysscope_platform_scope let staff and privacy officers read in the "platform" scope. This gives each
platform role exactly what its console pages write, checked against the users table in the database
(`memoria_platform_role`), so the web's Database needs no worker connection:

- platform admins read every organization and person (to list them, and to find an account by email),
  create and suspend organizations, change a person's platform role (a trigger refuses any other column
  in the platform scope), issue their own invitations, manage platform API keys, and write (and read
  back) their own audit rows. Org data stays out of reach: an org's size and activity come from
  `memoria_org_activity`, counts only;
- privacy officers record and move their requests (insert, update); whether a contact or conversation
  id exists comes from `memoria_privacy_subject_exists`, a yes or no. Preview, execution and export read
  every table: the worker runs them in system scope (jobs/privacy.py).

Both functions answer only a platform-scope caller with that role, or a connection of the worker role.

Revision ID: t3_sec_platform_scope
Revises: t2_merge_language_scopes
Create Date: 2026-12-01
"""
from alembic import op

revision = "t3_sec_platform_scope"
down_revision = "t2_merge_language_scopes"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
MODE = "(SELECT current_setting('memoria.mode', true))"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"
ROLE = f"(SELECT memoria_platform_role({USER}))"


def _arm(role: str, extra: str | None = None) -> str:
    return f"({MODE} = 'platform' and {ROLE} = '{role}'{' and ' + extra if extra else ''})"


ADMIN = "platform_admin"
OFFICER = "privacy_officer"
# (policy name, table, command, role, using, with check): permissive, ORed with each table's others.
POLICIES = (
    ("organizations_platform_admin_read", "organizations", "select", ADMIN, None, None),
    ("organizations_platform_admin_create", "organizations", "insert", ADMIN, None, None),
    ("organizations_platform_admin_suspend", "organizations", "update", ADMIN, None, None),
    ("users_platform_admin_read", "users", "select", ADMIN, None, None),
    ("users_platform_admin_role", "users", "update", ADMIN, None, None),
    ("platform_api_keys_platform_admin_read", "platform_api_keys", "select", ADMIN, None, None),
    ("platform_api_keys_platform_admin_create", "platform_api_keys", "insert", ADMIN, None, f"created_by = {USER}"),
    ("platform_api_keys_platform_admin_revoke", "platform_api_keys", "update", ADMIN, None, None),
    ("account_tokens_platform_admin_read", "account_tokens", "select", ADMIN, f"created_by = {USER}", None),
    ("account_tokens_platform_admin_invite", "account_tokens", "insert", ADMIN, None,
     f"purpose = 'invite' and created_by = {USER}"),
    ("audit_log_platform_admin_read", "audit_log", "select", ADMIN, f"actor_user_id = {USER}", None),
    ("audit_log_platform_admin_write", "audit_log", "insert", ADMIN, None, f"actor_user_id = {USER}"),
    ("privacy_requests_officer_intake", "privacy_requests", "insert", OFFICER, None, None),
    ("privacy_requests_officer_steps", "privacy_requests", "update", OFFICER, None, None),
)

# coalesce: a person without a platform role has a null one, and "not null" would let them through.
ALLOWED = """coalesce(pg_has_role(session_user, 'memoria_worker', 'MEMBER')
            or (caller = 'platform' and memoria_platform_role(
                  nullif(current_setting('memoria.user_id', true), '')::uuid) = '{role}'), false)"""


def upgrade() -> None:
    for name, table, command, role, using, check in POLICIES:
        clauses = ""
        if command != "insert":
            clauses += f" using ({_arm(role, using)})"
        if command != "select":
            clauses += f" with check ({_arm(role, check)})"
        op.execute(f"create policy {name} on {table} for {command} to {APP_ROLE}{clauses}")
    # In the platform scope a person's row changes only in its platform role (and the session version the
    # role change bumps): a platform admin's scope cannot set anyone's password, email or phone.
    op.execute("""
    create or replace function users_platform_scope_guard() returns trigger language plpgsql as $$
    begin
      if current_setting('memoria.mode', true) = 'platform'
         and to_jsonb(new) - 'platform_role' - 'session_version' is distinct from
             to_jsonb(old) - 'platform_role' - 'session_version' then
        raise exception 'only the platform role of a person changes in the platform scope'
          using errcode = 'insufficient_privilege';
      end if;
      return new;
    end $$;
    create trigger users_platform_scope_guard before update on users
      for each row execute function users_platform_scope_guard();
    """)
    op.execute(f"""
    create or replace function memoria_org_activity(p_since timestamptz)
      returns table (org_id uuid, members bigint, messages_since bigint, last_message_at timestamptz)
      language plpgsql security definer set search_path = public, pg_temp as $$
    -- Each org's size and activity, counts only, for the platform admin's list of organizations.
    declare caller text := current_setting('memoria.mode', true);
    begin
      if not {ALLOWED.format(role=ADMIN)} then
        return;
      end if;
      perform set_config('memoria.mode', 'system', true);
      return query
        select o.id,
               (select count(*) from memberships m where m.org_id = o.id and m.left_at is null),
               (select count(*) from messages g where g.org_id = o.id and g.created_at >= p_since),
               (select max(g.created_at) from messages g where g.org_id = o.id)
        from organizations o;
      perform set_config('memoria.mode', coalesce(caller, ''), true);
    end $$;
    create or replace function memoria_privacy_subject_exists(p_type text, p_id uuid) returns boolean
      language plpgsql security definer set search_path = public, pg_temp as $$
    -- Whether a privacy request's contact or conversation exists: yes or no, nothing of it.
    declare caller text := current_setting('memoria.mode', true); found boolean := false;
    begin
      if not {ALLOWED.format(role=OFFICER)} then
        return false;
      end if;
      perform set_config('memoria.mode', 'system', true);
      if p_type = 'contact' then
        select exists (select 1 from contacts where id = p_id) into found;
      elsif p_type = 'conversation' then
        select exists (select 1 from conversations where id = p_id) into found;
      end if;
      perform set_config('memoria.mode', coalesce(caller, ''), true);
      return found;
    end $$;
    """)
    for fn in ("memoria_org_activity(timestamptz)", "memoria_privacy_subject_exists(text, uuid)"):
        op.execute(f"alter function {fn} owner to {WORKER_ROLE}; revoke all on function {fn} from public; "
                   f"grant execute on function {fn} to {APP_ROLE}")


def downgrade() -> None:
    op.execute("drop function if exists memoria_privacy_subject_exists(text, uuid)")
    op.execute("drop function if exists memoria_org_activity(timestamptz)")
    op.execute("drop trigger if exists users_platform_scope_guard on users")
    op.execute("drop function if exists users_platform_scope_guard()")
    for name, table, *_ in POLICIES:
        op.execute(f"drop policy if exists {name} on {table}")
