"""the words of the names learnt without a contact, indexed, so a message finds the names it shares a word with

The worker shows the extractor the `name:` subjects a writer may see that share a word with the message
(learning/context_reads.py). Without an index it read every visible row of the writer's org to find them, under
row security (3-4 µs a row): 70-80 ms for an org of 20,000 rows, even for "gracias". `memoria_name_words(subject)`
is a name subject's words ("name:hierros olano" -> {hierros,olano}); the partial GIN index holds them, by org,
for name rows only. As the worker reads (prepared, generic plan), 10-16 ms -> 3-4 ms a first read when no name
shares a word with the message, 42 -> 30 ms when the message holds a word 1,500 names share.

Under row security PostgreSQL checks a query's own conditions through an index only when their functions are
LEAKPROOF (migration 0003): the words function and array overlap (`&&`) raise no error that depends on a row's
content, so marking them reveals nothing the policy hides. It needs a superuser: without one the migration says so
and the read stays correct, only slower. A plpgsql function, so the planner keeps the call (the index's
expression) instead of inlining its body, which is not leakproof.

Revision ID: v6_name_words_index
Revises: v5_trigram_operator_cost
Create Date: 2026-12-05
"""
from alembic import op

revision = "v6_name_words_index"
down_revision = "v5_trigram_operator_cost"
branch_labels = None
depends_on = None

LEAKPROOF = ("public.memoria_name_words(text)", "pg_catalog.arrayoverlap(anyarray, anyarray)")


def _leakproof(on: bool) -> None:
    word = "leakproof" if on else "not leakproof"
    statements = " ".join(f"alter function {f} {word};" for f in LEAKPROOF)
    op.execute(f"""
    do $$ begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        {statements}
      else
        raise notice 'not a superuser: the names a message shares a word with are found without their index';
      end if;
    end $$;
    """)


def upgrade() -> None:
    op.execute("""
    create or replace function public.memoria_name_words(subject text) returns text[]
    language plpgsql immutable strict parallel safe as $$
    begin
      return string_to_array(substr(subject, 6), ' ');
    end $$;
    """)
    _leakproof(True)
    # The owners beside the words (btree_gin; a GIN index is read by any of its columns): a prepared statement's
    # generic plan prices an org at the average org's size, and read an org's whole range rather than a words
    # index spanning every org's names (120 ms at 20,000 rows); by org, user or number, each arm of the ownership
    # rule finds its names by word.
    op.execute("create extension if not exists btree_gin")
    op.execute("create index if not exists ix_memories_name_words on memories using gin "
               "(org_id, owner_user_id, owner_phone, public.memoria_name_words(subject)) where subject like 'name:%'")


def downgrade() -> None:
    op.execute("drop index if exists ix_memories_name_words")
    _leakproof(False)
    op.execute("drop function if exists public.memoria_name_words(text)")
