"""How long memoria keeps what: the platform's periods, the ones an org may tighten (never loosen) in
its settings, and the rules that pick the expired rows, built with SQLAlchemy Core.

The nightly job (`jobs/retention.py`) runs the rules; the console's settings page shows and stores
the org's own periods in `organizations.settings["retention"]`. Both read the defaults from here.
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Delete, Integer, and_, case, cast, delete, func, literal, select
from sqlalchemy.sql.elements import ColumnElement

from memory_core.domain.errors import InvalidInput
from memory_core.domain.models import Base, LinkCode, LoginAttempt, Memory, MemoryTrace, Organization
from memory_core.domain.vocabulary import Category, Status

# Platform periods in days; an org may set a shorter one for each key of ORG_LABELS (and trace_days).
DEFAULTS: dict[str, int] = {
    "superseded_days": 365,  # a superseded version is restorable for a year
    "proposal_days": 60,  # a proposal nobody decided in 60 days is dropped
    "trace_days": 90,  # memory traces (what went into each prompt) are kept this long
}
# The periods the console's settings page offers, with their labels.
ORG_LABELS: dict[str, str] = {
    "superseded_days": "Keep superseded versions for (days)",
    "proposal_days": "Remove proposals nobody decided after (days)",
}
LINK_CODE_GRACE = dt.timedelta(hours=1)  # expired codes stay an hour: the per-user code limit counts them
LOGIN_ATTEMPT_AGE = dt.timedelta(days=1)  # failed sign-ins only matter for the 15-minute rate limit
_WELL_FORMED = "^[0-9]{1,5}$"  # what the SQL accepts from an org's stored setting (else: the default)


def org_periods(settings: dict[str, Any] | None) -> dict[str, int]:
    """The periods an org's settings page shows: its own where stored, else the platform's."""
    stored = (settings or {}).get("retention") or {}
    return {k: int(stored.get(k, DEFAULTS[k])) for k in ORG_LABELS}


def parse_org_periods(values: dict[str, str]) -> dict[str, int]:
    """An org's new periods from a form: each a whole number from 1 to the platform default."""
    parsed: dict[str, int] = {}
    for key, label in ORG_LABELS.items():
        raw = (values.get(key) or "").strip()
        if not raw.isdigit() or not 1 <= int(raw) <= DEFAULTS[key]:
            raise InvalidInput(f"{label}: a whole number from 1 to {DEFAULTS[key]}.", key)
        parsed[key] = int(raw)
    return parsed


@dataclass(frozen=True)
class Rule:
    """One retention rule: its name (the job run's count) and the statement that deletes one batch."""
    name: str
    statement: Delete


def _days(n: Any) -> ColumnElement:
    return func.make_interval(0, 0, 0, n)  # make_interval(years, months, weeks, days)


def _org_days(key: str, default: int) -> ColumnElement:
    """The period for the row's org: the platform default, or the org's own when shorter and a
    well-formed integer (an org row may be missing: personal memories have none)."""
    stored = Organization.settings[("retention", key)].astext
    own = case((stored.regexp_match(_WELL_FORMED), cast(stored, Integer)), else_=None)
    return _days(func.least(literal(default), func.coalesce(own, literal(default))))


def _batch_delete(model: type[Base], pick) -> Delete:
    return delete(model).where(model.id.in_(pick))


def rules(batch: int, now: dt.datetime, org_id: uuid.UUID | None = None) -> list[Rule]:
    """Every rule, each deleting at most `batch` rows per run of its statement, picked with
    FOR UPDATE SKIP LOCKED so that two runs at once take different rows. `now` is the clock's (the one that
    stamped the rows), never the database's. With `org_id`, only that org's rows (an org admin's run);
    sign-in failures belong to no org, so only a platform-wide run removes them."""
    p = DEFAULTS
    now = literal(now)

    def pick(model: type[Base], *where, order=None, of=None):
        stmt = select(model.id)
        if model is not LinkCode and model is not LoginAttempt:
            stmt = stmt.outerjoin(Organization, Organization.id == model.org_id)
        stmt = stmt.where(*where, *((model.org_id == org_id,) if org_id is not None else ()))
        if order is not None:
            stmt = stmt.order_by(order)
        return _batch_delete(model, stmt.limit(batch).with_for_update(of=of or model, skip_locked=True))

    out = [
        Rule("superseded_versions", pick(
            Memory, Memory.status == Status.SUPERSEDED,
            Memory.valid_to < now - _org_days("superseded_days", p["superseded_days"]), order=Memory.valid_to)),
        Rule("stale_proposals", pick(
            Memory, Memory.status == Status.PROPOSED,
            Memory.created_at < now - _org_days("proposal_days", p["proposal_days"]), order=Memory.created_at)),
        Rule("expired_link_codes", pick(LinkCode, LinkCode.expires_at < now - LINK_CODE_GRACE)),
        Rule("old_traces", pick(
            MemoryTrace, MemoryTrace.created_at < now - _org_days("trace_days", p["trace_days"]),
            order=MemoryTrace.created_at)),
    ]
    if org_id is None:
        out.append(Rule("login_attempts", pick(LoginAttempt, LoginAttempt.at < now - LOGIN_ATTEMPT_AGE)))
    return out


def past_events_not_served(today: dt.date, org_id: uuid.UUID | None = None):
    """Past events are history, never deleted: the reader stops serving them; this counts them."""
    in_org = (Memory.org_id == org_id,) if org_id is not None else ()
    return select(func.count()).select_from(Memory).where(and_(
        Memory.status == Status.ACTIVE, Memory.category == Category.EVENT,
        func.coalesce(Memory.event_until, Memory.event_date) < today, *in_org))
