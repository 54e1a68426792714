"""The date retriever reads a principal's memories of the named span arm by arm of the visibility rule,
each from a range of an index (migration t5_bigorg17_date_indexes): the same rows in the same order as
comparing the date of every visible row, on the plain path (one statement over the whole rule) and on a
big principal's (the arms, sorting priced out)."""
from __future__ import annotations

import datetime as dt
import random

import pytest
from sqlalchemy import Date, cast, func, select, text

from memory_core.domain.access import Access, Principal, load_access, memory_visible
from memory_core.domain.models import Memory
from memory_core.reading import principal_size
from memory_core.reading import search as search_module
from memory_core.reading.search import retrieve
from tests.support.statements import plan_of, sent_statements

NOW = dt.datetime(2026, 11, 29, 12, tzinfo=dt.timezone.utc)
PHONE = "+34600999111"
QUERIES = {"¿qué me dijiste ayer?": (dt.date(2026, 11, 28), dt.date(2026, 11, 29)),
           "lo de la semana pasada": (dt.date(2026, 11, 16), dt.date(2026, 11, 23)),
           "las facturas de septiembre": (dt.date(2026, 9, 1), dt.date(2026, 10, 1)),
           "este mes": (dt.date(2026, 11, 1), dt.date(2026, 12, 1)),
           "lo que pasó este año": (dt.date(2026, 1, 1), dt.date(2027, 1, 1))}
K = 7


@pytest.fixture
def dated_org(factory, system_session):
    """A member with a linked number who sees personal, private and shared memories said over the last months
    (several on one day, a few with event dates), among rows of another member and another org."""
    rng = random.Random(11)
    org, other = factory.org("Fechas"), factory.org("Ajena")
    ana = factory.member(org, role="member", permissions={"contacts": "read"})
    bea = factory.member(org, role="member")
    factory.phone(org, PHONE, user=ana)
    rows = []
    for i in range(360):
        said = NOW - dt.timedelta(days=rng.choice([0, 1, 1, 1, 2, 5, 9, 12, 40, 70, 75, 200]),
                                  hours=rng.choice([0, 0, 3, 13]))
        event = (NOW.date() - dt.timedelta(days=rng.choice([1, 8, 80, 150]))) if rng.random() < 0.25 else None
        # Some events span days, a few of them from before the span a query names into it.
        until = event + dt.timedelta(days=rng.choice([5, 30, 120, 183])) if event and rng.random() < 0.5 else None
        fields = dict(category="event" if event else "company", subject="org", attribute=f"a{i}", value=f"v{i}",
                      sentence=f"frase {i}", valid_from=said, event_date=event, event_until=until,
                      embedding=[1.0] + [0.0] * 511,
                      status="active" if rng.random() < 0.9 else "superseded")
        kind = rng.choice(["personal", "phone", "private", "shared", "shared", "contacts", "hidden", "other"])
        if kind == "personal":
            rows.append(Memory(org_id=None, level="personal", owner_user_id=ana.id, **fields))
        elif kind == "phone":
            rows.append(Memory(org_id=None, level="personal", owner_phone=PHONE, **fields))
        elif kind == "private":
            rows.append(Memory(org_id=org.id, level="private", owner_user_id=ana.id, **fields))
        elif kind in ("shared", "contacts"):
            rows.append(Memory(org_id=org.id, level="shared", area="general" if kind == "shared" else "contacts",
                               **fields))
        elif kind == "hidden":
            rows.append(Memory(org_id=org.id, level=rng.choice(["private", "shared"]), owner_user_id=bea.id,
                               area="invoices", **fields))
        else:
            rows.append(Memory(org_id=other.id, level="shared", **fields))
    system_session.add_all(rows)
    system_session.commit()
    return org, ana


def _every_visible_row(session, access, start, end, said):
    """The statement before the arms: every visible active row whose days share one with the span (an event's from
    its first to its last), latest first (ties on the day: latest said, then id), cut at K, then in the
    retriever's order (score, then id)."""
    said_on = cast(func.timezone("UTC", Memory.valid_from), Date)
    col = func.coalesce(Memory.event_date, said_on) if said else Memory.event_date
    rows = session.execute(select(Memory.id, col.label("d"), Memory.valid_from).where(
        memory_visible(access), Memory.status == "active", col < end,
        func.coalesce(Memory.event_until, col) >= start)).all()
    rows.sort(key=lambda r: (r.d, r.valid_from, str(r.id)), reverse=True)
    kept = [(r.id, 1.0 / (1.0 + (end - r.d).days)) for r in rows[:K]]
    return [i for i, _ in sorted(kept, key=lambda x: (-x[1], str(x[0])))]


def principal_key(access):
    return (access.org_id, access.principal, access.read_areas, "memory", None, 0)


@pytest.mark.parametrize("path", ["plain", "big principal"])
@pytest.mark.parametrize("who", ["user", "user and number", "number alone", "no org"])
def test_dated_memories_are_the_same_rows_in_the_same_order_as_comparing_every_visible_row(
        database, system_session, dated_org, monkeypatch, path, who):
    org, ana = dated_org
    if path == "big principal":
        # Counted as big from one candidate row: the date statement then runs with sorting priced out.
        monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 0)
    access = {"user": lambda: load_access(system_session, org.id, user_id=ana.id),
              "user and number": lambda: load_access(system_session, org.id, user_id=ana.id, phone=PHONE),
              "number alone": lambda: Access(Principal(phone=PHONE), org.id, None, {"general": "read"}),
              "no org": lambda: load_access(system_session, None, user_id=ana.id)}[who]()
    found_any = False
    for query, (start, end) in QUERIES.items():
        assert search_module.date_range(query, NOW) == (start, end)
        said = (end - start).days <= search_module.SAID_SPAN_DAYS
        with database.unit_of_work(access.scope()) as uow:
            expected = _every_visible_row(uow.session, access, start, end, said)
            got = retrieve(uow.session, access, query, kinds=["memory"], per_retriever=K, now=NOW,
                           retrievers=["date", "vector"], vector=[0.0] * 511 + [1.0])["date"]
        assert [f.id for f in got] == expected, query
        if path == "big principal":
            assert (principal_size.known(principal_key(access)) or 0) > 0, "the big path was not taken"
        found_any = found_any or len(expected) == K
    assert found_any  # the cut at K was exercised


