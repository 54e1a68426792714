"""The exclusion list as the pipeline and the readers apply it: the seeded platform rows plus the org's own.

`redacted` is what a model may be shown of a text: its secrets replaced by their marks (policy.redact)."""
from __future__ import annotations

import uuid

from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session

from memory_core.adapters.rows import rows as read_rows
from memory_core.domain.models import PolicyExclusion
from memory_core.domain.policy import Exclusion, redact


def _exclusions_statement(with_org: bool):
    e = PolicyExclusion
    q = select(e.kind, e.name, e.pattern, e.validator, e.description).where(e.enabled.is_(True))
    q = q.where(or_(e.org_id.is_(None), e.org_id == bindparam("org_id")) if with_org else e.org_id.is_(None))
    return q.order_by(e.kind, e.name)


# Built once: every ingest reads the whole list (plain rows, not ORM objects).
_EXCLUSIONS = {with_org: _exclusions_statement(with_org) for with_org in (False, True)}


def load_exclusions(session: Session, org_id: uuid.UUID | None) -> list[Exclusion]:
    """The enabled exclusion list: the seeded platform rows plus the org's own additions."""
    return [Exclusion(kind=r.kind, name=r.name, pattern=r.pattern, validator=r.validator, description=r.description)
            for r in read_rows(session, _EXCLUSIONS[org_id is not None], {"org_id": org_id})]


def redacted(session: Session, org_id: uuid.UUID | None, text: str) -> str:
    """`text` with the secrets the org's exclusion list finds replaced by their marks."""
    return redact(text, load_exclusions(session, org_id)) if text else text
