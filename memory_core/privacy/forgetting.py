"""The forgetting rules: deleting a conversation, deleting a contact, temporary conversations. Each runs
in the caller's transaction (the caller commits once) and is audited with ids and counts only. A member
leaving is the tenancy's (memory_core.tenancy.leaving): it ends the membership and revokes numbers too.
"""
from __future__ import annotations

import uuid

from sqlalchemy import and_, delete, exists, func, not_, or_, select
from sqlalchemy.orm import Session, aliased

from memory_core.domain import audit
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


def delete_conversation(session: Session, conversation_id: uuid.UUID, *, actor_label: str,
                        actor_user_id: uuid.UUID | None = None) -> dict[str, int]:
    """Forget a conversation: its messages, and the personal/private memories that came only from it
    and were not edited by hand. Shared memories (and edited or otherwise-sourced ones) lose this
    source and stay. Does not commit."""
    conv = session.get(Conversation, conversation_id, with_for_update=True)
    if conv is None:
        raise NotFound("No such conversation.")
    removed = session.execute(delete(Memory).where(memories_only_from(conversation_id))).rowcount
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
                   actor_user_id: uuid.UUID | None = None) -> dict[str, int]:
    """Delete a customer or supplier and every fact linked to it (every level, status and version).
    Documents about it stay (the host owns them) and lose the link. Does not commit."""
    contact = session.get(Contact, contact_id, with_for_update=True)
    if contact is None:
        raise NotFound("No such contact.")
    facts = session.execute(delete(Memory).where(
        Memory.org_id == contact.org_id, Memory.subject == f"contact:{contact_id}")).rowcount
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
