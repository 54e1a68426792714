"""external ids are unique per org (and per phone, or per user, for org-less personal traffic)

A channel's conversation and message ids were unique across all orgs: another org could take an id
first (its owner then got 409 for its own conversation) or probe which ids exist. Each row now has
an `id_scope` (its org; for org-less rows its phone, else its user), computed by one SQL function,
and ids are unique within (channel, id_scope).

Revision ID: s8_security_external_id_scope
Revises: s8_security_session_version
Create Date: 2026-12-01
"""
from alembic import op

revision = "s8_security_external_id_scope"
down_revision = "s8_security_session_version"
branch_labels = None
depends_on = None

TABLES = ("conversations", "messages")


def upgrade() -> None:
    op.execute("""
    create or replace function external_id_scope(org uuid, phone text, usr uuid) returns text
      language sql immutable parallel safe
      return coalesce('org:' || org::text, 'phone:' || phone, 'user:' || usr::text);
    """)
    for table in TABLES:
        op.execute(f"""
        alter table {table} add column id_scope text
          generated always as (external_id_scope(org_id, phone, user_id)) stored;
        alter table {table} drop constraint {table}_channel_external_id_key;
        alter table {table} add constraint {table}_channel_scope_external_id_key
          unique (channel, id_scope, external_id);
        """)


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"""
        alter table {table} drop constraint {table}_channel_scope_external_id_key;
        alter table {table} drop column id_scope;
        alter table {table} add constraint {table}_channel_external_id_key unique (channel, external_id);
        """)
    op.execute("drop function if exists external_id_scope(uuid, text, uuid)")
