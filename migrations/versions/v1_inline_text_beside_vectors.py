"""Memories', messages' and documents' text stays in the row beside their vector (storage MAIN)

A row of these tables holds its 512-d vector inline (pgvector's storage is plain: 2,056 bytes), so it never
fits PostgreSQL's 2 kB toasting target, and the toaster moved every other value longer than a TOAST pointer
out of the row: at 1M memories 99.6% of the sentences, every search_tsv, 35% of the subjects, 99.6% of the
messages' texts and all their search_tsv. Every read of them then fetched each value from the TOAST table by
its index (a typical org's active sentences: 321 buffers read instead of 62, 0.48 ms instead of 0.11), and full
text matched, ranked and split each candidate's search_tsv that way.

With storage MAIN a value is compressed first and only moved out of the row when the whole row would still be
larger than a page (~8 kB): a long document or message still fits. ALTER ... SET STORAGE changes how rows are
written from now on; rows already written keep their layout until the table is rewritten (VACUUM FULL or
pg_repack; docs/scaling.md).

Revision ID: v1_inline_text_beside_vectors
Revises: u1_supersede_one_update
Create Date: 2026-12-04
"""
from alembic import op

revision = "v1_inline_text_beside_vectors"
down_revision = "u1_supersede_one_update"
branch_labels = None
depends_on = None

# Every column of variable length beside the vector (storage EXTENDED until now).
COLUMNS = {
    "memories": ("level", "owner_phone", "area", "category", "subject", "attribute", "value", "sentence", "status",
                 "proposal_kind", "proposal_rule", "decision_reason", "author_phone", "origin", "embed_model",
                 "search_tsv"),
    "messages": ("channel", "external_id", "phone", "visibility", "area", "role", "text", "embed_model",
                 "search_tsv", "id_scope"),
    "documents": ("kind", "external_ref", "title", "text", "tax_id", "owner_phone", "visibility", "area",
                  "embed_model", "search_tsv"),
}


def _set(storage: str) -> None:
    for table, columns in COLUMNS.items():
        op.execute(f"alter table {table} " + ", ".join(f"alter column {c} set storage {storage}" for c in columns))


def upgrade() -> None:
    _set("main")


def downgrade() -> None:
    _set("extended")
