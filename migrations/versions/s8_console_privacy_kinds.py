"""privacy requests: portability (GDPR art. 20) as a kind, and `delivered` as the end of an export request

Access and portability requests end when their export is delivered; only an erasure is "executed".

Revision ID: s8_console_privacy_kinds
Revises: r7_policy_settings_once
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

revision = "s8_console_privacy_kinds"
down_revision = "r7_policy_settings_once"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column("privacy_requests", "kind", type_=sa.String(12))
    op.drop_constraint("privacy_kind_valid", "privacy_requests", type_="check")
    op.create_check_constraint("privacy_kind_valid", "privacy_requests", "kind in ('erasure','access','portability')")
    op.drop_constraint("privacy_status_valid", "privacy_requests", type_="check")
    op.create_check_constraint("privacy_status_valid", "privacy_requests",
                               "status in ('received','verified','previewed','executed','delivered','rejected')")
    op.execute("update privacy_requests set status = 'delivered' where kind = 'access' and status = 'executed'")


def downgrade() -> None:
    op.execute("update privacy_requests set status = 'executed' where status = 'delivered'")
    op.execute("delete from privacy_requests where kind = 'portability'")
    op.drop_constraint("privacy_status_valid", "privacy_requests", type_="check")
    op.create_check_constraint("privacy_status_valid", "privacy_requests",
                               "status in ('received','verified','previewed','executed','rejected')")
    op.drop_constraint("privacy_kind_valid", "privacy_requests", type_="check")
    op.create_check_constraint("privacy_kind_valid", "privacy_requests", "kind in ('erasure','access')")
    op.alter_column("privacy_requests", "kind", type_=sa.String(10))
