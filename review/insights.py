"""Read models for the console's other pages: traces, usage, audit log, job runs, dashboard, and the
org settings an owner or admin may change. No Flask here; nothing commits.

`org_id=None` means "every org", which only staff get (the views decide, and audit each staff view).
"""
from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import Date, and_, cast, func, or_, select, true
from sqlalchemy.orm import Session

from memory_core.domain import clock
from memory_core.domain import audit
from memory_core.domain.access import Access, message_visible
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import (
    AuditLog, JobRun, Memory, MemoryTrace, Message, Organization, PolicyExclusion, PrivacyRequest, TraceItem, UsageLedger,
    User,
)
from memory_core.domain.vocabulary import MEMORY_MODES
from review import paging

PAGE_SIZE = 50

# Retention an owner or admin may tighten, in organizations.settings["retention"]; the platform
# defaults are the design's: superseded versions kept a year, undecided proposals 60 days.
RETENTION_DEFAULTS = {"superseded_days": 365, "proposal_days": 60}
RETENTION_LABELS = {
    "superseded_days": "Keep superseded versions for (days)",
    "proposal_days": "Remove proposals nobody decided after (days)",
}


def parse_date(raw: str | None, name: str) -> dt.date | None:
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(f"{name.capitalize()} must be a date like 2026-11-29.", name)


def _day_start(d: dt.date) -> dt.datetime:
    return dt.datetime.combine(d, dt.time.min, tzinfo=dt.timezone.utc)


def org_names(s: Session) -> dict[uuid.UUID, str]:
    return dict(s.execute(select(Organization.id, Organization.name).order_by(Organization.name)).all())


# ------------------------------------------------------------------------------------ traces

@dataclass
class TraceRow:
    trace: MemoryTrace
    items: int
    used: int
    first_words: str | None = None  # the turn's message, when the reader may see it
    who: str | None = None


def list_traces(s: Session, org_id: uuid.UUID | None, *, channel: str | None = None,
                date_from: dt.date | None = None, date_to: dt.date | None = None,
                conversation_id: uuid.UUID | None = None, after: str | None = None, before: str | None = None,
                used_only: bool = False, viewer: Access | None = None, limit: int = PAGE_SIZE) -> paging.Page:
    """Newest first; each row says who the turn was for, its first words, how many memories went in and how many
    were used. An org operator (`viewer`) sees the first words only of messages the visibility rule lets them
    read; platform staff (no viewer) read traces across orgs, every view audited."""
    items = (select(func.count()).where(TraceItem.trace_id == MemoryTrace.id).correlate(MemoryTrace).scalar_subquery())
    used = (select(func.count()).where(TraceItem.trace_id == MemoryTrace.id, TraceItem.used.is_(True))
            .correlate(MemoryTrace).scalar_subquery())
    stmt = (select(MemoryTrace, items, used, func.left(Message.text, 90), User.name)
            .outerjoin(Message, and_(Message.id == MemoryTrace.message_id,
                                     message_visible(viewer) if viewer is not None else true()))
            .outerjoin(User, User.id == MemoryTrace.user_id))
    if used_only:
        stmt = stmt.where(select(TraceItem.id).where(TraceItem.trace_id == MemoryTrace.id, TraceItem.used.is_(True))
                          .correlate(MemoryTrace).exists())
    if org_id is not None:
        stmt = stmt.where(MemoryTrace.org_id == org_id)
    if channel:
        stmt = stmt.where(MemoryTrace.channel == channel)
    if conversation_id:
        stmt = stmt.where(MemoryTrace.conversation_id == conversation_id)
    if date_from:
        stmt = stmt.where(MemoryTrace.created_at >= _day_start(date_from))
    if date_to:
        stmt = stmt.where(MemoryTrace.created_at < _day_start(date_to + dt.timedelta(days=1)))
    page = paging.keyset(s, stmt, (MemoryTrace.created_at, MemoryTrace.id), lambda r: (r[0].created_at, r[0].id),
                         (paging.datetime_type, paging.uuid_type), after=after, before=before, limit=limit,
                         scalars=False)
    page.rows = [TraceRow(t, n, u, words, name or (f"phone …{t.phone[-4:]}" if t.phone else None))
                 for t, n, u, words, name in page.rows]
    return page


@dataclass
class TraceItemView:
    item: TraceItem
    sentence: str | None  # None when the memory is gone or the viewer may not see it


