"""The review queue in a real browser: counters that follow htmx decisions (select all: tests/test_console_matrix.py)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.test_console_browser import ADMIN, _sign_in, tab  # noqa: F401  (tab is a fixture)

pytestmark = pytest.mark.browser


@pytest.fixture
def live(live_server, system_session):
    from evals.demo import load_demo

    load_demo(force=True)
    return live_server


def test_counters_follow_an_approval_made_in_the_row(live, tab):  # noqa: F811
    _sign_in(tab, live, ADMIN)
    tab.goto(f"{live}/review/")
    row = tab.locator("tr.proposal-row", has=tab.locator("button.approve")).first
    kind = row.locator(".badge").first.get_attribute("class").split()[-1]
    counter = tab.locator(f"#count-{kind}")
    before = int(counter.inner_text())
    row.locator("button.approve").click()
    expect(counter).to_have_text(str(before - 1))
