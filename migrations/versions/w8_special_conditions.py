"""Policy: a seeded special-category pattern for chronic conditions and the medicines that name them (health data)

"my son uses an inhaler for his asthma, he's playing football on saturday" named no pattern of the seeded list and the
classifier did not flag it, so it was kept as the writer's note and served back with the condition in it. Asthma,
epilepsy and the medicines that tell of a condition (an inhaler of someone's, Ventolin, insulin, metformin,
antidepressants) are data concerning health (GDPR art. 9), whoever they are of; memoria never learns them in the
background. A shop's stock ("we sell inhalers") names no one's, so an inhaler counts only as someone's.

Revision ID: w8_special_conditions
Revises: w7_special_coeliac
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op

revision = "w8_special_conditions"
down_revision = "w7_special_coeliac"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "special", matched case-insensitively on the text as written.
ROWS = [
    ("conditions",
     r"\b(asma|asthma|asm(á|a)tic[oa]s?|asthmatic|epilepsia|epilepsy|epil(é|e)ptic[oa]s?|"
     r"ventol(í|i)n|salbutamol|insulina|insulin|metformina?|antidepresiv[oa]s?|antidepressants?|"
     r"(mi|tu|su|sus|mis|my|your|his|her|their)\s+(inhalador(es)?|inhalers?))\b",
     "Chronic conditions and the medicines that tell of one (health data; a shop's stock is no one's)"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "special", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
