"""The one phone rule: an international number, written "+" and its digits (ingest, authorized numbers,
privacy requests and linking all compare phones in this form)."""
from __future__ import annotations

import re

from memory_core.domain.errors import InvalidInput

PHONE_RE = re.compile(r"^\+?\d{6,15}$")


def normalise_phone(phone: str | None) -> str | None:
    """"+34 611-222-333" -> "+34611222333"; None or "" -> None; anything else raises InvalidInput."""
    if phone is None or phone == "":
        return None
    compact = re.sub(r"[\s\-().]", "", phone)
    if not PHONE_RE.match(compact):
        raise InvalidInput("phone must be an international number like +34611222333", field="phone")
    return "+" + compact.lstrip("+")
