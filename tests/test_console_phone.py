"""The console on a phone (390 x 844) in a real browser: the navigation folds behind a Menu button, and no page
is wider than the screen, for every role, on the demo data."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.domain.models import Contact, Memory, MemoryTrace
from tests.test_console_browser import SHOTS, _sign_in

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ROLES = {
    "owner": ("ana@demo.memoria.dev", "ana-demo-pass"),
    "member": ("marta@demo.memoria.dev", "marta-demo-pass"),
    "staff": ("staff@memoria.dev", "staff-demo-pass"),
    "privacy": ("privacy@memoria.dev", "privacy-demo-pass"),
}
PAGES = {
    "owner": ["/", "/review/", "/memories", "/memories/{memory}", "/contacts", "/contacts/{contact}", "/traces",
              "/usage", "/audit", "/settings", "/jobs", "/api-keys", "/link-whatsapp", "/review/{proposal}",
              "/nowhere"],
    "member": ["/", "/review/", "/memories", "/contacts", "/link-whatsapp", "/api-keys"],
    "staff": ["/", "/traces", "/traces/{trace}", "/usage", "/jobs"],
    "privacy": ["/", "/privacy"],
}


@pytest.fixture
def phone(chromium):
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


@pytest.fixture
def live(live_server, system_session):
    from evals.demo import load_demo

    load_demo(force=True)
    return live_server


def _ids(s) -> dict[str, str]:
    memory = s.scalar(select(Memory.id).where(Memory.status == "active", Memory.level == "shared").limit(1))
    proposal = s.scalar(select(Memory.id).where(Memory.status == "proposed", Memory.proposal_kind == "bank_account"))
    trace = s.scalar(select(MemoryTrace.id).limit(1))
    return {"memory": memory, "proposal": proposal, "contact": s.scalar(select(Contact.id).limit(1)), "trace": trace}


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("role", list(ROLES))
def test_no_page_is_wider_than_a_phone(live, phone, system_session, role):
    ids = _ids(system_session)
    _sign_in(phone, live, ROLES[role])
    for path in PAGES[role]:
        if "{trace}" in path and ids["trace"] is None:
            continue
        phone.goto(live + path.format(**ids))
        assert _overflow(phone) <= 0, f"{path} is wider than the screen for the {role}"


def test_navigation_folds_behind_a_menu_button_on_a_phone(live, phone):
    _sign_in(phone, live, ROLES["owner"])
    nav = phone.locator("#mainnav")
    button = phone.get_by_role("button", name="Menu")
    assert button.is_visible() and not nav.is_visible()
    phone.screenshot(path=str(SHOTS / "phone-dashboard.png"))
    button.click()
    assert nav.is_visible() and button.get_attribute("aria-expanded") == "true"
    phone.screenshot(path=str(SHOTS / "phone-menu.png"))
    nav.get_by_role("link", name="Memories").click()
    phone.wait_for_url(f"{live}/memories")
    assert not phone.locator("#mainnav").is_visible()
    phone.screenshot(path=str(SHOTS / "phone-memories.png"), full_page=True)


def test_without_javascript_the_navigation_is_still_there(live, chromium):
    context = chromium.new_context(viewport=PHONE, java_script_enabled=False)
    page = context.new_page()
    try:
        _sign_in(page, live, ROLES["owner"])
        assert page.locator("#mainnav").is_visible() and _overflow(page) <= 0
    finally:
        context.close()
