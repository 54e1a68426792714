"""Indexes that hold one big organization's memories: a partial HNSW (vectors) and a partial GIN (full
text) per org above BIG_ORG_MEMORIES active memories, named by the org.

pgvector's HNSW filters after the graph has produced its candidates, so a principal of a big org walking
the one graph of the whole table reads many other orgs' rows before it has k of its own (and with the
walk capped, may return fewer). An index that holds only the org's active rows gives its walk the org's
rows alone; its predicate (`org_id = '<org>' AND status = 'active'`) is implied by the org arm of the
ownership rule when the org is compared as a literal (access.memory_org_arm(..., org_id=literal)), which
search does for an org listed by `indexed_orgs`. The personal arm (a person's own memories, no org)
stays small and is scanned on its own.

`jobs/org_indexes.py` creates them (CREATE INDEX CONCURRENTLY) as orgs grow past BIG_ORG_MEMORIES and
drops them when they shrink below SMALL_ORG_MEMORIES (apart, so an org at the edge does not flap).

A person with many personal memories (they have no org) gets the same for them: a partial HNSW and a partial
GIN per user (`owner_user_id = '<user>' AND level = 'personal' AND status = 'active'`) from BIG_OWNER_MEMORIES,
dropped below SMALL_OWNER_MEMORIES. A big org's principal otherwise scanned their personal rows exactly (3,200 on
the scale bench: 46 ms of a turn under load); with it, the personal arm walks the person's own graph, and the
full-text retriever reads the person's matching rows from their own text index (search._fts_stmt).

An org with its own indexes also has its common words listed (`organizations.common_words`, most common first):
those held by at least COMMON_WORD_SHARE of its active memories, at most COMMON_WORDS_MAX. Its full text reads the
other words one by one (search._fts_stmt): a common word's share of the candidates would be an arbitrary sample of
its thousands of rows, read at the cost of all of them.

An org with BIG_ORG_MESSAGES messages (not deleted) gets the same on messages (`ix_messages_vec_org_<hex>`,
`ix_messages_tsv_org_<hex>`, predicate `org_id = '<org>' AND deleted_at IS NULL`), dropped below
SMALL_ORG_MESSAGES: search's message retrievers then read the org's messages there (access.message_org_arm with
the org as a literal) and the person's messages outside any org (access.message_personal_arm) apart.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.orm import Session

# An org with at least this many active memories gets its own indexes...
BIG_ORG_MEMORIES = 20_000
# ...and loses them below this many.
SMALL_ORG_MEMORIES = 10_000
# A user with at least this many active personal memories gets their own vector index, and loses it below
# the second mark.
BIG_OWNER_MEMORIES = 2_000
SMALL_OWNER_MEMORIES = 1_000
# An org with at least this many messages (not deleted) gets its own message indexes, and loses them below the
# second mark.
BIG_ORG_MESSAGES = 20_000
SMALL_ORG_MESSAGES = 10_000
VECTOR_PREFIX = "ix_memories_vec_org_"
TEXT_PREFIX = "ix_memories_tsv_org_"
OWNER_VECTOR_PREFIX = "ix_memories_vec_user_"
OWNER_TEXT_PREFIX = "ix_memories_tsv_user_"
MESSAGE_VECTOR_PREFIX = "ix_messages_vec_org_"
MESSAGE_TEXT_PREFIX = "ix_messages_tsv_org_"
# A word held by at least this share of an indexed org's active memories is one of its common words; at most this
# many are listed, the most common first.
COMMON_WORD_SHARE = 0.01
COMMON_WORDS_MAX = 500
# How long a process trusts its list of indexed orgs (a new index is used this long after it is built).
CACHE_SECONDS = 30.0

_cache: dict[str, tuple[float, frozenset[uuid.UUID]]] = {}
_cache_lock = threading.Lock()


def index_names(org_id: uuid.UUID) -> tuple[str, str]:
    """The vector and text index names of an org (63 characters at most, as PostgreSQL wants)."""
    return VECTOR_PREFIX + org_id.hex, TEXT_PREFIX + org_id.hex


def predicate(org_id: uuid.UUID) -> str:
    # A UUID renders as hex and dashes only: nothing to escape.
    return f"org_id = '{uuid.UUID(str(org_id))}'::uuid AND status = 'active'"


def _create(table: str, names: tuple[str, str], where: str) -> list[str]:
    """The vector and text indexes `names` of a table's rows matching `where`, built concurrently."""
    vec, tsv = names
    return [f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {vec} ON {table} USING hnsw (embedding vector_cosine_ops) "
            f"WHERE {where}",
            # No pending list (migration v8): a row learnt is in the index at once, not in a list every read scans.
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {tsv} ON {table} USING gin (search_tsv) "
            f"WITH (fastupdate = off) WHERE {where}"]


