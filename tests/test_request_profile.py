"""MEMORIA_PROFILE_DIR: where a web process's requests spend their time, per endpoint, without their ids."""
from __future__ import annotations

import dataclasses
import json
import uuid

from memory_core.adapters.config import get_settings
from memory_core.tenancy.api_keys import create_api_key


def test_profiled_server_writes_time_and_statements_per_endpoint_without_ids(database, redis_conn, factory,
                                                                             system_session, tmp_path):
    from app import create_app

    org = factory.org("Perfil")
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    app = create_app({"TESTING": True}, settings=dataclasses.replace(get_settings(), profile_dir=str(tmp_path)))
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(2):
        assert client.post("/api/v1/search", json={"user_id": str(ana.id), "query": "frenos"},
                           headers=headers).status_code == 200
    missing = uuid.uuid4()
    assert client.post(f"/api/v1/traces/{missing}/used", json={"memory_ids": []}, headers=headers).status_code == 404

    app.wsgi_app.write()
    [written] = tmp_path.glob("requests-*.json")
    counts = json.loads(written.read_text())
    assert counts["POST /api/v1/search"]["requests"] == 2
    assert counts["POST /api/v1/search"]["sql"] >= 2 and counts["POST /api/v1/search"]["checkouts"] >= 2
    assert counts["POST /api/v1/search"]["wall_ms"] >= counts["POST /api/v1/search"]["sql_ms"] > 0
    assert "POST /api/v1/traces/<id>/used" in counts and str(missing) not in written.read_text()


def test_profiling_is_off_unless_asked(app):
    from memory_core.adapters.request_profile import RequestProfile

    assert not isinstance(app.wsgi_app, RequestProfile)
