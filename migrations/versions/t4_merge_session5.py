"""join the evening's branches: the web and API processes without system scope (links, people, platform)

The two branches met in one place: the provisioning API's platform key lists organizations with their
member counts, which now come from `memoria_org_activity` (t3_sec_platform_scope), so that function
also answers an active platform key's own scope (t3_sec_org_people_scope's `memoria_platform_key_active`).

Revision ID: t4_merge_session5
Revises: t3_sec_links_platform_proof, t3_sec_org_people_scope, t3_sec_platform_scope
Create Date: 2026-12-01
"""
from alembic import op

revision = "t4_merge_session5"
down_revision = ("t3_sec_links_platform_proof", "t3_sec_org_people_scope", "t3_sec_platform_scope")
branch_labels = None
depends_on = None

USER = "nullif(current_setting('memoria.user_id', true), '')::uuid"
PLATFORM_ADMIN = f"(caller = 'platform' and memoria_platform_role({USER}) = 'platform_admin')"
PLATFORM_KEY = f"(caller = 'platform_key' and memoria_platform_key_active({USER}))"


def _activity(allowed: str) -> str:
    return f"""
    create or replace function memoria_org_activity(p_since timestamptz)
      returns table (org_id uuid, members bigint, messages_since bigint, last_message_at timestamptz)
      language plpgsql security definer set search_path = public, pg_temp as $$
    -- Each org's size and activity, counts only, for the lists of organizations.
    declare caller text := current_setting('memoria.mode', true);
    begin
      if not coalesce({allowed}, false) then
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
    end $$"""


def upgrade() -> None:
    op.execute(_activity(f"pg_has_role(session_user, 'memoria_worker', 'MEMBER') or {PLATFORM_ADMIN} "
                         f"or {PLATFORM_KEY}"))


def downgrade() -> None:
    op.execute(_activity(f"pg_has_role(session_user, 'memoria_worker', 'MEMBER') or {PLATFORM_ADMIN}"))
