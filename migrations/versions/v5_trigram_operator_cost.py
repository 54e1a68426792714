"""pg_trgm's word-similarity operators priced as what they are: computing a text's trigrams per row

`a <% b` (and its commutator `%>`) builds the trigrams of both texts for every row it is checked on, some
microseconds each; PostgreSQL prices a C function at 1 (an addition's cost). Searching a big address book by
name (reading/search.py, _may_be_named: each query word `<%` a contact's name, through ix_contacts_name_trgm),
the planner therefore scanned the org's contacts and checked six words against each name: 160 ms at 5,000
contacts against 40 through the trigram and text indexes, 43 against 22 at 1,000. Priced at 1000 (a few
microseconds are a thousand additions), the index reads win wherever they find few rows. The long-text
retrievers (memories, messages) already keep the index out of a small principal's reach (coalesce).

Revision ID: v5_trigram_operator_cost
Revises: v4_trace_in_one_statement
Create Date: 2026-12-05
"""
from alembic import op

revision = "v5_trigram_operator_cost"
down_revision = "v4_trace_in_one_statement"
branch_labels = None
depends_on = None

FUNCTIONS = ("word_similarity_op(text, text)", "word_similarity_commutator_op(text, text)")


def upgrade() -> None:
    for function in FUNCTIONS:
        op.execute(f"alter function {function} cost 1000")


def downgrade() -> None:
    for function in FUNCTIONS:
        op.execute(f"alter function {function} cost 1")