def trace_detail(s: Session, org_id: uuid.UUID | None, trace_id: uuid.UUID) -> tuple[MemoryTrace, list[TraceItemView]]:
    stmt = select(MemoryTrace).where(MemoryTrace.id == trace_id)
    if org_id is not None:
        stmt = stmt.where(MemoryTrace.org_id == org_id)
    t = s.scalar(stmt)
    if t is None:
        raise NotFound("No such trace.")
    rows = s.execute(select(TraceItem, Memory.sentence).outerjoin(Memory, Memory.id == TraceItem.memory_id)
                     .where(TraceItem.trace_id == t.id).order_by(TraceItem.block, TraceItem.rank)).all()
    return t, [TraceItemView(i, sentence) for i, sentence in rows]


def trace_channels(s: Session, org_id: uuid.UUID | None) -> list[str]:
    stmt = select(MemoryTrace.channel).where(MemoryTrace.channel.isnot(None)).distinct()
    if org_id is not None:
        stmt = stmt.where(MemoryTrace.org_id == org_id)
    return sorted(c for c in s.scalars(stmt.limit(50)))


# ------------------------------------------------------------------------------------ usage

@dataclass
class UsageLine:
    day: dt.date
    purpose: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost: Decimal


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    title: str


@dataclass
class Chart:
    width: int
    height: int
    bars: list[Bar]
    max_label: str
    ticks: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Usage:
    lines: list[UsageLine]
    total_cost: Decimal
    total_calls: int
    chart: Chart
    since: dt.date
    until: dt.date


def usage(s: Session, org_id: uuid.UUID | None, *, since: dt.date | None = None, until: dt.date | None = None) -> Usage:
    """Cost and calls per day, purpose and model, with a bar chart of the daily cost."""
    until = until or clock.today()
    since = since or until - dt.timedelta(days=29)
    if since > until:
        raise InvalidInput("The start date is after the end date.", "since")
    if (until - since).days > 366:
        raise InvalidInput("Pick at most a year.", "since")
    day = cast(func.date_trunc("day", UsageLedger.created_at), Date)
    stmt = (select(day, UsageLedger.purpose, UsageLedger.model, func.count(), func.sum(UsageLedger.input_tokens),
                   func.sum(UsageLedger.output_tokens), func.sum(UsageLedger.cost_usd))
            .where(UsageLedger.created_at >= _day_start(since), UsageLedger.created_at < _day_start(until + dt.timedelta(days=1)))
            .group_by(day, UsageLedger.purpose, UsageLedger.model).order_by(day.desc(), UsageLedger.purpose, UsageLedger.model))
    if org_id is not None:
        stmt = stmt.where(UsageLedger.org_id == org_id)
    lines = [UsageLine(d, p, m, n, int(i or 0), int(o or 0), Decimal(c or 0)) for d, p, m, n, i, o, c in s.execute(stmt)]
    per_day: dict[dt.date, Decimal] = {}
    for line in lines:
        per_day[line.day] = per_day.get(line.day, Decimal(0)) + line.cost
    return Usage(lines, sum((ln.cost for ln in lines), Decimal(0)), sum(ln.calls for ln in lines),
                 daily_chart(per_day, since, until), since, until)


