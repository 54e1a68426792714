"""Test harness: a real PostgreSQL (with pgvector) and a real Redis, started once per test session.

With DATABASE_URL / REDIS_URL set, those servers are used; otherwise the embedded ones are started in
a temporary data directory and stopped at the end. Each test that touches the database gets a clean
one: every table is truncated after it (the seeded exclusion list is kept).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

_DATA_DIR = Path(tempfile.mkdtemp(prefix="memoria-test-"))
# Before any memoria import reads the settings: the code under test finds the same servers.
os.environ.setdefault("MEMORIA_DATA_DIR", str(_DATA_DIR))
os.environ.setdefault("MEMORIA_QUEUE", "memoria-test")
os.environ.setdefault("MEMORIA_BACKEND", "local")
os.environ.pop("OPENAI_API_KEY", None)

from sqlalchemy import create_engine, text  # noqa: E402

from memory_core.adapters.config import get_settings  # noqa: E402

KEEP = {"alembic_version", "memoria_keys"}  # memoria_keys: written by `memoria migrate`, like the schema


@pytest.fixture(scope="session")
def servers():
    """Start (or reuse) PostgreSQL and Redis for the session; yield the settings that reach them."""
    from memory_core.adapters.runtime import start_postgres, start_redis

    settings = get_settings()
    started = []
    if not settings.database_url:
        pg = start_postgres(settings.data_dir)
        started.append(pg)
    if not settings.redis_url:
        started.append(start_redis(settings.data_dir))
    try:
        from memory_core.adapters.migrate import migrate

        migrate(settings)
        yield settings
    finally:
        for handle in reversed(started):
            if handle.started_here:
                _stop_quietly(handle)


def _stop_quietly(handle) -> None:
    """Stop a server the session started; a failure to stop is logged, never a test error: the tests
    already ran, and a server slow to stop on a loaded machine says nothing about them."""
    try:
        if not handle.stop():
            logging.getLogger(__name__).warning("%s did not stop cleanly", type(handle).__name__)
    except Exception:  # noqa: BLE001 - teardown after the tests: report, don't fail
        logging.getLogger(__name__).exception("stopping %s failed", type(handle).__name__)


@pytest.fixture(scope="module")
def backend(servers):
    """The configured model backend (the local one in tests), as the worker builds it."""
    from memory_core.backends import get_backend

    return get_backend(servers)


@pytest.fixture(scope="session")
def owner_engine(servers):
    from memory_core.adapters.db import resolve_urls

    engine = create_engine(resolve_urls(servers).owner)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def _tables(owner_engine) -> tuple[list[str], list[dict]]:
    """The tables to empty after each test, and the seeded exclusion list to put back."""
    with owner_engine.connect() as c:
        names = c.execute(text("select tablename from pg_tables where schemaname = 'public'")).scalars().all()
        seed = [dict(r) for r in c.execute(text("select * from policy_exclusions where org_id is null")).mappings()]
    return [n for n in names if n not in KEEP], seed


@pytest.fixture
def database(servers, owner_engine, _tables):
    """The app's Database (restricted role, RLS on). Every table is emptied after the test."""
    from memory_core.adapters.db import get_database

    db = get_database(servers)
    yield db
    db.dispose()  # no connection of this test survives into the next
    empty_tables(owner_engine, _tables)


def empty_tables(owner_engine, tables_and_seed: tuple[list[str], list[dict]]) -> None:
    """Truncate every table and put the seeded exclusion list back (after a test, or a module that shares data)."""
    tables, seed = tables_and_seed
    with owner_engine.begin() as c:
        # replica mode: the audit log's append-only trigger stays out of the way of test cleanup
        c.execute(text("set local session_replication_role = replica"))
        c.execute(text(f"truncate {', '.join(tables)}"))
        c.execute(text("insert into policy_exclusions (id, org_id, kind, name, pattern, validator, description, "
                       "enabled, created_at) values (:id, :org_id, :kind, :name, :pattern, :validator, "
                       ":description, :enabled, :created_at)"), seed)


@pytest.fixture
def redis_conn(servers):
    from memory_core.adapters.queue import get_redis

    conn = get_redis(servers)
    conn.flushdb()
    yield conn
    conn.flushdb()


