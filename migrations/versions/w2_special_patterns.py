"""Policy: more seeded special-category patterns: addiction and recovery, mental-health care, worship

"Voy a Alcohólicos Anónimos los lunes", "Ya no voy a misa los domingos", "my therapist says..." named no word of
the health or religion rows, and the local gate's classifier let them through as a person's routine: they were
learnt. Each row names a special category the way people mention it; an address ("Calle de la Iglesia 5",
"Church Road") is not worship, so a church counts only when someone goes to it or is in it.

Revision ID: w2_special_patterns
Revises: w1_org_common_words
Create Date: 2026-12-06
"""
import sqlalchemy as sa
from alembic import op

revision = "w2_special_patterns"
down_revision = "w1_org_common_words"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "special", matched case-insensitively on the text as written.
ROWS = [
    ("addiction", r"\b(alcoh(ó|o)lic\w* an(ó|o)nim\w*|alcoholics anonymous|narc(ó|o)tic\w* an(ó|o)nim\w*|"
                  r"narcotics anonymous|adicci(ó|o)n\w*|addict\w*|desintoxicaci(ó|o)n|desintox|rehab|sobriety|"
                  r"sobriedad|metadona|methadone)\b",
     "Addiction and recovery (health data)"),
    ("mental_health", r"\b(psic(ó|o)log[oa]s?|psychologists?|psicoterap\w*|psychotherap\w*|therapists?|"
                      r"antidepresiv\w*|antidepressants?|ansiol(í|i)tic\w*|psicof(á|a)rmac\w*)\b",
     "Mental-health care (health data)"),
    ("worship", r"\b(misas?|rezar|rezo|rezamos|pray|prays|prayed|praying|catequesis|ramad(á|a)n|"
                r"(a|en|to|at|in) (la |the )?(iglesia|church|parroquia|mezquita|mosque|sinagoga|synagogue))\b",
     "Religious practice (religious beliefs)"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "special", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
