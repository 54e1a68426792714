"""Issue 16's browser matrix: every item of "the console for real operators" checked as a person sees it, in Debian's
Chromium, at 1366x768 and at 390x844, in each language the console speaks.

Fast on purpose: one demo database, one server and one signed-in browser context per role serve the whole module
(the tables are emptied at its end); each test resizes the role's page and picks the language with the console's own
switch. Tests that change data change only what no other test reads."""
from __future__ import annotations

import dataclasses
import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from memory_core.domain import clock
from memory_core.domain.models import ApiKey, JobRun, Memory, MemoryTrace, User
from tests.conftest import empty_tables, serving
from tests.support.worker import run_queued_jobs
from tests.test_console_browser import SHOTS, TAKE_SHOTS, _sample_traces_and_usage

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
LANGUAGES = ("en", "es")  # the console's languages, picked with its own switch
ROLES = {
    "owner": ("ana@demo.memoria.dev", "ana-demo-pass"),
    "admin": ("carlos@demo.memoria.dev", "carlos-demo-pass"),
    "member": ("marta@demo.memoria.dev", "marta-demo-pass"),
    "staff": ("staff@memoria.dev", "staff-demo-pass"),
    "privacy": ("privacy@memoria.dev", "privacy-demo-pass"),
}
# Every page each role reaches from its navigation, and a few it opens from there ({ids} from the demo).
PAGES = {
    "owner": ["/", "/review/", "/review/?state=decided", "/review/{proposal}", "/memories", "/memories/{memory}",
              "/contacts", "/contacts/{contact}", "/traces", "/traces/{trace}", "/usage", "/audit", "/settings",
              "/jobs", "/people", "/api-keys", "/link-whatsapp", "/my-memory", "/nowhere"],
    "admin": ["/", "/review/", "/review/{proposal}", "/memories", "/contacts", "/audit", "/jobs", "/people"],
    "member": ["/", "/review/", "/memories", "/contacts", "/link-whatsapp", "/my-memory", "/api-keys"],
    "staff": ["/", "/traces", "/traces/{trace}", "/usage", "/jobs", "/audit"],
    "privacy": ["/", "/privacy", "/audit", "/my-memory"],
}
WHATSAPP = "+34 600 111 222"
# What a person reads, per language (only what the checks need; numbers and ids are checked as they are).
WORDS = {
    "en": {"deletes": "This deletes {n} versions", "not_found": "Page not found", "forbidden": "You may not open",
           "go_back": "Go back", "menu": "Menu", "wrong_account": "does not match the proposed one",
           "access_basis": "art. 15", "erasure_basis": "art. 17", "nothing_deleted": "Nothing is deleted",
           "copy": "Copy", "copied": "Copied"},
    "es": {"deletes": "Esto borra {n} versiones", "not_found": "Página no encontrada", "forbidden": "No puedes abrir",
           "go_back": "Volver", "menu": "Menú", "wrong_account": "no coincide con la propuesta",
           "access_basis": "art. 15", "erasure_basis": "art. 17", "nothing_deleted": "No se borra nada",
           "copy": "Copiar", "copied": "Copiado"},
}


@pytest.fixture(scope="module")
def site(servers, owner_engine, _tables, chromium):
    """The demo, served once for the module, with traces, usage and job runs; yields (base URL, ids)."""
    from app import create_app
    from evals.demo import load_demo
    from memory_core.adapters.db import SYSTEM, get_database
    from memory_core.adapters.queue import get_redis

    db = get_database(servers)
    get_redis(servers).flushdb()
    load_demo(force=True)
    s = db.session(SYSTEM)
    _sample_traces_and_usage(s)
    plazo = s.scalar(select(Memory).where(Memory.attribute == "plazo_pago", Memory.status == "active"))
    for n in range(len(VIEWPORTS) * len(LANGUAGES)):  # one low-permission proposal for each view to approve
        s.add(Memory(org_id=plazo.org_id, level="shared", subject=plazo.subject, attribute=f"nota_horario_{n}",
                     value=f"de {8 + n} a 15", sentence=f"Atiende de {8 + n} a 15 (matriz).", category="customer",
                     area="contacts", status="proposed", proposal_kind="low_permission"))
    carlos = s.scalar(select(User.id).where(User.email == ROLES["admin"][0]))
    s.add_all([JobRun(job="retention", status="succeeded", finished_at=clock.now(), org_id=plazo.org_id,
                      counts={"versions_removed": 2}, triggered_by=f"console user {carlos}"),
               JobRun(job="subject_sheets", status="failed", finished_at=clock.now(), org_id=plazo.org_id,
                      counts={"sheets": 1}, error="timeout after 3600 s", triggered_by="schedule")])
    s.commit()
    ids = {"memory": plazo.id, "contact": plazo.subject.split(":", 1)[1],
           "proposal": s.scalar(select(Memory.id).where(Memory.status == "proposed",
                                                         Memory.proposal_kind == "bank_account")),
           "trace": s.scalar(select(MemoryTrace.id).limit(1)),
           "versions": s.scalar(select(func.count()).select_from(Memory).where(
               Memory.subject == plazo.subject, Memory.attribute == "plazo_pago"))}
    s.close()
    app = create_app({"TESTING": True, "SESSION_COOKIE_SECURE": False, "REMEMBER_COOKIE_SECURE": False})
    app.config["MEMORIA_SETTINGS"] = dataclasses.replace(app.config["MEMORIA_SETTINGS"], whatsapp_number=WHATSAPP)
    try:
        with serving(app) as base:
            yield base, ids, db
    finally:
        db.dispose()
        empty_tables(owner_engine, _tables)


