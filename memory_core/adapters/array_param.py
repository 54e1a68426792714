"""A list bound as one parameter (`bindparam(..., type_=ArrayParam("uuid"))`): sent as PostgreSQL's array literal,
text, and cast to `<item>[]` in the statement.

psycopg writes a Python list through its array dumper, element by element in Python, and looks the element's
dumper up afresh for every cursor (SQLAlchemy opens one a statement): a typical block's parameters took ~2.1 ms of
its ~20 ms of Python, ~0.8 of it the five 29-element arrays of its trace items; as literals, ~0.9 ms in all
(psycopg's conversion timed around every call, 100k data dir, 2026-12-05).

Numbers and UUIDs go as their text, which holds no character an array literal treats apart; every other
element (a str, an enum of str) goes double-quoted with its quotes and backslashes escaped, so no value can end
its element early or add one. None is NULL, as an element or as the whole list.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy.types import UserDefinedType


def _element(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):  # a bool is an int: it would go as 1 or 0
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)  # an int subclass's own str (an IntEnum's name) is not its number
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float):
        return float.__repr__(value)  # the shortest text that reads back as the same float (numpy's repr is not)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def array_literal(values: Iterable) -> str:
    """`values` as PostgreSQL's array literal: '{1,2}', '{"a","b \\"c\\""}'."""
    return "{" + ",".join(map(_element, values)) + "}"


def _bind(value):
    return None if value is None else array_literal(value)


class ArrayParam(UserDefinedType):
    """A bound list whose elements are of the SQL type `item` ("uuid", "varchar", "integer", "float",
    "bigint"): the statement reads `%(name)s::<item>[]`."""

    cache_ok = True
    render_bind_cast = True

    def __init__(self, item: str) -> None:
        self.item = item

    def get_col_spec(self, **kw) -> str:
        return f"{self.item}[]"

    def bind_processor(self, dialect):
        return _bind
