"""The forgetting rules: deleting a conversation, deleting a contact, temporary conversations. Each runs
in the caller's transaction (the caller commits once) and is audited with ids and counts only. A member
leaving is the tenancy's (memory_core.tenancy.leaving): it ends the membership and revokes numbers too.
"""
from __future__ import annotations

import uuid

from sqlalchemy import and_, delete, exists, func, not_, or_, select, text
from sqlalchemy.orm import Session, aliased

from memory_core.adapters.db import Scope
from memory_core.domain import audit
from memory_core.domain.access import Access, Principal
from memory_core.domain.errors import NotFound
from memory_core.domain.models import Contact, Conversation, Memory, MemorySource, MemoryTrace, Message, Notification
from memory_core.domain.vocabulary import Level


def memories_only_from(conversation_id: uuid.UUID):
    """Personal and private memories (any version) whose every source is this conversation and that
    nobody edited by hand: what forgetting the conversation removes."""
    here = select(MemorySource.memory_id).where(MemorySource.conversation_id == conversation_id)
    other = aliased(MemorySource)
    elsewhere = exists().where(other.memory_id == Memory.id, or_(
        other.conversation_id.is_(None), other.conversation_id != conversation_id))
    return and_(Memory.id.in_(here), Memory.level.in_((Level.PERSONAL, Level.PRIVATE)),
                Memory.hand_edited.is_(False), not_(elsewhere))


def contact_memories(org_id: uuid.UUID, contact_id: uuid.UUID):
    """Every fact about a contact (every level, status and version): what deleting the contact removes."""
    return and_(Memory.org_id == org_id, Memory.subject == f"contact:{contact_id}")


def owner_scopes(session: Session, org_id: uuid.UUID, *, conversation_id: uuid.UUID | None = None,
                 contact_id: uuid.UUID | None = None) -> list[Scope]:
    """The own scope (in the org) of each person or number holding personal or private memories that
    forgetting one of the org's conversations or contacts reaches, named by a SECURITY DEFINER function
    (migration t3_sec_links_web_scopes), so a caller in the org's scope forgets them in their owners'
    scopes (`forget_owned`) instead of in system scope."""
    rows = session.execute(text("select user_id, phone from memoria_forget_owners(:o, :c, :s)"), {
        "o": org_id, "c": conversation_id, "s": f"contact:{contact_id}" if contact_id else None}).all()
    return [Access(Principal(user_id=r.user_id, phone=r.phone), org_id).scope() for r in rows if r.user_id or r.phone]


def forget_owned(session: Session, *, conversation_id: uuid.UUID | None = None, org_id: uuid.UUID | None = None,
                 contact_id: uuid.UUID | None = None) -> int:
    """In an owner's scope: remove what forgetting the conversation (or the org's contact) removes of
    theirs, before `delete_conversation` (or `delete_contact`) runs in the org's. Does not commit."""
    rows = memories_only_from(conversation_id) if conversation_id else contact_memories(org_id, contact_id)
    return session.execute(delete(Memory).where(rows)).rowcount


def delete_conversation(session: Session, conversation_id: uuid.UUID, *, actor_label: str,
                        actor_user_id: uuid.UUID | None = None, removed_by_owners: int = 0) -> dict[str, int]:
    """Forget a conversation: its messages, and the personal/private memories that came only from it
    and were not edited by hand. Shared memories (and edited or otherwise-sourced ones) lose this
    source and stay. `removed_by_owners`: what `forget_owned` removed first (counted and audited
    here). Does not commit."""
    conv = session.get(Conversation, conversation_id, with_for_update=True)
    if conv is None:
        raise NotFound("No such conversation.")
    removed = session.execute(delete(Memory).where(memories_only_from(conversation_id))).rowcount + removed_by_owners
    unsourced = session.execute(delete(MemorySource).where(MemorySource.conversation_id == conversation_id)).rowcount
    messages = session.scalar(select(func.count()).select_from(Message)
                              .where(Message.conversation_id == conversation_id))
    # Messages, outbox, traces, notifications and the summary go with the conversation (ON DELETE CASCADE).
    session.execute(delete(Conversation).where(Conversation.id == conversation_id))
    counts = {"memories_removed": removed, "sources_removed": unsourced, "messages_removed": messages}
    audit.record(session, actor_label=actor_label, actor_user_id=actor_user_id, action="conversation.deleted",
                 org_id=conv.org_id, target_type="conversation", target_id=conversation_id, details=counts)
    return counts


def delete_contact(session: Session, contact_id: uuid.UUID, *, actor_label: str,
                   actor_user_id: uuid.UUID | None = None, removed_by_owners: int = 0) -> dict[str, int]:
    """Delete a customer or supplier and every fact linked to it (every level, status and version).
    Documents about it stay (the host owns them) and lose the link. `removed_by_owners`: what
    `forget_owned` removed first (counted and audited here). Does not commit."""
    contact = session.get(Contact, contact_id, with_for_update=True)
    if contact is None:
        raise NotFound("No such contact.")
    facts = session.execute(delete(Memory).where(contact_memories(contact.org_id, contact_id))).rowcount
    facts += removed_by_owners
    session.execute(delete(Contact).where(Contact.id == contact_id))
    counts = {"facts_removed": facts}
    audit.record(session, actor_label=actor_label, actor_user_id=actor_user_id, action="contact.deleted",
                 org_id=contact.org_id, target_type="contact", target_id=contact_id, details=counts)
    return counts


def end_temporary_conversation(session: Session, channel: str, external_id: str) -> int:
    """Remove anything a temporary conversation left (ingest stores none of its messages; a trace or
    notification written while it was read must not outlive it). Returns the rows removed."""
    conv = session.scalar(select(Conversation).where(
        Conversation.channel == channel, Conversation.external_id == external_id, Conversation.temporary.is_(True)))
    if conv is None:
        return 0
    removed = session.execute(delete(MemoryTrace).where(MemoryTrace.conversation_id == conv.id)).rowcount
    removed += session.execute(delete(Notification).where(Notification.conversation_id == conv.id)).rowcount
    session.execute(delete(Conversation).where(Conversation.id == conv.id))
    return removed + 1
