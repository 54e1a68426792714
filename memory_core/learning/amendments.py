"""A short message that takes back the number just given ("no perdona, es a 45", "actually it's 1,250, I
misremembered"): it corrects the last fact the writer taught in this conversation, whatever that fact was about
(a term, a rent, a price), when that fact says one number. The extractor reads such a message only for a contact's
term, phone or email (`LocalExtractor._amended_facts`); this reads the fact itself."""
from __future__ import annotations

import datetime as dt
import re
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.domain.access import Access
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Memory, MemorySource
from memory_core.domain.text import fold
from memory_core.domain.value_shapes import takes_back

# How far back the fact a correction takes back may have been taught (as the extractor's recent subjects).
AMEND_WINDOW = dt.timedelta(minutes=30)
# The words a correction of a number says besides it: the taking back, "it's", a unit.
_SAYS_ONLY = frozenset("""
no perdona perdon disculpa sorry oops my mistake mi error me equivoque he equivocado quise queria
decir i mean meant actually en realidad correction corrijo rectifico es son era eran it's its it is
was a al at el la los las the got that wrong misremembered lie sino but not dias days euros euro
pounds eur mes month per vale ok que digo say""".split())
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")


def amended_fact(session: Session, access: Access, text: str, conversation_id: uuid.UUID | None,
                 sent_at: dt.datetime) -> Fact | None:
    """The last fact taught in the conversation by this writer with its one number replaced by the message's, or
    None: no correction, no number in it, no such fact, or a fact with no number or several."""
    low = fold(text)
    if conversation_id is None or not takes_back(low):
        return None
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1 or len([w for w in re.findall(r"[a-z']+", low) if w not in _SAYS_ONLY]) > 1:
        return None  # more than the number ("sorry, I'm 5 minutes late"): no correction of it
    p = access.principal
    last = session.scalars(
        select(Memory).join(MemorySource, MemorySource.memory_id == Memory.id)
        .where(MemorySource.conversation_id == conversation_id, Memory.status == "active",
               MemorySource.created_at >= sent_at - AMEND_WINDOW,
               Memory.author_user_id == p.user_id if p.user_id is not None else Memory.author_phone == p.phone)
        .order_by(MemorySource.created_at.desc()).limit(1)).first()
    if last is None:
        return None
    old = _NUMBER.findall(last.value)
    if len(set(old)) != 1 or old[0] == numbers[0]:
        return None
    value = _NUMBER.sub(numbers[0], last.value)
    sentence = last.sentence.replace(old[0], numbers[0])
    return Fact(subject=last.subject, attribute=last.attribute, value=value, sentence=sentence,
                category=last.category, event_date=last.event_date, event_until=last.event_until,
                confidence=last.confidence, corrects=True)
