"""tenancy managed, not seeded: one-time account tokens, platform API keys, host ids, suspension

- account_tokens: invitation, password-reset and first-admin setup links; only the SHA-256 of the
  token is stored, each expires and is used once.
- platform_api_keys: keys a platform admin creates; they may create organizations over the API.
- organizations.external_id / suspended_at, memberships.external_id / deactivated_at,
  phone_authorizations.external_id: the host application's own ids (unique per org) for idempotent
  provisioning, and the switches that pause an org or a membership without forgetting anything.
- users.platform_role may also be 'platform_admin'.

Revision ID: s8_tenancy_onboarding
Revises: r7_policy_settings_once
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "s8_tenancy_onboarding"
down_revision = "r7_policy_settings_once"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"


def upgrade() -> None:
    op.drop_constraint("platform_role_valid", "users", type_="check")
    op.create_check_constraint("platform_role_valid", "users",
                               "platform_role is null or platform_role in ('platform_admin','staff','privacy_officer')")
    op.add_column("organizations", sa.Column("external_id", sa.String(200), nullable=True))
    op.add_column("organizations", sa.Column("suspended_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("uq_organizations_external_id", "organizations", ["external_id"], unique=True)
    op.add_column("memberships", sa.Column("external_id", sa.String(200), nullable=True))
    op.add_column("memberships", sa.Column("deactivated_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("uq_memberships_org_external", "memberships", ["org_id", "external_id"], unique=True)
    op.add_column("phone_authorizations", sa.Column("external_id", sa.String(200), nullable=True))
    op.create_index("uq_phone_auth_org_external", "phone_authorizations", ["org_id", "external_id"], unique=True)

    op.create_table(
        "account_tokens",
        sa.Column("id", UUID(as_uuid=True), primary_key=True, server_default=sa.text("uuidv7()")),
        sa.Column("purpose", sa.String(12), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("name", sa.String(200), nullable=False, server_default=""),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.id", ondelete="CASCADE")),
        sa.Column("org_id", UUID(as_uuid=True), sa.ForeignKey("organizations.id", ondelete="CASCADE")),
        sa.Column("role", sa.String(10)),
        sa.Column("permissions", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("platform_role", sa.String(30)),
        sa.Column("created_by", UUID(as_uuid=True), sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("purpose in ('invite','reset','setup')", name="account_token_purpose_valid"),
    )
    op.create_index("ix_account_tokens_org", "account_tokens", ["org_id", "created_at"])
    op.create_table(
        "platform_api_keys",
        sa.Column("id", UUID(as_uuid=True), primary_key=True, server_default=sa.text("uuidv7()")),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("prefix", sa.String(20), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_by", UUID(as_uuid=True), sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
    )
    op.execute(f"grant select, insert, update, delete on account_tokens, platform_api_keys to {APP_ROLE}")


def downgrade() -> None:
    op.drop_table("platform_api_keys")
    op.drop_table("account_tokens")
    op.drop_index("uq_phone_auth_org_external", "phone_authorizations")
    op.drop_column("phone_authorizations", "external_id")
    op.drop_index("uq_memberships_org_external", "memberships")
    op.drop_column("memberships", "deactivated_at")
    op.drop_column("memberships", "external_id")
    op.drop_index("uq_organizations_external_id", "organizations")
    op.drop_column("organizations", "suspended_at")
    op.drop_column("organizations", "external_id")
    op.execute("update users set platform_role = null where platform_role = 'platform_admin'")
    op.drop_constraint("platform_role_valid", "users", type_="check")
    op.create_check_constraint("platform_role_valid", "users",
                               "platform_role is null or platform_role in ('staff','privacy_officer')")
