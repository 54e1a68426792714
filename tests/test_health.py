"""Health probes and the learning lag: /healthz, /readyz and the Jobs page tell an operator that
learning is behind before a user notices, and say nothing of any org."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from memory_core.domain.models import Outbox
from memory_core.learning.ingest import ingest_message
from tests.conftest import sign_in
from tests.support.worker import live_worker


def _waiting_since(system_session, factory, minutes: int):
    org = factory.org("Talleres Secretos S.L.")
    ana = factory.member(org, role="owner", email="ana@secretos.test")
    ingest_message(system_session, channel="web", conversation="c1", external_id="m1", org_id=org.id, user_id=ana.id,
                   phone=None, role="user", text="Talleres García paga a 60 días")
    system_session.execute(update(Outbox).values(
        created_at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=minutes, seconds=5)))
    system_session.commit()
    return org, ana


def test_healthz_answers_while_the_process_runs(client):
    resp = client.get("/healthz")
    assert resp.status_code == 200 and resp.get_json() == {"status": "ok"}


def test_readyz_says_how_far_learning_is_behind_and_that_no_worker_runs(client, factory, system_session):
    org, ana = _waiting_since(system_session, factory, 5)
    resp = client.get("/readyz")
    assert resp.status_code == 503 and resp.headers["Retry-After"]
    body = resp.get_json()
    assert body["checks"] == {"database": "ok", "redis": "ok", "worker": "down", "indexes": "ok"}
    assert body["outbox"]["pending"] == 1 and body["outbox"]["lag_seconds"] >= 300
    assert body["learning"] == "learning is 5 minutes behind"
    # Public: platform-wide figures only, nothing of the org or its people.
    text = resp.get_data(as_text=True)
    for private in (str(org.id), org.name, str(ana.id), ana.email, "García"):
        assert private not in text


def test_readyz_is_ready_with_a_live_worker_and_an_empty_outbox(client, redis_conn, servers):
    with live_worker(servers):
        resp = client.get("/readyz")
    assert resp.status_code == 200
    assert resp.get_json() == {"ready": True, "checks": {"database": "ok", "redis": "ok", "worker": "ok",
                                                                      "indexes": "ok"},
                               "outbox": {"pending": 0, "lag_seconds": 0.0}, "learning": "learning is up to date"}


def test_the_jobs_page_shows_that_learning_is_behind(client, factory, system_session):
    _waiting_since(system_session, factory, 3)
    sign_in(client, factory.user(platform_role="staff"))
    page = client.get("/jobs").get_data(as_text=True)
    assert "Learning is 3 minutes behind" in page
    assert "1 message waiting to be learnt" in page and "0 live workers" in page
