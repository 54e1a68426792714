"""row security reads the transaction's scope once per query, not once per row

Every policy compares rows with the scope in current_setting('memoria.*'); called bare, each of
those functions runs for every row the policy checks (six to ten calls a row for memories). Wrapped
as (SELECT current_setting(...)) each becomes an init plan evaluated once per query. Same rule, same
results; on the scale bench the ownership check of ~36,000 rows went from ~117 to ~80 ms.

Revision ID: r7_policy_settings_once
Revises: r6_trace_items_memory_link
Create Date: 2026-11-29
"""
import re

from alembic import op
from sqlalchemy import text

revision = "r7_policy_settings_once"
down_revision = "r6_trace_items_memory_link"
branch_labels = None
depends_on = None

BARE = re.compile(r"(?<!SELECT )current_setting\('(memoria\.[a-z_]+)'::text, true\)")
# How PostgreSQL prints a wrapped call back (pg_get_expr).
WRAPPED = re.compile(r"\(\s*SELECT current_setting\('(memoria\.[a-z_]+)'::text, true\)(?: AS current_setting)?\)")


def _rewrite(change) -> None:
    bind = op.get_bind()
    policies = bind.execute(text(
        "select polname, polrelid::regclass::text, pg_get_expr(polqual, polrelid), "
        "pg_get_expr(polwithcheck, polrelid) from pg_policy p join pg_class c on c.oid = p.polrelid "
        "join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'")).all()
    for name, table, using, check in policies:
        parts = []
        if using:
            parts.append(f"using ({change(using)})")
        if check:
            parts.append(f"with check ({change(check)})")
        if parts and (change(using or "") != (using or "") or change(check or "") != (check or "")):
            op.execute(f'alter policy "{name}" on {table} ' + " ".join(parts))


def upgrade() -> None:
    _rewrite(lambda e: BARE.sub(r"(SELECT current_setting('\1'::text, true))", e))


def downgrade() -> None:
    _rewrite(lambda e: WRAPPED.sub(r"current_setting('\1'::text, true)", e))