@pytest.fixture(scope="module")
def contexts(site, chromium):
    """One signed-in browser context per role, made when a test first needs it."""
    base, made = site[0], {}

    def of(role: str):
        if role not in made:
            ctx = chromium.new_context(viewport=VIEWPORTS["desktop"], accept_downloads=True)
            ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
            page = ctx.new_page()
            page.set_default_timeout(15000)
            page.goto(f"{base}/login")
            page.fill("input[name=email]", ROLES[role][0])
            page.fill("input[name=password]", ROLES[role][1])
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/")
            made[role] = page
        return made[role]
    yield of
    for page in made.values():
        page.context.close()


@pytest.fixture(scope="module", params=[(v, lang) for lang in LANGUAGES for v in VIEWPORTS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def view(request):
    """(viewport name, language): every test of the module runs in each."""
    return request.param


@pytest.fixture
def as_role(site, contexts, view):
    """The role's page, at this test's size and in its language (chosen with the console's switch)."""
    base = site[0]
    viewport, language = view

    def get(role: str):
        page = contexts(role)
        page.set_viewport_size(VIEWPORTS[viewport])
        speak(page, base, language)
        return page
    return get


def speak(page, base: str, language: str) -> None:
    """Switch the role's console to `language` once (the account remembers it); a no-op when it speaks it."""
    if getattr(page, "memoria_language", None) == language:
        return
    page.goto(f"{base}/")
    if (page.get_attribute("html", "lang") or "en") != language:
        page.locator(f"form.language-switch:has(input[name=language][value={language}]) input[type=submit]").click()
        page.wait_for_load_state()
        assert page.get_attribute("html", "lang") == language
    page.memoria_language = language


def words(view) -> dict[str, str]:
    return WORDS[view[1]]


def overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


# ---------------------------------------------------------------------------------------------- 1. ask first

def test_deleting_a_memory_asks_first_and_says_how_many_versions_go(site, as_role, view):
    base, ids, _ = site
    page = as_role("owner")
    page.goto(f"{base}/memories/{ids['memory']}")
    page.click("summary.danger")
    box = page.locator("details.confirm[open] .confirm-box")
    assert words(view)["deletes"].format(n=ids["versions"]) in box.inner_text()
    assert box.get_by_role("button").first.is_visible()
    assert overflow(page) <= 0


def test_restoring_a_version_asks_first_with_both_values(site, as_role, view):
    base, ids, _ = site
    page = as_role("owner")
    page.goto(f"{base}/memories/{ids['memory']}")
    page.click("summary.restore")
    question = page.locator("details.confirm[open] .confirm-box").inner_text()
    assert "«30 días»" in question and "«60 días»" in question
    assert page.locator("#current-value").inner_text() == "60 días"  # nothing happened yet


# ---------------------------------------------------------------------------------------------- 2. access words

def test_an_access_request_has_its_own_basis_and_words_not_an_erasures(site, as_role, view):
    base, _, _ = site
    w = words(view)
    page = as_role("privacy")
    page.goto(f"{base}/privacy")
    page.select_option("#intake-form select[name=kind]", "access")
    page.select_option("#intake-form select[name=subject_type]", "user")
    page.fill("#intake-form input[name=subject_ref]", ROLES["member"][0])
    page.fill("#intake-form input[name=requested_by]", f"Marta, by email ({view[0]})")
    page.fill("#intake-form textarea[name=verification]", "Replied from her own address")
    page.click("#intake-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/privacy/[0-9a-f-]{36}$"))
    details = page.locator("dl.counts").inner_text()
    assert w["access_basis"] in details and w["erasure_basis"] not in details
    assert page.locator("#intake-verification").is_visible()  # not asked again
    page.locator("form[action$='/verify'] button[type=submit]").click()
    page.locator("form[action$='/preview'] button[type=submit]").click()
    page.wait_for_selector("#preview-pending")  # the worker counts; the page reloads itself until it has
    run_queued_jobs()
    page.wait_for_selector("#preview")
    preview = page.locator("#preview").inner_text()
    assert w["nothing_deleted"] in preview and "anonymised" not in preview and "deleted /" not in preview
    assert page.locator("details.confirm").count() == 0  # nothing irreversible to confirm
    assert overflow(page) <= 0


# ---------------------------------------------------------------------------------------------- 3. bank account

def test_a_wrong_bank_account_retype_is_shown_at_the_field_and_focused(site, as_role, view):
    base, ids, _ = site
    page = as_role("admin")
    page.goto(f"{base}/review/{ids['proposal']}")
    page.locator("input[name=confirm_account]").fill("ES00 0000 0000")
    page.locator("input[name=confirm_account]").press("Enter")
    page.wait_for_load_state()
    error = page.locator("#confirm-account-error")
    assert error.is_visible() and words(view)["wrong_account"] in error.inner_text()
    assert page.evaluate("document.activeElement.name") == "confirm_account"
    assert page.locator("input[name=confirm_account]").get_attribute("aria-invalid") == "true"
    box = page.locator("input[name=confirm_account]").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORTS[view[0]]["width"]


# ---------------------------------------------------------------------------------------------- 4. who did what

def test_audit_log_names_who_did_it_and_filters_by_them(site, as_role, view):
    base, ids, _ = site
    page = as_role("owner")
    pin = page.locator("form[action$='/pin'] button[type=submit]")
    for _ in range(2):  # pin, then unpin: two actions of Ana's in the log
        page.goto(f"{base}/memories/{ids['memory']}")
        pin.click()
        page.wait_for_load_state()
    page.goto(f"{base}/audit")
    who = page.locator("td.who-cell").all_inner_texts()
    assert any("Ana Pérez" in w and "ana@demo.memoria.dev" in w for w in who), who
    assert not any(w.strip().startswith("console ") for w in who)
    page.select_option("select[name=who]", label="Ana Pérez <ana@demo.memoria.dev>")
    page.locator("form.filters button[type=submit]").click()
    page.wait_for_url(re.compile(r".*who=.*"))
    assert all("Ana Pérez" in w for w in page.locator("td.who-cell").all_inner_texts())


# ---------------------------------------------------------------------------------------------- 5. the language

def test_every_page_speaks_the_chosen_language_and_offers_the_other(site, as_role, view):
    base, ids, _ = site
    page = as_role("owner")
    for path in ("/", "/memories", "/review/"):
        page.goto(base + path)
        assert page.get_attribute("html", "lang") == view[1]


def test_attributes_read_as_labels_not_internal_keys(site, as_role, view):
    base, _, _ = site
    page = as_role("admin")
    for path in ("/review/", "/memories"):
        page.goto(base + path)
        body = page.locator("main").inner_text()
        assert "cuenta_bancaria" not in body and "nota_quiere" not in body and "plazo_pago" not in body


# ---------------------------------------------------------------------------------------------- 6. lists

@pytest.mark.parametrize("role,path", [("owner", "/memories"), ("owner", "/contacts"), ("owner", "/traces"),
                                       ("owner", "/audit"), ("owner", "/jobs"), ("admin", "/review/"),
                                       ("admin", "/review/?state=decided"), ("privacy", "/privacy"),
                                       ("staff", "/jobs")])
def test_every_list_shows_its_total_sorts_and_searches(site, as_role, view, role, path):
    base, _, _ = site
    page = as_role(role)
    page.goto(base + path)
    total = page.locator("#list-total")
    if total.count():  # a list with rows
        assert re.match(r"^\d[\d.,]*\+? ", total.inner_text())
    form = page.locator("form.filters")
    assert form.locator("select[name=sort]").count() == 1 and form.locator("input[name=q]").count() == 1
    assert overflow(page) <= 0


def test_review_queue_selects_every_row_of_the_page(site, as_role, view):
    base, _, _ = site
    page = as_role("admin")
    page.goto(f"{base}/review/")
    boxes = page.locator('input[name="ids"]')
    assert boxes.count() >= 1
    page.check("input.select-all")
    assert all(boxes.nth(i).is_checked() for i in range(boxes.count()))
    page.uncheck("input.select-all")
    assert not any(boxes.nth(i).is_checked() for i in range(boxes.count()))


def test_counters_follow_an_approval_made_in_the_row_without_a_reload(site, as_role, view):
    base, _, _ = site
    page = as_role("admin")
    page.goto(f"{base}/review/?kind=low_permission&q=matriz")
    page.evaluate("window.__noReload = 'still here'")
    counter = page.locator("#count-low_permission")
    before = int(counter.inner_text())
    row = page.locator("tr.proposal-row", has=page.locator("button.approve")).first
    row.locator("button.approve").click()
    expect(counter).to_have_text(str(before - 1))
    assert page.evaluate("window.__noReload") == "still here"


def test_traces_show_who_when_and_the_first_words_and_filter_by_use(site, as_role, view):
    base, _, _ = site
    page = as_role("owner")
    page.goto(f"{base}/traces")
    first = page.locator("table tbody tr").first
    assert re.search(r"\d", first.locator("td").first.inner_text())  # when
    assert first.locator("td.turn-words").is_visible()  # the turn's first words (or why not)
    page.check("input[name=used]")
    page.locator("form.filters button[type=submit]").click()
    page.wait_for_url(re.compile(r".*used=1.*"))
    used = page.locator("table tbody tr td:nth-child(7)").all_inner_texts()
    assert used and all(int(n) > 0 for n in used)  # only turns where a memory was used


# ---------------------------------------------------------------------------------------------- 7. phones

@pytest.mark.parametrize("role", list(ROLES))
def test_no_page_has_a_horizontal_scrollbar_at_390_for_any_role(site, as_role, view, role):
    if view[0] != "phone":
        pytest.skip("the widest pages fit 1366 px; the sweep is for the phone (the other tests check their pages)")
    base, ids, _ = site
    page = as_role(role)
    for path in PAGES[role]:
        page.goto(base + path.format(**ids))
        assert overflow(page) <= 0, f"{path} is wider than the screen for the {role}"


def test_navigation_folds_behind_a_menu_button_on_a_phone_only(site, as_role, view):
    base, _, _ = site
    page = as_role("owner")
    page.goto(f"{base}/")
    button, nav = page.locator("button.menu-button"), page.locator("#mainnav")
    if view[0] == "desktop":
        assert nav.is_visible() and not button.is_visible()
        return
    assert button.is_visible() and not nav.is_visible() and button.inner_text() == words(view)["menu"]
    button.click()
    assert nav.is_visible() and button.get_attribute("aria-expanded") == "true"
    nav.locator("a[href='/memories']").click()
    page.wait_for_url(f"{base}/memories")
    assert not page.locator("#mainnav").is_visible()


# ---------------------------------------------------------------------------------------------- 8. rough edges

def test_404_and_403_pages_keep_the_navigation_and_a_way_back(site, as_role, view):
    base, _, _ = site
    w = words(view)
    page = as_role("member")
    missing = page.goto(f"{base}/memories/00000000-0000-0000-0000-000000000000", referer=f"{base}/memories")
    assert missing.status == 404 and w["not_found"] in page.locator("h1").inner_text()
    back = page.get_by_role("link", name=w["go_back"])
    assert back.get_attribute("href").endswith("/memories") and page.locator("nav.mainnav").count() == 1
    forbidden = page.goto(f"{base}/api-keys", referer=f"{base}/memories?q=acme")
    assert forbidden.status == 403 and w["forbidden"] in page.locator("h1").inner_text()
    page.get_by_role("link", name=w["go_back"]).click()
    page.wait_for_url(f"{base}/memories?q=acme")  # where the person came from


def test_a_new_api_key_is_shown_once_with_a_copy_button_and_a_reload_creates_nothing(site, as_role, view):
    base, _, db = site
    from memory_core.adapters.db import SYSTEM

    def keys() -> int:
        with db.session(SYSTEM) as s:
            return s.scalar(select(func.count()).select_from(ApiKey))
    page = as_role("owner")
    page.goto(f"{base}/api-keys")
    page.fill("input[name=name]", f"Bot {view[0]} {view[1]}")
    page.locator("form[action$='/api-keys'] button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/api-keys\?shown=.*"))  # redirected after the POST
    before = keys()
    key = page.locator("#new-key-value").inner_text()
    copy = page.locator("#new-key [data-copy]")
    assert copy.inner_text() == words(view)["copy"]
    copy.click()
    expect(copy).to_have_text(words(view)["copied"])
    assert page.evaluate("navigator.clipboard.readText()") == key
    page.reload()
    assert keys() == before and page.locator("#new-key-value").count() == 0  # shown once, nothing new


