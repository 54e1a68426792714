"""the web and API processes stop needing system scope for sign-in, the user loader and API keys

What they did in system scope (a connection as memoria_worker) becomes something narrower that the
app role may do:

- SECURITY DEFINER functions, owned by memoria_worker, that return only the columns their caller
  needs: the sign-in limiter's slots (`memoria_sign_in_slots`, `memoria_sign_in_clear`), the account
  an email signs in to (`memoria_sign_in_account`), the active org or platform API key with a hash
  (`memoria_api_key_by_hash`, `memoria_platform_key_by_hash`, which also touch last_used_at), and the
  counts of what a linked number said before it was linked (`memoria_pre_link_history`), the account a
  number is linked to (`memoria_user_of_phone`);
- the principal scope of a signed-in person (no org) may read the organizations they belong to, so
  the user loader reads the person, their memberships and their orgs' names in their own scope.

Revision ID: t1_sysscope_definer_lookups
Revises: s9_merge_tenancy_row_security
Create Date: 2026-12-01
"""
from alembic import op

revision = "t1_sysscope_definer_lookups"
down_revision = "s9_merge_tenancy_row_security"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
MODE = "(SELECT current_setting('memoria.mode', true))"
ORG = "(SELECT nullif(current_setting('memoria.org_id', true), '')::uuid)"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"
SYSTEM = f"{MODE} = 'system'"
SCOPED = f"{MODE} in ('org', 'principal')"

# Each runs as the worker in system scope and puts the caller's scope back before returning.
ENTER = "perform set_config('memoria.mode', 'system', true);"
LEAVE = "perform set_config('memoria.mode', coalesce(caller, ''), true);"