@pytest.fixture
def system_session(database):
    """A session in system scope (what the worker and jobs use)."""
    from memory_core.adapters.db import SYSTEM

    s = database.session(SYSTEM)
    yield s
    s.rollback()
    s.close()


@pytest.fixture
def app(database, redis_conn):
    from app import create_app
    from memory_core.tenancy.api_keys import VERIFIED

    VERIFIED.forget()  # keys verified by an earlier test's app are not this one's
    application = create_app({"TESTING": True, "SESSION_COOKIE_SECURE": False, "REMEMBER_COOKIE_SECURE": False})
    yield application


@pytest.fixture
def web_only(app):
    """The app as the web and API processes run it, checked: its Database has no worker URL, so every
    system-scope session it is asked for raises SystemScopeUnavailable."""
    from memory_core.adapters.db import SYSTEM, SystemScopeUnavailable

    with pytest.raises(SystemScopeUnavailable):
        app.extensions["memoria.db"].session(SYSTEM)
    return app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def live_server(app):
    """The app served by werkzeug on a free port of 127.0.0.1, in a thread; yields its base URL."""
    with serving(app) as base:
        yield base


@contextlib.contextmanager
def serving(app):
    """Serve `app` on a free port of 127.0.0.1 in a thread for the block; yields its base URL."""
    import threading

    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


CHROMIUM = "/usr/bin/chromium"
# Headless Debian Chromium on a machine with no network but loopback: no background calls home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium driven by Playwright; nothing downloads a browser of its own."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's Chromium is missing: scripts/ensure-chromium installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


CSRF_RE = re.compile(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = CSRF_RE.search(html) or re.search(r'<meta name="csrf-token" content="([^"]+)"', html)
    assert match, "page has no CSRF token"
    return match.group(1)


def login(client, email: str, password: str):
    """Sign in through the real form, CSRF token included; returns the response after redirects."""
    page = client.get("/login")
    return client.post("/login", data={"email": email, "password": password,
                                       "csrf_token": csrf_from(page.get_data(as_text=True))},
                       follow_redirects=True)


def sign_in(client, user) -> str:
    """Sign a factory user in; returns the CSRF token of the page it lands on, for the next post."""
    from tests.factories import PASSWORD

    page = login(client, user.email, PASSWORD)
    assert page.status_code == 200
    return csrf_from(page.get_data(as_text=True))


# Days that date arithmetic gets wrong: the 1st of a month before a 31-day month, the 31st before
# February, a leap day, and the night Europe/Madrid puts its clocks forward (01:00 UTC on 2026-03-29).
# Times are picked so that the UTC day and the Madrid day differ where they can.
TRICKY_DAYS = {
    "2026-12-01": dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc),
    "2027-01-31": dt.datetime(2027, 1, 31, 23, 30, tzinfo=dt.timezone.utc),  # already 1 February in Madrid
    "2028-02-29": dt.datetime(2028, 2, 29, 23, 15, tzinfo=dt.timezone.utc),  # already 1 March in Madrid
    "2026-03-29": dt.datetime(2026, 3, 29, 0, 30, tzinfo=dt.timezone.utc),  # half an hour before the switch
}


@pytest.fixture(params=list(TRICKY_DAYS))
def tricky_clock(request):
    """memoria's clock fixed on each tricky day in turn, with the machine's zone set to Europe/Madrid so
    anything reading local time instead of the clock shows up."""
    from memory_core.domain.clock import FixedClock, use

    zone = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Madrid"
    time.tzset()
    try:
        with use(FixedClock(TRICKY_DAYS[request.param])) as fixed:
            yield fixed
    finally:
        if zone is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = zone
        time.tzset()


@pytest.fixture(scope="session")
def embedder():
    """The local embedder, loaded and warmed once for the run (test_local_embedder has its own, per engine)."""
    from memory_core.backends.local_embedder import LocalEmbedder

    e = LocalEmbedder()
    e.warm_up()
    return e


@pytest.fixture
def factory(system_session):
    from tests.factories import Factory

    return Factory(system_session)


def pytest_sessionfinish(session, exitstatus):
    import shutil

    if os.environ.get("MEMORIA_DATA_DIR") == str(_DATA_DIR):
        shutil.rmtree(_DATA_DIR, ignore_errors=True)
