"""Row ids made in the process, shaped like the ones PostgreSQL's `uuidv7()` gives every table by default.

A row whose id must be known before it is inserted (a new version, whose id the version it replaces points
at: domain.versions) takes one from `uuid7()`: the same layout (RFC 9562, version 7), so ids made here and
by the server sort alike, by the millisecond they were made.
"""
from __future__ import annotations

import os
import time
import uuid

_VERSION = 0x7 << 76  # the 4 bits after the 48-bit timestamp
_VARIANT = 0x2 << 62  # RFC 9562's variant, the 2 bits after the next 12 random ones
_RANDOM = ((1 << 80) - 1) & ~(0xF << 76) & ~(0x3 << 62)  # the 74 bits left random


def uuid7() -> uuid.UUID:
    """A new version 7 UUID: 48 bits of Unix time in milliseconds, then the version, variant and 74 random bits."""
    millis = time.time_ns() // 1_000_000
    random = int.from_bytes(os.urandom(10), "big") & _RANDOM
    return uuid.UUID(int=(millis << 80) | _VERSION | _VARIANT | random)