def common_words_statement(org_id: uuid.UUID, active: int) -> str:
    """The UPDATE that lists an org's common words (see COMMON_WORD_SHARE), `active` its active memories: run in
    system scope."""
    rows = f"select search_tsv from memories where {predicate(org_id)}".replace("'", "''")
    least = max(1, int(active * COMMON_WORD_SHARE))
    return (f"update organizations set common_words = (select coalesce(array_agg(word order by ndoc desc, word), "
            f"'{{}}') from (select word, ndoc from ts_stat('{rows}') where ndoc >= {least} "
            f"order by ndoc desc, word limit {COMMON_WORDS_MAX}) common) where id = '{uuid.UUID(str(org_id))}'::uuid")


def _drop(names: tuple[str, str]) -> list[str]:
    return [f"DROP INDEX CONCURRENTLY IF EXISTS {name}" for name in names]


def create_statements(org_id: uuid.UUID) -> list[str]:
    return _create("memories", index_names(org_id), predicate(org_id))


def drop_statements(org_id: uuid.UUID) -> list[str]:
    return _drop(index_names(org_id))


def message_index_names(org_id: uuid.UUID) -> tuple[str, str]:
    """An org's vector and text index names on messages."""
    return MESSAGE_VECTOR_PREFIX + org_id.hex, MESSAGE_TEXT_PREFIX + org_id.hex


def message_predicate(org_id: uuid.UUID) -> str:
    return f"org_id = '{uuid.UUID(str(org_id))}'::uuid AND deleted_at IS NULL"


def message_create_statements(org_id: uuid.UUID) -> list[str]:
    return _create("messages", message_index_names(org_id), message_predicate(org_id))


def message_drop_statements(org_id: uuid.UUID) -> list[str]:
    return _drop(message_index_names(org_id))


def owner_index_name(user_id: uuid.UUID) -> str:
    return OWNER_VECTOR_PREFIX + user_id.hex


def owner_index_names(user_id: uuid.UUID) -> tuple[str, str]:
    """A user's vector and text index names."""
    return owner_index_name(user_id), OWNER_TEXT_PREFIX + user_id.hex


def owner_predicate(user_id: uuid.UUID) -> str:
    return f"owner_user_id = '{uuid.UUID(str(user_id))}'::uuid AND level = 'personal' AND status = 'active'"


def owner_create_statements(user_id: uuid.UUID) -> list[str]:
    return _create("memories", owner_index_names(user_id), owner_predicate(user_id))


def owner_drop_statements(user_id: uuid.UUID) -> list[str]:
    return _drop(owner_index_names(user_id))


def _indexes_on(session: Session, *prefixes: str, table: str = "memories") -> list[tuple[str, bool]]:
    """(name, valid) of every index on the table whose name starts with one of the prefixes (a failed
    concurrent build is invalid)."""
    like = " or ".join(f"c.relname like :p{i}" for i in range(len(prefixes)))
    relation = {"memories": "'memories'::regclass", "messages": "'messages'::regclass"}[table]
    return [(name, bool(valid)) for name, valid in session.execute(text(
        "select c.relname, i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid "
        f"where i.indrelid = {relation} and ({like})"),
        {f"p{i}": prefix + "%" for i, prefix in enumerate(prefixes)}).all()]


