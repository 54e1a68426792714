"""Policy: a seeded special-category pattern for smoking and drinking habits (health data)

"He dejado de fumar hace tres meses" was learnt as a note of the person's: whether someone smokes, vapes or has
stopped drinking is data concerning their health (GDPR art. 9), which memoria never learns in the background.
A rule of the premises ("no se puede fumar en la tienda") names no one's habit and stays out of it.

Revision ID: w5_special_smoking
Revises: w4_event_span_check
Create Date: 2026-12-06
"""
import sqlalchemy as sa
from alembic import op

revision = "w5_special_smoking"
down_revision = "w4_event_span_check"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "special", matched case-insensitively on the text as written.
ROWS = [
    ("smoking_drinking",
     r"\b((he |ha |hemos |han )?dej(é|e|ado|ó|o|ar|amos) (de fumar|de beber|de vapear|el tabaco|el alcohol)|"
     r"(quit|quitting|stopped|gave up|giving up) (smoking|drinking|vaping|cigarettes|alcohol|the booze)|"
     r"(i|he|she|we|they) (smoke|smokes|vape|vapes)|fumo|fumaba|fumador(a|es|as)?|smokers?|vapeo|"
     r"nicotin\w*|nicotine patch\w*)\b",
     "Smoking and drinking habits (health data)"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "special", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
