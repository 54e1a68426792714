"""Request and response bodies of the agent API (pydantic); the OpenAPI document is generated from them.
One module on purpose (~410 lines): every body of the API side by side, so their shapes and length limits
are read (and kept consistent) in one place, as the OpenAPI document shows them.

Every string has a maximum length that fits its column, so nothing is refused by the database half way.
"""
from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memory_core.domain.dates import EVENT_SPAN_MAX_DAYS
from memory_core.domain.vocabulary import AREAS, DOCUMENT_KINDS, SEARCH_KINDS
from memory_core.learning.ingest import MAX_TEXT_CHARS

Phone = Annotated[str, Field(pattern=r"^\+?[0-9]{6,15}$", description="International number, e.g. +34611222333")]
Channel = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{1,29}$", description="web, whatsapp, or any short name")]
ExternalId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]
Area = Literal[AREAS]  # type: ignore[valid-type]
MessageText = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    pass


def someone(model: In, refused: str) -> In:
    """The model if it names a person (by user id, phone, or both); else ValueError(refused)."""
    if model.user_id is None and model.phone is None:
        raise ValueError(refused)
    return model


class PrincipalIn(In):
    """Who the agent acts for: a user id, a phone, or both once linked."""
    user_id: uuid.UUID | None = None
    phone: Phone | None = None

    @model_validator(mode="after")
    def _someone(self):
        return someone(self, "give user_id, phone, or both")


class PrincipalQuery(PrincipalIn):
    pass


# ---------------------------------------------------------------------------- ingest

class MessageIn(In):
    """A message of a conversation, as the channel knows it."""
    channel: Channel
    conversation: ExternalId = Field(description="The channel's own id for the thread")
    external_id: ExternalId = Field(description="The channel's own id for the message; idempotency key")
    user_id: uuid.UUID | None = None
    phone: Phone | None = None
    text: MessageText = ""
    visibility: Literal["private_in_org", "shared_in_org"] = "private_in_org"
    area: Area = "general"
    temporary: bool = False
    sent_at: dt.datetime | None = Field(
        default=None, description="When the person sent it, ISO 8601 with its zone (imported history keeps its "
        "dates; relative dates in the text are resolved against it). At most 5 minutes ahead; default now")

    @model_validator(mode="after")
    def _writer(self):
        return someone(self, "a message needs its writer: user_id, phone, or both")


class UsedReport(In):
    trace_id: uuid.UUID = Field(description="The trace of the block the reply was written with")
    memory_ids: Annotated[list[uuid.UUID], Field(max_length=200)]


class IngestIn(MessageIn):
    role: Literal["user", "assistant", "system", "tool"]
    event: Literal["new", "edited", "deleted"] = "new"
    used: UsedReport | None = Field(
        default=None, description="With the assistant's new reply: the memories of its block it used, reported in "
        "the same call (as POST /traces/{id}/used)")

    @model_validator(mode="after")
    def _used_with_a_reply(self):
        if self.used is not None and (self.role != "assistant" or self.event != "new"):
            raise ValueError("used goes with the assistant's new reply (role assistant, event new)")
        return self


class TurnIn(MessageIn):
    """The person's new message (role user): stored as POST /messages stores it, and its memory block assembled
    as POST /context assembles it, in one call."""


class IngestOut(Out):
    message_id: uuid.UUID | None
    conversation_id: uuid.UUID | None
    stored: bool
    queued: bool
    duplicate: bool
    temporary: bool
    link_request: bool
    reply: str | None = Field(description="When set, send this reply instead of a model turn")
    marked: int | None = Field(default=None, description="With used: how many of the trace's memories were marked")


# ---------------------------------------------------------------------------- search and memories

class SearchIn(PrincipalIn):
    query: Annotated[str, Field(min_length=1, max_length=2000)]
    kinds: Annotated[list[Literal[SEARCH_KINDS]], Field(max_length=7)] | None = None  # type: ignore[valid-type]
    limit: Annotated[int, Field(ge=1, le=100)] = 10


class HitOut(Out):
    kind: str
    id: uuid.UUID
    title: str
    snippet: str
    score: float
    subject: str | None


class SearchOut(Out):
    hits: list[HitOut]


# ---------------------------------------------------------------------------- link codes

class LinkCodeIn(In):
    user_id: uuid.UUID


class LinkCodeOut(Out):
    code: str
    expires_at: dt.datetime


# ---------------------------------------------------------------------------- forgetting

class CountsOut(Out):
    counts: dict[str, int]


# ---------------------------------------------------------------------------- host records

