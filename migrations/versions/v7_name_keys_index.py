"""the names a message may mean found by word pairs, not by reading every name that shares a common word

v6 indexed a name subject's words: a message holding "talleres" read every name holding it (1,474 of 10,000 in
the bench, 22-30 ms a read) before ranking them. A name's keys are now its words and the pairs of its
significant words ("garcia+talleres": sorted, joined by '+'), and a name of one significant word also
"=<word>". The worker reads the names holding a pair of the message's words (or one whole word) all, and of
those sharing a single word at most a few a word (learning/context_reads.py), so a common word costs a bounded
read.

`memoria_name_keys` is LEAKPROOF like v6's function (it raises no error that depends on the row), marked when
migrating as a superuser; `memoria migrate` marks it again after a restore (adapters/leakproof.py). A name's
first 8 significant words make its pairs: a long name stays a few dozen keys.

Revision ID: v7_name_keys_index
Revises: v6_name_words_index
Create Date: 2026-12-06
"""
from alembic import op

revision = "v7_name_keys_index"
down_revision = "v6_name_words_index"
branch_labels = None
depends_on = None

LEAKPROOF = ("public.memoria_name_keys(text)",)
NOISE = ("and", "cia", "coop", "del", "hijos", "inc", "las", "llc", "los", "ltd", "sll", "slu", "the")


def _leakproof(on: bool) -> None:
    word = "leakproof" if on else "not leakproof"
    statements = " ".join(f"alter function {f} {word};" for f in LEAKPROOF)
    op.execute(f"""
    do $$ begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        {statements}
      else
        raise notice 'not a superuser: the names a message may mean are found without their index';
      end if;
    end $$;
    """)


def upgrade() -> None:
    # Significant as learning.contact_candidates.significant says (more than two letters, not a company word of
    # learning.subjects.NAME_NOISE, as of this revision). The first 8 in byte order (as Python sorts them) make at
    # most 28 pairs, each "<lesser>+<greater>"; a name of one significant word is also "=<word>".
    op.execute(f"""
    create or replace function public.memoria_name_keys(subject text) returns text[]
    language plpgsql immutable strict parallel safe as $$
    declare
      words text[] := string_to_array(substr(subject, 6), ' ');
      sig text[] := array(select distinct w collate "C" from unnest(words) w
                          where length(w) > 2 and w <> all('{{{",".join(NOISE)}}}'::text[]) order by 1 limit 8);
      keys text[] := words;
      n int := coalesce(array_length(sig, 1), 0);
    begin
      if n = 1 then
        keys := keys || ('=' || sig[1]);
      end if;
      for i in 1..n loop
        for j in i + 1..n loop
          keys := keys || (sig[i] || '+' || sig[j]);
        end loop;
      end loop;
      return keys;
    end $$;
    """)
    _leakproof(True)
    # fastupdate off: a new name's keys go into the index at once. With it on, they wait in the index's pending
    # list (up to 4 MB) until a vacuum, and every read scans that list whole: 30-40 ms a read after the 20,000
    # name rows of bench/pipeline.py's --known-names 10000 were inserted, 1.5 ms with it off.
    op.execute("create index if not exists ix_memories_name_keys on memories using gin "
               "(org_id, owner_user_id, owner_phone, public.memoria_name_keys(subject)) with (fastupdate = off) "
               "where subject like 'name:%'")
    op.execute("drop index if exists ix_memories_name_words")


def downgrade() -> None:
    op.execute("create index if not exists ix_memories_name_words on memories using gin "
               "(org_id, owner_user_id, owner_phone, public.memoria_name_words(subject)) where subject like 'name:%'")
    op.execute("drop index if exists ix_memories_name_keys")
    _leakproof(False)
    op.execute("drop function if exists public.memoria_name_keys(text)")
