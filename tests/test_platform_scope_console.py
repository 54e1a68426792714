"""Issue 15, finding 3: the platform admin's and the privacy officer's console pages work in a web process that
cannot enter system scope (its Database has no worker URL); the privacy officer's heavy steps (preview, execution,
export) run on the worker. And the database gives each platform role only what it needs: an org's people and a
person without the role read none of it."""
from __future__ import annotations

import io
import json
import re
import uuid
import zipfile

import pytest
from sqlalchemy import select, text

from memory_core.domain.models import AuditLog, Organization, PlatformApiKey, PrivacyRequest, User
from tests.conftest import csrf_from, sign_in
from tests.support.worker import run_queued_jobs


def _post(client, page_url: str, url: str, data: dict | None = None, **kw):
    token = csrf_from(client.get(page_url).get_data(as_text=True))
    return client.post(url, data={**(data or {}), "csrf_token": token}, **kw)




# ------------------------------------------------------------------------------------------------ platform admin

def test_platform_admin_creates_lists_and_suspends_an_org_without_system_scope(web_only, client, factory,
                                                                               system_session):
    busy = factory.org("Busy Org")
    factory.member(busy)
    factory.message(factory.conversation(busy), "hola")
    admin = factory.user(platform_role="platform_admin")
    sign_in(client, admin)
    resp = _post(client, "/platform/orgs", "/platform/orgs", {"name": "Acme Nueva", "owner_email": "owner@acme.test",
                                                             "owner_name": "Olga"})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "/invitation/" in re.search(r'id="shown-link">([^<]+)<', html).group(1)
    org = system_session.scalar(select(Organization).where(Organization.name == "Acme Nueva"))
    assert org is not None
    rows = re.findall(r"<tr>\s*<td>([^<]+)</td>\s*<td>(\d+)</td>\s*<td>(\d+)</td>", client.get("/platform/orgs")
                      .get_data(as_text=True))
    assert ("Busy Org", "1", "1") in rows and ("Acme Nueva", "0", "0") in rows  # size and activity, counted
    resp = _post(client, "/platform/orgs", f"/platform/orgs/{org.id}/suspend", {"suspend": "1"},
                 follow_redirects=True)
    assert "Acme Nueva is suspended." in resp.get_data(as_text=True)
    system_session.expire_all()
    assert system_session.get(Organization, org.id).suspended_at is not None
    actions = set(system_session.scalars(select(AuditLog.action).where(AuditLog.actor_user_id == admin.id)))
    assert {"org.created", "invitation.created", "org.suspended"} <= actions


def test_platform_admin_grants_roles_and_invites_without_system_scope(web_only, client, factory, system_session):
    admin = factory.user(platform_role="platform_admin")
    bea = factory.user(email="bea@example.test")
    sign_in(client, admin)
    resp = _post(client, "/platform/people", "/platform/people", {"email": "bea@example.test", "role": "staff"},
                 follow_redirects=True)
    assert "Platform role saved." in resp.get_data(as_text=True) and "bea@example.test" in resp.get_data(as_text=True)
    system_session.expire_all()
    assert system_session.get(User, bea.id).platform_role == "staff"
    resp = _post(client, "/platform/people", "/platform/people", {"email": "new.officer@example.test",
                                                                  "role": "privacy_officer"})
    assert "/invitation/" in resp.get_data(as_text=True)
    resp = _post(client, "/platform/people", "/platform/people", {"email": admin.email, "role": ""})
    assert resp.status_code == 409 and "last platform administrator" in resp.get_data(as_text=True)


def test_platform_admin_creates_a_platform_key_shown_once_and_revokes_it_without_system_scope(
        web_only, client, factory, system_session):
    admin = factory.user(platform_role="platform_admin")
    sign_in(client, admin)
    resp = _post(client, "/platform/keys", "/platform/keys", {"name": "host app"})
    assert resp.status_code == 303
    shown = client.get(resp.headers["Location"])
    key = re.search(r'id="new-key-value">(memp_[^<]+)<', shown.get_data(as_text=True)).group(1)
    assert key not in client.get(resp.headers["Location"]).get_data(as_text=True)  # shown once
    row = system_session.scalar(select(PlatformApiKey))
    assert row.name == "host app" and row.created_by == admin.id and key not in row.key_hash
    api = web_only.test_client()
    made = api.post("/api/v1/platform/orgs", json={"name": "Por API"}, headers={"Authorization": f"Bearer {key}"})
    assert made.status_code != 401  # the key authenticates (what the platform API then does is not this test's)
    resp = _post(client, "/platform/keys", f"/platform/keys/{row.id}/revoke", follow_redirects=True)
    assert "revoked" in resp.get_data(as_text=True)
    system_session.expire_all()
    assert system_session.get(PlatformApiKey, row.id).revoked_at is not None


# ------------------------------------------------------------------------------------------------ privacy officer

