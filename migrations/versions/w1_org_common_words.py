"""organizations.common_words: a big org's most common search words, which its full text does not read one by one

A big org's principal's full-text read (reading/search.py, `big`) weighs the rows holding every query word and then
gives each word its share of the candidates, read from the org's text index. For a word held by thousands of the
org's memories that share is an arbitrary sample (one shared common word never makes a memory related), yet its
read costs a bitmap of all those rows and a heap read for each row sampled: on the 1M bench's big org, seven of a
query's eight words were such words, 7 of its block's 8.5 ms of full text. jobs/org_indexes.py lists an org's
common words when it gives the org its own indexes, and clears the list when it takes them away.

Revision ID: w1_org_common_words
Revises: v8_gin_without_pending_list
Create Date: 2026-12-06
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision = "w1_org_common_words"
down_revision = "v8_gin_without_pending_list"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("organizations", sa.Column("common_words", ARRAY(sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("organizations", "common_words")
