"""Everything memoria computes from "now" holds on any day: each test runs with the clock fixed on each
of the tricky days (month ends, a leap day, the DST night in Europe/Madrid; see conftest.TRICKY_DAYS)
and moves the clock instead of waiting."""
from __future__ import annotations

import calendar
import datetime as dt

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from jobs.retention import run_retention
from memory_core.domain import clock
from memory_core.domain.access import load_access
from memory_core.domain.dates import EVENT_SPAN_MAX_DAYS
from memory_core.domain.errors import InvalidCredentials, TooManyAttempts
from memory_core.domain.models import LinkCode, LoginAttempt, Memory, MemoryTrace, User
from memory_core.privacy import requests as privacy
from memory_core.reading.context import assemble_context
from memory_core.reading.search import search
from memory_core.tenancy import accounts, linking

SECOND, MINUTE, HOUR, DAY = (dt.timedelta(seconds=1), dt.timedelta(minutes=1), dt.timedelta(hours=1),
                             dt.timedelta(days=1))
PHONE = "+34611222333"


def test_a_privacy_request_is_due_one_calendar_month_after_it_arrived(tricky_clock, factory, system_session):
    s = system_session
    org = factory.org()
    factory.member(org, email="ana@example.test")
    req = privacy.intake(s, kind="erasure", subject_type="user", subject_ref="ana@example.test", requested_by="Ana",
                         basis="GDPR art. 17")
    s.commit()
    s.expire_all()
    arrived = tricky_clock.now()
    assert req.created_at == arrived
    assert req.due_at == privacy.add_month(arrived)
    assert dt.timedelta(days=28) <= req.due_at - req.created_at <= dt.timedelta(days=31)
    due = req.due_at.astimezone(dt.timezone.utc)
    assert (due.year * 12 + due.month) - (arrived.year * 12 + arrived.month) == 1  # the next calendar month
    assert due.day == min(arrived.day, calendar.monthrange(due.year, due.month)[1]) and due.time() == arrived.time()


def test_retention_removes_each_kind_when_its_period_is_over_and_not_a_second_before(tricky_clock, factory,
                                                                                     system_session, database):
    s = system_session
    org = factory.org()
    ana = factory.member(org, email="ana@example.test")
    factory.memory(org, attribute="a", value="old_version", status="superseded", valid_to=tricky_clock.now())
    factory.memory(org, attribute="a", value="active")
    factory.memory(org, attribute="b", value="proposal", status="proposed", proposal_kind="confirmation")
    linking.create_link_code(s, ana.id, org.id)
    s.add_all([MemoryTrace(org_id=org.id, block_text="b"), LoginAttempt(key="email:ana@example.test")])
    s.commit()
    start = tricky_clock.now()

    def left() -> dict[str, int]:
        s.expire_all()
        return {"superseded": s.scalar(select(func.count()).where(Memory.status == "superseded")),
                "proposals": s.scalar(select(func.count()).where(Memory.status == "proposed")),
                "link_codes": s.scalar(select(func.count()).select_from(LinkCode)),
                "traces": s.scalar(select(func.count()).select_from(MemoryTrace)),
                "login_attempts": s.scalar(select(func.count()).select_from(LoginAttempt))}

    everything = {"superseded": 1, "proposals": 1, "link_codes": 1, "traces": 1, "login_attempts": 1}
    # (moment, what is left): each period ends at its own time after the rows were written
    for moment, expected in [
        (linking.CODE_TTL + HOUR - SECOND, everything),
        (linking.CODE_TTL + HOUR + SECOND, {**everything, "link_codes": 0}),
        (DAY - SECOND, {**everything, "link_codes": 0}),
        (DAY + SECOND, {**everything, "link_codes": 0, "login_attempts": 0}),
        (60 * DAY - SECOND, {**everything, "link_codes": 0, "login_attempts": 0}),
        (60 * DAY + SECOND, {**everything, "link_codes": 0, "login_attempts": 0, "proposals": 0}),
        (90 * DAY + SECOND, {"superseded": 1, "proposals": 0, "link_codes": 0, "traces": 0, "login_attempts": 0}),
        (365 * DAY - SECOND, {"superseded": 1, "proposals": 0, "link_codes": 0, "traces": 0, "login_attempts": 0}),
        (365 * DAY + SECOND, {"superseded": 0, "proposals": 0, "link_codes": 0, "traces": 0, "login_attempts": 0}),
    ]:
        tricky_clock.set(start + moment)
        run_retention("test", database=database)
        assert left() == expected, moment
    assert s.scalar(select(Memory.value).where(Memory.status == "active")) == "active"


def _block(database, system_session, org, user, conv):
    access = load_access(system_session, org.id, user_id=user.id)
    with database.unit_of_work(access.scope()) as uow:
        block = assemble_context(uow.session, access, conv.id, "hola")
        uow.commit()
    return block


def test_the_memory_block_ages_facts_and_drops_past_events_by_the_clock(tricky_clock, factory, system_session,
                                                                        database):
    org = factory.org()
    owner = factory.member(org, role="owner")
    conv = factory.conversation(org, owner)
    fact = factory.memory(org, attribute="plazo_pago", value="60 días", category="customer", subject="name:acme",
                          confidence=0.8)
    today = factory.memory(org, attribute=f"evento_{clock.today()}", value="feria", category="event",
                           event_date=clock.today())

    def score(block, memory):
        return next((i.score for i in block.items if i.memory_id == memory.id), None)

    block = _block(database, system_session, org, owner, conv)
    assert score(block, fact) == pytest.approx(0.8) and score(block, today) is not None
    tricky_clock.advance(days=182.5)  # six months: a customer fact has lost a quarter
    block = _block(database, system_session, org, owner, conv)
    assert score(block, fact) == pytest.approx(0.6, abs=1e-3)
    assert score(block, today) is None  # the event's day is over


