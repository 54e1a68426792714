"""Keyset pages that go both ways, with a total capped for speed: the console's lists use one rule.

A cursor is the sort key of a row, written as text (`2026-11-29T10:00:00+00:00|<uuid>` or `12345`). `after` walks
away from the start of the list, `before` back towards it; either way the page keeps the list's order."""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, literal_column, select, tuple_
from sqlalchemy.orm import Session

from memory_core.adapters.planner import custom_plans, generic_plan_window, sorting_disabled
from memory_core.domain.errors import InvalidInput

COUNT_CAP = 1000


@dataclass
class Page:
    rows: list[Any]
    prev_cursor: str | None
    next_cursor: str | None
    total: int  # exact up to COUNT_CAP, then COUNT_CAP + 1 ("1000+")

    @property
    def total_label(self) -> str:
        return f"{COUNT_CAP}+" if self.total > COUNT_CAP else str(self.total)


def _text(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.datetime) else str(value)


def cursor_of(values: Sequence[Any]) -> str:
    return "|".join(_text(v) for v in values)


def parse_cursor(raw: str | None, types: Sequence[Callable[[str], Any]]) -> tuple | None:
    if not raw:
        return None
    parts = raw.rsplit("|", len(types) - 1)  # only a leading text key (a name) may itself hold a "|"
    try:
        if len(parts) != len(types):
            raise ValueError(raw)
        return tuple(t(p) for t, p in zip(types, parts))
    except (ValueError, OverflowError):
        raise InvalidInput("That page link is not valid: start again from the first page.", "page") from None


def contains(q: str) -> str:
    """A LIKE pattern for "holds these words": the search text with LIKE's wildcards taken out."""
    return f"%{q.replace('%', '').replace('_', '')}%"


def capped_count(s: Session, stmt: Select, cap: int = COUNT_CAP, order: Sequence[Any] = ()) -> int:
    return int(s.scalar(_capped_count(stmt, cap, order)) or 0)


def _capped_count(stmt: Select, cap: int = COUNT_CAP, order: Sequence[Any] = ()) -> Select:
    # Counting needs no column: a covering index can answer it without reading the rows. `order`: count the
    # first cap + 1 rows in this order (with sorting disabled, an index in that order, stopping at cap + 1),
    # where the planner, misled by row security's estimates, would build a bitmap of every row first.
    rows = stmt.with_only_columns(literal_column("1"), maintain_column_froms=True).order_by(None)
    rows = rows.order_by(*order).limit(cap + 1)
    return select(func.count()).select_from(rows.subquery())


def distinct_values(s: Session, stmt: Select, column: Any, limit: int) -> list[Any]:
    """The distinct non-null values of `column` among the rows of `stmt` (a select of that column with its
    filter), ascending, at most `limit`: a loose index scan, one probe of an index on (filter columns, column)
    per value, where DISTINCT would read every row (a filter list over an org's 50,000 audit entries)."""
    return distinct_values_of(s, [(stmt, column, limit)])[0]


def distinct_values_of(s: Session, lists: Sequence[tuple[Select, Any, int]], *, generic: bool = False
                       ) -> list[list[Any]]:
    """`distinct_values` of several (stmt, column, limit) in one statement (a page's filter lists: one round trip
    and one statement to plan, not one each), each list ascending. `generic`: keep PostgreSQL's generic plan
    (planner.generic_plan_window; an index probe per value is the same plan for any org), for a table whose row security
    makes planning cost more than the two round trips that setting takes (the audit log's: 7x running it; the
    traces' and job runs' lists plan in a few ms, and were slower with them). A console page's transaction keeps
    generic plans anyway (planner.kept_plans), where the window costs no round trip."""
    arrays = []
    for i, (stmt, column, limit) in enumerate(lists):
        key = column.key
        found = stmt.where(column.is_not(None)).order_by(column).limit(1).cte(f"distinct_values_{i}", recursive=True)
        following = stmt.where(column > found.c[key]).order_by(column).limit(1).scalar_subquery()
        found = found.union_all(select(following).where(found.c[key].is_not(None)))
        values = select(found.c[key]).where(found.c[key].is_not(None)).limit(limit).subquery()
        arrays.append(select(func.array_agg(values.c[key])).scalar_subquery())
    with generic_plan_window(s) if generic else nullcontext():
        row = s.execute(select(*arrays)).one()
    return [sorted(values or ()) for values in row]


