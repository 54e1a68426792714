"""The model port: decide (the gate), extract (facts), embed. Backends are pure: they return what they
computed and the usage it cost; the caller records the usage in the ledger inside its transaction."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Protocol

from memory_core.domain import clock
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
    # The gate's top category and scope when the gate passed the message (None when no gate ran):
    # an extractor may then keep one generic fact when no specific shape matched.
    gate_category: str | None = None
    gate_scope: str | None = None


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