class DocumentIn(In):
    kind: Literal[DOCUMENT_KINDS]  # type: ignore[valid-type]
    external_ref: ExternalId
    title: Annotated[str, Field(max_length=1000)] = ""
    text: Annotated[str, Field(max_length=200_000)] = ""
    owner_user_id: uuid.UUID | None = None
    owner_phone: Phone | None = None
    visibility: Literal["private_in_org", "shared_in_org"] = "shared_in_org"
    area: Area | None = None
    contact_id: uuid.UUID | None = None
    tax_id: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    doc_date: dt.date | None = None
    legal_hold: bool = False

    @model_validator(mode="after")
    def _private_has_owner(self):
        if self.visibility == "private_in_org" and self.owner_user_id is None and self.owner_phone is None:
            raise ValueError("a private record needs owner_user_id or owner_phone")
        return self


class DocumentRefQuery(In):
    kind: Literal[DOCUMENT_KINDS]  # type: ignore[valid-type]
    external_ref: ExternalId


class DocumentOut(Out):
    id: uuid.UUID


class RemovedOut(Out):
    removed: bool


# ---------------------------------------------------------------------------- conversations

class RetrieveIn(PrincipalIn):
    """Exact messages of one conversation: by ids, by the ids a summary point cites, or by a search."""
    message_ids: Annotated[list[uuid.UUID], Field(max_length=50)] = []
    point_id: Annotated[str, Field(pattern=r"^p[0-9]{1,9}$")] | None = None
    query: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    limit: Annotated[int, Field(ge=1, le=50)] = 20

    @model_validator(mode="after")
    def _something(self):
        if not self.message_ids and self.point_id is None and self.query is None:
            raise ValueError("give message_ids, point_id or query")
        return self


class MessageOut(Out):
    id: uuid.UUID
    role: str
    text: str
    created_at: dt.datetime
    sent_at: dt.datetime
    edited_at: dt.datetime | None


class PointOut(Out):
    id: str
    section: str
    text: str
    message_ids: list[str]
    retired: bool


class RetrieveOut(Out):
    messages: list[MessageOut]
    point: PointOut | None = None


class HistoryOut(Out):
    summary: str = Field(description="The older part as prompt text (empty when nothing was compacted)")
    points: list[PointOut]
    messages: list[MessageOut] = Field(description="The recent part, verbatim, oldest first")
    covered_until: dt.datetime | None
    tokens: int = Field(description="Estimated tokens of summary plus recent messages")


class AfterReplyIn(PrincipalIn):
    prompt_tokens: Annotated[int, Field(ge=0, le=10_000_000)] | None = Field(
        default=None, description="The size of the prompt just sent; estimated from the history when absent")


class AfterReplyOut(Out):
    compaction: Literal["queued", "not_needed"]


class OpenApiOut(Out):
    model_config = ConfigDict(extra="allow")
    openapi: str
    paths: dict[str, Any]


# ---------------------------------------------------------------------------- the memory block

class ContextIn(PrincipalIn):
    message: MessageText = Field(description="The person's current message (drives the related memories)")
    conversation_id: uuid.UUID | None = Field(default=None, description="From the ingest answer; records the trace")
    message_id: uuid.UUID | None = None


class ContextItemOut(Out):
    memory_id: uuid.UUID
    block: str
    rank: int
    score: float


class ContextOut(Out):
    text: str = Field(description="The memory block to put in the prompt, fenced, after the system instructions")
    core: str
    profile: str
    related: str
    memory_ids: list[uuid.UUID]
    items: list[ContextItemOut]
    trace_id: uuid.UUID | None = Field(description="Report used memories against it; null when nothing is stored")
    tokens: int


class TurnOut(Out):
    message: IngestOut
    context: ContextOut | None = Field(description="The memory block for the message; null when message.reply is "
                                       "set (send that reply instead of a model turn)")


class UsedIn(In):
    memory_ids: Annotated[list[uuid.UUID], Field(max_length=200)]


class UsedOut(Out):
    marked: int


Subject = Annotated[str, Field(pattern=r"^(self|org|(contact:)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                                       r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")]


class SubjectsIn(PrincipalIn):
    subjects: Annotated[list[Subject], Field(min_length=1, max_length=50)]
    per_subject: Annotated[int, Field(ge=1, le=10)] = 3


class MemoryOut(Out):
    id: uuid.UUID
    subject: str
    attribute: str
    value: str
    sentence: str
    category: str
    level: str


class SubjectsOut(Out):
    memories: dict[str, list[MemoryOut]]
    text: str = Field(description="The same memories as fenced lines to attach to a tool result")


# ---------------------------------------------------------------------------- remember

