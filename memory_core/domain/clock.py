"""The one source of "now" for memoria: due dates, retention cut-offs, ageing, relative dates, link-code
expiry and rate-limit windows all read it, and ORM rows take their timestamps from it too, so a row's
times and the values computed from them always come from the same clock.

The real clock by default; a test installs a FixedClock (`with clock.use(FixedClock(at)):`) to run on
any date, and advances it instead of sleeping. Dates are UTC dates: nothing reads the machine's zone.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

UTC = dt.timezone.utc


class Clock(Protocol):
    def now(self) -> dt.datetime:
        """The current time, timezone-aware."""


class SystemClock:
    """The machine's clock, in UTC."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(UTC)


class FixedClock:
    """A clock that stays where it is put: for tests and for replaying data at a given date."""

    def __init__(self, at: dt.datetime):
        self.set(at)

    def set(self, at: dt.datetime) -> None:
        if at.tzinfo is None:
            raise ValueError("a FixedClock needs a timezone-aware time")
        self.at = at.astimezone(UTC)

    def advance(self, delta: dt.timedelta | None = None, **kwargs: float) -> dt.datetime:
        """Move forward by delta (or timedelta(**kwargs)); returns the new now."""
        self.at += delta if delta is not None else dt.timedelta(**kwargs)
        return self.at

    def now(self) -> dt.datetime:
        return self.at


_current: Clock = SystemClock()


def now() -> dt.datetime:
    """The current time by the installed clock (timezone-aware, UTC)."""
    return _current.now()


def today() -> dt.date:
    """Today's date in UTC by the installed clock."""
    return now().date()


def current() -> Clock:
    return _current


@contextmanager
def use(clock: Clock) -> Iterator[Clock]:
    """Install `clock` for the process for the duration of the block (tests, replays)."""
    global _current
    previous, _current = _current, clock
    try:
        yield clock
    finally:
        _current = previous
