"""The audit log: every operator action, append-only. Details hold ids, kinds and counts, never content."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from memory_core.domain import clock, deferred_rows
from memory_core.domain.models import AuditLog


def record(session: Session, *, actor_label: str, action: str, actor_user_id: uuid.UUID | None = None,
           org_id: uuid.UUID | None = None, target_type: str | None = None, target_id: Any = None,
           details: dict[str, Any] | None = None) -> AuditLog:
    """Add one audit row to the caller's transaction (it commits with the action it records; a worker
    batch writes its rows together at its end: `deferred_rows`)."""
    row = AuditLog(at=clock.now(), actor_user_id=actor_user_id, actor_label=actor_label, action=action,
                   org_id=org_id, target_type=target_type,
                   target_id=str(target_id) if target_id is not None else None, details=details or {})
    deferred_rows.add(session, row)
    return row
