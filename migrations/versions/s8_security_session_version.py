"""console sessions are revoked server-side: a per-user session version

A signed-in session carries the user's session version; the console's user loader refuses a session
whose version is not the one stored. Signing out bumps it (in the view); so does, by trigger here, any
change of the user's password or platform role and any change or end of one of their memberships, so
that every code path that changes them revokes the sessions without having to remember to.

Revision ID: s8_security_session_version
Revises: s8_security_job_runs_org
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa

revision = "s8_security_session_version"
down_revision = "s8_security_job_runs_org"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("session_version", sa.Integer(), server_default="0", nullable=False))
    # SECURITY DEFINER: the bump must happen whatever the row security of the session that changed the row.
    op.execute("""
    create or replace function users_revoke_sessions() returns trigger language plpgsql as $$
    begin
      if new.password_hash is distinct from old.password_hash or new.platform_role is distinct from old.platform_role
         or new.email is distinct from old.email then
        new.session_version := old.session_version + 1;
      end if;
      return new;
    end $$;
    create trigger users_revoke_sessions before update on users
      for each row execute function users_revoke_sessions();

    create or replace function memberships_revoke_sessions() returns trigger
      language plpgsql security definer set search_path = public, pg_temp as $$
    begin
      if tg_op = 'DELETE' then
        update users set session_version = session_version + 1 where id = old.user_id;
      elsif new.role is distinct from old.role or new.left_at is distinct from old.left_at
            or new.permissions is distinct from old.permissions or new.user_id is distinct from old.user_id then
        update users set session_version = session_version + 1 where id in (old.user_id, new.user_id);
      end if;
      return null;
    end $$;
    revoke all on function memberships_revoke_sessions() from public;
    create trigger memberships_revoke_sessions after update or delete on memberships
      for each row execute function memberships_revoke_sessions();
    """)


def downgrade() -> None:
    op.execute("""
    drop trigger if exists memberships_revoke_sessions on memberships;
    drop function if exists memberships_revoke_sessions();
    drop trigger if exists users_revoke_sessions on users;
    drop function if exists users_revoke_sessions();
    """)
    op.drop_column("users", "session_version")
