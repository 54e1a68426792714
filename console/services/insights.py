"""Read models for the console's other pages: traces, usage, audit log, job runs, dashboard (the org
settings an owner or admin may change are in `org_settings`). No Flask here; nothing commits.

`org_id=None` means "every org", which only staff get (the views decide, and audit each staff view).
"""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import Date, and_, cast, func, or_, select, true
from sqlalchemy.orm import Session

from console.services import paging
from console.services.proposals import ACTIVE
from memory_core.domain import clock, labels
from memory_core.domain.access import Access, message_visible
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import (
    AuditLog,
    JobRun,
    Memory,
    MemoryTrace,
    Message,
    Organization,
    PrivacyRequest,
    TraceItem,
    UsageLedger,
    User,
)
from memory_core.domain.vocabulary import TEXT_SEARCH_CONFIG, PrivacyKind, PrivacyStatus
from memory_core.privacy import requests as privacy

PAGE_SIZE = 50



def parse_date(raw: str | None, name: str) -> dt.date | None:
    if not raw:
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(f"{name.capitalize()} must be a date like 2026-11-29.", name) from None


def _day_start(d: dt.date) -> dt.datetime:
    return dt.datetime.combine(d, dt.time.min, tzinfo=dt.timezone.utc)


def _on_days(column, first: dt.date | None, last: dt.date | None) -> list:
    """`column` (a time) falls on the UTC days from `first` to `last`, both included; None leaves that end open."""
    conditions = []
    if first:
        conditions.append(column >= _day_start(first))
    if last:
        conditions.append(column < _day_start(last + dt.timedelta(days=1)))
    return conditions


def _given(*pairs) -> list:
    """`column == value` for each (column, value) whose value is given: an empty filter does not filter."""
    return [column == value for column, value in pairs if value]


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
                used_only: bool = False, viewer: Access | None = None, q: str | None = None,
                oldest_first: bool = False, limit: int = PAGE_SIZE) -> paging.Page:
    """Newest (or oldest) first; `q` matches the words of the turn (only a message the reader may see) or who it
    was for. Each row says who the turn was for, its first words, how many memories went in and how many
    were used. An org operator (`viewer`) sees the first words only of messages the visibility rule lets them
    read; platform staff (no viewer) read traces across orgs, every view audited."""
    items = (select(func.count()).where(TraceItem.trace_id == MemoryTrace.id).correlate(MemoryTrace).scalar_subquery())
    used = (select(func.count()).where(TraceItem.trace_id == MemoryTrace.id, TraceItem.used.is_(True))
            .correlate(MemoryTrace).scalar_subquery())
    stmt = (select(MemoryTrace, items, used, func.left(Message.text, 90), User.name)
            .outerjoin(Message, and_(Message.id == MemoryTrace.message_id,
                                     message_visible(viewer) if viewer is not None else true()))
            .outerjoin(User, User.id == MemoryTrace.user_id))
    if q:
        if len(q) > 200:
            raise InvalidInput("Search for at most 200 characters.", "q")
        like = paging.contains(q)
        stmt = stmt.where(or_(Message.search_tsv.op("@@")(func.websearch_to_tsquery(TEXT_SEARCH_CONFIG, q)),
                              User.name.ilike(like)))
    if used_only:
        stmt = stmt.where(select(TraceItem.id).where(TraceItem.trace_id == MemoryTrace.id, TraceItem.used.is_(True))
                          .correlate(MemoryTrace).exists())
    stmt = stmt.where(*_given((MemoryTrace.org_id, org_id), (MemoryTrace.channel, channel),
                              (MemoryTrace.conversation_id, conversation_id)),
                      *_on_days(MemoryTrace.created_at, date_from, date_to))
    page = paging.keyset(s, stmt, (MemoryTrace.created_at, MemoryTrace.id), lambda r: (r[0].created_at, r[0].id),
                         (paging.datetime_type, paging.uuid_type), after=after, before=before, limit=limit,
                         descending=not oldest_first, scalars=False, for_values=bool(q))  # words: planned for them
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
    stmt = select(MemoryTrace.channel)
    if org_id is not None:
        stmt = stmt.where(MemoryTrace.org_id == org_id)
    return sorted(paging.distinct_values(s, stmt, MemoryTrace.channel, 50))


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


