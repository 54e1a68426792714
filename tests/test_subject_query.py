"""The memories of the subjects a conversation named are read subject by subject, each arm of the visibility rule
in an index's order and cut early: the same rows in the same order as sorting every visible row of the subjects,
from a statement the planner serves from those indexes."""
from __future__ import annotations

import datetime as dt
import random

import pytest
from sqlalchemy import select, text

from memory_core.domain.access import Access, Principal, load_access, memory_visible
from memory_core.domain.models import Memory
from memory_core.reading import context, subject_query
from tests.support.statements import plan_of, sent_statements, settings_seen
from tests.support.visibility_corpus import memory_of_kind

PHONE = "+34600111333"
SUBJECTS = ["contact:acme", "contact:iberluz", "name:lucia", "self"]


def _sorting_every_visible_row(access, subjects, limit):
    """The one query over the whole visibility rule that the related section ran before the indexes."""
    return (select(Memory.id).where(Memory.subject.in_(subjects), memory_visible(access), Memory.status == "active")
            .order_by(*subject_query.order_keys()).limit(limit))


@pytest.fixture
def subjects_org(factory, system_session):
    """An org whose member (a user with a linked number) sees personal, private and shared rows of a few subjects,
    pinned and not, with equal confidences and dates (the id breaks ties), among rows she must not see."""
    rng = random.Random(5)
    org, other = factory.org("Temas"), factory.org("Otra")
    ana = factory.member(org, role="member", permissions={"contacts": "read"})
    bea = factory.member(org, role="member")
    factory.phone(org, PHONE, user=ana)
    base = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
    rows = []
    for i in range(600):
        kind = rng.choice(["personal", "private", "shared", "shared", "shared", "shared", "phone", "both", "hidden"])
        fields = dict(category="customer", subject=rng.choice(SUBJECTS + ["contact:other"]), attribute=f"dato_{i}",
                      value=f"valor {i}", sentence=f"frase {i}", pinned=rng.random() < 0.1,
                      confidence=rng.choice([0.5, 0.7, 0.9]), valid_from=base - dt.timedelta(days=rng.choice([0, 10])),
                      status="active" if rng.random() < 0.9 else "superseded")
        rows.append(memory_of_kind(kind, fields, rng=rng, org=org, other=other, ana=ana, bea=bea, phone=PHONE))
    system_session.add_all(rows)
    system_session.commit()
    return org, ana


def _access(system_session, org, ana, who):
    if who == "user":
        return load_access(system_session, org.id, user_id=ana.id)
    if who == "user and number":
        return load_access(system_session, org.id, user_id=ana.id, phone=PHONE)
    if who == "number alone":
        return Access(Principal(phone=PHONE), org.id, None, {"general": "read"})
    return load_access(system_session, None, user_id=ana.id)


@pytest.mark.parametrize("who", ["user", "user and number", "number alone", "member of no org"])
def test_the_named_subjects_memories_are_the_same_rows_in_the_same_order_as_sorting_every_visible_row(
        database, system_session, subjects_org, who):
    org, ana = subjects_org
    access = _access(system_session, org, ana, who)
    for subjects in (SUBJECTS[:1], SUBJECTS[:3], SUBJECTS):
        for per_subject in (1, 4, 100):
            limit = per_subject * len(subjects)
            with database.unit_of_work(access.scope()) as uow:
                got = [r.id for r in context.subject_memories(uow.session, access, subjects, per_subject)]
                expected = uow.session.scalars(_sorting_every_visible_row(access, subjects, limit)).all()
                assert uow.session.scalar(text("select current_setting('enable_sort')")) == "on"
            assert got == expected, (subjects, limit)
    assert len(expected) > 12  # the limits cut into the arms


def test_the_org_arm_reads_each_subject_from_its_index_in_order(database, system_session, subjects_org):
    org, ana = subjects_org
    access = load_access(system_session, org.id, user_id=ana.id, phone=PHONE)
    with sent_statements(database.engine, lambda s: "of_subjects" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            context.subject_memories(uow.session, access, SUBJECTS, 4)
    (statement, parameters), = statements
    with database.unit_of_work(access.scope()) as uow:
        uow.session.execute(text("set local enable_sort = off"))  # as subject_memories runs it
        plan = plan_of(uow.session.connection(), statement, parameters)
    lines = plan.splitlines()

    def parent(n):
        depth = lines[n].index("->")
        return next(line for line in reversed(lines[:n])
                    if not line.startswith(" ") or ("->" in line and line.index("->") < depth))

    scans = [n for n, line in enumerate(lines) if "Index Scan using ix_memories_subject_org " in line]
    assert scans, plan
    # Read in order and cut at the limit: the scan's parent is a Limit, not a Sort.
    assert all("Limit" in parent(n) for n in scans), plan


def test_a_turn_naming_a_subject_reads_its_memories_in_the_blocks_one_window_with_sorting_priced_out(
        database, system_session, subjects_org):
    """The conversation, the profile and the named subjects' memories share one enable_sort window: a block
    switches sorting off once and back once, and the subjects' statement runs in between."""
    org, ana = subjects_org
    access = load_access(system_session, org.id, user_id=ana.id)
    with database.unit_of_work(access.scope()) as uow:
        with settings_seen(database.engine, ("enable_sort",), on=uow.session.connection()) as seen:
            block = context.assemble_context(uow.session, access, None, "¿Qué sabemos de Lucia y su pedido?")
    sorting = "".join("1" if values["enable_sort"] == "on" else "0" for _, values in seen)
    (subjects_at,) = [n for n, (statement, _) in enumerate(seen) if "of_subjects" in statement]
    assert sorting.startswith("0") and sorting.count("10") == 0 and sorting.count("01") == 1, sorting  # one window
    assert sorting[subjects_at] == "0"
    assert "lucia" in block.related.lower()  # the subject's memories reached the related section


def test_the_generic_plan_reads_the_persons_rows_of_each_subject_from_their_subject_index(
        database, system_session, subjects_org):
    """The plan PostgreSQL keeps for the statement, for any principal: the person's personal rows of the named subjects
    come from ix_memories_subject_user, whose rows are one level's. With the level bound as a parameter the plan could
    not prove it and read every personal row of the person instead (4,102 of a big org's principal, 3.3 against
    1.8 ms at 1M memories)."""
    from tests.support.statements import generic_plan_by_index

    org, ana = subjects_org
    access = load_access(system_session, org.id, user_id=ana.id)
    with sent_statements(database.engine, lambda s: "of_subjects" in s) as statements:
        with database.unit_of_work(access.scope()) as uow:
            context.subject_memories(uow.session, access, SUBJECTS, 4)
    (statement, _), = statements
    plan = generic_plan_by_index(database, statement)
    assert "ix_memories_subject_user" in plan, plan
