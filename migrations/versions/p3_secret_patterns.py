"""Policy: more seeded secret patterns (platform-wide exclusion rows), measured on evals/gate.jsonl

Revision ID: p3_secret_patterns
Revises: 0002
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = "p3_secret_patterns"
down_revision = "0002"
branch_labels = None
depends_on = None

# (name, pattern, description); kind "secret", no validator: the words around the value say what it is.
ROWS = [
    ('credential_phrase', '\\b(clave|contrase(ñ|n)a|password|passwd|passcode|credenciales|credentials|login|usuario|username)\\b[^\\n]{0,80}?(\\b(es|is|con|with)\\b\\s*|[:=/]\\s*|\\s+)(?<![\\w])[^\\s,;]*(?:\\d[^\\s,;]*[A-Za-zÀ-ÿ]|[A-Za-zÀ-ÿ][^\\s,;]*\\d|[A-Za-zÀ-ÿ][^\\s,;]*[!#$%&*_@][^\\s,;]*)[^\\s,;]*',
     'Passwords and user names given as credentials (a word like clave/usuario/login followed by a token with digits or symbols)'),
    ('unlock_code', '\\b(pin|puk|cvv|cvc|clave|contrase(ñ|n)a|password|passcode|desbloque\\w*|unlock\\w*|sms|otp|2fa|verificaci(ó|o)n|verification|teclea\\w*|alarm code|c(ó|o)digo de (la )?alarma)\\b[^.\\n]{0,40}?\\b\\d{3,8}\\b|\\b\\d{4,8}\\b[^.\\n]{0,25}\\b(alarma|alarm)\\b|^\\s*(el |the )?(code|c(ó|o)digo|pin)( es| is)?\\s*[:=]?\\s*\\d{4,8}\\s*$',
     'PINs, PUKs, CVVs, unlock, alarm and SMS/one-time codes'),
    ('login_with', '\\b(se abre con|se abren con|entro con|entra con|accedo con|se entra con|se accede con|log ?in with|sign in with)\\s+(?<![\\w])[^\\s,;]*(?:\\d[^\\s,;]*[A-Za-zÀ-ÿ]|[A-Za-zÀ-ÿ][^\\s,;]*\\d|[A-Za-zÀ-ÿ][^\\s,;]*[!#$%&*_@][^\\s,;]*)[^\\s,;]*',
     "Credentials given as 'se abre con ...' / 'log in with ...'"),
    ('access_token', '\\b(token|api ?key|secret key|access key|clave secreta|clave de (la )?api|client secret)\\b[^\\n]{0,40}?(\\b(es|is)\\b|[:=])\\s*\\S{12,}',
     'API keys, access tokens and client secrets introduced as such'),
    ('card_mention', '\\b(visa|mastercard|master card|amex|american express|tarjeta|card)\\b[^.\\n]{0,30}?\\b\\d{4}[ -]?\\d{4,6}[ -]?\\d{4,5}(?:[ -]?\\d{1,4})?\\b',
     'Card numbers introduced as a card, even when they fail the Luhn check'),
    ('id_document', '\\b(dni|nie|documento de identidad|id card|identity card)\\b[^.\\n]{0,30}?\\b[XYZxyz]?\\d{7,8}[ -]?[A-Za-z]\\b|\\b[XYZxyz]?\\d{7,8}[ -]?[A-Za-z]\\b[^.\\n]{0,40}\\b(dni|nie|documento de identidad)\\b',
     'ID document numbers introduced as such, even with a wrong control letter'),
]


def upgrade() -> None:
    table = sa.table("policy_exclusions", sa.column("kind", sa.String), sa.column("name", sa.String),
                     sa.column("pattern", sa.Text), sa.column("description", sa.Text))
    op.bulk_insert(table, [{"kind": "secret", "name": n, "pattern": p, "description": d} for n, p, d in ROWS])


def downgrade() -> None:
    op.execute(sa.text("delete from policy_exclusions where org_id is null and name in :names")
               .bindparams(sa.bindparam("names", [n for n, _, _ in ROWS], expanding=True)))
