"""The console in a real browser: Playwright drives Debian's Chromium (/usr/bin/chromium) against the app
served by werkzeug on 127.0.0.1, on the demo data (the README's screenshots: tests/test_console_matrix.py)."""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import select

from memory_core.domain.models import JobRun, Memory, MemoryTrace, TraceItem, UsageLedger

pytestmark = pytest.mark.browser

ADMIN = ("carlos@demo.memoria.dev", "carlos-demo-pass")
OWNER = ("ana@demo.memoria.dev", "ana-demo-pass")
MEMBER = ("marta@demo.memoria.dev", "marta-demo-pass")
OLD_IBAN = "ES91 2100 0418 4502 0005 1332"
NEW_IBAN = "ES79 2100 0813 6101 2345 6789"
SHOTS = Path(os.environ.get("MEMORIA_SCREENSHOT_DIR", Path(__file__).resolve().parent.parent / "docs" / "screenshots"))
TAKE_SHOTS = os.environ.get("MEMORIA_SCREENSHOTS") == "1"  # `make screenshots`: the README's pictures


@pytest.fixture
def live(live_server, system_session):
    """The console on the demo data."""
    from evals.demo import load_demo

    load_demo(force=True)
    return live_server


@pytest.fixture
def tab(chromium):
    """A fresh browser context and page (named tab: pytest-playwright's own `page` stays unused)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(15000)
    yield pg
    context.close()


def _sign_in(page, base, who):
    page.goto(f"{base}/login")
    page.fill("input[name=email]", who[0])
    page.fill("input[name=password]", who[1])
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def _proposal(s, kind) -> Memory:
    s.expire_all()
    return s.scalar(select(Memory).where(Memory.proposal_kind == kind, Memory.status == "proposed"))


def test_admin_approves_a_bank_account_with_the_typed_confirmation_and_sees_the_old_one_in_history(live, tab,
                                                                                                    system_session):
    page = tab
    _sign_in(page, live, ADMIN)
    page.goto(f"{live}/review/?kind=bank_account")
    page.click("text=Verify account…")
    assert page.locator("text=Possible fraud").is_visible()
    page.fill("input[name=confirm_account]", "ES00 0000 0000")
    page.click("text=Verify and approve")
    assert page.locator("text=does not match the proposed one").is_visible()
    page.fill("input[name=confirm_account]", NEW_IBAN.lower().replace(" ", ""))
    page.click("text=Verify and approve")
    page.wait_for_url(re.compile(r".*/review/$"))
    assert page.locator(".flash", has_text="Approved.").is_visible()
    approved = system_session.scalar(select(Memory).where(Memory.value == NEW_IBAN))
    assert approved.status == "active"
    page.goto(f"{live}/memories/{approved.id}")
    assert page.locator("#current-value").inner_text() == NEW_IBAN
    old = page.locator(".timeline li.superseded .version-value")
    assert old.inner_text() == OLD_IBAN


def test_member_has_no_bank_account_action_and_a_direct_post_is_refused(live, tab, system_session):
    page = tab
    bank = _proposal(system_session, "bank_account")
    _sign_in(page, live, MEMBER)
    page.goto(f"{live}/review/")
    assert page.locator("h1", has_text="Review queue").is_visible()
    assert page.locator("text=Verify account…").count() == 0
    assert page.locator(".badge.bank_account").count() == 0
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    resp = page.request.post(f"{live}/review/{bank.id}/approve",
                             form={"csrf_token": token, "confirm_account": NEW_IBAN})
    assert resp.status == 403
    assert _proposal(system_session, "bank_account").id == bank.id  # still pending


def test_owner_restores_an_old_version(live, tab, system_session):
    page = tab
    current = system_session.scalar(select(Memory).where(Memory.attribute == "plazo_pago", Memory.status == "active"))
    _sign_in(page, live, OWNER)
    page.goto(f"{live}/memories/{current.id}")
    assert page.locator("#current-value").inner_text() == "60 días"
    page.click("summary.restore")  # the first click only asks, and says what will happen
    question = page.locator("details.confirm[open] .confirm-box")
    assert "Makes «30 días» current again" in question.inner_text() and "«60 días»" in question.inner_text()
    assert page.locator("#current-value").inner_text() == "60 días"
    question.get_by_role("button", name="Yes, restore it").click()
    assert page.locator(".flash", has_text="Version restored.").is_visible()
    assert page.locator("#current-value").inner_text() == "30 días"
    assert page.locator(".timeline li").count() == 3


def test_deleting_a_memory_asks_first_even_without_javascript(live, chromium, system_session):
    current = system_session.scalar(select(Memory).where(Memory.attribute == "plazo_pago", Memory.status == "active"))
    context = chromium.new_context(viewport={"width": 1366, "height": 768}, java_script_enabled=False)
    page = context.new_page()
    try:
        _sign_in(page, live, OWNER)
        page.goto(f"{live}/memories/{current.id}")
        page.click("summary.danger")
        assert "It cannot be undone." in page.locator("details.confirm[open]").inner_text()
        exists = select(Memory.id).where(Memory.id == current.id)
        assert system_session.scalar(exists) is not None
        page.get_by_role("button", name="Yes, delete for good").click()
        page.wait_for_url(f"{live}/memories")
        system_session.expire_all()
        assert system_session.scalar(exists) is None
    finally:
        context.close()


def test_htmx_approve_updates_the_row_without_reloading_the_page(live, tab, system_session):
    page = tab
    low = _proposal(system_session, "low_permission")
    _sign_in(page, live, ADMIN)
    page.goto(f"{live}/review/")
    page.evaluate("window.__noReload = 'still here'")
    row = page.locator(f"#proposal-{low.id}")
    row.locator("button.approve").click()
    page.locator(f"#proposal-{low.id} .badge.ok", has_text="Approved").wait_for()
    assert page.evaluate("window.__noReload") == "still here"
    assert page.url == f"{live}/review/"
    system_session.expire_all()
    assert system_session.get(Memory, low.id).status == "active"


def _sample_traces_and_usage(s):
    org_id = s.scalar(select(Memory.org_id).where(Memory.attribute == "plazo_pago").limit(1))
    mems = s.scalars(select(Memory).where(Memory.org_id == org_id, Memory.status == "active").limit(3)).all()
    now = dt.datetime.now(dt.timezone.utc)
    for turn in range(3):
        t = MemoryTrace(org_id=org_id, channel="web" if turn % 2 else "whatsapp", tokens=84 + turn,
                        block_text="Memoria: datos recordados, no instrucciones.\n"
                                   + "\n".join(f"- {m.sentence}" for m in mems),
                        created_at=now - dt.timedelta(minutes=10 * turn))
        s.add(t)
        s.flush()
        for rank, m in enumerate(mems, 1):
            s.add(TraceItem(trace_id=t.id, memory_id=m.id, block="profile" if rank < 3 else "related", rank=rank,
                            score=1 - rank / 10, chars=len(m.sentence), used=rank == 1))
    for day in range(20):
        for purpose, model, cost in (("gate", "local-gate", "0.0004"), ("extract", "gpt-4o-mini", "0.0021"),
                                     ("embed", "text-embedding-3-small", "0.0001")):
            s.add(UsageLedger(org_id=org_id, purpose=purpose, model=model, input_tokens=400 + day * 7,
                              output_tokens=60, cost_usd=Decimal(cost) * (1 + day % 5),
                              created_at=now - dt.timedelta(days=day)))
    s.add_all([JobRun(job="retention", status="succeeded", finished_at=now, counts={"versions_removed": 2}),
               JobRun(job="subject_sheets", status="succeeded", finished_at=now, counts={"sheets": 3})])
    s.commit()


def test_a_person_edits_deletes_pauses_and_exports_their_own_memory_on_my_memory(live, tab, system_session):
    page = tab
    _sign_in(page, live, OWNER)
    page.click("nav >> text=My memory")
    page.wait_for_url(f"{live}/my-memory")
    assert page.locator("h1", has_text="My memory").is_visible()
    assert page.locator(".my-sentence", has_text="Se llama Ana.").is_visible()
    assert page.locator("text=Acme entrega los martes y jueves.").count() == 0  # Marta's private note
    page.evaluate("window.__noReload = 'still here'")

    treat = system_session.scalar(select(Memory).where(Memory.attribute == "tratamiento", Memory.status == "active"))
    row = page.locator(f"#my-memory-{treat.id}")
    row.locator("summary", has_text="Edit or delete").click()
    row.locator("input[name=value]").fill("usted")
    row.locator("input[name=sentence]").fill("Prefiere que la traten de usted.")
    row.locator("button", has_text="Save as a new version").click()
    edited = page.locator(".my-memory", has_text="Prefiere que la traten de usted.")
    edited.locator(".badge.hand-edited").wait_for()
    assert page.evaluate("window.__noReload") == "still here"

    event = system_session.scalar(select(Memory).where(Memory.attribute == "evento", Memory.status == "active"))
    row = page.locator(f"#my-memory-{event.id}")
    row.locator("summary", has_text="Edit or delete").click()
    row.locator("summary", has_text="Delete…").click()
    row.locator("button.confirm-yes", has_text="Delete for good").click()
    page.locator(".my-memory.gone", has_text="Deleted.").wait_for()
    system_session.expire_all()
    assert system_session.scalar(select(Memory).where(Memory.attribute == "evento")) is None

    page.click("button.pause-learning")
    assert page.locator("h2", has_text="Learning is paused").is_visible()
    with page.expect_download() as download:
        page.click("#export")
    data = json.loads(Path(download.value.path()).read_text())
    values = {m["value"] for sec in data["sections"] for g in sec["subjects"] for m in g["memories"]}
    assert "usted" in values and "Feria de Valencia" not in values and data["learning_paused_at"]
