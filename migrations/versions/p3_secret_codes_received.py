"""Policy: one more seeded secret pattern, one-time codes someone says they received

Revision ID: p3_secret_codes_received
Revises: p3_secret_patterns
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = "p3_secret_codes_received"
down_revision = "p3_secret_patterns"
branch_labels = None
depends_on = None

NAME = "received_code"
PATTERN = (r"\b(me ha llegado|me han (mandado|enviado)|he recibido|acabo de recibir|i got|i received|i just got"
           r"|just received)\b[^.\n]{0,30}\b(c(ó|o)digo|code)\b\D{0,10}\b\d{4,8}\b"
           r"|\b(c(ó|o)digo|code)\b[^.\n]{0,30}\b(llegado|recibido|received|texted)\b\D{0,10}\b\d{4,8}\b")


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "secret", "name": NAME, "pattern": PATTERN,
                            "description": "One-time codes the person says they just received"}])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name = :name").bindparams(name=NAME))
