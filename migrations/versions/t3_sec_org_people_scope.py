"""an org's owners, admins and API keys manage its people in the org's scope, not in system scope

What people management did as the worker becomes something the org scope may do, and no more:

- SECURITY DEFINER functions, owned by memoria_worker, each answering or doing one thing for the
  caller's own org only (mode 'org' and memoria.org_id = p_org), or for the worker in system scope:
  whether an account belongs to this org alone (`memoria_account_only_in`), a new account made a member
  of this org at once, or null when the email already has an account (`memoria_add_new_member`), the
  email and name of an account this org alone holds (`memoria_rename_account`), and the private
  memories of a member leaving, counted or deleted (`memoria_leaving_private`: the org scope never
  sees another member's private memories, so it cannot count or delete them itself);
- one-time links (system-only until now): the org scope reads and issues invitations to its own org,
  and the password-reset links its operator issues for accounts that belong to its org alone.

- a platform API key works in a 'platform_key' scope naming the key (memoria.user_id) with its proof
  (memoria.proof, the SHA-256 of the key presented, checked against the stored one by
  `memoria_platform_key_active`, so a key's id alone opens nothing). It may read, create and rename
  organizations and count their members, issue an owner's invitation, create an org's API key, and
  write (and read back) its own audit rows, nothing else. (A platform key may already mint a key for
  any org, so reading memberships is no wider than what it holds.)

Another org's people stay invisible: an email of another org's person only tells the caller that it
is taken (as before), and no function reads or changes anything outside the caller's org.

Revision ID: t3_sec_org_people_scope
Revises: t2_merge_language_scopes
Create Date: 2026-12-01
"""
from alembic import op

revision = "t3_sec_org_people_scope"
down_revision = "t2_merge_language_scopes"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
MODE = "(SELECT current_setting('memoria.mode', true))"
ORG = "(SELECT nullif(current_setting('memoria.org_id', true), '')::uuid)"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"

# Read before entering system scope: the caller acts for p_org (its org scope), or is the worker.
CALLER = """caller text := current_setting('memoria.mode', true);
      caller_org uuid := nullif(current_setting('memoria.org_id', true), '')::uuid;"""
MAY_ACT = (f"((caller = 'org' and caller_org = p_org) "
           f"or (caller = 'system' and pg_has_role(session_user, '{WORKER_ROLE}', 'MEMBER')))")
REFUSE = ("raise exception 'not permitted outside the caller''s own org' using errcode = '42501';")
ENTER = "perform set_config('memoria.mode', 'system', true);"
LEAVE = "perform set_config('memoria.mode', coalesce(caller, ''), true);"

FUNCTIONS = {
    "memoria_account_only_in(uuid, uuid)": ("p_user uuid, p_org uuid", f"""
    returns boolean language plpgsql as $$
    -- Whether the account is a current member of p_org and of no other org, with no platform role: only
    -- then may the org change its email or hand out a link that sets its password.
    declare {CALLER} found boolean;
    begin
      if not {MAY_ACT} then return false; end if;
      {ENTER}
      select u.platform_role is null
             and exists (select 1 from memberships m where m.user_id = u.id and m.org_id = p_org
                         and m.left_at is null)
             and not exists (select 1 from memberships m where m.user_id = u.id and m.org_id <> p_org
                             and m.left_at is null)
        into found from users u where u.id = p_user;
      {LEAVE}
      return coalesce(found, false);
    end $$"""),
    "memoria_add_new_member(uuid, text, text, text, jsonb, text)": (
        "p_org uuid, p_email text, p_name text, p_role text, p_permissions jsonb, p_external_id text", f"""
    returns uuid language plpgsql as $$
    -- A new account (no password) for an email nobody has, made a member of p_org in the same statement:
    -- its id, or null when the email already has an account (the caller says so, nothing else).
    declare {CALLER} new_id uuid;
    begin
      if not {MAY_ACT} then {REFUSE} end if;
      {ENTER}
      if not exists (select 1 from users u where lower(u.email) = lower(p_email)) then
        insert into users (email, name) values (p_email, p_name) returning id into new_id;
        insert into memberships (org_id, user_id, role, permissions, external_id)
          values (p_org, new_id, p_role, coalesce(p_permissions, '{{}}'::jsonb), p_external_id);
      end if;
      {LEAVE}
      return new_id;
    end $$"""),
    "memoria_rename_account(uuid, uuid, text, text)": ("p_org uuid, p_user uuid, p_email text, p_name text", f"""
    returns text language plpgsql as $$
    -- Set the email and name of an account p_org alone holds: 'ok', 'elsewhere' (the account is used
    -- outside the org, or is the platform's) or 'taken' (another account has that email).
    declare {CALLER} outcome text;
    begin
      if not {MAY_ACT} then {REFUSE} end if;
      if not memoria_account_only_in(p_user, p_org) then return 'elsewhere'; end if;
      {ENTER}
      if exists (select 1 from users u where lower(u.email) = lower(p_email) and u.id <> p_user) then
        outcome := 'taken';
      else
        update users set email = p_email, name = p_name where id = p_user;
        outcome := 'ok';
      end if;
      {LEAVE}
      return outcome;
    end $$"""),
    "memoria_leaving_private(uuid, uuid, boolean)": ("p_org uuid, p_user uuid, p_apply boolean", f"""
    returns bigint language plpgsql as $$
    -- The private memories (every version) of p_user in p_org: counted while the membership is current
    -- (the removal preview), deleted once it has ended (p_apply, after left_at was set). No rows leave.
    declare {CALLER} ended timestamptz; member boolean; n bigint;
    begin
      if not {MAY_ACT} then {REFUSE} end if;
      {ENTER}
      select true, m.left_at into member, ended from memberships m where m.org_id = p_org and m.user_id = p_user;
      if member is null or (p_apply and ended is null) or (not p_apply and ended is not null) then
        {LEAVE}
        return 0;
      end if;
      if p_apply then
        delete from memories where org_id = p_org and level = 'private' and owner_user_id = p_user;
        get diagnostics n = row_count;
      else
        select count(*) into n from memories where org_id = p_org and level = 'private' and owner_user_id = p_user;
      end if;
      {LEAVE}
      return n;
    end $$"""),
}

