"""Reads from a hot standby (DATABASE_READ_URL), on a real primary and a real standby streaming from it.

The memory block, search and the console's lists read the standby; the turn's own conversation, its
trace and every write go to the primary; an operator sees their own change at once. To prove which
server answered, the standby's replay is paused: what the primary holds after that, only the primary
can show."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, select, text

from memory_core.adapters.db import resolve_urls
from memory_core.domain import clock
from memory_core.domain.models import Memory, MemoryTrace
from memory_core.tenancy.api_keys import create_api_key
from tests.conftest import sign_in

CATCH_UP_WAIT = 120  # seconds a loaded machine may need to replay a test's writes


@pytest.fixture(scope="module")
def standby(servers):
    """A standby of the test session's embedded primary; yields the owner engine on it."""
    if servers.database_url:
        pytest.skip("needs the embedded primary (DATABASE_URL points elsewhere)")
    from memory_core.adapters.runtime import EmbeddedPostgres, start_standby

    primary = EmbeddedPostgres(pgdata=servers.data_dir / "pg", uri="", started_here=False)
    handle = start_standby(primary, Path(tempfile.mkdtemp(prefix="memoria-standby-")) / "pg")
    owner = make_url(resolve_urls(servers).owner).update_query_dict({"host": str(handle.pgdata)})
    engine = create_engine(owner, isolation_level="AUTOCOMMIT")
    try:
        yield engine
    finally:
        engine.dispose()
        handle.stop()
        shutil.rmtree(handle.pgdata.parent, ignore_errors=True)


def caught_up(owner_engine, standby) -> None:
    """Wait until the standby has replayed everything the primary has written so far."""
    with owner_engine.connect() as c:
        lsn = c.execute(text("select pg_current_wal_lsn()")).scalar()
    deadline = time.monotonic() + CATCH_UP_WAIT
    with standby.connect() as c:
        while c.execute(text("select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), :lsn) < 0"), {"lsn": lsn}).scalar():
            assert time.monotonic() < deadline, "the standby did not catch up"
            time.sleep(0.05)


@pytest.fixture
def paused(standby, owner_engine):
    """Pause the standby's replay (after it has caught up) for the test; resume afterwards."""
    def pause():
        caught_up(owner_engine, standby)
        with standby.connect() as c:
            c.execute(text("select pg_wal_replay_pause()"))
    yield pause
    with standby.connect() as c:
        c.execute(text("select pg_wal_replay_resume()"))
    caught_up(owner_engine, standby)


@pytest.fixture
def replica_app(servers, standby, database, redis_conn):
    from app import create_app

    read_url = make_url(resolve_urls(servers).app).update_query_dict(
        {"host": standby.url.query["host"]}).render_as_string(hide_password=False)
    settings = dataclasses.replace(servers, database_read_url=read_url)
    app = create_app({"TESTING": True, "SESSION_COOKIE_SECURE": False, "REMEMBER_COOKIE_SECURE": False},
                     settings=settings)
    yield app
    app.extensions["memoria.db"].dispose()


@pytest.fixture
def world(factory, system_session):
    org = factory.org("Talleres Demo")
    ana = factory.member(org, role="owner", name="Ana Owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    factory.memory(org, subject="org", attribute="horario", value="de 8 a 15",
                   sentence="La empresa abre de 8 a 15.")
    system_session.commit()
    return {"org": org, "ana": ana, "key": key}


def api(client, path, key, body):
    return client.post("/api/v1" + path, data=json.dumps(body), content_type="application/json",
                       headers={"Authorization": f"Bearer {key}"})


def test_the_block_and_search_read_the_standby_while_the_turn_and_its_trace_use_the_primary(
        replica_app, world, factory, system_session, paused):
    client, ana, key = replica_app.test_client(), world["ana"], world["key"]
    paused()
    factory.memory(world["org"], subject="org", attribute="descuento", value="5% al contado",
                   sentence="La empresa hace un 5% de descuento al contado.")  # on the primary only
    ingest = api(client, "/messages", key, {"channel": "web", "conversation": "chat-1", "external_id": "m-1",
                                            "user_id": str(ana.id), "role": "user",
                                            "text": "¿Qué horario y qué descuento tenemos?"})
    assert ingest.status_code in (200, 201), ingest.get_data(as_text=True)
    turn = ingest.get_json()

    block = api(client, "/context", key, {"user_id": str(ana.id), "conversation_id": turn["conversation_id"],
                                          "message_id": turn["message_id"],
                                          "message": "¿Qué horario y qué descuento tenemos?"})
    assert block.status_code == 200, block.get_data(as_text=True)
    body = block.get_json()
    assert "de 8 a 15" in body["text"]  # replayed before the pause
    assert "5% al contado" not in body["text"]  # written after it: the standby does not have it yet
    # The conversation and message just ingested were found, and the trace went to the primary.
    trace = system_session.get(MemoryTrace, uuid.UUID(body["trace_id"]))
    assert trace is not None and trace.message_id == uuid.UUID(turn["message_id"])

    hits = api(client, "/search", key, {"user_id": str(ana.id), "query": "descuento contado",
                                        "kinds": ["memory"]}).get_json()["hits"]
    assert not any("5%" in (h["snippet"] or "") for h in hits)


def test_after_the_standby_catches_up_the_block_shows_what_the_primary_learnt(
        replica_app, world, factory, owner_engine, standby):
    client, ana, key = replica_app.test_client(), world["ana"], world["key"]
    factory.memory(world["org"], subject="org", attribute="descuento", value="5% al contado",
                   sentence="La empresa hace un 5% de descuento al contado.")
    caught_up(owner_engine, standby)
    body = api(client, "/context", key, {"user_id": str(ana.id), "message": "¿Qué descuento tenemos?"}).get_json()
    assert "5% al contado" in body["text"]


def test_a_console_list_reads_the_standby_but_an_operator_sees_their_own_change_at_once(
        replica_app, world, factory, system_session, paused):
    client, ana = replica_app.test_client(), world["ana"]
    start = clock.now()
    with clock.use(clock.FixedClock(start)) as fixed:
        token = sign_in(client, ana)
        paused()
        fixed.advance(seconds=60)  # long after signing in: lists read the standby again
        factory.memory(world["org"], subject="org", attribute="aparcamiento", value="plaza 12",
                                sentence="La empresa aparca en la plaza 12.")
        assert "plaza 12" not in client.get("/memories").get_data(as_text=True)

        # Her own edit is written to the primary; the list she is sent back to shows it.
        current = system_session.scalar(select(Memory).where(Memory.attribute == "horario"))
        resp = client.post(f"/memories/{current.id}/edit", data={"csrf_token": token, "value": "de 9 a 14",
                                                                   "sentence": "La empresa abre de 9 a 14."})
        assert resp.status_code == 303
        page = client.get("/memories").get_data(as_text=True)
        assert "de 9 a 14" in page and "plaza 12" in page

        fixed.advance(dt.timedelta(minutes=5))  # later, the list reads the (still paused) standby again
        page = client.get("/memories").get_data(as_text=True)
        assert "de 9 a 14" not in page and "de 8 a 15" in page