def keyset(s: Session, stmt: Select, columns: Sequence[Any], key: Callable[[Any], Sequence[Any]],
           types: Sequence[Callable[[str], Any]], *, after: str | None = None, before: str | None = None,
           descending: bool = True, limit: int = 50, scalars: bool = True, in_index_order: bool = False,
           total: int | None = None, for_values: bool = False) -> Page:
    """One page of `stmt` ordered by `columns` (descending or not), from a cursor either way, with the total.
    `in_index_order`: an index serves the filter and the order, so the page is read without a sort
    (memory_core/adapters/planner.py says why the planner would otherwise sort the whole filter).
    `total`: the capped total when the caller already counted it (then it is not counted again).
    `for_values`: the page is planned for the values it is run with, never with PostgreSQL's generic plan of a
    prepared statement (planner.custom_plans): for filters whose best plan depends on the value (words searched:
    a common word matches a tenth of a big org's rows, a rare one a single row), where a generic plan made a
    page of a big org's memory list 10x slower. The console's pages keep generic plans for everything else
    (planner.kept_plans): every list searched by words passes it."""
    # One sorting_disabled around the count and the page: its two round trips once, not twice.
    with custom_plans(s) if for_values else nullcontext(), sorting_disabled(s) if in_index_order else nullcontext():
        # Planned for its words, the count reads in the page's order too: for a common word the planner then walks
        # the rows in that order and stops at the cap, where it built a bitmap of every row holding the word
        # (90 ms for a word in 420,000 of 1M memories); a rare word's few rows are still counted from its index.
        counted = (_capped_count(stmt, order=columns if in_index_order or for_values else ())
                   if total is None else None)
        return _page(s, stmt, columns, key, types, after, before, descending, limit, scalars,
                     None if total is None else min(total, COUNT_CAP + 1), counted)


def _page(s: Session, stmt: Select, columns: Sequence[Any], key: Callable[[Any], Sequence[Any]],
          types: Sequence[Callable[[str], Any]], after: str | None, before: str | None, descending: bool, limit: int,
          scalars: bool, total: int | None, counted: Select | None = None) -> Page:
    """`counted`: the capped count to read with the page, as a column of it (an uncorrelated subquery PostgreSQL
    runs once): one statement and one round trip where a count and a page took two."""
    sort_key = tuple_(*columns) if len(columns) > 1 else columns[0]
    back = parse_cursor(before, types)
    fwd = None if back else parse_cursor(after, types)
    bound = lambda cur: tuple_(*cur) if len(cur) > 1 else cur[0]  # noqa: E731
    going_back = back is not None
    if going_back:
        stmt = stmt.where(sort_key > bound(back) if descending else sort_key < bound(back))
    elif fwd is not None:
        stmt = stmt.where(sort_key < bound(fwd) if descending else sort_key > bound(fwd))
    order = [c.desc() if descending != going_back else c.asc() for c in columns]
    page = stmt.order_by(*order).limit(limit + 1)
    if counted is not None:
        got = s.execute(page.add_columns(counted.scalar_subquery())).all()
        rows = [r[0] for r in got] if scalars else [r[:-1] for r in got]  # a row of several columns: a tuple
        # No row on this page: the list may still hold some (a page link past its end), so count them apart.
        total = int(got[0][-1]) if got else (int(s.scalar(counted) or 0) if back or fwd else 0)
    else:
        rows = list(s.scalars(page) if scalars else s.execute(page))
    more = len(rows) > limit
    rows = rows[:limit]
    if going_back:
        rows.reverse()
    first, last = (cursor_of(key(rows[0])), cursor_of(key(rows[-1]))) if rows else (None, None)
    prev_cursor = first if (going_back and more) or (fwd is not None and rows) else None
    next_cursor = last if (not going_back and more) or (going_back and rows) else None
    return Page(rows, prev_cursor, next_cursor, total)


def text_type(raw: str) -> str:
    if len(raw) > 300:
        raise ValueError(raw)
    return raw


def uuid_type(raw: str) -> uuid.UUID:
    return uuid.UUID(raw)


def datetime_type(raw: str) -> dt.datetime:
    return dt.datetime.fromisoformat(raw)


def bigint_type(raw: str) -> int:
    value = int(raw)
    if not 0 < value < 2**63:
        raise ValueError(raw)
    return value
