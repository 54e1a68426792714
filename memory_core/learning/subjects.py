"""What the extractor needs to know about subjects beyond the contacts: the names already learnt about
(so "Olano" is "Hierros Olano") and what the conversation has just been about (so "and they pay at 45
days" is about the customer introduced a message earlier). Read with the writer's visibility."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from memory_core.domain.access import Access, memory_visible
from memory_core.domain.models import Memory, MemorySource

# A conversation's subject carries over this long and this many subjects back.
CARRY_OVER = dt.timedelta(minutes=30)
RECENT_SUBJECTS = 3
KNOWN_NAMES = 200
_NAMED = or_(Memory.subject.like("contact:%"), Memory.subject.like("name:%"))


def recent_subjects(session: Session, access: Access, conversation_id: uuid.UUID | None,
                    now: dt.datetime | None = None) -> tuple[str, ...]:
    """The contacts and named subjects learnt from this conversation in the last half hour, newest first."""
    if conversation_id is None:
        return ()
    since = (now or dt.datetime.now(dt.timezone.utc)) - CARRY_OVER
    rows = session.execute(
        select(Memory.subject, MemorySource.created_at).join(MemorySource, MemorySource.memory_id == Memory.id)
        .where(MemorySource.conversation_id == conversation_id, MemorySource.created_at >= since, _NAMED,
               Memory.status.in_(("active", "proposed")), memory_visible(access))
        .order_by(MemorySource.created_at.desc()).limit(20)).all()
    return tuple(dict.fromkeys(subject for subject, _ in rows))[:RECENT_SUBJECTS]


def known_names(session: Session, access: Access) -> tuple[str, ...]:
    """Names of the subjects learnt about without a contact ("name:hierros olano" -> "hierros olano")."""
    rows = session.scalars(
        select(Memory.subject).where(Memory.subject.like("name:%"), Memory.status.in_(("active", "proposed")),
                                     memory_visible(access)).distinct().limit(KNOWN_NAMES))
    return tuple(subject[len("name:"):] for subject in rows)
