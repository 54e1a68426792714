"""The functions row security needs marked LEAKPROOF, so that a query's own conditions reach their indexes.

Under row security PostgreSQL checks a query's conditions through an index only when their functions are
LEAKPROOF: full text (`@@`), trigrams and the keys of a name subject (`&&`) would otherwise read every row the
policy lets through. Migrations 0003, v6_name_words_index and v7_name_keys_index mark them when they run as a
superuser. The marking of a pg_catalog or extension function lives outside the schema: a pg_dump restored into a
new server (or a reinstalled extension) comes back without it, and every search of a big principal silently reads
its whole org.
So each `memoria migrate` marks them again where it runs as a superuser, and says what a superuser must run where
it does not; `/readyz` reports it as `"indexes": "degraded"` (still ready: every answer stays correct).
"""
from __future__ import annotations

from sqlalchemy import text

# Each raises no error that depends on a row's content: marking them reveals nothing the policy hides.
FUNCTIONS = (
    "pg_catalog.ts_match_vq(tsvector, tsquery)",
    "public.similarity_op(text, text)",
    "public.word_similarity_op(text, text)",
    "public.memoria_name_words(text)",
    "public.memoria_name_keys(text)",
    "pg_catalog.arrayoverlap(anyarray, anyarray)",
)


def not_leakproof(conn) -> list[str]:
    """Those of FUNCTIONS not marked (a missing function counts as not marked), in FUNCTIONS' order."""
    marked = set(conn.execute(text(
        "select f from unnest(cast(:functions as text[])) f "
        "where to_regprocedure(f) is not null and (select proleakproof from pg_proc where oid = to_regprocedure(f))"),
        {"functions": list(FUNCTIONS)}).scalars())
    return [f for f in FUNCTIONS if f not in marked]


def is_superuser(conn) -> bool:
    return bool(conn.execute(text("select rolsuper from pg_roles where rolname = current_user")).scalar())


def statements(functions) -> list[str]:
    return [f"alter function {f} leakproof;" for f in functions]


def mark(conn) -> list[str]:
    """Mark what is not marked, if `conn` is a superuser's; returns what is still not marked."""
    missing = not_leakproof(conn)
    if missing and is_superuser(conn):
        for statement in statements(missing):
            conn.execute(text(statement))
        missing = not_leakproof(conn)
    return missing
