"""the platform scope counts only with the signed-in session's proof, not just a staff member's id

Until now `memoria.mode = 'platform'` with a real staff member's id in memoria.user_id opened the
staff tables to any memoria_app session, so an SQL injection that learnt such an id could enter it.
Now the scope also carries a proof (memoria.proof): HMAC-SHA256, under a key only the server and the
worker role hold, of "<user id>.<session version>". The web computes it for the signed-in person from
their session (web/sessions.py); `memoria_platform_role` recomputes it from the stored session version
and answers no role when it differs, so without the server's key there is no platform scope, and a
session revoked server-side (sign-out, password or role change bump the version) loses it at once.

A trigger also keeps platform roles from being given outside system scope or a platform
administrator's platform scope: a person's own scope may update their own users row, and must not be
able to make them staff.

The key lives in `memoria_keys`, readable only by the worker role in system scope (the SECURITY
DEFINER function reads it); `memoria migrate` writes it, derived from the server secret.

Revision ID: t3_sec_links_platform_proof
Revises: t3_sec_links_web_scopes
Create Date: 2026-12-01
"""
from alembic import op

revision = "t3_sec_links_platform_proof"
down_revision = "t3_sec_links_web_scopes"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"
MODE = "(SELECT current_setting('memoria.mode', true))"
IS_WORKER = f"(SELECT pg_has_role(current_user, '{WORKER_ROLE}', 'MEMBER'))"

# The function before this revision (t1_sysscope_platform_scope), for the downgrade.
ROLE_BY_ID = """
    declare caller text := current_setting('memoria.mode', true); found text;
    begin
      perform set_config('memoria.mode', 'system', true);
      select u.platform_role into found from users u where u.id = p_user;
      perform set_config('memoria.mode', coalesce(caller, ''), true);
      return found;
    end"""

ROLE_WITH_PROOF = """
    -- The platform role of a person (or null), only when the scope's proof is the HMAC of
    -- "<id>.<session version>" under the server's key: what the platform scope's policies let through.
    declare caller text := current_setting('memoria.mode', true);
      proof text := nullif(current_setting('memoria.proof', true), ''); k text; found text;
    begin
      perform set_config('memoria.mode', 'system', true);
      select m.key into k from memoria_keys m where m.name = 'platform_scope';
      select u.platform_role into found from users u where u.id = p_user and k is not null and proof is not null
        and proof = memoria_hmac(convert_to(k, 'UTF8'), convert_to(u.id::text || '.' || u.session_version, 'UTF8'));
      perform set_config('memoria.mode', coalesce(caller, ''), true);
      return found;
    end"""


def _role_function(body: str) -> str:
    return (f"create or replace function memoria_platform_role(p_user uuid) returns text language plpgsql "
            f"security definer set search_path = public, pg_temp as $${body}$$")


def upgrade() -> None:
    op.execute(f"""
    create table memoria_keys (name text primary key, key text not null);
    alter table memoria_keys enable row level security;
    alter table memoria_keys force row level security;
    grant select on memoria_keys to {APP_ROLE};
    revoke insert, update, delete, truncate on memoria_keys from {APP_ROLE};
    create policy memoria_keys_ownership on memoria_keys for select to {APP_ROLE} using ({MODE} = 'system');
    create policy memoria_keys_system_is_the_worker on memoria_keys as restrictive for all to {APP_ROLE}
      using ({MODE} is distinct from 'system' or {IS_WORKER});
    do $$ begin
      -- The owner (who runs `memoria migrate`) writes the key; row security is forced on it too.
      execute format('create policy memoria_keys_owner on memoria_keys for all to %I using (true)', current_user);
    end $$;

    -- HMAC-SHA256 (RFC 2104) with the built-in sha256: no pgcrypto in every PostgreSQL we run on.
    create or replace function memoria_hmac(p_key bytea, p_msg bytea) returns text
      language plpgsql immutable strict set search_path = pg_catalog, pg_temp as $$
    declare k bytea := p_key; inner_pad bytea := ''; outer_pad bytea := ''; i int;
    begin
      if length(k) > 64 then k := sha256(k); end if;
      k := k || decode(repeat('00', 64 - length(k)), 'hex');
      for i in 0..63 loop
        inner_pad := inner_pad || decode(lpad(to_hex(get_byte(k, i) # 54), 2, '0'), 'hex');
        outer_pad := outer_pad || decode(lpad(to_hex(get_byte(k, i) # 92), 2, '0'), 'hex');
      end loop;
      return encode(sha256(outer_pad || sha256(inner_pad || p_msg)), 'hex');
    end $$;
    """)
    op.execute(_role_function(ROLE_WITH_PROOF))
    op.execute(f"alter function memoria_platform_role(uuid) owner to {WORKER_ROLE}")
    op.execute(f"""
    create or replace function users_guard_platform_role() returns trigger language plpgsql as $$
    -- Only the worker role in system scope, a platform administrator in the platform scope, or a
    -- superuser gives or changes a platform role: a person's own scope may update their own row, and
    -- an SQL injection there must not make them staff.
    begin
      if not ((tg_op = 'INSERT' and new.platform_role is not null)
              or (tg_op = 'UPDATE' and new.platform_role is distinct from old.platform_role)) then
        return new;
      end if;
      if (select r.rolsuper from pg_roles r where r.rolname = current_user)
         or (current_setting('memoria.mode', true) = 'system' and pg_has_role(current_user, '{WORKER_ROLE}', 'MEMBER'))
         or (current_setting('memoria.mode', true) = 'platform'
             and memoria_platform_role(nullif(current_setting('memoria.user_id', true), '')::uuid) = 'platform_admin')
      then
        return new;
      end if;
      raise exception 'only a platform administrator gives platform roles' using errcode = '42501';
    end $$;
    create trigger users_guard_platform_role before insert or update of platform_role on users
      for each row execute function users_guard_platform_role();
    """)


def downgrade() -> None:
    op.execute("drop trigger if exists users_guard_platform_role on users; "
               "drop function if exists users_guard_platform_role()")
    op.execute(_role_function(ROLE_BY_ID))
    op.execute("drop function if exists memoria_hmac(bytea, bytea)")
    op.execute("drop table if exists memoria_keys")
