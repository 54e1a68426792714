"""The core and profile candidates of a turn are read arm by arm in the order of indexes ordered like the
profile, and cut early: the same rows in the same order as ranking every visible row, and a statement
the planner can serve from those indexes without sorting an arm."""
from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from sqlalchemy import Date, and_, bindparam, case, select, text

from memory_core.domain.access import Access, Principal, load_access, memory_visible, shape, template_params
from memory_core.domain.labels import NOTE_PREFIXES
from memory_core.domain.models import Memory
from memory_core.reading import context, profile_query
from memory_core.reading.profile_query import OWN_PHONE_INDEX, OWN_USER_INDEX, SHARED_INDEX, candidates_statement
from tests.support.visibility_corpus import memory_of_kind

TODAY = dt.date(2026, 12, 1)
PHONE = "+34600111222"


def _ranking_every_visible_row(access, limit):
    """The profile's order as one query over the whole visibility rule (the statement before the indexes)."""
    core_rank = case((and_(Memory.level == "personal", Memory.subject == "self",
                           Memory.category.in_(("person", "preference")),
                           *[~Memory.attribute.startswith(p, autoescape=True) for p in NOTE_PREFIXES]), 0), else_=1)
    group = case(*[(Memory.category == c, g) for c, g in context.GROUP_OF.items()], else_=context.OTHER_GROUP)
    return (select(Memory.id).where(memory_visible(access), Memory.status == "active",
                                    context._not_past_event(TODAY))
            .order_by(core_rank, Memory.pinned.desc(), group, Memory.confidence.desc(), Memory.valid_from.desc(),
                      Memory.id).limit(limit))


@pytest.fixture
def profile_org(factory, system_session):
    """An org whose member (a user with a linked number) sees personal, private and shared rows of every
    group, pinned and not, with equal confidences and dates (the id breaks ties), among rows it must not see."""
    rng = random.Random(3)
    org, other = factory.org("Perfil"), factory.org("Otra")
    ana = factory.member(org, role="member", permissions={"contacts": "read"})
    bea = factory.member(org, role="member")
    factory.phone(org, PHONE, user=ana)
    base = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
    categories = ["person", "preference", "company", "customer", "supplier", "sheet", "event"]
    rows = []
    for i in range(400):
        kind = rng.choice(["personal", "private", "shared", "shared", "shared", "phone", "both", "hidden"])
        category = rng.choice(categories)
        fields = dict(
            category=category, subject=rng.choice(["self", "org", "contact:x"]),
            attribute=rng.choice(["nombre", "tono", "nota_viaje", "note_x", "pago", "plazo"]) + f"_{i}",
            value=f"valor {i}", sentence=f"frase {i}", pinned=rng.random() < 0.1,
            confidence=rng.choice([0.5, 0.7, 0.9]), valid_from=base - dt.timedelta(days=rng.choice([0, 10, 400])),
            status="active" if rng.random() < 0.9 else "superseded",
            event_date=(TODAY + dt.timedelta(days=rng.choice([-30, 30]))) if category == "event" else None)
        rows.append(memory_of_kind(kind, fields, rng=rng, org=org, other=other, ana=ana, bea=bea, phone=PHONE))
    system_session.add_all(rows)
    system_session.commit()
    return org, ana, bea


@pytest.mark.parametrize("who", ["user", "user and number", "number alone", "member of no org"])
def test_profile_candidates_are_the_same_rows_in_the_same_order_as_ranking_every_visible_row(
        database, system_session, profile_org, who):
    org, ana, _ = profile_org
    if who == "user":
        access = load_access(system_session, org.id, user_id=ana.id)
    elif who == "user and number":
        access = load_access(system_session, org.id, user_id=ana.id, phone=PHONE)
    elif who == "number alone":
        access = Access(Principal(phone=PHONE), org.id, None, {"general": "read"})
    else:
        access = load_access(system_session, None, user_id=ana.id)
    params = template_params(access) | {"today": TODAY, "profile_areas": list(access.read_areas)}
    for limit in (5, 40, context.CANDIDATES):
        statement = candidates_statement(
            shape(access), (Memory.id,), group_of=context.GROUP_OF, other_group=context.OTHER_GROUP,
            note_prefixes=NOTE_PREFIXES, not_past_event=context._not_past_event(bindparam("today", type_=Date)),
            limit=limit)
        with database.unit_of_work(access.scope()) as uow:
            got = uow.session.scalars(statement, params).all()
            expected = uow.session.scalars(_ranking_every_visible_row(access, limit)).all()
        assert got == expected
        assert len(got) == len(set(got))
    assert len(expected) > (5 if who == "member of no org" else 40)  # the limits cut into the arms


