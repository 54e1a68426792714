"""Policy: a seeded special-category pattern for allergies (health data)

"Mrs Okafor is allergic to nuts" named no pattern of the seeded list, so the message was ignored ("no fact could be
extracted": the local extractor drops an allergy as health) instead of refused as a special category, and the
trace did not say why. An allergy, the writer's or a customer's, is data concerning health (GDPR art. 9), which
memoria never learns in the background.

Revision ID: w6_special_allergies
Revises: w5_special_smoking
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op

revision = "w6_special_allergies"
down_revision = "w5_special_smoking"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "special", matched case-insensitively on the text as written.
ROWS = [
    ("allergies",
     r"\b(al(é|e)rgic[oa]s?|alergias?|allergic|allerg(y|ies)|anaphyla\w*|epi-?pens?)\b",
     "Allergies (health data; a menu's allergens or a product for coeliacs is no one's)"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "special", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
