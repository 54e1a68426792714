"""The console's privacy pages, the Link WhatsApp page and the run-now button, through real HTTP forms."""
from __future__ import annotations

import io
import json
import re
import zipfile

from sqlalchemy import select, text

from memory_core.domain.models import JobRun, PrivacyRequest, User
from memory_core.tenancy import linking
from tests.conftest import csrf_from, login
from tests.factories import PASSWORD
from tests.support.worker import run_queued_jobs


def _post(client, page_url, url, data):
    token = csrf_from(client.get(page_url).get_data(as_text=True))
    return client.post(url, data={**data, "csrf_token": token}, follow_redirects=True)




def test_only_a_privacy_officer_reaches_the_privacy_pages(client, factory):
    org = factory.org()
    admin = factory.member(org, role="owner")
    login(client, admin.email, PASSWORD)
    assert client.get("/privacy").status_code == 403
    assert client.post("/privacy/new", data={}).status_code in (400, 403)


def test_officer_runs_an_erasure_and_an_export_from_the_console(client, factory, system_session):
    org = factory.org()
    ana = factory.member(org, email="ana.console@example.test", name="Anastasia Consola")
    factory.memory(None, level="personal", owner=ana, category="person", subject="self", attribute="nombre",
                   value="Anastasia")
    officer = factory.user(platform_role="privacy_officer")
    login(client, officer.email, PASSWORD)
    page = client.get("/privacy")
    assert page.status_code == 200 and "New request" in page.get_data(as_text=True)
    bad = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "user",
                                                     "subject_ref": "nobody@example.test", "requested_by": "x",
                                                     "basis": "art. 17"})
    assert "No user has that email" in bad.get_data(as_text=True)
    resp = _post(client, "/privacy", "/privacy/new", {"kind": "erasure", "subject_type": "user",
                                                      "subject_ref": ana.email, "requested_by": "Ana, by email",
                                                      "basis": "GDPR art. 17", "verification": ""})
    html = resp.get_data(as_text=True)
    assert "Verify the requester" in html
    req_id = system_session.scalar(select(PrivacyRequest.id))
    detail = f"/privacy/{req_id}"
    assert _post(client, detail, f"{detail}/verify", {"note": "video call"}).status_code == 200
    assert "Preparing the preview" in _post(client, detail, f"{detail}/preview", {}).get_data(as_text=True)
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert "Memories (every version)" in html and "Execute erasure" in html
    _post(client, detail, f"{detail}/export", {})
    run_queued_jobs()
    export = client.get(f"{detail}/export.zip")
    assert export.status_code == 200 and export.headers["Content-Type"] == "application/zip"
    users = json.loads(zipfile.ZipFile(io.BytesIO(export.data)).read("users.json"))
    assert users[0]["email"] == ana.email
    token = csrf_from(client.get(detail).get_data(as_text=True))
    asked = client.post(f"{detail}/execute", data={"csrf_token": token}).get_data(as_text=True)
    assert "Execute this erasure?" in asked and "It cannot be undone." in asked
    assert system_session.get(User, ana.id) is not None  # nothing happened on the first click
    _post(client, detail, f"{detail}/execute", {"confirmed": "yes"})
    run_queued_jobs()
    assert "no identifier of the subject found" in client.get(detail).get_data(as_text=True)
    receipt = client.get(f"{detail}/receipt.json")
    assert receipt.status_code == 200
    body = receipt.get_data(as_text=True)
    assert json.loads(body)["deleted"]["users"] == 1
    assert ana.email not in body and "Anastasia" not in body
    assert system_session.execute(text("select count(*) from users where email = :e"),
                                  {"e": ana.email}).scalar_one() == 0


def test_link_whatsapp_shows_the_code_once_and_it_links_the_number(client, factory, system_session):
    org = factory.org()
    ana = factory.member(org)
    login(client, ana.email, PASSWORD)
    page = client.get("/link-whatsapp")
    assert page.status_code == 200 and "Get a link code" in page.get_data(as_text=True)
    resp = _post(client, "/link-whatsapp", "/link-whatsapp/code", {})
    html = resp.get_data(as_text=True)
    assert resp.headers["Cache-Control"] == "no-store"
    code = re.search(r"VINCULAR ([A-Z0-9]{6})", html).group(1)
    assert "expires at" in html
    assert code not in client.get("/link-whatsapp").get_data(as_text=True)
    assert "vinculado" in linking.confirm_link(system_session, "+34600999888", code)
    system_session.commit()
    assert system_session.scalar(select(User.phone).where(User.id == ana.id)) == "+34600999888"


def test_adopt_pre_link_history_from_the_console(client, factory, system_session):
    org = factory.org()
    ana = factory.member(org, phone="+34600111000")
    factory.memory(None, level="personal", owner_phone="+34600111000", category="person", subject="self",
                   attribute="ciudad", value="Cádiz")
    login(client, ana.email, PASSWORD)
    assert "Adopt pre-link history" in client.get("/link-whatsapp").get_data(as_text=True)
    html = _post(client, "/link-whatsapp", "/link-whatsapp/adopt", {}).get_data(as_text=True)
    assert "Adopted 1 memories" in html
    assert system_session.execute(text("select owner_user_id from memories")).scalar_one() == ana.id


