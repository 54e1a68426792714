"""Policy: a seeded special-category pattern for coeliac disease (health data)

"Mi mujer es vegetariana y yo celíaco, tenlo en cuenta para las reservas" named no pattern of the seeded list, so
the whole sentence was kept as the writer's note and served back with the diagnosis in it. Being coeliac, the
writer's or anyone's, is data concerning health (GDPR art. 9), which memoria never learns in the background; a
product or a menu for coeliacs is no one's (`w6_special_allergies` left those out on purpose), so the pattern wants
someone who is one, or the disease named.

Revision ID: w7_special_coeliac
Revises: w6_special_allergies
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op

revision = "w7_special_coeliac"
down_revision = "w6_special_allergies"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "special", matched case-insensitively on the text as written.
ROWS = [
    ("coeliac",
     r"\b((soy|es|eres|somos|sois|son|yo|i'?m|i am|he'?s|she'?s|is|are)\s+(cel(í|i)ac[oa]s?|coeliacs?|celiacs?)|"
     r"cel(í|i)aqu(í|i)a|(coeliac|celiac) disease)\b",
     "Coeliac disease (health data; a product or a menu for coeliacs is no one's)"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "special", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
