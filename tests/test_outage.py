"""A database that cannot be reached: the API answers 503 JSON and the console a 503 page, both with
Retry-After, and the request's teardown does not raise on the dead connection."""
from __future__ import annotations

import socket

import pytest

from memory_core.adapters.db import Database, resolve_urls
from memory_core.tenancy.api_keys import create_api_key
from tests.conftest import sign_in


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.fixture
def unreachable(app, servers):
    """Swap the app's database for one whose server is down (a real refused connection)."""
    from sqlalchemy import make_url

    urls = resolve_urls(servers)
    port = _closed_port()
    url, system = (make_url(u).set(host="127.0.0.1", port=port, query={}) for u in (urls.app, urls.system))
    working = app.extensions["memoria.db"]

    def go_down():
        app.extensions["memoria.db"] = Database(url.render_as_string(hide_password=False), pool_timeout=1,
                                                system_url=system.render_as_string(hide_password=False))
    yield go_down
    app.extensions["memoria.db"].dispose()
    app.extensions["memoria.db"] = working


def test_the_api_answers_503_with_retry_after_when_the_database_is_down(app, factory, system_session, unreachable):
    org = factory.org()
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    unreachable()
    resp = app.test_client().post("/api/v1/messages", headers={"Authorization": f"Bearer {key}"}, json={
        "channel": "web", "conversation": "c", "external_id": "m1", "user_id": str(ana.id), "role": "user",
        "text": "hola"})
    assert resp.status_code == 503 and resp.headers["Retry-After"] == "5"
    assert resp.get_json()["error"]["code"] == "unavailable"


def test_a_console_page_is_a_503_page_with_retry_after_when_the_database_is_down(app, factory, unreachable):
    client = app.test_client()
    sign_in(client, factory.user(platform_role="staff"))
    unreachable()
    resp = client.get("/jobs")
    assert resp.status_code == 503 and resp.headers["Retry-After"] == "5"
    assert "Briefly unavailable" in resp.get_data(as_text=True)


def test_readyz_reports_the_database_down_without_failing(app, unreachable):
    unreachable()
    resp = app.test_client().get("/readyz")
    assert resp.status_code == 503
    assert resp.get_json()["checks"]["database"] == "down"
    assert resp.get_json()["learning"] == "learning backlog unknown (the database did not answer)"
