"""Policy: a seeded secret pattern for the codes that open a place (alarm, key safe, door, gate, safe, wifi)

"el código de la alarma es 1234", "the key safe code is 4821", "the lockbox combo is 381276" named no pattern of the
seeded list: only passwords, PINs and one-time codes did. A code that opens the business's premises or someone's home
is a secret like a password; memoria refuses it outright, in every mode. The pattern wants the code itself (a word
with a digit near the words), so "cambia el código de la alarma mañana" is no secret, nor is a discount code.

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

# What a code opens, the words for a code (not a discount's, a postcode or a tracking number) and the code itself.
_PLACE = (r"(?:alarm|alarma|key\s*safe|keysafe|key\s*box|lock\s*box|lockbox|door|gate|garage|safe|padlock|wi-?fi|locker|"
          r"caja\s+de\s+(?:las\s+)?llaves|cajet[ií]n|portal|puerta|garaje|candado|caja\s+fuerte|taquilla|buz[oó]n|"
          r"almac[eé]n|nave|oficina|local|building|entrance|entrada|front|back|shop|warehouse|office|unit)")
_CODE = (r"(?<!discount )(?<!promo )(?<!voucher )(?<!coupon )(?<!tracking )(?<!postal )(?<!zip )(?<!area )(?<!dress )"
         r"(?<!product )(?<!tax )(?:codes?|combo|combination|pin|password|passcode|c[oó]digo|clave|combinaci[oó]n|"
         r"contrase[ñn]a)(?!\s+(?:postal|de\s+descuento|promocional|de\s+barras|de\s+cliente|de\s+producto|"
         r"de\s+seguimiento|de\s+env[ií]o))")
_TAIL = r"(?:\d{3,}|\S*\d\S*)"

# (name, pattern, description); kind "secret", matched case-insensitively on the text as written: within one
# sentence, what it opens and the word for a code in either order, then the code; or the code said first.
ROWS = [
    ("access_code",
     rf"\b{_PLACE}(?:'s)?\b[^.!?\n]{{0,30}}?\b{_CODE}\b[^.!?\n]{{0,40}}?{_TAIL}|"
     rf"\b{_CODE}\b[^.!?\n]{{0,30}}?\b{_PLACE}\b[^.!?\n]{{0,40}}?{_TAIL}|"
     rf"\b\d{{3,}}\b[^.!?\n]{{0,20}}?\b(?:is|es|for|para|de)\b[^.!?\n]{{0,15}}?\b{_CODE}\b[^.!?\n]{{0,20}}?\b{_PLACE}\b",
     "Codes that open a place: alarm, key safe, door, gate, safe, wifi"),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "secret", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
