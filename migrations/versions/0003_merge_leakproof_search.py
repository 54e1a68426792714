"""Join the parallel branches; let full-text and trigram matches use their indexes under RLS.

Under row-level security PostgreSQL evaluates a query's own conditions only after the policy's,
unless their functions are LEAKPROOF, so `search_tsv @@ query` could not use its GIN index and a
rare word at a million rows cost a sequential scan. The match functions below raise no error that
depends on the row's content, so marking them leakproof reveals nothing the policy hides. Doing so
needs a superuser: where the migration runs without one, it says so and search stays correct, only
slower.

Revision ID: 0003
Revises: c5_console_indexes, i6_privacy_indexes, p3_outbox_retry, p3_secret_codes_received, r4_trace_rls
Create Date: 2026-11-29
"""
from alembic import op

revision = "0003"
down_revision = ("c5_console_indexes", "i6_privacy_indexes", "p3_outbox_retry", "p3_secret_codes_received",
                 "r4_trace_rls")
branch_labels = None
depends_on = None

FUNCTIONS = (
    "pg_catalog.ts_match_vq(tsvector, tsquery)",
    "public.similarity_op(text, text)",
    "public.word_similarity_op(text, text)",
)


def _set(leakproof: bool) -> None:
    word = "leakproof" if leakproof else "not leakproof"
    statements = " ".join(f"alter function {f} {word};" for f in FUNCTIONS)
    op.execute(f"""
    do $$ begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        {statements}
      else
        raise notice 'not a superuser: full-text and trigram search under RLS will not use their indexes';
      end if;
    end $$;
    """)


def upgrade() -> None:
    _set(True)


def downgrade() -> None:
    _set(False)