def test_officer_runs_an_erasure_and_an_export_on_the_worker_without_system_scope(web_only, client, factory,
                                                                                  system_session):
    org = factory.org()
    ana = factory.member(org, email="ana.worker@example.test", name="Anastasia Trabajadora")
    factory.memory(None, level="personal", owner=ana, category="person", subject="self", attribute="nombre",
                   value="Anastasia")
    officer = factory.user(platform_role="privacy_officer")
    sign_in(client, officer)
    bad = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "user",
                                                     "subject_ref": "nobody@example.test", "requested_by": "x"})
    assert bad.status_code == 422 and "No user has that email" in bad.get_data(as_text=True)
    resp = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "user",
                                                      "subject_ref": ana.email, "requested_by": "Ana, by email"},
                 follow_redirects=True)
    assert "Verify the requester" in resp.get_data(as_text=True)
    req_id = system_session.scalar(select(PrivacyRequest.id))
    detail = f"/privacy/{req_id}"
    assert _post(client, detail, f"{detail}/verify", {"note": "video call"}, follow_redirects=True).status_code == 200

    html = _post(client, detail, f"{detail}/preview", follow_redirects=True).get_data(as_text=True)
    assert 'id="preview-pending"' in html and 'http-equiv="refresh"' in html  # waits, and reloads itself
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert "Memories (every version)" in html and "Execute erasure" in html and 'http-equiv="refresh"' not in html

    _post(client, detail, f"{detail}/export", follow_redirects=True)
    assert 'id="export-pending"' in client.get(detail).get_data(as_text=True)
    run_queued_jobs()
    export = client.get(f"{detail}/export.zip")
    assert export.status_code == 200 and export.headers["Content-Type"] == "application/zip"
    assert json.loads(zipfile.ZipFile(io.BytesIO(export.data)).read("users.json"))[0]["email"] == ana.email
    assert {"privacy.exported", "privacy.export_downloaded"} <= set(system_session.scalars(select(
        AuditLog.action).where(AuditLog.actor_user_id == officer.id)))

    html = _post(client, detail, f"{detail}/execute", {"confirmed": "yes"}, follow_redirects=True).get_data(
        as_text=True)
    assert "Execution queued" in html and system_session.get(User, ana.id) is not None
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert 'id="request-status">executed<' in html and "no identifier of the subject found" in html
    receipt = client.get(f"{detail}/receipt.json").get_data(as_text=True)
    assert json.loads(receipt)["deleted"]["users"] == 1 and ana.email not in receipt
    assert system_session.execute(text("select count(*) from users where email = :e"),
                                  {"e": ana.email}).scalar_one() == 0
    assert client.get(f"{detail}/export.zip").status_code == 302  # a closed request's export is gone


def test_officer_rejects_and_an_access_request_is_delivered_by_the_worker_without_system_scope(
        web_only, client, factory, system_session):
    ana = factory.member(factory.org(), email="ana.access.worker@example.test")
    officer = factory.user(platform_role="privacy_officer")
    sign_in(client, officer)
    for _ in range(2):
        _post(client, "/privacy", "/privacy/new", {"kind": "access", "subject_type": "user", "subject_ref": ana.email,
                                                   "requested_by": "Ana", "verification": "video call"})
    first, second = system_session.scalars(select(PrivacyRequest.id).order_by(PrivacyRequest.created_at)).all()
    resp = _post(client, f"/privacy/{first}", f"/privacy/{first}/reject", {"note": "a duplicate"},
                 follow_redirects=True)
    assert 'id="request-status">rejected<' in resp.get_data(as_text=True)
    detail = f"/privacy/{second}"
    _post(client, detail, f"{detail}/verify")
    _post(client, detail, f"{detail}/preview")
    run_queued_jobs()
    html = _post(client, detail, f"{detail}/execute", follow_redirects=True).get_data(as_text=True)
    assert "Execution queued" in html
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert 'id="request-status">delivered<' in html and ana.email not in html


def test_a_step_the_worker_refuses_is_shown_to_the_officer_until_the_next_step(web_only, client, factory,
                                                                               system_session):
    ana = factory.member(factory.org(), email="ana.refused@example.test")
    officer = factory.user(platform_role="privacy_officer")
    sign_in(client, officer)
    _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "user", "subject_ref": ana.email,
                                               "requested_by": "Ana", "verification": "letter"})
    detail = f"/privacy/{system_session.scalar(select(PrivacyRequest.id))}"
    _post(client, detail, f"{detail}/verify")
    _post(client, detail, f"{detail}/execute", {"confirmed": "yes"})  # not previewed: the worker refuses
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert 'id="execute-error"' in html and "this step needs it to be previewed" in html
    assert system_session.get(User, ana.id) is not None
    _post(client, detail, f"{detail}/preview")
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert 'id="execute-error"' not in html and "Execute erasure" in html