def test_admin_runs_a_job_now_and_a_member_cannot(client, factory, system_session, redis_conn):
    from rq import SimpleWorker

    from memory_core.adapters.queue import get_queue

    org = factory.org()
    admin = factory.member(org, role="admin")
    member = factory.member(org)
    login(client, member.email, PASSWORD)
    token = csrf_from(client.get("/link-whatsapp").get_data(as_text=True))
    assert client.post("/jobs/run/retention", data={"csrf_token": token}).status_code == 403
    client.post("/logout", data={"csrf_token": token})
    login(client, admin.email, PASSWORD)
    jobs_page = client.get("/jobs").get_data(as_text=True)
    assert "Run retention now" in jobs_page
    resp = client.post("/jobs/run/retention", data={"csrf_token": csrf_from(jobs_page)}, follow_redirects=True)
    assert resp.status_code == 200 and "Retention queued" in resp.get_data(as_text=True)
    queue = get_queue()
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    run = system_session.scalar(select(JobRun).where(JobRun.job == "retention"))
    assert run.status == "ok" and run.triggered_by == f"console user {admin.id}"


def test_erasing_a_user_who_signed_in_leaves_no_email_in_the_audit_log(client, factory, system_session):
    from memory_core.privacy import requests as privacy

    org = factory.org()
    ana = factory.member(org, email="signed.in@example.test")
    login(client, ana.email, PASSWORD)
    s = system_session
    req = privacy.intake(s, kind="erasure", subject_type="user", subject_ref=ana.email, requested_by="Ana",
                         basis="GDPR art. 17")
    privacy.verify(s, req.id, "email", None)
    privacy.preview(s, req.id, None)
    s.commit()
    privacy.execute(s, req.id, None)
    assert s.get(PrivacyRequest, req.id).receipt["verification"]["clean"]


def test_link_page_says_which_number_to_write_to(client, app, factory):
    import dataclasses

    app.config["MEMORIA_SETTINGS"] = dataclasses.replace(app.config["MEMORIA_SETTINGS"],
                                                         whatsapp_number="+34 600 111 222")
    ana = factory.member(factory.org())
    login(client, ana.email, PASSWORD)
    html = _post(client, "/link-whatsapp", "/link-whatsapp/code", {}).get_data(as_text=True)
    code = re.search(r"VINCULAR ([A-Z0-9]{6})", html).group(1)
    assert 'id="whatsapp-number">+34 600 111 222<' in html
    assert f'href="https://wa.me/34600111222?text=VINCULAR%20{code}"' in html


def test_verification_typed_at_intake_is_not_asked_again(client, factory, system_session):
    ana = factory.member(factory.org(), email="ana.intake@example.test")
    officer = factory.user(platform_role="privacy_officer")
    login(client, officer.email, PASSWORD)
    _post(client, "/privacy", "/privacy/new", {"kind": "access", "subject_type": "user", "subject_ref": ana.email,
                                               "requested_by": "Ana", "basis": "GDPR art. 15",
                                               "verification": "Signed letter with ID copy"})
    req = system_session.scalar(select(PrivacyRequest))
    detail = f"/privacy/{req.id}"
    html = client.get(detail).get_data(as_text=True)
    assert "Noted at intake" in html and "Signed letter with ID copy" in html
    assert "How was the identity verified?" not in html
    html = _post(client, detail, f"{detail}/verify", {}).get_data(as_text=True)
    system_session.expire_all()
    assert system_session.get(PrivacyRequest, req.id).status == "verified"
    assert system_session.get(PrivacyRequest, req.id).verification == "Signed letter with ID copy"


def test_an_access_request_speaks_of_a_copy_and_ends_delivered_not_executed(client, factory, system_session):
    ana = factory.member(factory.org(), email="ana.access@example.test")
    officer = factory.user(platform_role="privacy_officer")
    login(client, officer.email, PASSWORD)
    _post(client, "/privacy", "/privacy/new", {"kind": "access", "subject_type": "user", "subject_ref": ana.email,
                                               "requested_by": "Ana", "basis": "", "verification": "video call"})
    req = system_session.scalar(select(PrivacyRequest))
    assert "art. 15" in req.basis
    detail = f"/privacy/{req.id}"
    _post(client, detail, f"{detail}/verify", {})
    _post(client, detail, f"{detail}/preview", {})
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert "Access request" in html and "In the export" in html and "Nothing is deleted" in html
    assert "deleted</td>" not in html and "anonymised" not in html and "Execute erasure" not in html
    _post(client, detail, f"{detail}/execute", {})
    run_queued_jobs()
    html = client.get(detail).get_data(as_text=True)
    assert 'id="request-status">delivered<' in html and ">executed<" not in html
