"""Console sign-in: hashed passwords, CSRF, rate limiting, role-aware pages."""
from __future__ import annotations

from tests.conftest import csrf_from, login
from tests.factories import PASSWORD


def test_signed_out_visitor_is_sent_to_sign_in(client):
    resp = client.get("/")
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]


def test_member_signs_in_and_sees_their_org_and_role(client, factory):
    org = factory.org("Talleres Demo")
    user = factory.member(org, role="admin", name="Ana Pérez")
    page = login(client, user.email, PASSWORD).get_data(as_text=True)
    assert "Ana Pérez" in page and "Talleres Demo" in page and "admin" in page


def test_wrong_password_says_so_and_stays_signed_out(client, factory):
    user = factory.member(factory.org())
    page = login(client, user.email, "nope").get_data(as_text=True)
    assert "Wrong email or password." in page
    assert client.get("/").status_code == 302


def test_sixth_failed_attempt_is_rate_limited_even_with_the_right_password(client, factory):
    user = factory.member(factory.org())
    for _ in range(5):
        login(client, user.email, "wrong")
    resp = login(client, user.email, PASSWORD)
    assert resp.status_code == 429
    assert "Too many failed sign-ins" in resp.get_data(as_text=True)


def test_login_without_csrf_token_is_refused(client, factory):
    user = factory.member(factory.org())
    resp = client.post("/login", data={"email": user.email, "password": PASSWORD})
    assert resp.status_code == 400
    assert client.get("/").status_code == 302


def test_logout_needs_post_with_csrf(client, factory):
    user = factory.member(factory.org())
    page = login(client, user.email, PASSWORD).get_data(as_text=True)
    assert client.get("/logout").status_code == 405
    assert client.post("/logout").status_code == 400
    client.post("/logout", data={"csrf_token": csrf_from(page)})
    assert client.get("/").status_code == 302


def test_passwords_are_stored_hashed(factory, system_session):
    user = factory.user()
    assert PASSWORD not in user.password_hash and user.password_hash.startswith("scrypt:")


def test_sign_in_is_audited(client, factory, system_session):
    from sqlalchemy import select

    from memory_core.domain.models import AuditLog

    user = factory.member(factory.org())
    login(client, user.email, PASSWORD)
    actions = system_session.scalars(select(AuditLog.action).where(AuditLog.actor_user_id == user.id)).all()
    assert actions == ["console.login"]


def test_next_parameter_never_redirects_off_site(client, factory):
    user = factory.member(factory.org())
    page = client.get("/login?next=//evil.example/x")
    resp = client.post("/login?next=//evil.example/x", data={
        "email": user.email, "password": PASSWORD, "csrf_token": csrf_from(page.get_data(as_text=True))})
    assert resp.status_code == 302 and resp.headers["Location"] == "/"


def test_session_cookie_is_httponly_and_secure_by_default(factory, database, redis_conn):
    from app import create_app

    app = create_app({"TESTING": True})
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert app.config["SESSION_COOKIE_HTTPONLY"] is True
    assert app.config["SESSION_COOKIE_SAMESITE"] == "Lax"
