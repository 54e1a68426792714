"""The model port: decide (the gate), extract (facts), embed, and compact (a conversation's summary).
Backends (`memory_core.backends`) implement it; the domain, learning and reading use its types. Backends
are pure: they return what they computed and the usage it cost; the caller records the usage in the
ledger inside its transaction."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from memory_core.domain import clock
from memory_core.domain.dates import MONTHS
from memory_core.domain.vocabulary import GATE_CATEGORIES, GATE_SCOPES

# The gate passes a message on at p(remember) >= 0.6, or >= 0.7 when its top category is "nothing".
REMEMBER_THRESHOLD = 0.6
REMEMBER_THRESHOLD_NOTHING = 0.7


@dataclass(frozen=True)
class Usage:
    purpose: str  # gate | extract | embed | compact
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class GateDecision:
    """One decision call: every answer is a probability."""
    remember: float
    category: dict[str, float]  # over GATE_CATEGORIES, sums to 1
    scope: dict[str, float]  # over GATE_SCOPES, sums to 1
    corrects: float
    insult: float
    special: float
    bank_account: float

    @property
    def top_category(self) -> str:
        return max(GATE_CATEGORIES, key=lambda c: self.category.get(c, 0.0))

    @property
    def top_scope(self) -> str:
        return max(GATE_SCOPES, key=lambda s: self.scope.get(s, 0.0))

    @property
    def passes(self) -> bool:
        needed = REMEMBER_THRESHOLD_NOTHING if self.top_category == "nothing" else REMEMBER_THRESHOLD
        return self.remember >= needed


@dataclass(frozen=True)
class KnownContact:
    id: str
    name: str
    kind: str  # customer | supplier
    tax_id: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtractionContext:
    message: str
    previous_assistant: str | None = None
    # The org's contacts the extractor may link a fact to (by tax ID or name).
    contacts: tuple[KnownContact, ...] = ()
    # Attribute names already stored per subject ("self", "org", "contact:<id>"), so a correction
    # reuses the name of the fact it corrects.
    known_attributes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    today: dt.date = field(default_factory=clock.today)
    # When the message was sent (its `sent_at`): relative dates ("ayer", "next Friday") are resolved
    # against it, not against when the worker reads it. `today` is its date.
    reference_time: dt.datetime = field(default_factory=clock.now)
    # The gate's top category and scope when the gate passed the message (None when no gate ran):
    # an extractor may then keep one generic fact when no specific shape matched.
    gate_category: str | None = None
    gate_scope: str | None = None
    # Names of subjects the org already has facts about without a contact ("name:<...>" subjects, as
    # written), so "Olano" resolves to "Hierros Olano" instead of starting a second subject.
    known_names: tuple[str, ...] = ()
    # What the conversation was about in its last few messages, newest first ("contact:<id>" or
    # "name:<name>"): a sentence that names no subject but goes on about it ("and they pay at 45 days")
    # takes the first one.
    recent_subjects: tuple[str, ...] = ()
    # The writer's own message before this one, sent in the last half hour: a reply that names no subject may be
    # about one it named ("Apunta el teléfono de Marisa, de Cerámicas Roig", then "es el 655 31 20 98").
    previous_said: str | None = None


@dataclass(frozen=True)
class Fact:
    """One atomic fact: one subject, one attribute, one value, one plain sentence."""
    subject: str  # "self" | "org" | "contact:<id>" | "name:<normalised name>" when no contact matched
    attribute: str  # snake_case, e.g. plazo_pago, contact_person, preferred_channel
    value: str
    sentence: str
    category: str  # person | company | customer | supplier | preference | event
    event_date: dt.date | None = None
    confidence: float = 0.8
    # The last day of an event that spans days ("del 10 al 24 de agosto"): it is not past until then.
    event_until: dt.date | None = None
    # The sentence corrects what was known about the subject ("ahora las lleva Lucía", "no longer"): it may
    # replace a fact of another attribute that means the same. Without it only the same family replaces.
    corrects: bool = False
    # The sentence says the value beside the known one ("also delivers on thursdays", "también tienen el 612..."):
    # where a second value may be held, it is added, not put in place of the first.
    adds: bool = False


class ModelBackend(Protocol):
    name: str
    embed_model: str

    def decide(self, message: str, previous_assistant: str | None) -> tuple[GateDecision, Usage]: ...

    # `decide` for many (message, previous_assistant) pairs, in order (the worker batches the gate).
    def decide_many(self, messages: list[tuple[str, str | None]]) -> list[tuple[GateDecision, Usage]]: ...

    def extract(self, context: ExtractionContext) -> tuple[list[Fact], Usage]: ...

    def embed(self, texts: list[str]) -> tuple[list[list[float]], Usage]: ...


class BackendError(Exception):
    """A model call failed after its retries; the caller keeps the work to try again later."""


# ---------------------------------------------------------------------------- the compactor port
# A compactor folds a conversation's older messages into its summary (memory_core.reading.compaction)
# by returning operations only; the local one and the OpenAI one are in memory_core.backends.

SECTIONS = ("facts", "decisions", "open_tasks", "preferences", "unresolved_questions")


@dataclass(frozen=True)
class CompactMessage:
    id: str
    role: str
    text: str
    created_at: dt.datetime


class Operation(BaseModel):
    """One operation a compactor returns."""
    op: Literal["add", "change", "retire"]
    id: str | None = Field(default=None, max_length=20)
    section: Literal["facts", "decisions", "open_tasks", "preferences", "unresolved_questions"] | None = None
    text: str | None = Field(default=None, max_length=4000)
    message_ids: list[str] = Field(default_factory=list, max_length=200)
    reason: str | None = Field(default=None, max_length=500)


class Compactor(Protocol):
    name: str

    def compact(self, points: list[dict[str, Any]], messages: list[CompactMessage]) -> tuple[list[dict], Usage]:
        """Operations that fold `messages` into the summary whose active points are `points`."""
        ...


# What must never be lost: a change that would drop one of these from a point is applied as an addition.
_MONTHS = "|".join(MONTHS)  # the one month table (domain.dates)
_CRITICAL = re.compile(
    r"\b(?:ES)?[A-HJ-NP-SUVW]-?\d{7}[0-9A-J]\b"  # CIF (company tax ID), with or without the ES VAT prefix
    r"|\b\d{8}-?[A-Z]\b|\b[XYZ]-?\d{7}-?[A-Z]\b"  # DNI / NIE
    r"|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b"  # numeric dates
    rf"|\b\d{{1,2}} de (?:{_MONTHS})(?: de \d{{4}})?\b|\b(?:{_MONTHS}) \d{{1,2}},? \d{{4}}\b"
    r"|(?:€|\$|EUR|USD)\s?\d[\d.,]*\d|\b\d[\d.,]*\d?\s?(?:€|EUR|euros?|\$|USD|dólares)"  # amounts
    r"|\b\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?\b|\b\d+,\d{2}\b"  # 1.250,00 and 99,50
    r"|\b\d+ días\b|\b\d+ days\b",  # payment terms
    re.IGNORECASE,
)


def critical_tokens(text: str) -> set[str]:
    """Tax IDs, amounts, dates and terms in a text, normalised (case and spaces do not matter)."""
    return {re.sub(r"[\s-]", "", m.group()).casefold() for m in _CRITICAL.finditer(text)}