def usage(s: Session, org_id: uuid.UUID | None, *, since: dt.date | None = None, until: dt.date | None = None,
          lang: str = "en") -> Usage:
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
            .where(*_on_days(UsageLedger.created_at, since, until))
            .group_by(day, UsageLedger.purpose, UsageLedger.model)
            .order_by(day.desc(), UsageLedger.purpose, UsageLedger.model))
    if org_id is not None:
        stmt = stmt.where(UsageLedger.org_id == org_id)
    lines = [UsageLine(d, p, m, n, int(i or 0), int(o or 0), Decimal(c or 0))
             for d, p, m, n, i, o, c in s.execute(stmt)]
    per_day: dict[dt.date, Decimal] = {}
    for line in lines:
        per_day[line.day] = per_day.get(line.day, Decimal(0)) + line.cost
    return Usage(lines, sum((ln.cost for ln in lines), Decimal(0)), sum(ln.calls for ln in lines),
                 daily_chart(per_day, since, until, lang=lang), since, until)


def daily_chart(per_day: dict[dt.date, Decimal], since: dt.date, until: dt.date, width: int = 760,
                height: int = 200, lang: str = "en") -> Chart:
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
                        label=labels.short_day(d, lang) if i % max(1, len(days) // 8) == 0 else "",
                        title=f"{d.isoformat()}: {labels.money(v, lang, 4)}"))
    ticks = ([(height - bottom - plot_h * f, labels.money(top * Decimal(f), lang, 4)) for f in (0, 0.5, 1)]
             if top else [])
    return Chart(width, height, bars, labels.money(top, lang, 4), ticks)


# ------------------------------------------------------------------------------------ audit log

def search_audit(s: Session, org_id: uuid.UUID | None, *, q: str | None = None, action: str | None = None,
                 date_from: dt.date | None = None, date_to: dt.date | None = None, after: str | None = None,
                 before: str | None = None, who: uuid.UUID | None = None,
                 q_actor_ids: list[uuid.UUID] | None = None, oldest_first: bool = False,
                 limit: int = PAGE_SIZE) -> paging.Page:
    """Newest (or oldest) first, keyset pages both ways on the id; `q` matches the actor (label, or a person whose
    name or email matched: `q_actor_ids`), the action or the target id; `who` is one person."""
    if q and len(q) > 200:
        raise InvalidInput("Search for at most 200 characters.", "q")
    stmt = select(AuditLog)
    stmt = stmt.where(*_given((AuditLog.org_id, org_id), (AuditLog.action, action), (AuditLog.actor_user_id, who)),
                      *_on_days(AuditLog.at, date_from, date_to))
    if q:
        like = paging.contains(q)
        matches = [AuditLog.actor_label.ilike(like), AuditLog.action.ilike(like), AuditLog.target_id.ilike(like)]
        if q_actor_ids:
            matches.append(AuditLog.actor_user_id.in_(q_actor_ids))
        stmt = stmt.where(or_(*matches))
    return paging.keyset(s, stmt, (AuditLog.id,), lambda r: (r.id,), (paging.bigint_type,), after=after,
                         before=before, descending=not oldest_first, limit=limit)


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


JOB_STATUSES = ("running", "succeeded", "failed")