def test_officer_intake_checks_a_contact_exists_without_reading_contacts(web_only, client, factory, system_session):
    org = factory.org()
    acme = factory.contact(org, name="Acme Privacidad")
    officer = factory.user(platform_role="privacy_officer")
    sign_in(client, officer)
    missing = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "contact",
                                                         "subject_ref": str(uuid.uuid4()), "requested_by": "Acme"})
    assert missing.status_code == 422 and "No such contact" in missing.get_data(as_text=True)
    found = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "contact",
                                                       "subject_ref": str(acme.id), "requested_by": "Acme"})
    assert found.status_code == 302
    assert system_session.scalar(select(PrivacyRequest.subject_ref)) == str(acme.id)


# ------------------------------------------------------------------------------------------------ what the database lets

def _seen(database, scope, sql: str, params: dict | None = None):
    with database.unit_of_work(scope) as uow:
        return uow.session.execute(text(sql), params or {}).all()


def test_an_org_admins_or_members_session_reads_no_platform_table(factory, system_session, database):
    from memory_core.adapters.db import org_scope, person_scope, platform_scope
    from memory_core.privacy import requests as privacy
    from memory_core.tenancy import orgs
    from memory_core.tenancy.api_keys import PLATFORM, issue_key
    from memory_core.tenancy.members import Actor

    org = factory.org()
    owner, member = factory.member(org, role="owner"), factory.member(org)
    contact = factory.contact(org)
    admin = factory.user(platform_role="platform_admin")
    issue_key(system_session, PLATFORM, "host", actor=Actor("test", admin.id))
    orgs.create_org(system_session, "Otra", owner_email="otra@example.test", actor=Actor("test", admin.id))
    privacy.intake(system_session, kind="access", subject_type="user", subject_ref=member.email, requested_by="M",
                   basis="")
    system_session.commit()
    for who in (owner, member):
        for scope in (org_scope(org.id, who.id), person_scope(who.id), platform_scope(who.id, 0)):
            for table in ("platform_api_keys", "privacy_requests", "account_tokens"):
                assert _seen(database, scope, f"select * from {table}") == [], (who.email, scope.mode, table)
            assert _seen(database, scope, "select * from memoria_org_activity(now() - interval '30 days')") == [], scope
            assert _seen(database, scope, "select memoria_privacy_subject_exists('contact', :c)",
                         {"c": contact.id}) == [(False,)], scope
    # A platform admin's scope: the orgs and the people, never an org's contacts, messages or memberships.
    admin_scope = platform_scope(admin.id, 0)  # with the proof of a new account's live session
    assert len(_seen(database, admin_scope, "select id from organizations")) == 2
    for table in ("contacts", "messages", "memberships", "memories", "privacy_requests", "api_keys"):
        assert _seen(database, admin_scope, f"select * from {table}") == [], table
    # The same scope named for a person who holds no platform role, or nobody, sees nothing of it.
    for nobody in (uuid.uuid4(), owner.id):
        assert _seen(database, platform_scope(nobody, 0), "select * from organizations") == []
        assert _seen(database, platform_scope(nobody, 0), "select * from platform_api_keys") == []


def test_a_platform_admins_scope_changes_only_a_persons_platform_role(factory, system_session, database):
    from sqlalchemy.exc import DBAPIError

    from memory_core.adapters.db import platform_scope

    admin = factory.user(platform_role="platform_admin")
    bea = factory.user(email="bea.guard@example.test")
    system_session.commit()
    with database.unit_of_work(platform_scope(admin.id, 0)) as uow:  # a new account's session version
        uow.session.execute(text("update users set platform_role = 'staff' where id = :u"), {"u": bea.id})
        uow.commit()
    for change in ("password_hash = 'x'", "email = 'taken@example.test'", "phone = '+34600000001'"):
        with database.unit_of_work(platform_scope(admin.id, 0)) as uow, pytest.raises(DBAPIError, match="platform role"):
            uow.session.execute(text(f"update users set {change} where id = :u"), {"u": bea.id})
    system_session.expire_all()
    bea = system_session.get(User, bea.id)
    assert bea.platform_role == "staff" and bea.email == "bea.guard@example.test" and bea.phone is None


def test_a_privacy_step_that_fails_on_the_worker_is_logged_and_retried(redis_conn, database, caplog):
    import logging

    from jobs import privacy as privacy_jobs
    from memory_core.adapters.queue import get_queue

    broken = "not-a-request-id"  # the step raises (no domain refusal): RQ is to try again later
    job_id = privacy_jobs.enqueue("preview", broken, None)
    with caplog.at_level(logging.ERROR, logger="jobs.privacy"):
        run_queued_jobs()
    job = get_queue().fetch_job(job_id)
    assert job.get_status(refresh=True) == "scheduled" and job.retries_left == len(privacy_jobs.RETRY_AFTER) - 1
    assert any("privacy preview of request not-a-request-id failed" in r.getMessage() for r in caplog.records)
    assert privacy_jobs.step_state("preview", broken).pending  # the page keeps saying it is on its way
