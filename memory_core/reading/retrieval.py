"""The exact messages of a conversation, for its owner only: by ids, by a summary point, or by a search
inside it; and the history an agent sends (summary of the older part + recent part verbatim)."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from memory_core.domain.access import Access, message_visible
from memory_core.domain.errors import NotFound
from memory_core.domain.models import Conversation, ConversationSummary, Message
from memory_core.reading.compaction import active_points, estimate_tokens, message_tokens, render_summary
from memory_core.reading.search import CONFIG


def owned_conversation(session: Session, access: Access | None, conversation_id: uuid.UUID) -> Conversation:
    """The conversation if the principal owns it in its org; NotFound otherwise (existence not revealed)."""
    conv = session.get(Conversation, conversation_id)
    p = access.principal if access else None
    owns = p is not None and conv is not None and (
        (conv.user_id is not None and conv.user_id == p.user_id) or (conv.phone is not None and conv.phone == p.phone))
    if not owns or conv.org_id != access.org_id:
        raise NotFound("No such conversation.")
    return conv


def _owned_messages(access: Access, conv: Conversation):
    # Ownership twice: the conversation is the principal's, and each row passes the message filter.
    return select(Message).where(Message.conversation_id == conv.id, Message.deleted_at.is_(None),
                                 message_visible(access))


@dataclass
class Retrieved:
    messages: list[Message]
    point: dict[str, Any] | None = None


def _like(q: str) -> str:
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def retrieve_messages(session: Session, access: Access | None, conversation_id: uuid.UUID, *,
                      message_ids: list[uuid.UUID] | None = None, point_id: str | None = None,
                      query: str | None = None, limit: int = 20) -> Retrieved:
    """Messages word for word, oldest first. A point id resolves to the messages the point cites."""
    conv = owned_conversation(session, access, conversation_id)
    ids = set(message_ids or [])
    point = None
    if point_id is not None:
        summary = session.get(ConversationSummary, conv.id)
        point = next((p for p in (summary.content if summary else {}).get("points", []) if p["id"] == point_id), None)
        if point is None:
            raise NotFound("No such summary point.")
        ids |= {uuid.UUID(m) for m in point["message_ids"]}
    q = _owned_messages(access, conv)
    clauses = []
    if ids:
        clauses.append(Message.id.in_(ids))
    if query:
        clauses.append(or_(Message.search_tsv.op("@@")(func.websearch_to_tsquery(CONFIG, query)),
                           Message.text.ilike(_like(query), escape="\\")))
    if clauses:
        q = q.where(or_(*clauses))
    rows = list(session.scalars(q.order_by(Message.created_at, Message.id).limit(limit)))
    return Retrieved(rows, point)


@dataclass
class History:
    summary: str
    points: list[dict[str, Any]]
    messages: list[Message]
    covered_until: dt.datetime | None
    tokens: int


def conversation_history(session: Session, access: Access | None, conversation_id: uuid.UUID) -> History:
    """What the agent puts in its prompt: the summary of the compacted part and the rest verbatim."""
    conv = owned_conversation(session, access, conversation_id)
    summary = session.get(ConversationSummary, conv.id)
    covered = summary.covered_until if summary else None
    q = _owned_messages(access, conv)
    if covered is not None:
        q = q.where(Message.created_at > covered)
    messages = list(session.scalars(q.order_by(Message.created_at, Message.id)))
    text = render_summary(summary.content if summary else None)
    tokens = estimate_tokens(text) + sum(message_tokens(m.text) for m in messages)
    return History(text, active_points(summary.content if summary else None), messages, covered, tokens)