def daily_chart(per_day: dict[dt.date, Decimal], since: dt.date, until: dt.date, width: int = 760,
                height: int = 200) -> Chart:
    """Geometry for a server-rendered SVG bar chart: one bar per day, the tallest fills the height."""
    days = [(since + dt.timedelta(days=i)) for i in range((until - since).days + 1)]
    top = max(per_day.values(), default=Decimal(0))
    left, bottom, plot_h = 50, 20, height - 30
    slot = (width - left) / max(1, len(days))
    bars = []
    for i, d in enumerate(days):
        v = per_day.get(d, Decimal(0))
        h = float(v / top) * plot_h if top else 0.0
        bars.append(Bar(x=left + i * slot + slot * 0.15, y=height - bottom - h, width=max(1.0, slot * 0.7), height=h,
                        label=d.strftime("%d %b") if i % max(1, len(days) // 8) == 0 else "",
                        title=f"{d.isoformat()}: ${v:.4f}"))
    ticks = [(height - bottom - plot_h * f, f"${float(top) * f:.4f}") for f in (0, 0.5, 1)] if top else []
    return Chart(width, height, bars, f"${top:.4f}", ticks)


# ------------------------------------------------------------------------------------ audit log

def search_audit(s: Session, org_id: uuid.UUID | None, *, q: str | None = None, action: str | None = None,
                 date_from: dt.date | None = None, date_to: dt.date | None = None, after: str | None = None,
                 before: str | None = None, who: uuid.UUID | None = None,
                 q_actor_ids: list[uuid.UUID] | None = None, limit: int = PAGE_SIZE) -> paging.Page:
    """Newest first, keyset pages both ways on the id; `q` matches the actor (label, or a person whose name or
    email matched: `q_actor_ids`), the action or the target id; `who` is one person."""
    if q and len(q) > 200:
        raise InvalidInput("Search for at most 200 characters.", "q")
    stmt = select(AuditLog)
    if org_id is not None:
        stmt = stmt.where(AuditLog.org_id == org_id)
    if action:
        stmt = stmt.where(AuditLog.action == action)
    if who:
        stmt = stmt.where(AuditLog.actor_user_id == who)
    if q:
        like = f"%{q.replace('%', '').replace('_', '')}%"
        matches = [AuditLog.actor_label.ilike(like), AuditLog.action.ilike(like), AuditLog.target_id.ilike(like)]
        if q_actor_ids:
            matches.append(AuditLog.actor_user_id.in_(q_actor_ids))
        stmt = stmt.where(or_(*matches))
    if date_from:
        stmt = stmt.where(AuditLog.at >= _day_start(date_from))
    if date_to:
        stmt = stmt.where(AuditLog.at < _day_start(date_to + dt.timedelta(days=1)))
    return paging.keyset(s, stmt, (AuditLog.id,), lambda r: (r.id,), (paging.bigint_type,), after=after,
                         before=before, limit=limit)


def audit_actions(s: Session, org_id: uuid.UUID | None) -> list[str]:
    stmt = select(AuditLog.action).distinct()
    if org_id is not None:
        stmt = stmt.where(AuditLog.org_id == org_id)
    return sorted(s.scalars(stmt.limit(200)))


# ------------------------------------------------------------------------------------ jobs

def _runs_of(stmt, org_id: uuid.UUID | None, platform: bool):
    """Staff read every run; anyone else the runs of their org only (none when no org: fails closed)."""
    return stmt if platform else stmt.where(JobRun.org_id == org_id)


def job_runs(s: Session, job: str | None = None, limit: int = 100, *, org_id: uuid.UUID | None = None,
             platform: bool = False) -> list[JobRun]:
    stmt = _runs_of(select(JobRun), org_id, platform)
    if job:
        stmt = stmt.where(JobRun.job == job)
    return list(s.scalars(stmt.order_by(JobRun.started_at.desc()).limit(limit)))


def job_names(s: Session, *, org_id: uuid.UUID | None = None, platform: bool = False) -> list[str]:
    return sorted(s.scalars(_runs_of(select(JobRun.job), org_id, platform).distinct().limit(100)))


# ------------------------------------------------------------------------------------ dashboard

@dataclass
class Dashboard:
    pending: dict[str, int] | None = None
    learnt_24h: int | None = None
    jobs: list[JobRun] | None = None
    cost_month: Decimal | None = None
    calls_month: int | None = None
    open_privacy: int | None = None
    orgs: int | None = None


def month_cost(s: Session, org_id: uuid.UUID | None) -> tuple[Decimal, int]:
    now = clock.now()
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    stmt = select(func.coalesce(func.sum(UsageLedger.cost_usd), 0), func.count()).where(UsageLedger.created_at >= start)
    if org_id is not None:
        stmt = stmt.where(UsageLedger.org_id == org_id)
    cost, calls = s.execute(stmt).one()
    return Decimal(cost), int(calls)


def pending_counts(s: Session, op) -> dict[str, int]:
    """Pending proposals per kind that this operator may see (review.service.Operator)."""
    from review.service import capped_counts, visible_kinds, visible_proposals

    return capped_counts(s, visible_proposals(op), visible_kinds(op))


def learnt_since(s: Session, org_id: uuid.UUID, visible, hours: int = 24) -> int:
    """Facts of the org that became active in the last `hours` and that the viewer may see."""
    return int(s.scalar(select(func.count()).where(visible, Memory.org_id == org_id, Memory.status == "active",
                                                   Memory.created_at >= clock.now() - dt.timedelta(hours=hours))) or 0)


def open_privacy_requests(s: Session) -> int:
    return int(s.scalar(select(func.count()).where(PrivacyRequest.status.notin_(("executed", "rejected")))) or 0)


# ------------------------------------------------------------------------------------ settings

@dataclass
class OrgSettings:
    org: Organization
    retention: dict[str, int]
    platform_exclusions: list[PolicyExclusion]
    org_exclusions: list[PolicyExclusion]


def org_settings(s: Session, org_id: uuid.UUID) -> OrgSettings:
    org = s.get(Organization, org_id)
    if org is None:
        raise NotFound("No such organization.")
    stored = (org.settings or {}).get("retention") or {}
    retention = {k: int(stored.get(k, d)) for k, d in RETENTION_DEFAULTS.items()}
    rows = list(s.scalars(select(PolicyExclusion).where(
        or_(PolicyExclusion.org_id.is_(None), PolicyExclusion.org_id == org_id))
        .order_by(PolicyExclusion.kind, PolicyExclusion.name)))
    return OrgSettings(org, retention, [r for r in rows if r.org_id is None], [r for r in rows if r.org_id == org_id])


def _audit(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, action: str, **details) -> None:
    audit.record(s, actor_user_id=actor[0], actor_label=actor[1], action=action, org_id=org_id,
                 target_type="organization", target_id=org_id, details=details)


def set_memory_mode(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, mode: str) -> None:
    if mode not in MEMORY_MODES:
        raise InvalidInput("Pick automatic or confirmation.", "memory_mode")
    org = s.get(Organization, org_id, with_for_update=True)
    if org.memory_mode != mode:
        _audit(s, actor, org_id, "settings.memory_mode", old=org.memory_mode, new=mode)
        org.memory_mode = mode


def set_retention(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, values: dict[str, str]) -> dict[str, int]:
    """Retention may only be tightened: between 1 day and the platform default."""
    parsed: dict[str, int] = {}
    for key, default in RETENTION_DEFAULTS.items():
        raw = (values.get(key) or "").strip()
        if not raw.isdigit() or not 1 <= int(raw) <= default:
            raise InvalidInput(f"{RETENTION_LABELS[key]}: a whole number from 1 to {default}.", key)
        parsed[key] = int(raw)
    org = s.get(Organization, org_id, with_for_update=True)
    org.settings = {**(org.settings or {}), "retention": parsed}
    _audit(s, actor, org_id, "settings.retention", **parsed)
    return parsed


_NAME = re.compile(r"^[a-z0-9_]{2,80}$")


def add_exclusion(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, *, kind: str, name: str,
                  pattern: str, description: str) -> PolicyExclusion:
    """An org's own addition to the exclusion list: a regular expression never learnt from."""
    name, pattern, description = name.strip().lower(), pattern.strip(), description.strip()
    if kind not in ("secret", "special"):
        raise InvalidInput("Pick secret (refused outright) or special (never learnt in the background).", "kind")
    if not _NAME.match(name):
        raise InvalidInput("Name: 2-80 lowercase letters, digits or underscores.", "name")
    if not pattern or len(pattern) > 500:
        raise InvalidInput("Give a pattern of at most 500 characters.", "pattern")
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise InvalidInput(f"The pattern is not a valid regular expression: {exc}.", "pattern")
    if len(description) > 300:
        raise InvalidInput("Keep the description under 300 characters.", "description")
    if s.scalar(select(PolicyExclusion.id).where(PolicyExclusion.org_id == org_id, PolicyExclusion.name == name)):
        raise InvalidInput("Your list already has a rule with that name.", "name")
    row = PolicyExclusion(org_id=org_id, kind=kind, name=name, pattern=pattern, description=description)
    s.add(row)
    s.flush()
    _audit(s, actor, org_id, "settings.exclusion_added", exclusion=str(row.id), kind=kind, name=name)
    return row


def toggle_exclusion(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, exclusion_id: uuid.UUID,
                     *, remove: bool = False) -> None:
    """Turn one of the org's own rules on or off, or remove it; platform rules cannot be changed here."""
    row = s.scalar(select(PolicyExclusion).where(PolicyExclusion.id == exclusion_id, PolicyExclusion.org_id == org_id))
    if row is None:
        raise NotFound("No such rule in your organization's list.")
    if remove:
        s.delete(row)
        _audit(s, actor, org_id, "settings.exclusion_removed", exclusion=str(exclusion_id), name=row.name)
    else:
        row.enabled = not row.enabled
        _audit(s, actor, org_id, "settings.exclusion_toggled", exclusion=str(exclusion_id), enabled=row.enabled)