def test_relative_dates_in_search_are_days_of_the_clock(tricky_clock, factory, system_session, database):
    org = factory.org()
    owner = factory.member(org, role="owner")
    conv = factory.conversation(org, owner)
    start = tricky_clock.now()
    tricky_clock.set(start - 40 * DAY)
    old = factory.message(conv, "El cliente de Sevilla ha confirmado el pedido de mesas")
    tricky_clock.set(start - DAY)
    new = factory.message(conv, "El cliente de Sevilla ha cancelado el pedido de mesas")
    tricky_clock.set(start)
    access = load_access(system_session, org.id, user_id=owner.id)
    with database.unit_of_work(access.scope()) as uow:
        assert search(uow.session, access, "¿qué pasó ayer con el pedido de mesas?")[0].id == new.id
        assert search(uow.session, access, "el pedido de mesas de hace 40 días")[0].id == old.id


def test_a_link_code_works_for_ten_minutes_from_the_clock(tricky_clock, factory, system_session):
    s = system_session
    org = factory.org()
    ana, bea = factory.member(org), factory.member(org)
    issued = linking.issue_link_code(s, ana.id, org.id)
    s.commit()
    row = s.scalar(select(LinkCode))
    assert row.created_at == tricky_clock.now() and issued.expires_at == row.created_at + linking.CODE_TTL
    tricky_clock.advance(linking.CODE_TTL)
    assert "caducado" in linking.confirm_link(s, PHONE, issued.code)
    s.commit()
    late = linking.issue_link_code(s, bea.id, org.id)
    s.commit()
    tricky_clock.advance(linking.CODE_TTL - SECOND)
    assert "vinculado" in linking.confirm_link(s, PHONE, late.code)
    s.commit()
    assert s.scalar(select(User.phone).where(User.id == bea.id)) == PHONE


def test_rate_limit_windows_open_again_when_the_clock_says_so(tricky_clock, factory, system_session):
    s = system_session
    org = factory.org()
    ana = factory.member(org, email="ana@example.test")
    for _ in range(linking.MAX_CODES):
        linking.create_link_code(s, ana.id, org.id)
        s.commit()
    with pytest.raises(TooManyAttempts):
        linking.create_link_code(s, ana.id, org.id)
    s.rollback()
    tricky_clock.advance(linking.CODE_WINDOW + SECOND)
    code = linking.create_link_code(s, ana.id, org.id)
    s.commit()

    for _ in range(linking.MAX_FAILURES):
        assert "no es válido" in linking.confirm_link(s, PHONE, "AAAAAA")
        s.commit()
    assert "Espera 15 minutos" in linking.confirm_link(s, PHONE, code)
    tricky_clock.advance(linking.FAILURE_WINDOW + SECOND)
    code = linking.create_link_code(s, ana.id, org.id)  # the first one expired meanwhile
    s.commit()
    assert "vinculado" in linking.confirm_link(s, PHONE, code)
    s.commit()

    for _ in range(accounts.MAX_FAILURES):
        with pytest.raises((InvalidCredentials, TooManyAttempts)):
            accounts.authenticate(s, "ana@example.test", "wrong", "10.0.0.1")
    with pytest.raises(TooManyAttempts):
        accounts.authenticate(s, "ana@example.test", "wrong", "10.0.0.1")
    tricky_clock.advance(accounts.WINDOW + SECOND)
    with pytest.raises(InvalidCredentials):  # asked again, not refused
        accounts.authenticate(s, "ana@example.test", "wrong", "10.0.0.1")
    assert s.execute(text("select count(*) from login_attempts where at > :t"),
                     {"t": tricky_clock.now() - SECOND}).scalar_one() == 3  # account from address, address, account


def test_an_event_that_spans_days_is_served_until_its_last_day(tricky_clock, factory, system_session, database):
    org = factory.org()
    owner = factory.member(org, role="owner")
    conv = factory.conversation(org, owner)
    first = clock.today()
    closed = factory.memory(org, attribute=f"evento_{first}", value="cerramos por vacaciones del 1 al 15",
                            category="event", event_date=first, event_until=first + dt.timedelta(days=14))

    def served() -> bool:
        return any(i.memory_id == closed.id for i in _block(database, system_session, org, owner, conv).items)

    assert served()
    tricky_clock.advance(days=7)  # its first day is gone, the shop is still closed
    assert served()
    tricky_clock.advance(days=7)  # its last day
    assert served()
    tricky_clock.advance(days=1)
    assert not served()


@pytest.mark.parametrize("days", [0, -3, EVENT_SPAN_MAX_DAYS + 1])
def test_the_memories_table_refuses_an_event_span_a_date_search_could_not_find(factory, system_session, days):
    """The table holds no last day on or before the first, nor one further than EVENT_SPAN_MAX_DAYS: a date search
    reads events from that many days back."""
    org = factory.org()
    first = dt.date(2027, 3, 1)
    with pytest.raises(IntegrityError, match="memory_event_span_valid"):
        factory.memory(org, attribute="obras", value="obras en el local", category="event", event_date=first,
                       event_until=first + dt.timedelta(days=days))
    system_session.rollback()
