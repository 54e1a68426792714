"""trace items follow their memory by a trigger, not a foreign key

A turn stores 20-40 trace items. Their foreign key to memories checked each one with a row lock on
the memory (SELECT ... FOR KEY SHARE): every turn wrote the tuple header of every memory it showed,
dirtying its page and adding WAL, and it cost ~2 ms of the turn (measured at 1M memories). The link
is kept by a statement trigger instead: deleting memories deletes the trace items that point at them,
in every conversation (the trigger reads in system scope, as the foreign key's cascade did).

Revision ID: r6_trace_items_memory_link
Revises: r6_inline_vectors
Create Date: 2026-11-29
"""
from alembic import op

revision = "r6_trace_items_memory_link"
down_revision = "r6_inline_vectors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("alter table trace_items drop constraint if exists trace_items_memory_id_fkey")
    op.execute("""
        create or replace function memories_forget_trace_items() returns trigger
        language plpgsql set search_path = public, pg_temp as $$
        declare
            scope text := current_setting('memoria.mode', true);
        begin
            perform set_config('memoria.mode', 'system', true);
            delete from trace_items t using gone g where t.memory_id = g.id;
            perform set_config('memoria.mode', coalesce(scope, ''), true);
            return null;
        end $$""")
    op.execute("""
        create trigger memories_forget_trace_items after delete on memories
        referencing old table as gone for each statement execute function memories_forget_trace_items()""")


def downgrade() -> None:
    op.execute("drop trigger if exists memories_forget_trace_items on memories")
    op.execute("drop function if exists memories_forget_trace_items()")
    op.execute("delete from trace_items t where memory_id is not null "
               "and not exists (select 1 from memories m where m.id = t.memory_id)")
    op.execute("alter table trace_items add constraint trace_items_memory_id_fkey foreign key (memory_id) "
               "references memories (id) on delete cascade")
