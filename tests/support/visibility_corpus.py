"""Memory rows of every shape a principal may or may not see, for tests that compare an index-led read with
one query over the whole visibility rule (test_profile_query, test_subject_query)."""
from __future__ import annotations

import random

from memory_core.domain.models import Memory

# The kinds a fixture draws from: ana's own rows (by user, by number, by both), shared rows of her org or
# another, and "hidden" rows of her colleague bea that she must not see.
KINDS = ("personal", "private", "shared", "phone", "both", "hidden")


def memory_of_kind(kind: str, fields: dict, *, rng: random.Random, org, other, ana, bea, phone: str) -> Memory:
    """One memory of `kind` with `fields`; `rng` picks its org and area where the kind leaves them open."""
    if kind == "personal":
        return Memory(org_id=None, level="personal", owner_user_id=ana.id, **fields)
    if kind == "private":
        return Memory(org_id=rng.choice([org.id, other.id]), level="private", owner_user_id=ana.id, **fields)
    if kind == "phone":
        return Memory(org_id=None, level="personal", owner_phone=phone, **fields)
    if kind == "both":
        return Memory(org_id=org.id, level="private", owner_user_id=ana.id, owner_phone=phone, **fields)
    if kind == "shared":
        return Memory(org_id=rng.choice([org.id, org.id, other.id]), level="shared",
                      area=rng.choice(["general", "contacts", "invoices"]), **fields)
    level = rng.choice(["private", "personal"])
    return Memory(org_id=org.id if level == "private" else None, level=level, owner_user_id=bea.id, **fields)
