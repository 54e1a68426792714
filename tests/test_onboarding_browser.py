"""Onboarding in a real browser from an empty database, without demo data and without SQL: the first
platform admin from the setup link, an org with its owner, who invites an admin and a member who may
only read contacts, authorizes a phone and creates an API key; then the agent ingests and reads for them."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from client.memoria_client import MemoriaClient
from jobs.outbox import drain_batch
from memory_core.backends import get_backend
from memory_core.domain.models import AuditLog, Organization, User

pytestmark = pytest.mark.browser

PASSWORDS = {"root": "root passphrase for memoria", "olga": "olga owns the hardware shop",
             "ada": "ada administers the shop", "max": "max reads the contacts"}


@pytest.fixture
def browser_context(chromium):
    contexts = []

    def new():
        ctx = chromium.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(15000)
        return page
    yield new
    for ctx in contexts:
        ctx.close()


def _set_password(page, password):
    page.fill("input[name=password]", password)
    page.fill("input[name=confirm]", password)


def _accept(new_page, link, name, password):
    page = new_page()
    page.goto(link)
    page.fill("input[name=name]", name)
    _set_password(page, password)
    page.click("#invitation-form button[type=submit]")
    page.wait_for_selector(f"text=Hello, {name}")
    return page


def _invite(page, base, email, name, role, areas=None):
    page.goto(f"{base}/people")
    page.fill("#invite-form input[name=email]", email)
    page.fill("#invite-form input[name=name]", name)
    page.select_option("#invite-form select[name=role]", role)
    for area, level in (areas or {}).items():
        page.select_option(f"#invite-form select[name=area_{area}]", level)
    page.click("#invite-form button[type=submit]")
    return page.locator("#shown-link").inner_text()


def test_onboarding_from_an_empty_database_in_the_browser(live_server, browser_context, database, system_session):
    from app import _issue_setup_token

    assert system_session.scalar(select(User.id).limit(1)) is None
    base = live_server
    setup_link = f"{base}/setup/{_issue_setup_token()}"  # what `memoria up --no-demo` prints

    root = browser_context()
    root.goto(setup_link)
    root.fill("input[name=name]", "Rita Root")
    root.fill("input[name=email]", "root@example.test")
    _set_password(root, "password1234")  # a common one: refused with a form error
    root.click("#setup-form button[type=submit]")
    assert root.locator("text=too common").is_visible()
    _set_password(root, PASSWORDS["root"])
    root.click("#setup-form button[type=submit]")
    root.wait_for_url(f"{base}/platform/orgs")
    root.goto(setup_link)
    assert root.locator("text=This link cannot be used").is_visible()  # single use

    root.goto(f"{base}/platform/orgs")
    root.fill("#org-form input[name=name]", "Ferretería Sol")
    root.fill("#org-form input[name=owner_email]", "olga@example.test")
    root.fill("#org-form input[name=owner_name]", "Olga")
    root.click("#org-form button[type=submit]")
    owner_link = root.locator("#shown-link").inner_text()
    assert "/invitation/" in owner_link and root.locator("td", has_text="Ferretería Sol").is_visible()

    olga = _accept(browser_context, owner_link, "Olga", PASSWORDS["olga"])
    ada_link = _invite(olga, base, "ada@example.test", "Ada", "admin")
    max_link = _invite(olga, base, "max@example.test", "Max", "member", {"contacts": "read"})
    _accept(browser_context, ada_link, "Ada", PASSWORDS["ada"])
    max_page = _accept(browser_context, max_link, "Max", PASSWORDS["max"])
    assert max_page.locator("text=as member").is_visible()
    max_page.goto(f"{base}/people")
    assert "People of" not in max_page.content()  # a member does not manage people

    olga.goto(f"{base}/people")
    olga.fill("#phone-form input[name=phone]", "+34 600 111 222")
    olga.select_option("#phone-form select[name=area_contacts]", "read")
    olga.click("#phone-form button[type=submit]")
    assert olga.locator(".flash", has_text="Number authorized.").is_visible()
    assert olga.locator("td", has_text="+34600111222").is_visible()
    olga.goto(f"{base}/api-keys")
    olga.fill("input[name=name]", "shop assistant")
    olga.click("text=Create key")
    key = olga.locator("#new-key code").inner_text()

    # the agent (HTTP client) ingests and reads for those people
    agent = MemoriaClient(base, key)
    people = {p["name"]: p for p in agent.list_people()}
    assert {n: p["role"] for n, p in people.items()} == {"Olga": "owner", "Ada": "admin", "Max": "member"}
    assert people["Max"]["effective_permissions"] == {"contacts": "read", "general": "read"}
    for name in ("Ada", "Max"):
        agent.ingest(channel="web", conversation=f"chat-{name}", external_id=f"m-{name}", role="user",
                     text=f"Me llamo {name}", user_id=people[name]["user_id"])
    agent.ingest(channel="whatsapp", conversation="wa-shop", external_id="w-1", role="user", phone="+34600111222",
                 text="¿Tenéis tornillos de 8 mm?")
    backend = get_backend()
    while drain_batch(database, backend) is not None:
        pass
    for name, other in (("Ada", "Max"), ("Max", "Ada")):
        block = agent.context(message="¿Cómo me llamo?", user_id=people[name]["user_id"])
        assert name in block["text"] and other not in block["text"]
    assert agent.search("tornillos", phone="+34600111222")[0]["kind"] == "message"

    org_id = system_session.scalar(select(Organization.id))
    actions = set(system_session.scalars(select(AuditLog.action).where(AuditLog.org_id == org_id)))
    assert {"org.created", "invitation.created", "invitation.accepted", "phone.authorized", "api_key.created"} <= actions
