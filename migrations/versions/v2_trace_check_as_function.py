"""Staff's arm of the memories policy asks a function whether a trace holds the memory, not an inline EXISTS

Row security expands a table's policies into every statement that reads it. The staff arm's EXISTS over
trace_items brought trace_items' own policies with it, and theirs memory_traces': some twenty plan nodes for
every reference to memories, in every statement of every scope, though only platform staff ever get past its
first two tests. PostgreSQL builds each node at every run of a statement, generic plan or not: the worker's
context read (three references to memories) ran 1.3-1.7 ms a time with 494 plan lines, and 0.9-1.4 ms with 318
once the EXISTS sat in a function (bench database at 1M; auto_explain and pg_stat_statements see none of this,
they time the run and not the start).

The function runs the same EXISTS as the caller (SECURITY INVOKER), so trace_items' policies still decide; the
policy's tests run left to right and it is only called for platform staff. Its COST (25 units a row) is about what
the planner priced the inline EXISTS's index probe at: priced at the default 100 (0.25 a row), checking rows looked
cheap enough that plans changed, e.g. a date arm read all of an org's active rows and sorted them rather than a
range of its date index (tests/test_date_retriever.py).

Revision ID: v2_trace_check_as_function
Revises: v1_inline_text_beside_vectors
Create Date: 2026-12-04
"""
from alembic import op

revision = "v2_trace_check_as_function"
down_revision = "v1_inline_text_beside_vectors"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
STAFF = ("(SELECT current_setting('memoria.mode', true)) = 'platform' and "
         "(SELECT memoria_platform_role((SELECT nullif(current_setting('memoria.user_id', true), '')::uuid))) "
         "in ('staff')")


def upgrade() -> None:
    op.execute(f"""
    create or replace function memoria_memory_in_a_trace(p_memory uuid) returns boolean
      language plpgsql stable cost 10000 as $$
    -- Whether a trace the caller may read holds this memory (trace_items' policies apply: the caller's rights).
    begin
      return exists (select 1 from public.trace_items ti where ti.memory_id = p_memory);
    end $$;
    revoke all on function memoria_memory_in_a_trace(uuid) from public;
    grant execute on function memoria_memory_in_a_trace(uuid) to {APP_ROLE};
    alter policy memories_platform on memories using ({STAFF} and memoria_memory_in_a_trace(id));
    """)


def downgrade() -> None:
    op.execute(f"""
    alter policy memories_platform on memories
      using ({STAFF} and exists (select 1 from trace_items ti where ti.memory_id = memories.id));
    drop function if exists memoria_memory_in_a_trace(uuid);
    """)
