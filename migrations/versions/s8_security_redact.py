"""secrets already stored are redacted, as ingest now does before storing

Ingest replaces every secret the policy's exclusion list finds (cards that pass Luhn, passwords,
codes, keys...) with a mark such as "[secret: card]". This does the same to what was stored before:
messages (their search text is generated from the text; their vector is dropped, since it was
computed from the secret), conversation summaries, memories, memory traces and notifications.

Revision ID: s8_security_redact
Revises: s8_security_external_id_scope
Create Date: 2026-12-01
"""
import json
from typing import Any

from alembic import op
from sqlalchemy import text

revision = "s8_security_redact"
down_revision = "s8_security_external_id_scope"
branch_labels = None
depends_on = None

BATCH = 1000
# table -> (key column, org expression, text columns, jsonb columns, vector column to drop when changed)
TABLES = {
    "messages": ("id", "org_id", ("text",), (), "embedding"),
    "memories": ("id", "org_id", ("value", "sentence"), (), "embedding"),
    "memory_traces": ("id", "org_id", ("block_text",), (), None),
    "notifications": ("id", "org_id", ("text",), ("data",), None),
    "conversation_summaries": ("conversation_id",
                               "(select c.org_id from conversations c where c.id = conversation_id)", (), ("content",), None),
}


def _walk(value: Any, redact) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_walk(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, redact) for k, v in value.items()}
    return value


def redact_stored(bind) -> dict[str, int]:
    """Redact every stored secret; returns the rows changed per table."""
    from memory_core.domain.policy import Exclusion, redact

    rows = bind.execute(text("select org_id, kind, name, pattern, validator from policy_exclusions "
                             "where enabled and kind = 'secret'")).all()
    platform = [Exclusion(kind=k, name=n, pattern=p, validator=v) for o, k, n, p, v in rows if o is None]
    by_org: dict[Any, list] = {}
    for o, k, n, p, v in rows:
        if o is not None:
            by_org.setdefault(o, []).append(Exclusion(kind=k, name=n, pattern=p, validator=v))
    changed: dict[str, int] = {}
    for table, (key, org, cols, jcols, vector) in TABLES.items():
        changed[table] = 0
        last = None
        while True:
            page = bind.execute(text(
                f"select {key}, {org}, {', '.join((*cols, *jcols))} from {table} "
                f"where (cast(:last as uuid) is null or {key} > :last) order by {key} limit :n"),
                {"last": last, "n": BATCH}).all()
            if not page:
                break
            for row in page:
                last = row[0]
                exclusions = platform + by_org.get(row[1], [])

                def clean(s: str) -> str:
                    return redact(s, exclusions) if s else s

                values = {c: clean(row[2 + i]) for i, c in enumerate(cols)}
                values.update({c: _walk(row[2 + len(cols) + i], clean) for i, c in enumerate(jcols)})
                old = {c: row[2 + i] for i, c in enumerate((*cols, *jcols))}
                if values == old:
                    continue
                sets = [f"{c} = :{c}" for c in cols] + [f"{c} = cast(:{c} as jsonb)" for c in jcols]
                if vector:
                    sets.append(f"{vector} = null")
                params = {**{c: values[c] for c in cols}, **{c: json.dumps(values[c]) for c in jcols}, "k": row[0]}
                bind.execute(text(f"update {table} set {', '.join(sets)} where {key} = :k"), params)
                changed[table] += 1
    return changed


def upgrade() -> None:
    redact_stored(op.get_bind())


def downgrade() -> None:
    pass  # a redacted secret is gone for good
