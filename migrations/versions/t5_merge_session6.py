"""join the morning's branches: the console's list indexes and the big principal's date indexes

Both add indexes only, on different columns and under different names; nothing to reconcile.

Revision ID: t5_merge_session6
Revises: t5_bigorg17_date_indexes, t5_console17_console_indexes
Create Date: 2026-12-02
"""

revision = "t5_merge_session6"
down_revision = ("t5_bigorg17_date_indexes", "t5_console17_console_indexes")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
