"""join the day's branches; row security on the two tables tenancy added (one-time links, platform keys)

Both are read and written only in system scope (sign-up links, invitations, resets, platform keys), so
their policy is system-only, and, like every table since s8_security_row_security, system scope counts
only for the worker role.

Revision ID: s9_merge_tenancy_row_security
Revises: s8_learn_flow_sent_at, s8_my_memory_pause, s8_reliability_outbox_claim, s8_security_row_security,
         s8_tenancy_onboarding
Create Date: 2026-12-01
"""
from alembic import op

revision = "s9_merge_tenancy_row_security"
down_revision = ("s8_learn_flow_sent_at", "s8_my_memory_pause", "s8_reliability_outbox_claim",
                 "s8_security_row_security", "s8_tenancy_onboarding")
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
MODE = "(SELECT current_setting('memoria.mode', true))"
IS_WORKER = "(SELECT pg_has_role(current_user, 'memoria_worker', 'MEMBER'))"
TABLES = ("account_tokens", "platform_api_keys")


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"""
        alter table {table} enable row level security;
        alter table {table} force row level security;
        create policy {table}_ownership on {table} for all to {APP_ROLE}
          using ({MODE} = 'system') with check ({MODE} = 'system');
        create policy {table}_system_is_the_worker on {table} as restrictive for all to {APP_ROLE}
          using ({MODE} is distinct from 'system' or {IS_WORKER})
          with check ({MODE} is distinct from 'system' or {IS_WORKER});
        """)


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"""
        drop policy if exists {table}_system_is_the_worker on {table};
        drop policy if exists {table}_ownership on {table};
        alter table {table} no force row level security;
        alter table {table} disable row level security;
        """)