def test_the_whatsapp_link_page_says_which_number_to_write_to(site, as_role, view):
    base, _, _ = site
    page = as_role("member")
    page.goto(f"{base}/link-whatsapp")
    page.locator("form[action$='/link-whatsapp/code'] button[type=submit]").click()
    assert page.locator("#whatsapp-number").inner_text() == WHATSAPP
    assert re.fullmatch(r"VINCULAR [A-Z0-9]{6}", page.locator("#link-code").inner_text())
    assert overflow(page) <= 0


def test_every_page_has_a_favicon(site, as_role, view):
    base, _, _ = site
    page = as_role("member")
    for path in ("/", "/memories", "/nowhere"):
        page.goto(base + path)
        href = page.locator("link[rel=icon]").get_attribute("href")
        icon = page.request.get(base + href)
        assert icon.ok and "svg" in icon.headers["content-type"]
    assert 'rel="icon"' in page.request.get(f"{base}/login").text()  # and before sign-in


def test_without_javascript_the_navigation_is_still_there(site, chromium, view):
    base, _, _ = site
    context = chromium.new_context(viewport=VIEWPORTS[view[0]], java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{base}/login")
        page.fill("input[name=email]", ROLES["member"][0])
        page.fill("input[name=password]", ROLES["member"][1])
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        assert page.locator("#mainnav").is_visible() and overflow(page) <= 0
    finally:
        context.close()


# ---------------------------------------------------------------------------------------------- README's pictures

# (file name, role, path, what its heading says in English); phone shots get a "phone-" prefix.
SCREENSHOTS = [
    ("dashboard", "admin", "/", "Hello, Carlos Gil"),
    ("review-queue", "admin", "/review/", None),
    ("review-bank-account", "admin", "/review/{proposal}", None),
    ("review-history", "admin", "/review/?state=decided", None),
    ("memories", "admin", "/memories", None),
    ("memory-versions", "admin", "/memories/{memory}", None),
    ("contacts", "admin", "/contacts", None),
    ("contact", "admin", "/contacts/{contact}", "Talleres García"),
    ("traces", "admin", "/traces", None),
    ("trace", "admin", "/traces/{trace}", None),
    ("usage", "admin", "/usage", None),
    ("audit-log", "admin", "/audit", None),
    ("settings", "admin", "/settings", None),
    ("jobs", "admin", "/jobs", None),
    ("review-queue-member", "member", "/review/", None),
    ("my-memory", "owner", "/my-memory", None),
    ("privacy", "privacy", "/privacy", None),
    ("not-found", "member", "/nowhere", None),
]
PHONE_SHOTS = {"dashboard", "review-queue", "memories", "memory-versions", "audit-log", "jobs", "privacy"}


@pytest.mark.skipif(not TAKE_SHOTS, reason="`make screenshots` takes the pictures")
def test_screenshots_for_the_readme(site, as_role, view):
    """The README's pictures of the console, at 1366 and at 390 (phone-*.png), in English, into docs/screenshots
    (or MEMORIA_SCREENSHOT_DIR): `make screenshots` runs just this, on the same demo the matrix checks."""
    if view[1] != "en":
        pytest.skip("the README shows the English console")
    base, ids, _ = site
    SHOTS.mkdir(parents=True, exist_ok=True)
    prefix = "phone-" if view[0] == "phone" else ""
    for name, role, path, heading in SCREENSHOTS if not prefix else [s for s in SCREENSHOTS if s[0] in PHONE_SHOTS]:
        page = as_role(role)
        page.goto(base + path.format(**ids))
        assert page.locator("h1").first.is_visible(), name
        if heading:
            assert heading in page.locator("h1").first.inner_text(), name
        page.screenshot(path=str(SHOTS / f"{prefix}{name}.png"), full_page=True)
        assert (SHOTS / f"{prefix}{name}.png").stat().st_size > 5000, name
    if view[0] == "phone":
        page = as_role("admin")
        page.goto(f"{base}/")
        page.locator("button.menu-button").click()
        page.screenshot(path=str(SHOTS / "phone-menu.png"))
