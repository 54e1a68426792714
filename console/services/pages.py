"""Keyset pages ordered by (created_at, id): the cursor of a page's last row, and reading it back."""
from __future__ import annotations

import datetime as dt
import uuid
from typing import Protocol

from memory_core.domain.errors import InvalidInput


class _Row(Protocol):
    created_at: dt.datetime
    id: uuid.UUID


def cursor(row: _Row) -> str:
    """The `after` value of the page that follows `row`."""
    return f"{row.created_at.isoformat()}|{row.id}"


def parse_cursor(raw: str | None) -> tuple[dt.datetime, uuid.UUID] | None:
    """(created_at, id) from an `after` value; None for the first page; InvalidInput for a mangled link."""
    if not raw:
        return None
    try:
        at, row_id = raw.split("|", 1)
        return dt.datetime.fromisoformat(at), uuid.UUID(row_id)
    except ValueError:
        raise InvalidInput("That page link is not valid: start again from the first page.", "after") from None
