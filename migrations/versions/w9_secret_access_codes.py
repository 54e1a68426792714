"""Policy: a seeded secret pattern for the codes that open a place (alarm, key safe, door, gate, safe, wifi)

"el código de la alarma es 1234", "the key safe code is 4821", "the lockbox combo is 381276" named no pattern of the
seeded list: only passwords, PINs and one-time codes did. A code that opens the business's premises or someone's home
is a secret like a password; memoria refuses it outright, in every mode. The pattern wants the code itself (a word
with a digit after the words), so "cambia el código de la alarma mañana" is no secret.

Revision ID: w9_secret_access_codes
Revises: w8_special_conditions
Create Date: 2026-12-07
"""
import sqlalchemy as sa
from alembic import op

revision = "w9_secret_access_codes"
down_revision = "w8_special_conditions"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "secret", matched case-insensitively on the text as written.
ROWS = [
    ("access_code",
     r"\b((c(ó|o)digo|clave|contrase(ñ|n)a|pin|combinaci(ó|o)n)\s+(de(l)?\s+)?(la\s+|el\s+|las\s+|los\s+)?(alarma|"
     r"caja\s+de\s+(las\s+)?llaves|cajet(í|i)n|portal|puerta|garaje|candado|caja\s+fuerte|wi-?fi|taquilla|buz(ó|o)n|"
     r"almac(é|e)n|nave|oficina|local)|(alarm|key\s*safe|key\s*box|lock\s*box|door|gate|garage|safe|entry|padlock|"
     r"wi-?fi|locker|alarm\s+panel)\s+(code|combo|combination|pin|password|number))\b\D{0,40}(\d{3,}|\S*\d\S*)",
     "Codes that open a place: alarm, key safe, door, gate, safe, wifi"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "secret", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