def _cached(key: str, now: float | None, read: Callable[[], frozenset[uuid.UUID]]) -> frozenset[uuid.UUID]:
    """What `read` answers, read from the catalog at most every CACHE_SECONDS per process."""
    now = time.monotonic() if now is None else now
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            return hit[1]
    found = read()
    with _cache_lock:
        _cache[key] = (now, found)
    return found


def _id_after(prefix: str, name: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(hex=name[len(prefix):])
    except ValueError:
        return None


def existing_owners(session: Session) -> dict[uuid.UUID, dict[str, bool]]:
    """Every user's indexes in the database: user -> {index name: valid}."""
    out: dict[uuid.UUID, dict[str, bool]] = {}
    for name, valid in _indexes_on(session, OWNER_VECTOR_PREFIX, OWNER_TEXT_PREFIX):
        prefix = OWNER_VECTOR_PREFIX if name.startswith(OWNER_VECTOR_PREFIX) else OWNER_TEXT_PREFIX
        user = _id_after(prefix, name)
        if user is not None:
            out.setdefault(user, {})[name] = valid
    return out


def indexed_owners(session: Session, *, now: float | None = None) -> frozenset[uuid.UUID]:
    """The users whose two indexes exist and are valid; read from the catalog at most every CACHE_SECONDS."""
    return _cached("owners", now, lambda: frozenset(
        user for user, names in existing_owners(session).items() if len(names) == 2 and all(names.values())))


def _org_of(name: str) -> uuid.UUID | None:
    for prefix in (VECTOR_PREFIX, TEXT_PREFIX):
        if name.startswith(prefix):
            return _id_after(prefix, name)
    return None


def existing(session: Session) -> dict[uuid.UUID, dict[str, bool]]:
    """Every org index in the database: org -> {index name: valid} (a failed concurrent build is invalid)."""
    out: dict[uuid.UUID, dict[str, bool]] = {}
    for name, valid in _indexes_on(session, VECTOR_PREFIX, TEXT_PREFIX):
        org = _org_of(name)
        if org is not None:
            out.setdefault(org, {})[name] = valid
    return out


def indexed_orgs(session: Session, *, now: float | None = None) -> frozenset[uuid.UUID]:
    """The orgs whose two indexes exist and are valid; read from the catalog at most every CACHE_SECONDS."""
    return _cached("orgs", now, lambda: frozenset(
        org for org, names in existing(session).items() if len(names) == 2 and all(names.values())))


def existing_message_orgs(session: Session) -> dict[uuid.UUID, dict[str, bool]]:
    """Every org's message indexes in the database: org -> {index name: valid}."""
    out: dict[uuid.UUID, dict[str, bool]] = {}
    for name, valid in _indexes_on(session, MESSAGE_VECTOR_PREFIX, MESSAGE_TEXT_PREFIX, table="messages"):
        prefix = MESSAGE_VECTOR_PREFIX if name.startswith(MESSAGE_VECTOR_PREFIX) else MESSAGE_TEXT_PREFIX
        org = _id_after(prefix, name)
        if org is not None:
            out.setdefault(org, {})[name] = valid
    return out


def message_indexed_orgs(session: Session, *, now: float | None = None) -> frozenset[uuid.UUID]:
    """The orgs whose two message indexes exist and are valid; read from the catalog at most every CACHE_SECONDS."""
    return _cached("message_orgs", now, lambda: frozenset(
        org for org, names in existing_message_orgs(session).items() if len(names) == 2 and all(names.values())))


def forget_cache() -> None:
    """The next `indexed_orgs` reads the catalog (after the job changed the indexes, in this process)."""
    with _cache_lock:
        _cache.clear()