def test_each_arm_of_the_date_retriever_reads_a_range_of_its_index(database, system_session, dated_org, monkeypatch):
    org, ana = dated_org
    monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 0)  # a big principal: read arm by arm
    access = load_access(system_session, org.id, user_id=ana.id, phone=PHONE)
    with sent_statements(database.engine, lambda s: "valid_from >=" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            retrieve(uow.session, access, "en septiembre", kinds=["memory"], per_retriever=K, now=NOW,
                     retrievers=["date", "vector"], vector=[0.0] * 511 + [1.0])
    statement, parameters = statements[-1]
    with database.unit_of_work(access.scope()) as uow:
        # A table this small is cheaper to read whole: priced out, the plan shows what the statement can use.
        uow.session.execute(text("set local enable_seqscan = off"))
        plan = plan_of(uow.session.connection(), statement, parameters)
    # The org's arms read ranges of the org's date indexes (a person's few own rows here may come from any
    # index led by the owner; the bench's big org reads ix_memories_said_user for them).
    for index in ("ix_memories_said_org", "ix_memories_event_org"):
        assert index in plan, plan


def test_the_messages_of_the_named_span_are_read_from_ranges_of_the_owners_and_the_orgs_date_indexes(
        database, system_session, factory, dated_org, owner_engine):
    """Messages sent in the span: the person's own from (user_id, sent_at), the org's shared ones from
    (org_id, sent_at) (migration t7_bigorg7_message_date_indexes), not every visible message (a big org's
    principal read the whole table)."""
    org, ana = dated_org
    conversation = factory.conversation(org, ana)
    for days in (0, 1, 1, 3, 40):
        factory.message(conversation, f"mensaje de hace {days} días", created_at=NOW - dt.timedelta(days=days),
                        visibility="shared_in_org" if days == 1 else "private_in_org")
    access = load_access(system_session, org.id, user_id=ana.id)
    with sent_statements(database.engine, lambda s: "sent_at >=" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            found = retrieve(uow.session, access, "¿qué me dijiste ayer?", kinds=["message"], per_retriever=K,
                             now=NOW, retrievers=["date"])["date"]
    assert len(found) == 2  # the two messages sent yesterday
    statement, parameters = statements[-1]
    # A table this small is cheaper to read whole, or from any index led by the owner or the org: those are set
    # aside (in a transaction that is rolled back) to see what the statement can use.
    with owner_engine.connect() as c, c.begin() as tx:
        for name in ("ix_messages_user", "ix_messages_owner", "ix_messages_org_created"):
            c.exec_driver_sql(f"drop index if exists {name}")
        c.exec_driver_sql("set local enable_seqscan = off")
        plan = plan_of(c, statement, parameters)
        tx.rollback()
    for index in ("ix_messages_sent_user", "ix_messages_sent_org"):
        assert index in plan, plan


@pytest.mark.parametrize("path", ["plain", "big principal"])
def test_a_date_search_finds_an_event_on_any_of_its_days(database, system_session, factory, monkeypatch, path):
    """"Cerramos del 10 al 24 de agosto" is found by a search for the 15th, and by one for the week of the 24th,
    not by one for the 30th; an event of one day only by its day."""
    if path == "big principal":
        monkeypatch.setattr(search_module, "EXACT_SCAN_MAX", 0)
    org = factory.org("Vacaciones")
    ana = factory.member(org, role="member")
    rows = {"closed": Memory(org_id=org.id, level="shared", area="general", category="event", subject="org",
                             attribute="vacaciones", value="cerrado del 10 al 24 de agosto",
                             sentence="La oficina cierra del 10 al 24 de agosto.", event_date=dt.date(2026, 8, 10),
                             event_until=dt.date(2026, 8, 24), valid_from=NOW - dt.timedelta(days=120)),
            "fair": Memory(org_id=org.id, level="shared", area="general", category="event", subject="org",
                           attribute="feria", value="feria en Bilbao", sentence="Vamos a la feria de Bilbao.",
                           event_date=dt.date(2026, 8, 12), valid_from=NOW - dt.timedelta(days=120))}
    system_session.add_all(rows.values())
    system_session.commit()
    access = load_access(system_session, org.id, user_id=ana.id)
    names = {m.id: name for name, m in rows.items()}

    def found(query):
        with database.unit_of_work(access.scope()) as uow:
            got = retrieve(uow.session, access, query, kinds=["memory"], per_retriever=K, now=NOW,
                           retrievers=["date"])["date"]
        return {names[f.id] for f in got}

    assert found("¿qué tenemos el 15 de agosto?") == {"closed"}
    assert found("¿y el 12 de agosto?") == {"closed", "fair"}
    assert found("¿qué hay el 24 de agosto?") == {"closed"}
    assert found("¿qué hay el 30 de agosto?") == set()
    assert found("¿qué pasó el 9 de agosto?") == set()