def test_the_block_reads_its_candidates_through_the_ordered_statement(database, system_session, profile_org):
    org, ana, _ = profile_org
    access = load_access(system_session, org.id, user_id=ana.id)
    with database.unit_of_work(access.scope()) as uow:
        core, candidates = context._visible_memories(uow.session, access, TODAY)
        expected = uow.session.scalars(_ranking_every_visible_row(access, context.CANDIDATES)).all()
    assert {m.id for m in core} | {m.id for m in candidates} <= set(expected)
    assert [m.id for m in candidates] == [i for i in expected if i in {m.id for m in candidates}]


def _plan(session, statement, params, generic=False):
    # As profile_query.read runs it: sorting disabled (row security's filter makes every estimate tiny).
    session.execute(text("set local enable_sort = off"))
    compiled = statement.compile(dialect=session.get_bind().dialect, compile_kwargs={"render_postcompile": True})
    if generic:
        # As PostgreSQL plans a prepared statement once for any values ($1, $2...).
        sql = str(compiled)
        for n, name in enumerate(compiled.params, 1):
            sql = sql.replace(f"%({name})s", f"${n}")
        return "\n".join(r[0] for r in session.connection().exec_driver_sql("EXPLAIN (GENERIC_PLAN) " + sql))
    values = compiled.construct_params(params)
    return "\n".join(r[0] for r in session.connection().exec_driver_sql("EXPLAIN " + str(compiled), values))


@pytest.mark.parametrize("generic", [False, True], ids=["with values", "generic plan"])
def test_each_arm_of_the_profile_reads_an_index_in_the_profiles_order(database, system_session, profile_org,
                                                                       generic):
    org, ana, _ = profile_org
    access = load_access(system_session, org.id, user_id=ana.id, phone=PHONE)
    statement = context._visible_statement(shape(access))
    params = template_params(access) | {"today": TODAY, "profile_areas": list(access.read_areas)}
    with database.unit_of_work(access.scope()) as uow:
        plan = _plan(uow.session, statement, params, generic)
    lines = plan.splitlines()

    def parent(n):
        depth = lines[n].index("->")
        return next(line for line in reversed(lines[:n])
                    if not line.startswith(" ") or ("->" in line and line.index("->") < depth))

    for index in (SHARED_INDEX, OWN_USER_INDEX, OWN_PHONE_INDEX):
        scans = [n for n, line in enumerate(lines) if f"Index Scan using {index} " in line]
        assert scans, plan
        # Each arm reads its index in order and stops at the limit: the scan's parent is a Limit, not a Sort.
        assert all("Limit" in parent(n) for n in scans), plan
    # With sorting switched off, the one sort left merges the readable areas' first rows, none inside an arm.
    assert sum(1 for line in lines if re.match(r"\s*(->\s+)?Sort\s+\(", line)) <= 1, plan


def test_reading_the_candidates_leaves_the_sessions_planner_settings_as_they_were(database, system_session,
                                                                                  profile_org):
    org, ana, _ = profile_org
    access = load_access(system_session, org.id, user_id=ana.id)
    params = template_params(access) | {"today": TODAY, "profile_areas": list(access.read_areas)}
    with database.unit_of_work(access.scope()) as uow:
        rows = profile_query.read(uow.session, context._visible_statement(shape(access)), params)
        assert uow.session.scalar(text("select current_setting('enable_sort')")) == "on"
        assert [r.id for r in rows] == uow.session.scalars(_ranking_every_visible_row(access, context.CANDIDATES)).all()
