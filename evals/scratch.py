"""Scratch organizations for evals and benches: made with their people, and removed with everything in them."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import delete
from sqlalchemy.orm import Session

from memory_core.adapters.db import SYSTEM, Database
from memory_core.domain.models import Membership, Memory, Organization, User


def scratch_org(s: Session, name: str, *, owner_email: str, owner_name: str,
                **org_fields) -> tuple[Organization, User]:
    """A new org with one owner (a new account), flushed so both have ids; the caller commits."""
    org = Organization(name=name, **org_fields)
    owner = User(email=owner_email, name=owner_name)
    s.add_all([org, owner])
    s.flush()
    s.add(Membership(org_id=org.id, user_id=owner.id, role="owner"))
    return org, owner


def remove_scratch(database: Database, org_id: uuid.UUID, user_ids: Iterable[uuid.UUID]) -> None:
    """Delete a scratch org and its people, committed. The org's rows go with it (foreign keys cascade);
    personal memories have no org, so they are deleted with their owners first."""
    user_ids = list(user_ids)
    with database.unit_of_work(SYSTEM) as uow:
        uow.session.execute(delete(Memory).where(Memory.owner_user_id.in_(user_ids)))
        uow.session.execute(delete(Organization).where(Organization.id == org_id))
        uow.session.execute(delete(User).where(User.id.in_(user_ids)))
        uow.commit()
