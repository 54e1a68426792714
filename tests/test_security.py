"""The findings of the security review (issue 15): each test replays an attack and shows it now fails."""
from __future__ import annotations

import pytest

from tests.conftest import csrf_from, login, sign_in
from tests.factories import PASSWORD


def _post_login(client, user, next_param: str):
    page = client.get("/login")
    return client.post(f"/login?next={next_param}", data={
        "email": user.email, "password": PASSWORD, "csrf_token": csrf_from(page.get_data(as_text=True))})


# ---------------------------------------------------------------------------- 4. open redirect after sign-in

@pytest.mark.parametrize("next_param", ["/%09/evil.com", "/%0d%0aX:1", "/%0a/evil.com", "%2F%2Fevil.com",
                                        "/\\evil.com", "https://evil.com/", "/%20/evil.com"])
def test_open_redirect_after_sign_in_only_goes_to_same_site_paths(client, factory, next_param):
    user = factory.member(factory.org())
    resp = _post_login(client, user, next_param)
    assert resp.status_code == 302
    assert resp.headers["Location"] == "/"
    assert "X" not in resp.headers or resp.headers.get("X") != "1"


def test_sign_in_still_returns_to_a_same_site_page(client, factory):
    user = factory.member(factory.org())
    resp = _post_login(client, user, "/memories%3Fq%3Dacme")
    assert resp.status_code == 302 and resp.headers["Location"] == "/memories?q=acme"


# ---------------------------------------------------------------------------- 8. huge integers in query params

@pytest.mark.parametrize("path", ["/traces?offset=", "/audit?before="])
def test_huge_integer_in_page_cursor_is_a_400_with_a_message(client, factory, path):
    org = factory.org()
    admin = factory.member(org, role="owner")
    sign_in(client, admin)
    for value in ("9" * 30, "9" * 5000, "-1", "²"):
        resp = client.get(path + value)
        assert resp.status_code == 400, value
        assert "whole number" in resp.get_data(as_text=True)
