"""A member leaving an org: the membership ends, the member's private memories there go (every version),
what they shared stays attributed to a former member, and their numbers stop speaking in the org. Runs in
the caller's transaction (the caller commits once) and is audited with ids and counts only.

Runs in the org's scope (an owner, an admin, the org's API key) or the system's. The org scope never
sees another member's private memories, so those are counted and deleted by a SECURITY DEFINER function
that acts for the caller's own org only (migration t3_sec_org_people_scope)."""
from __future__ import annotations

import uuid

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.orm import Session

from memory_core.domain import audit, clock
from memory_core.domain.errors import Conflict, NotFound
from memory_core.domain.models import Membership, Memory, PhoneAuthorization, User


def _private(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, apply: bool) -> int:
    """The member's private memories in the org (every version): counted while they are a member, deleted
    once their membership has ended (`apply`, after left_at is flushed)."""
    return session.scalar(text("select memoria_leaving_private(:o, :u, :apply)"),
                          {"o": org_id, "u": user_id, "apply": apply})


def _leaving(org_id: uuid.UUID, user_id: uuid.UUID, phone: str | None):
    """What a member leaving touches besides their private memories (`_private`): (shared memories kept as a
    former member's, phone authorizations revoked). One definition for the preview and the execution."""
    shared = and_(Memory.org_id == org_id, Memory.level == "shared", Memory.author_user_id == user_id,
                  Memory.author_former_member.is_(False))
    numbers = and_(PhoneAuthorization.org_id == org_id, PhoneAuthorization.revoked_at.is_(None),
                   or_(PhoneAuthorization.user_id == user_id,
                       PhoneAuthorization.phone == phone if phone else False))
    return shared, numbers


def member_leaves_preview(session: Session, org_id: uuid.UUID, user_id: uuid.UUID) -> dict[str, int]:
    """What `member_leaves` would do, counted and changed nothing: private memories (every version)
    removed, shared memories kept as a former member's, numbers revoked."""
    if session.scalar(select(Membership.id).where(Membership.org_id == org_id, Membership.user_id == user_id,
                                                  Membership.left_at.is_(None))) is None:
        raise NotFound("That person is not a member of this organization.")
    phone = session.scalar(select(User.phone).where(User.id == user_id))
    shared, numbers = _leaving(org_id, user_id, phone)
    return {"private_removed": _private(session, org_id, user_id, apply=False),
            "shared_kept": session.scalar(select(func.count()).select_from(Memory).where(shared)),
            "numbers_revoked": session.scalar(select(func.count()).select_from(PhoneAuthorization).where(numbers))}


def member_leaves(session: Session, org_id: uuid.UUID, user_id: uuid.UUID, *, actor_label: str,
                  actor_user_id: uuid.UUID | None = None) -> dict[str, int]:
    """End a membership: the member's private memories in the org are removed (every version), what
    they shared stays attributed to a former member, and their numbers stop speaking in the org.
    Personal memories follow the person and stay theirs. Does not commit."""
    m = session.scalar(select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
                       .with_for_update())
    if m is None:
        raise NotFound("That person is not a member of this organization.")
    if m.left_at is not None:
        raise Conflict("That person already left this organization.")
    if m.role == "owner":
        owners = session.scalar(select(func.count()).select_from(Membership).where(
            Membership.org_id == org_id, Membership.role == "owner", Membership.left_at.is_(None)))
        if owners <= 1:
            raise Conflict("The last owner cannot leave: make someone else owner first.")
    now = clock.now()
    m.left_at = now
    phone = session.scalar(select(User.phone).where(User.id == user_id))
    session.flush()  # left_at: the function deletes private memories only of a membership that has ended
    shared_rows, number_rows = _leaving(org_id, user_id, phone)
    private = _private(session, org_id, user_id, apply=True)
    shared = session.execute(update(Memory).where(shared_rows).values(author_former_member=True)).rowcount
    numbers = session.execute(update(PhoneAuthorization).where(number_rows).values(revoked_at=now)).rowcount
    counts = {"private_removed": private, "shared_kept": shared, "numbers_revoked": numbers}
    audit.record(session, actor_label=actor_label, actor_user_id=actor_user_id, action="membership.ended",
                 org_id=org_id, target_type="user", target_id=user_id, details=counts)
    return counts
