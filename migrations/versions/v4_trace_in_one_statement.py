"""a memory block's trace and its items stored in one statement

Every turn stores the block it assembled: the trace, then its items (two statements: the items' row security
checks that their trace exists, and a row inserted by the same statement is not yet visible to it). Each statement
a turn sends costs its Python and a round trip (~0.7 ms of the client's CPU a statement on the project's machine,
2026-12-05). This function runs both inserts one after the other, so the second sees the first, in one round trip.

SECURITY INVOKER (the default): both inserts run with the caller's rights, so both tables' policies check the rows
exactly as the two statements did (tests/test_context.py). PL/pgSQL keeps each insert's plan for the session.

Revision ID: v4_trace_in_one_statement
Revises: v3_recent_subjects_window
Create Date: 2026-12-05
"""
from alembic import op

revision = "v4_trace_in_one_statement"
down_revision = "v3_recent_subjects_window"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
SIGNATURE = ("memoria_store_trace(uuid, uuid, uuid, uuid, uuid, varchar, varchar, text, integer, timestamptz, "
             "uuid[], varchar[], integer[], float8[], integer[])")


def upgrade() -> None:
    op.execute(f"""
    create or replace function memoria_store_trace(
        p_id uuid, p_org uuid, p_conversation uuid, p_message uuid, p_user uuid, p_phone varchar, p_channel varchar,
        p_text text, p_tokens integer, p_created_at timestamptz,
        p_ids uuid[], p_blocks varchar[], p_ranks integer[], p_scores float8[], p_chars integer[])
      returns void language plpgsql volatile as $$
    begin
      insert into public.memory_traces
        (id, org_id, conversation_id, message_id, user_id, phone, channel, block_text, tokens, created_at)
      values (p_id, p_org, p_conversation, p_message, p_user, p_phone, p_channel, p_text, p_tokens, p_created_at);
      insert into public.trace_items (trace_id, memory_id, block, rank, score, chars)
      select p_id, i.memory_id, i.block, i.rank, i.score, i.chars
      from unnest(p_ids, p_blocks, p_ranks, p_scores, p_chars) as i(memory_id, block, rank, score, chars);
    end $$;
    revoke all on function {SIGNATURE} from public;
    grant execute on function {SIGNATURE} to {APP_ROLE};
    """)


def downgrade() -> None:
    op.execute(f"drop function if exists {SIGNATURE}")
