"""A request never waits for good on a lock: a statement of any scope but the worker's system scope gives up after
`db.LOCK_TIMEOUT` and the page or call answers 503 with Retry-After, losing nothing; the worker's system scope,
which takes no lock it would wait for, keeps PostgreSQL's default (no limit)."""
from __future__ import annotations

import threading
import uuid

from sqlalchemy import text

from memory_core.adapters import db as db_module
from memory_core.adapters.db import SYSTEM, Scope
from memory_core.domain.models import Memory
from tests.conftest import sign_in
from tests.test_my_memory_console import World


def test_a_request_waiting_on_a_held_row_answers_503_then_succeeds_once_it_is_free(client, factory, system_session,
                                                                                   owner_engine, monkeypatch):
    w = World(factory, system_session)
    note = w.note.id
    token = sign_in(client, w.member)
    monkeypatch.setattr(db_module, "LOCK_TIMEOUT", "300ms")
    edit = {"csrf_token": token, "value": "llamar el lunes", "sentence": "Marta: llamar a Acme el lunes."}
    with owner_engine.connect() as other:  # someone else's transaction holds the memory's row
        other.execute(text("select id from memories where id = :id for update"), {"id": note})
        # without a lock timeout the request would wait until this releases the row, then succeed
        release = threading.Timer(5, other.rollback)
        release.start()
        resp = client.post(f"/my-memory/{note}/edit", data=edit)
        release.cancel()
        assert resp.status_code == 503 and resp.headers["Retry-After"]
        other.rollback()
    w.s.expire_all()
    assert w.s.get(Memory, note).value == "llamar" and w.s.get(Memory, note).status == "active"  # nothing lost
    assert client.post(f"/my-memory/{note}/edit", data=edit).status_code == 303
    w.s.expire_all()
    old = w.s.get(Memory, note)
    assert old.status == "superseded" and w.s.get(Memory, old.superseded_by).value == "llamar el lunes"


def test_every_scope_but_the_workers_system_scope_has_the_lock_timeout(database):
    for scope, expected in ((Scope(mode="org", org_id=uuid.uuid4()), db_module.LOCK_TIMEOUT),
                            (Scope(mode="principal", user_id=uuid.uuid4()), db_module.LOCK_TIMEOUT), (SYSTEM, "0")):
        with database.unit_of_work(scope) as uow:
            assert uow.session.scalar(text("show lock_timeout")) == expected, scope.mode
