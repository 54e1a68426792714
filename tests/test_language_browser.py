"""The language switch in a real browser (Debian's Chromium through Playwright), on a laptop (1366 x 768) and a
phone (390 x 844): the sign-in page follows the browser, the switch turns every page to the other language, the
choice outlives signing out, and no Spanish page is wider than the phone."""
from __future__ import annotations

import pytest

from tests.test_console_browser import SHOTS, TAKE_SHOTS

pytestmark = pytest.mark.browser

VIEWPORTS = {"laptop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
OWNER = ("ana@demo.memoria.dev", "ana-demo-pass")
PAGES = ["/", "/review/", "/memories", "/contacts", "/traces", "/usage", "/audit", "/settings", "/jobs", "/people",
         "/my-memory"]


@pytest.fixture
def live(live_server, system_session):
    from evals.demo import load_demo

    load_demo(force=True)
    return live_server


@pytest.fixture(params=list(VIEWPORTS))
def screen(chromium, request):
    phone = request.param == "phone"
    context = chromium.new_context(viewport=VIEWPORTS[request.param], is_mobile=phone, has_touch=phone,
                                   locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15000)
    yield request.param, page
    context.close()


def _lang(page) -> str:
    return page.evaluate("document.documentElement.lang")


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def _sign_in(page, base):
    page.fill("input[name=email]", OWNER[0])
    page.fill("input[name=password]", OWNER[1])
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{base}/")


def _sign_out(page, name: str):
    menu = page.locator(".menu-button")
    if menu.is_visible():
        menu.click()
    page.get_by_role("button", name=name).click()


def test_switch_turns_every_page_to_the_other_language_and_is_remembered(live, screen):
    size, page = screen
    page.goto(f"{live}/login")
    assert _lang(page) == "en" and page.get_by_role("heading", name="Sign in to memoria").is_visible()

    page.get_by_role("button", name="Español").click()  # on the sign-in page, before signing in
    page.wait_for_function("document.documentElement.lang === 'es'")
    assert page.get_by_role("heading", name="Inicia sesión en memoria").is_visible()
    _sign_in(page, live)
    assert _lang(page) == "es" and page.get_by_role("heading", name="Hola, Ana Pérez").is_visible()
    if TAKE_SHOTS:
        page.screenshot(path=str(SHOTS / f"language-es-{size}.png"))
    for path in PAGES:
        page.goto(live + path)
        assert _lang(page) == "es", path
        assert _overflow(page) <= 0, f"{path} in Spanish is wider than the {size} screen"

    page.goto(f"{live}/memories")
    switch = page.get_by_role("button", name="English")
    assert switch.is_visible()  # in the header, also while the phone's menu is folded
    switch.click()
    page.wait_for_url(f"{live}/memories")
    assert _lang(page) == "en" and page.get_by_role("heading", name="Memories").is_visible()

    page.get_by_role("button", name="Español").click()
    page.wait_for_function("document.documentElement.lang === 'es'")
    _sign_out(page, "Cerrar sesión")
    page.wait_for_url(f"{live}/login")
    assert _lang(page) == "es"
    page.context.clear_cookies()  # another browser: only the account remembers the choice
    page.goto(f"{live}/login")
    assert _lang(page) == "en"
    _sign_in(page, live)
    assert _lang(page) == "es"
