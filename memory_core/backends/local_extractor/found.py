"""What a rule read from a sentence, before its subject is resolved."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class Found:
    """What a rule read, before its subject is resolved."""
    attribute: str
    value: str
    target: str  # contact | self | org | self_or_contact | contact_or_org | event
    at: int  # where the cue starts: the contact nearest to it is the subject
    who: tuple[int, int] | None = None  # where the rule expects the contact's name
    confidence: float = 0.9
    imperative: bool = False  # still read when the sentence is an order ("llámame Pablo")
    event_date: dt.date | None = None
    event_until: dt.date | None = None  # the last day of an event that spans days
