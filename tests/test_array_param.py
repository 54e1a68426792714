"""A list bound as one array literal (adapters/array_param.py) reaches PostgreSQL element for element: every
string whole (quotes, backslashes, commas, braces and the word NULL in it included), NULLs as NULL, numbers and
UUIDs as they were."""
from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from sqlalchemy import bindparam, func, select

from memory_core.adapters.array_param import ArrayParam, array_literal
from memory_core.adapters.db import SYSTEM
from memory_core.domain.vocabulary import Area, Level

AWKWARD = ['plain', 'a "quoted" word', 'back\\slash', 'ends with \\', 'comma, inside', '{braces}', 'NULL', '',
           ' spaced ', "it's", 'Talleres García, S.L.', 'línea\nnueva', '"', '\\"']


def _round_trip(database, item: str, values):
    with database.unit_of_work(SYSTEM) as uow:
        return uow.session.execute(select(func.array_to_json(
            bindparam("values", values, type_=ArrayParam(item))))).scalar_one()


def test_strings_come_back_whole_whatever_they_hold(database):
    assert _round_trip(database, "varchar", AWKWARD) == AWKWARD


def test_an_element_cannot_end_early_or_add_elements(database):
    sneaky = ['a","b', 'c"}', '{"d","e"}', 'f\\",NULL,"g']
    back = _round_trip(database, "text", sneaky)
    assert back == sneaky and len(back) == 4


def test_none_is_null_as_an_element_and_as_the_list(database):
    assert _round_trip(database, "varchar", ["x", None, "NULL"]) == ["x", None, "NULL"]
    assert _round_trip(database, "integer", [1, None]) == [1, None]
    assert _round_trip(database, "uuid", None) is None
    assert _round_trip(database, "uuid", []) == []


def test_numbers_uuids_and_enums_come_back_as_they_were(database):
    ids = [uuid.uuid4() for _ in range(3)]
    assert [uuid.UUID(i) for i in _round_trip(database, "uuid", ids)] == ids
    assert _round_trip(database, "uuid", [str(ids[0])]) == [str(ids[0])]  # an id given as text
    assert _round_trip(database, "bigint", [0, -7, 2**62]) == [0, -7, 2**62]
    floats = [0.1, 1 / 3, -2.5e-300, 1e300, 0.0]
    assert _round_trip(database, "float", floats) == floats
    assert _round_trip(database, "varchar", [Level.SHARED, Area.INVOICES]) == ["shared", "invoices"]
    with database.unit_of_work(SYSTEM) as uow:
        back = uow.session.execute(select(func.unnest(bindparam("v", [math.inf, -math.inf], type_=ArrayParam(
            "float"))))).scalars().all()
    assert back == [math.inf, -math.inf]


def test_a_uuid_list_matches_rows_by_any(database):
    """As the reads by id use it: `id = any(%(ids)s::uuid[])`."""
    from memory_core.domain.models import Organization

    with database.unit_of_work(SYSTEM) as uow:
        orgs = [Organization(name=f"org {i}") for i in range(3)]
        uow.session.add_all(orgs)
        uow.session.flush()
        wanted = [orgs[0].id, orgs[2].id, uuid.uuid4()]
        found = uow.session.execute(select(Organization.name).where(
            Organization.id == func.any(bindparam("ids", wanted, type_=ArrayParam("uuid"))))).scalars().all()
    assert sorted(found) == ["org 0", "org 2"]


@pytest.mark.parametrize("values, literal", [
    ([], "{}"),
    ([1, True, None], "{1,true,NULL}"),
    ([np.float64(0.5), np.int64(3)], '{0.5,"3"}'),
    (['a"b', "c\\d"], '{"a\\"b","c\\\\d"}'),
])
def test_the_literal_reads_as_postgresql_writes_it(values, literal):
    assert array_literal(values) == literal