# One-time links the org scope reads and issues: invitations to its own org (never a platform role),
# and reset links its own operator issues for an account that belongs to the org alone.
TOKENS = (f"{MODE} = 'org' and platform_role is null and ("
          f"(purpose = 'invite' and org_id = {ORG}) "
          f"or (purpose = 'reset' and org_id is null and created_by = {USER} "
          f"and (SELECT memoria_account_only_in(user_id, {ORG}))))")


KEY_ACTIVE = f"""
    create or replace function memoria_platform_key_active(p_key uuid) returns boolean
      language plpgsql security definer set search_path = public, pg_temp as $$
    -- Whether the 'platform_key' scope names an active platform key and carries its proof: the SHA-256
    -- of the key the request presented (memoria.proof), which only the key's holder and the
    -- platform_api_keys table know, so knowing a key's id is not enough to enter its scope.
    declare caller text := current_setting('memoria.mode', true);
      proof text := nullif(current_setting('memoria.proof', true), ''); found boolean;
    begin
      if caller is distinct from 'platform_key' or proof is null then return false; end if;
      perform set_config('memoria.mode', 'system', true);
      select exists (select 1 from platform_api_keys k where k.id = p_key and k.revoked_at is null
                     and k.key_hash = proof) into found;
      perform set_config('memoria.mode', coalesce(caller, ''), true);
      return found;
    end $$;
    alter function memoria_platform_key_active(uuid) owner to {WORKER_ROLE};
    revoke all on function memoria_platform_key_active(uuid) from public;
    grant execute on function memoria_platform_key_active(uuid) to {APP_ROLE}"""
KEY = f"({MODE} = 'platform_key' and (SELECT memoria_platform_key_active({USER})))"
OWN_AUDIT = f"actor_user_id is null and actor_label = 'platform key ' || {USER}::text"
OWNER_INVITE = "purpose = 'invite' and org_id is not null and platform_role is null and created_by is null"
# (policy name, table, command, using, with check): permissive, ORed with each table's others.
KEY_POLICIES = (
    ("organizations_platform_key_read", "organizations", "select", None, None),
    ("organizations_platform_key_create", "organizations", "insert", None, None),
    ("organizations_platform_key_rename", "organizations", "update", None, None),
    ("memberships_platform_key_count", "memberships", "select", None, None),
    ("account_tokens_platform_key_read", "account_tokens", "select", OWNER_INVITE, None),
    ("account_tokens_platform_key_invite", "account_tokens", "insert", None, OWNER_INVITE),
    ("api_keys_platform_key_read", "api_keys", "select", "created_by is null", None),
    ("api_keys_platform_key_create", "api_keys", "insert", None, "created_by is null"),
    ("audit_log_platform_key_read", "audit_log", "select", OWN_AUDIT, None),
    ("audit_log_platform_key_write", "audit_log", "insert", None, OWN_AUDIT),
)


def _key_arm(extra: str | None) -> str:
    return f"({KEY}{' and ' + extra if extra else ''})"


def upgrade() -> None:
    for signature, (params, body) in FUNCTIONS.items():
        name = signature.split("(")[0]
        op.execute(f"create or replace function {name}({params}) {body.strip()}")
        op.execute(f"alter function {signature} security definer; "
                   f"alter function {signature} set search_path = public, pg_temp; "
                   f"alter function {signature} owner to {WORKER_ROLE}; "
                   f"revoke all on function {signature} from public; "
                   f"grant execute on function {signature} to {APP_ROLE}")
    op.execute(KEY_ACTIVE)
    for name, table, command, using, check in KEY_POLICIES:
        clauses = "" if command == "insert" else f" using ({_key_arm(using)})"
        clauses += "" if command == "select" else f" with check ({_key_arm(check)})"
        op.execute(f"create policy {name} on {table} for {command} to {APP_ROLE}{clauses}")
    op.execute(f"create policy account_tokens_org_read on account_tokens for select to {APP_ROLE} using ({TOKENS})")
    op.execute(f"create policy account_tokens_org_issue on account_tokens for insert to {APP_ROLE} "
               f"with check ({TOKENS})")


def downgrade() -> None:
    for name, table, *_ in KEY_POLICIES:
        op.execute(f"drop policy if exists {name} on {table}")
    op.execute("drop function if exists memoria_platform_key_active(uuid)")
    op.execute("drop policy if exists account_tokens_org_issue on account_tokens")
    op.execute("drop policy if exists account_tokens_org_read on account_tokens")
    for signature in reversed(list(FUNCTIONS)):
        op.execute(f"drop function if exists {signature}")
