"""every GIN index keeps no pending list: a row written is in the index at once, not in a list every read scans

With `fastupdate` on (PostgreSQL's default) a GIN index takes new entries into a pending list (up to
gin_pending_list_limit, 4 MB) that a vacuum or an overflowing insert folds in later, and every read through the
index scans the whole list. A big org's full-text read goes through its text index once for all its words and once
a word: with the 4,000 memories it had learnt since the last vacuum pending (94 pages), its block's full text took
13-15 against 8 ms and the block p50 30-35 against 25 ms (bench/turn_profile.py at 1M, 2026-12-06); the list holds
about 22,000 memories before it overflows. Without it a worker's message costs PostgreSQL ~0.15 ms more CPU
(bench/pipeline.py: 0.86-0.99 against 1.05-1.10 ms).

Every GIN index of the schema is altered (the org and owner indexes that jobs/org_indexes.py made too; it makes new
ones without a pending list) and its pending list folded in.

Revision ID: v8_gin_without_pending_list
Revises: v7_name_keys_index
Create Date: 2026-12-06
"""
from alembic import op

revision = "v8_gin_without_pending_list"
down_revision = "v7_name_keys_index"
branch_labels = None
depends_on = None


def _each_gin_index(action: str, skip: tuple[str, ...] = ()) -> None:
    """Run `action` (a format() string, %s the index) on every GIN index of the schema but `skip`."""
    skipped = ", ".join(f"'{name}'" for name in skip) or "''"
    op.execute(f"""
    do $$ declare ix regclass; begin
      for ix in select i.indexrelid::regclass from pg_index i join pg_class c on c.oid = i.indexrelid
                join pg_am a on a.oid = c.relam join pg_namespace n on n.oid = c.relnamespace
                where a.amname = 'gin' and n.nspname = 'public' and c.relname not in ({skipped}) loop
        {action}
      end loop;
    end $$;
    """)


def upgrade() -> None:
    _each_gin_index("execute format('alter index %s set (fastupdate = off)', ix); perform gin_clean_pending_list(ix);")


def downgrade() -> None:
    # v7 built its name keys' index without a pending list already.
    _each_gin_index("execute format('alter index %s reset (fastupdate)', ix);", skip=("ix_memories_name_keys",))
