"""embeddings stored inline in their row, not in the TOAST table

A 512-dimension vector takes 2,052 bytes, just over the TOAST threshold, so PostgreSQL moved every
one out of line: reading a row's vector cost a TOAST index probe and one or two more pages. The
memory block and the search read the vectors of every candidate row, and on a cold cache each of
those pages is a disk read (measured on the scale bench at 1M memories: ~0.09 ms a page, two thirds
of the pages a turn reads). PLAIN keeps the vector in the row (it never compresses anyway); the
other columns can still be moved out, so a row always fits in a page.

Existing rows keep their out-of-line vectors until they are written again (or `VACUUM FULL`).

Revision ID: r6_inline_vectors
Revises: r5_context_indexes
Create Date: 2026-11-29
"""
from alembic import op

revision = "r6_inline_vectors"
down_revision = "r5_context_indexes"
branch_labels = None
depends_on = None

TABLES = ("memories", "messages", "documents")


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"alter table {table} alter column embedding set storage plain")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"alter table {table} alter column embedding set storage external")
