"""The exclusion list as the pipeline and the readers apply it: the seeded platform rows plus the org's own.

A block's read of its conversation brings the org's list along (`list_column`, `from_column`), so the message can be
embedded with its secrets as marks without a round trip of its own; `redacted` reads it for the other readers."""
from __future__ import annotations

import uuid

from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.orm import Session

from memory_core.adapters.rows import rows as read_rows
from memory_core.domain.models import PolicyExclusion
from memory_core.domain.policy import Exclusion, redact

_FIELDS = ("kind", "name", "pattern", "validator", "description")


def _where(org_id):
    e = PolicyExclusion
    return e.enabled.is_(True), or_(e.org_id.is_(None), e.org_id == org_id) if org_id is not None \
        else e.org_id.is_(None)


def _exclusions_statement(with_org: bool):
    e = PolicyExclusion
    return select(*(getattr(e, f) for f in _FIELDS)).where(*_where(bindparam("org_id") if with_org else None)) \
        .order_by(e.kind, e.name)


# Built once: every ingest reads the whole list (plain rows, not ORM objects).
_EXCLUSIONS = {with_org: _exclusions_statement(with_org) for with_org in (False, True)}


def load_exclusions(session: Session, org_id: uuid.UUID | None) -> list[Exclusion]:
    """The enabled exclusion list: the seeded platform rows plus the org's own additions."""
    return [Exclusion(**{f: getattr(r, f) for f in _FIELDS})
            for r in read_rows(session, _EXCLUSIONS[org_id is not None], {"org_id": org_id})]


def list_column(org_id):
    """The enabled list of the org `org_id` (a column of the enclosing statement), as one JSON array a column."""
    e = PolicyExclusion
    rows = func.json_build_array(*(getattr(e, f) for f in _FIELDS))
    return select(func.coalesce(func.json_agg(aggregate_order_by(rows, e.kind, e.name)), func.json_build_array())) \
        .where(*_where(org_id)).scalar_subquery()


def from_column(value: list) -> list[Exclusion]:
    return [Exclusion(**dict(zip(_FIELDS, row, strict=True))) for row in value]


def redacted(session: Session, org_id: uuid.UUID | None, text: str) -> str:
    """`text` with the secrets the org's exclusion list finds replaced by their marks."""
    return redact(text, load_exclusions(session, org_id)) if text else text