def list_job_runs(s: Session, *, org_id: uuid.UUID | None = None, platform: bool = False, job: str | None = None,
                  status: str | None = None, q: str | None = None, oldest_first: bool = False,
                  after: str | None = None, before: str | None = None, limit: int = PAGE_SIZE) -> paging.Page:
    """Job runs newest (or oldest) first, keyset pages both ways; `q` matches who triggered it or the error."""
    if status and status not in JOB_STATUSES:
        raise InvalidInput("Unknown status.", "status")
    if q and len(q) > 200:
        raise InvalidInput("Search for at most 200 characters.", "q")
    stmt = _runs_of(select(JobRun), org_id, platform)
    if job:
        stmt = stmt.where(JobRun.job == job)
    if status:
        stmt = stmt.where(JobRun.status == status)
    if q:
        like = paging.contains(q)
        stmt = stmt.where(or_(JobRun.triggered_by.ilike(like), JobRun.error.ilike(like), JobRun.job.ilike(like)))
    return paging.keyset(s, stmt, (JobRun.started_at, JobRun.id), lambda r: (r.started_at, r.id),
                         (paging.datetime_type, paging.uuid_type), after=after, before=before,
                         descending=not oldest_first, limit=limit)


def job_names(s: Session, *, org_id: uuid.UUID | None = None, platform: bool = False) -> list[str]:
    return sorted(paging.distinct_values(s, _runs_of(select(JobRun.job), org_id, platform), JobRun.job, 100))


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


def learnt_since(s: Session, org_id: uuid.UUID, visible, hours: int = 24) -> int:
    """Facts of the org that became active in the last `hours` and that the viewer may see."""
    return int(s.scalar(select(func.count()).where(visible, Memory.org_id == org_id, Memory.status == ACTIVE,
                                                   Memory.created_at >= clock.now() - dt.timedelta(hours=hours))) or 0)


def open_privacy_requests(s: Session) -> int:
    return int(s.scalar(select(func.count()).where(PrivacyRequest.status.notin_(privacy.CLOSED))) or 0)


# ------------------------------------------------------------------------------------ privacy requests

# The privacy list's sort orders: (key columns, descending); the soonest due first by default.
PRIVACY_SORTS = {"due": ((PrivacyRequest.due_at, PrivacyRequest.id), False),
                 "newest": ((PrivacyRequest.created_at, PrivacyRequest.id), True),
                 "oldest": ((PrivacyRequest.created_at, PrivacyRequest.id), False)}


def list_privacy_requests(s: Session, *, status: str | None = None, kind: str | None = None, q: str | None = None,
                          sort: str = "due", after: str | None = None, before: str | None = None,
                          limit: int = PAGE_SIZE) -> paging.Page:
    """Privacy requests in the chosen order, keyset pages both ways; `status` is one status, "open" or
    "closed"; `q` matches who asked or the subject (while the request still holds it)."""
    if status and status not in ("open", "closed", *PrivacyStatus):
        raise InvalidInput("Unknown status.", "status")
    if kind and kind not in tuple(PrivacyKind):
        raise InvalidInput("Unknown kind of request.", "kind")
    if sort not in PRIVACY_SORTS:
        raise InvalidInput("Unknown sort order.", "sort")
    if q and len(q) > 200:
        raise InvalidInput("Search for at most 200 characters.", "q")
    stmt = select(PrivacyRequest)
    if status == "open":
        stmt = stmt.where(PrivacyRequest.status.notin_(privacy.CLOSED))
    elif status == "closed":
        stmt = stmt.where(PrivacyRequest.status.in_(privacy.CLOSED))
    elif status:
        stmt = stmt.where(PrivacyRequest.status == status)
    if kind:
        stmt = stmt.where(PrivacyRequest.kind == kind)
    if q:
        like = paging.contains(q)
        stmt = stmt.where(or_(PrivacyRequest.requested_by.ilike(like), PrivacyRequest.subject_ref.ilike(like)))
    columns, descending = PRIVACY_SORTS[sort]
    return paging.keyset(s, stmt, columns, lambda r: (getattr(r, columns[0].key), r.id),
                         (paging.datetime_type, paging.uuid_type), after=after, before=before,
                         descending=descending, limit=limit)