FUNCTIONS = {
    "memoria_sign_in_slots(text[], integer[], timestamptz, timestamptz)": f"""
    returns bigint[] language plpgsql as $$
    -- Takes one login_attempts slot per key, under an advisory lock per key taken in one order, or none
    -- (null) when any key has reached its limit since p_since.
    declare caller text := current_setting('memoria.mode', true); k text; ids bigint[];
    begin
      {ENTER}
      for k in select x from unnest(p_keys) x order by x loop
        perform pg_advisory_xact_lock(hashtext('memoria.login:' || k));
      end loop;
      if not exists (select 1 from unnest(p_keys, p_limits) as l(key, lim)
                     where (select count(*) from login_attempts a where a.key = l.key and a.at > p_since) >= l.lim)
      then
        with taken as (insert into login_attempts (key, at) select x, p_at from unnest(p_keys) x returning id)
        select array_agg(id) into ids from taken;
      end if;
      {LEAVE}
      return ids;
    end $$""",
    "memoria_sign_in_clear(bigint[], text)": f"""
    returns void language plpgsql as $$
    -- A successful sign-in gives back its slots and clears the account's failures from its address.
    declare caller text := current_setting('memoria.mode', true);
    begin
      {ENTER}
      delete from login_attempts where id = any(p_ids) or key = p_key;
      {LEAVE}
    end $$""",
    "memoria_sign_in_account(text)": f"""
    returns table (user_id uuid, password_hash text) language plpgsql as $$
    -- The account an email signs in to: its id and password hash, nothing else.
    declare caller text := current_setting('memoria.mode', true);
    begin
      {ENTER}
      return query select u.id, u.password_hash::text from users u where lower(u.email) = lower(p_email);
      {LEAVE}
    end $$""",
    "memoria_api_key_by_hash(text, timestamptz, interval)": f"""
    returns table (key_id uuid, org_id uuid) language plpgsql as $$
    -- The active org key with this SHA-256 (its id and org), touching last_used_at at most every p_every.
    declare caller text := current_setting('memoria.mode', true);
    begin
      {ENTER}
      return query update api_keys k set last_used_at = case
          when k.last_used_at is null or p_now - k.last_used_at > p_every then p_now else k.last_used_at end
        where k.key_hash = p_hash and k.revoked_at is null returning k.id, k.org_id;
      {LEAVE}
    end $$""",
    "memoria_platform_key_by_hash(text, timestamptz, interval)": f"""
    returns table (key_id uuid) language plpgsql as $$
    -- The active platform key with this SHA-256, touching last_used_at at most every p_every.
    declare caller text := current_setting('memoria.mode', true);
    begin
      {ENTER}
      return query update platform_api_keys k set last_used_at = case
          when k.last_used_at is null or p_now - k.last_used_at > p_every then p_now else k.last_used_at end
        where k.key_hash = p_hash and k.revoked_at is null returning k.id;
      {LEAVE}
    end $$""",
    "memoria_pre_link_history(uuid)": f"""
    returns table (memories bigint, messages bigint, conversations bigint) language plpgsql as $$
    -- What a person's linked number said before it was linked and still owns, counted (no rows leave).
    declare caller text := current_setting('memoria.mode', true); linked text;
    begin
      {ENTER}
      select u.phone into linked from users u where u.id = p_user;
      return query select
        (select count(*) from memories m where linked is not null and m.owner_phone = linked
           and m.owner_user_id is null and m.level in ('personal', 'private')),
        (select count(*) from messages g where linked is not null and g.phone = linked and g.user_id is null),
        (select count(*) from conversations c where linked is not null and c.phone = linked and c.user_id is null);
      {LEAVE}
    end $$""",
    "memoria_user_of_phone(text)": f"""
    returns uuid language plpgsql as $$
    -- The account a number is linked to, if any: how a number resolves to its person in any scope.
    declare caller text := current_setting('memoria.mode', true); found uuid;
    begin
      {ENTER}
      select u.id into found from users u where u.phone = p_phone;
      {LEAVE}
      return found;
    end $$""",
}
PARAMS = {
    "memoria_sign_in_slots": "p_keys text[], p_limits integer[], p_since timestamptz, p_at timestamptz",
    "memoria_sign_in_clear": "p_ids bigint[], p_key text",
    "memoria_sign_in_account": "p_email text",
    "memoria_api_key_by_hash": "p_hash text, p_now timestamptz, p_every interval",
    "memoria_platform_key_by_hash": "p_hash text, p_now timestamptz, p_every interval",
    "memoria_pre_link_history": "p_user uuid",
    "memoria_user_of_phone": "p_phone text",
}

ORGS_USING = f"{SYSTEM} or ({SCOPED} and id = {ORG})"
ORGS_CHECK = f"{SYSTEM} or ({MODE} = 'org' and id = {ORG})"
# A person in their own scope sees the orgs they are a member of (memberships' own policy lets them
# read their memberships), so the user loader needs no system scope.
ORGS_USING_NOW = (f"{ORGS_USING} or ({MODE} = 'principal' and {ORG} is null and exists "
                  f"(select 1 from memberships m where m.org_id = organizations.id and m.user_id = {USER}))")


def upgrade() -> None:
    for signature, body in FUNCTIONS.items():
        name = signature.split("(")[0]
        op.execute(f"create or replace function {name}({PARAMS[name]}) {body.strip()}")
        op.execute(f"alter function {signature} security definer; "
                   f"alter function {signature} set search_path = public, pg_temp; "
                   f"alter function {signature} owner to {WORKER_ROLE}; "
                   f"revoke all on function {signature} from public; "
                   f"grant execute on function {signature} to {APP_ROLE}")
    op.execute(f"alter policy organizations_ownership on organizations using ({ORGS_USING_NOW}) "
               f"with check ({ORGS_CHECK})")


def downgrade() -> None:
    op.execute(f"alter policy organizations_ownership on organizations using ({ORGS_USING}) "
               f"with check ({ORGS_CHECK})")
    for signature in FUNCTIONS:
        op.execute(f"drop function if exists {signature}")
