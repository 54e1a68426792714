"""The business's own opening hours and days sit in area "general"

Every member tells a customer when the shop is shut, including one who may read only "general"; the write ladder
now files the business's hours there (`ladder.fact_area`). The hours learnt before are moved to match, so an upgraded
org serves them as a new one would.

Revision ID: x1_business_hours_general
Revises: w9_secret_access_codes
Create Date: 2026-12-07
"""
from alembic import op

revision = "x1_business_hours_general"
down_revision = "w9_secret_access_codes"
branch_labels = None
depends_on = None

# The business's hours, whatever the extractor named them (ladder._HOURS), in every version and proposal.
_HOURS = ("subject = 'org' and level = 'shared' and (attribute like 'hora\\_apertura%' or "
          "attribute like 'hora\\_cierre%' or attribute like 'horario%' or attribute like 'nota\\_horario%')")


def upgrade() -> None:
    op.execute(f"update memories set area = 'general' where area = 'company' and {_HOURS}")


def downgrade() -> None:
    op.execute(f"update memories set area = 'company' where area = 'general' and category = 'company' and {_HOURS}")
