"""Pages staff read across orgs and org admins read for their own org: who sees which org, audited."""
from __future__ import annotations

import uuid

from flask import abort
from flask_login import current_user
from sqlalchemy.orm import Session

from console.web import actor_label, db, org_db
from memory_core.adapters.db import platform_scope
from memory_core.domain import audit


def reader(*, staff: bool = True, privacy: bool = False, roles: tuple[str, ...] = ("owner", "admin"),
           org_param: uuid.UUID | None = None) -> tuple[Session, uuid.UUID | None, bool]:
    """(session, org filter, is_platform). Staff (and privacy officers where allowed) read every org in
    the platform scope, optionally filtered; an org admin reads only their org. Anyone else: 403."""
    platform = current_user.platform_role
    if (staff and platform == "staff") or (privacy and platform == "privacy_officer"):
        return db(platform_scope(current_user.uid)), org_param, True
    org = current_user.org()
    if org is None or org.role not in roles:
        abort(403)
    return org_db(), org.org_id, False


def audit_platform_view(s: Session, what: str, org_id: uuid.UUID | None, **details) -> None:
    """Every staff view of an org's data goes to the audit log (committed at once: a view has no other write)."""
    audit.record(s, actor_user_id=current_user.uid, actor_label=actor_label(), action=f"staff.view.{what}",
                 org_id=org_id, details={k: v for k, v in details.items() if v is not None})
    s.commit()