class FactIn(In):
    subject: Annotated[str, Field(pattern=r"^(self|org|contact:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                                          r"[0-9a-f]{12})$")]
    attribute: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,99}$")]
    value: Annotated[str, Field(min_length=1, max_length=2000, pattern=r"\S")]
    sentence: Annotated[str, Field(min_length=1, max_length=2000, pattern=r"\S")]
    category: Literal["person", "company", "customer", "supplier", "preference", "event"]
    event_date: dt.date | None = None
    event_until: dt.date | None = None  # the last day of an event that spans days

    @model_validator(mode="after")
    def _span_after_its_first_day(self):
        if self.event_until is not None and (self.event_date is None or self.event_until < self.event_date):
            raise ValueError("event_until needs an event_date on or before it")
        if self.event_until is not None and (self.event_until - self.event_date).days > EVENT_SPAN_MAX_DAYS:
            raise ValueError(f"an event lasts at most {EVENT_SPAN_MAX_DAYS} days after its event_date")
        return self


class RememberIn(PrincipalIn):
    """What the person explicitly asked to remember: their words, or a fact the agent already structured."""
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS, pattern=r"\S")] | None = None
    fact: FactIn | None = None
    conversation_id: uuid.UUID | None = Field(default=None, description="Where it was said (the source)")
    message_id: uuid.UUID | None = None

    @model_validator(mode="after")
    def _one(self):
        if (self.text is None) == (self.fact is None):
            raise ValueError("give either text or fact")
        if self.message_id is not None and self.conversation_id is None:
            raise ValueError("message_id needs its conversation_id")
        return self


class WriteOut(Out):
    outcome: str
    memory_id: uuid.UUID | None
    level: str | None
    proposal_id: uuid.UUID | None
    proposal_kind: str | None
    reason: str


class RememberOut(Out):
    outcome: Literal["learnt", "merged", "proposed", "refused", "ignored"]
    reason: str
    policy: str | None
    writes: list[WriteOut]


# ---------------------------------------------------------------------------- a person's own memory

class MySourceOut(Out):
    at: dt.datetime
    channel: str | None
    excerpt: str | None = Field(description="The message's start, when the person may read it")
    conversation_id: uuid.UUID | None
    message_id: uuid.UUID | None


class MyVersionOut(Out):
    id: uuid.UUID
    org_id: uuid.UUID | None
    level: Literal["personal", "private", "shared"]
    area: str
    category: str
    subject: str
    attribute: str
    value: str
    sentence: str
    status: str
    pinned: bool
    hand_edited: bool
    origin: str
    event_date: dt.date | None
    event_until: dt.date | None = None
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    created_at: dt.datetime


class MyMemoryOut(MyVersionOut):
    editable: bool = Field(description="False for shared memories: the person sees them, only the org changes them")
    sources: list[MySourceOut]
    older_versions: list[MyVersionOut] = Field(description="Filled in the export only")


class MySubjectOut(Out):
    subject: str
    label: str
    memories: list[MyMemoryOut]


class MySectionOut(Out):
    kind: Literal["personal", "private", "shared"] = Field(
        description="personal: follows the person across orgs; private: theirs in this org; shared: the org's, "
                    "read-only here")
    org_id: uuid.UUID | None
    org_name: str | None
    editable: bool
    total: int
    truncated: bool = Field(description="True when the list shows only the newest of `total` memories")
    subjects: list[MySubjectOut]


class MyMemoriesOut(Out):
    learning_paused_at: dt.datetime | None
    sections: list[MySectionOut]


class MyPersonOut(Out):
    user_id: uuid.UUID | None
    phone: str | None


class MyExportOut(MyMemoriesOut):
    exported_at: dt.datetime
    person: MyPersonOut


class MyEditIn(PrincipalIn):
    value: Annotated[str, Field(min_length=1, max_length=2000, pattern=r"\S")]
    sentence: Annotated[str, Field(min_length=1, max_length=4000, pattern=r"\S")]


class MyEditOut(Out):
    id: uuid.UUID = Field(description="The new, hand-edited version")
    replaces: uuid.UUID = Field(description="The version it superseded (kept as an older version)")
    value: str
    sentence: str
    hand_edited: bool


class ForgetSubjectIn(PrincipalIn):
    subject: Annotated[str, Field(min_length=1, max_length=200,
                                  pattern=r"^(self|org|contact:[0-9a-fA-F-]{36}|name:.+)$",
                                  description="self, org, contact:<id> or name:<name>")]


class LearningIn(PrincipalIn):
    paused: bool


class LearningOut(Out):
    paused: bool
    paused_since: dt.datetime | None
