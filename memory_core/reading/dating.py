"""The date a memory line shows: the event's own date, else a date its words name read against the day it
was said ("yesterday" said on 2023-05-08 is 2023-05-07), else the day it was said.

The words are read by the one date parser (`domain.dates`): `past_range` for dates looked back at
("ayer", "last year", "in May") and `find_date` for days named outright ("el 3 de mayo"), taken as the
occurrence nearest to when it was said unless a year is written, since people mostly tell of days close by.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from memory_core.domain.dates import find_date, past_range
from memory_core.domain.text import fold

# A named day (no year written) more than this far after the day it was said is last year's.
NEAREST_DAYS = 183
_YEAR = re.compile(r"\b(19|20)\d{2}\b")
# Named days the parser reads as coming ones: only an outright day and month is taken from it (a bare
# weekday or "tomorrow" in a memory told in the past would be read the wrong way round).
_NAMED_DAY = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?[a-z]+|\b[a-z]+\s+\d{1,2}(?:st|nd|rd|th)?\b"
                        r"|\b\d{1,2}/\d{1,2}\b")
WORDS = {"es": "dicho el", "en": "said"}


@dataclass(frozen=True)
class LineDate:
    """What a line shows: `text` ("2023-05-07", "2023-05", "2022"), and whether it is only when it was said."""
    text: str
    said: bool

    def render(self, lang: str) -> str:
        return f"({WORDS.get(lang, WORDS['es'])} {self.text})" if self.said else f"({self.text})"


def _span_text(start: dt.date, end: dt.date) -> str | None:
    """A span as one date: a day, a whole month or a whole year; None for anything else (a week)."""
    days = (end - start).days
    if days == 1:
        return start.isoformat()
    if start.day == 1 and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1 and end.day == 1:
        return f"{start:%Y-%m}"
    if (start.month, start.day, end.month, end.day) == (1, 1, 1, 1) and end.year - start.year == 1:
        return str(start.year)
    return None


def named_span(text: str, said_on: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days [start, end) the words of a text name, read against the day it was said; None if none."""
    low = fold(text)
    found = find_date(low, said_on) if _NAMED_DAY.search(low) else None
    if found is not None and any(c.isdigit() for c in low[found[1]:found[2]]):
        day = found[0]
        if (day - said_on).days > NEAREST_DAYS and not _YEAR.search(low):
            try:
                day = day.replace(year=day.year - 1)
            except ValueError:  # 29 February
                return None
        return day, day + dt.timedelta(days=1)
    span = past_range(low, said_on)
    if span is not None and _is_month(*span) and not _YEAR.search(low) and _COMING.search(low) and \
            (said_on - span[0]).days > NEAREST_DAYS:
        # A month named without its year in a plan is the nearest one: "en enero me voy a esquiar" said in
        # December is the coming January, not the one eleven months back ("I went there in May" stays past).
        start = span[0].replace(year=span[0].year + 1)
        return start, span[1].replace(year=span[1].year + 1)
    return span


# A plan or intention: the month it names may be a coming one.
_COMING = re.compile(r"\b(?:(?:voy|vas|va|vamos|vais|van)\s+a|me voy|nos vamos|se van?|quiero|queremos|pienso|"
                     r"pensamos|espero|esperamos|will|going|gonna|plan|plans|planning|hope|hoping|next)\b|\w'll\b")


def _is_month(start: dt.date, end: dt.date) -> bool:
    return start.day == 1 and end.day == 1 and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1


@lru_cache(maxsize=4096)
def named_date(text: str, said_on: dt.date) -> str | None:
    """The date the words of a remembered sentence name as one day, month or year; None if none."""
    span = named_span(text, said_on)
    return _span_text(*span) if span is not None else None


def line_date(value: str, sentence: str, event_date: dt.date | None, said_at: dt.datetime | None) -> LineDate | None:
    """The date a memory's line shows (see the module's docstring); None when nothing is known."""
    if event_date is not None:
        return LineDate(event_date.isoformat(), said=False)
    if said_at is None:
        return None
    said_on = said_at.date()
    shown = named_date(f"{value}. {sentence}", said_on)
    return LineDate(shown, said=False) if shown else LineDate(said_on.isoformat(), said=True)


_WHEN = re.compile(r"\b(?:when|what date|which day|what day|how long ago|since when|cuando|que dia|que fecha|"
                   r"desde cuando|hace cuanto)\b")


def asks_when(message: str, now: dt.datetime) -> bool:
    """Whether a turn asks when something happened or is about a period ("when did I...", "¿cuándo...?",
    "what did I do in May?")."""
    low = fold(message or "")
    return bool(_WHEN.search(low)) or named_span(low, now.date()) is not None


def tells_date(m) -> bool:
    """Whether a memory (with value, sentence, event_date, valid_from) tells a date of its own, not only
    when it was said."""
    if m.event_date is not None:
        return True
    return m.valid_from is not None and named_span(f"{m.value}. {m.sentence}", m.valid_from.date()) is not None
