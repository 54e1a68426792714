"""The core and profile candidates of a turn, read in the order of an index and cut early.

The block wants the first CANDIDATES (300) visible active memories in the profile's order: the person's
own stable facts first (core rank 0), then pinned, the category group, confidence, newest, id. Written as
one query over the whole visibility rule (an OR of arms), PostgreSQL must fetch and rank every visible
row to keep 300: 19,000-36,500 rows for a member of a 50,000-memory org. Here the rule is read as its
disjoint arms (access.memory_own_arms and the shared arm, one readable area at a time), each in the
order of an index that is ordered like the profile and cut at the limit; the outer query merges at most
300 rows an arm. The first 300 of the union are the first 300 of the rule: same rows, same order.

The indexes (migration t3_perf_bigorg_profile_indexes), both partial on active rows:
- ix_memories_profile_shared (org_id, area, pinned desc, group, confidence desc, valid_from desc, id)
  where level = 'shared': an org's shared rows of one area, already in order (a btree led by the org
  is that org's own range, however big the table: no per-org index is needed, unlike HNSW);
- ix_memories_profile_own_user / _own_phone (owner, core rank, pinned desc, group, ...): a person's own
  rows (personal, and private in any org; other orgs' are filtered out on the way).

The planner estimates the rows left after row security's filter far too low (its OR of scopes), thinks
no arm reaches the limit, and then prefers a bitmap scan and a sort of the whole arm (a second for a big
org instead of tens of ms): `read` runs the statement with sorting disabled for it alone, so each arm
reads its index in order; the one sort left merges the areas' first rows.

The ordering expressions are SQL text with literal values, the same text as in the migration: an index
on an expression serves a query only when the query says the same expression, and a literal also keeps
a partial index's predicate provable when PostgreSQL plans a prepared statement generically.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Row, bindparam, false, func, literal_column, select, true, union_all
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.planner import sorting_disabled
from memory_core.adapters.rows import records
from memory_core.adapters.rows import rows as read_rows
from memory_core.domain.access import level_is, memory_own_arms, template
from memory_core.domain.models import Memory
from memory_core.domain.vocabulary import Level

SHARED_INDEX = "ix_memories_profile_shared"
OWN_USER_INDEX = "ix_memories_profile_own_user"
OWN_PHONE_INDEX = "ix_memories_profile_own_phone"
CORE_CATEGORIES = ("person", "preference")


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def core_rank_sql(note_prefixes: Sequence[str]) -> str:
    """0 for the person's own stable facts (personal, about themselves, not a generic note), else 1."""
    notes = " ".join(f"AND NOT starts_with(memories.attribute, {_quoted(p)})" for p in note_prefixes)
    categories = ", ".join(_quoted(c) for c in CORE_CATEGORIES)
    return (f"CASE WHEN memories.level = 'personal' AND memories.subject = 'self' "
            f"AND memories.category IN ({categories}) {notes} THEN 0 ELSE 1 END")


def group_sql(group_of: Mapping[str, int], other: int) -> str:
    """The profile group of a memory's category."""
    whens = " ".join(f"WHEN memories.category = {_quoted(c)} THEN {g}" for c, g in group_of.items())
    return f"CASE {whens} ELSE {other} END"


def candidates_statement(form: tuple, columns: Sequence, *, group_of: Mapping[str, int], other_group: int,
                         note_prefixes: Sequence[str], not_past_event: ColumnElement[bool], limit: int):
    """The first `limit` visible active memories in the profile's order, for principals of one access form
    (access.shape; run with access.template_params and `profile_areas`, the readable areas as a list)."""
    who = template(form)
    core_rank = literal_column(core_rank_sql(note_prefixes))
    group = literal_column(group_sql(group_of, other_group))
    active = Memory.status == literal_column("'active'")
    rest = (Memory.pinned.desc(), group, Memory.confidence.desc(), Memory.valid_from.desc(), Memory.id)

    def keys(rank):
        return (rank.label("k_rank"), Memory.pinned.label("k_pinned"), group.label("k_group"),
                Memory.confidence.label("k_confidence"), Memory.valid_from.label("k_from"), Memory.id.label("k_id"))

    arms = [select(*columns, *keys(core_rank)).where(arm, active, not_past_event)
            .order_by(core_rank, *rest).limit(limit) for arm in memory_own_arms(who)]
    if who.has_org and who.has_areas:
        # One ordered range of the shared index per readable area (an IN over areas would read them mixed).
        areas = (select(func.unnest(bindparam("profile_areas", type_=ArrayParam("varchar"))).label("area"))
                 .subquery("readable"))
        # A shared row is never the person's own (core rank 1): its index leaves the rank out.
        shared = (select(*columns, *keys(literal_column("1"))).where(
            level_is(Level.SHARED), Memory.org_id == who.org_id, Memory.area == areas.c.area,
            active, not_past_event).order_by(*rest).limit(limit).lateral("shared_arm"))
        arms.append(select(*shared.c).select_from(areas).join(shared, true()))
    if not arms:
        return select(*columns).where(false()).limit(0)
    merged = union_all(*arms).subquery("visible")
    c = merged.c
    return (select(*[c[col.key] for col in columns])
            .order_by(c.k_rank, c.k_pinned.desc(), c.k_group, c.k_confidence.desc(), c.k_from.desc(), c.k_id)
            .limit(limit))



def read(session: Session, statement, params: dict) -> list[Row]:
    """Run a candidates statement with sorting disabled for it alone (see above)."""
    with sorting_disabled(session):
        return records(read_rows(session, statement, params))
