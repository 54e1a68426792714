"""job runs belong to an org when an org admin started them

A run an org admin starts from the console works on that org's rows only and is listed to that org
only; a run with no org (the nightly schedule) is platform-wide and only staff see it.

Revision ID: s8_security_job_runs_org
Revises: r7_policy_settings_once
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = "s8_security_job_runs_org"
down_revision = "r7_policy_settings_once"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("job_runs", sa.Column("org_id", postgresql.UUID(as_uuid=True),
                                        sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=True))
    op.create_index("ix_job_runs_org_started", "job_runs", ["org_id", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_job_runs_org_started", table_name="job_runs")
    op.drop_column("job_runs", "org_id")
