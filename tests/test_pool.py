"""The API under concurrent load: a request holds one pooled connection at a time, and a client that
cannot get one in time is told to retry (503 + Retry-After), never left hanging or answered 500."""
from __future__ import annotations

import threading
import time

import pytest

from memory_core.adapters.db import Database, resolve_urls
from memory_core.tenancy.api_keys import create_api_key
from tests.support.http import call


@pytest.fixture
def keyed(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.memory(org, subject="contact:x", attribute="plazo", value="60 días", sentence="Talleres García paga a 60 días.",
                   area="contacts", category="customer")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    return {"Authorization": f"Bearer {key}"}, {"user_id": str(ana.id), "message": "Factura a Talleres García"}


def test_the_memory_block_needs_only_one_pooled_connection(app, keyed, servers):
    """The key and person lookup and the person's row-security read share one connection in turn."""
    urls = resolve_urls(servers)
    app.extensions["memoria.db"] = Database(urls.app, system_url=urls.system, pool_size=1, max_overflow=0,
                                            pool_timeout=2)
    headers, body = keyed
    try:
        resp = app.test_client().post("/api/v1/context", json=body, headers=headers)
    finally:
        app.extensions["memoria.db"].dispose()
    assert resp.status_code == 200, resp.get_data(as_text=True)


def test_a_request_that_gets_no_connection_in_time_is_told_to_retry(app, keyed, servers):
    urls = resolve_urls(servers)
    db = Database(urls.app, system_url=urls.system, pool_size=1, max_overflow=0, pool_timeout=0.5)
    app.extensions["memoria.db"] = db
    headers, body = keyed
    held = db.engine.connect()  # another request holds the only connection
    try:
        resp = app.test_client().post("/api/v1/context", json=body, headers=headers)
    finally:
        held.close()
        db.dispose()
    assert resp.status_code == 503 and resp.headers["Retry-After"]
    assert resp.get_json()["error"]["code"] == "unavailable"


@pytest.mark.slow
def test_forty_concurrent_clients_on_the_memory_block_never_get_a_500(live_server, keyed):
    headers, body = keyed
    statuses: list[int] = []
    missing_retry_after: list[int] = []
    stop_at = time.monotonic() + 60  # bounded load: 40 clients for 60 s, as the operator tried it

    def client():
        while time.monotonic() < stop_at:
            resp = call("POST", f"{live_server}/api/v1/context", body, headers)
            statuses.append(resp.status)
            if resp.status == 503 and not resp.headers.get("Retry-After"):
                missing_retry_after.append(resp.status)

    threads = [threading.Thread(target=client) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(200) > 0
    assert set(statuses) <= {200, 503}, sorted(set(statuses))
    assert not missing_retry_after


def test_a_connection_that_died_while_idle_is_replaced_before_anyone_uses_it(servers, owner_engine, database):
    """After a restart or an idle timeout a pooled connection may be dead: one idle past the window is pinged at
    checkout, and a dead one is replaced, so the unit of work that takes it never sees the error."""
    from sqlalchemy import text

    from memory_core.adapters.db import SYSTEM
    from memory_core.adapters.pool_ping import IDLE_SECONDS

    urls = resolve_urls(servers)
    db = Database(urls.app, system_url=urls.system, pool_size=1, max_overflow=0)
    try:
        with db.unit_of_work(SYSTEM) as uow:
            first = uow.session.scalar(text("select pg_backend_pid()"))
        with owner_engine.begin() as c:
            c.execute(text("select pg_terminate_backend(:pid)"), {"pid": first})
        time.sleep(IDLE_SECONDS + 0.5)
        with db.unit_of_work(SYSTEM) as uow:
            second = uow.session.scalar(text("select pg_backend_pid()"))
    finally:
        db.dispose()
    assert second != first
