"""A privacy officer runs an erasure request end to end in a real browser (Debian's Chromium)."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from tests.factories import PASSWORD
from tests.support.worker import run_queued_jobs


@pytest.fixture
def page(chromium):
    context = chromium.new_context(accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


@pytest.mark.browser
def test_privacy_officer_erases_a_user_end_to_end(page, live_server, factory, system_session, tmp_path):
    org = factory.org("Browser Org")
    ana = factory.member(org, email="ana.browser@example.test", name="Anabella Navegadora", phone="+34611777888")
    conv = factory.conversation(org, ana)
    factory.message(conv, "prefiero que me escribáis por la tarde")
    factory.memory(None, level="personal", owner=ana, category="preference", subject="self",
                   attribute="horario", value="por la tarde")
    factory.user(email="officer.browser@example.test", platform_role="privacy_officer")

    page.goto(f"{live_server}/login")
    page.fill("input[name=email]", "officer.browser@example.test")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.get_by_role("link", name="Privacy").click()
    page.select_option("#intake-form select[name=kind]", "erasure")
    page.select_option("#intake-form select[name=subject_type]", "user")
    page.fill("#intake-form input[name=subject_ref]", "ana.browser@example.test")
    page.fill("#intake-form input[name=requested_by]", "The person, by email")
    page.fill("#intake-form input[name=basis]", "GDPR art. 17")
    page.get_by_role("button", name="Record request").click()
    page.wait_for_selector("text=Verify the requester's identity")
    assert page.inner_text("#request-status") == "received"

    page.fill("textarea[name=note] >> nth=0", "Replied from the account's own email address")
    page.get_by_role("button", name="Mark verified").click()
    page.get_by_role("button", name="Preview").click()
    page.wait_for_selector("#preview-pending")  # the worker counts; the page reloads itself until it has
    run_queued_jobs()
    page.wait_for_selector("#preview")
    preview = page.inner_text("#preview")
    assert "Messages" in preview and "Memories (every version)" in preview and "deleted" in preview
    assert "The person's account" in preview
    assert page.inner_text("#request-status") == "previewed"

    page.get_by_text("Execute erasure").click()
    assert "It cannot be undone." in page.inner_text("details.confirm")
    page.get_by_role("button", name="Yes, erase for good").click()
    page.wait_for_selector("#execute-pending")
    run_queued_jobs()
    page.wait_for_selector("#receipt")
    assert page.inner_text("#request-status") == "executed"
    assert "no identifier of the subject found" in page.inner_text("#verification-result")
    with page.expect_download() as dl:
        page.click("#receipt-link")
    path = tmp_path / "receipt.json"
    dl.value.save_as(path)
    receipt = json.loads(path.read_text())
    assert receipt["deleted"]["users"] == 1 and receipt["deleted"]["messages"] == 1
    assert receipt["verification"]["clean"] is True
    raw = path.read_text()
    assert "ana.browser@example.test" not in raw and "Anabella" not in raw and "611777888" not in raw
    assert "ana.browser@example.test" not in page.content()
    s = system_session
    assert s.execute(text("select count(*) from users where email = 'ana.browser@example.test'")).scalar_one() == 0
    assert s.execute(text("select count(*) from messages")).scalar_one() == 0
    assert s.execute(text("select count(*) from memories")).scalar_one() == 0
