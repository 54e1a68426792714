"""Every registered route, walked as every role: the answer must be one the access table allows.

A route that is registered but missing from ACCESS fails the test until someone classifies it, so a
new page cannot ship without deciding who may open it. A row whose endpoint is not registered (yet)
is skipped. To classify a route: add one line to ACCESS with its method, path arguments and rule.
"""
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from memory_core.domain.models import ApiKey, MemoryTrace, PlatformApiKey, PolicyExclusion, PrivacyRequest
from tests.conftest import csrf_from, login
from tests.factories import PASSWORD

ROLES = ("anonymous", "member", "admin", "owner", "staff", "privacy", "platform", "outsider")

# Outcomes. ok: the route serves the role (any answer but 401/403, a sign-in redirect or a 5xx; a 400
# or 422 for the empty form we post is fine: authorization came first). deny: 403, or 404 when the
# object belongs to another org. login: sent to sign in. key: the JSON API answers 401 without a key.
OK, DENY, LOGIN, KEY = "ok", "deny", "login", "key"
# reached: allowed, and a 404 is fine too (the object is not in a state that has this, e.g. no receipt yet).
REACHED = "reached"
# probe: a public health probe, the same for everyone: 200, or 503 while something it checks is down
# (no worker runs during this walk). What it may say is pinned in tests/test_health.py.
PROBE = "probe"


def rule(anonymous=LOGIN, member=OK, admin=OK, owner=OK, staff=DENY, privacy=DENY, platform=DENY,
         outsider=OK) -> dict[str, str]:
    return dict(anonymous=anonymous, member=member, admin=admin, owner=owner, staff=staff, privacy=privacy,
                platform=platform, outsider=outsider)


PUBLIC = {r: OK for r in ROLES}
SIGNED_IN = rule(staff=OK, privacy=OK, platform=OK)
ORG = rule()  # any org member; the outsider works in their own org
ORG_OBJECT = rule(outsider=DENY)  # an object of org A: the outsider must not reach it
ADMIN = rule(member=DENY)
ADMIN_OBJECT = rule(member=DENY, outsider=DENY)
ADMIN_OR_STAFF = rule(member=DENY, staff=OK)
ADMIN_OR_STAFF_OBJECT = rule(member=DENY, staff=OK, outsider=DENY)
AUDIT = rule(member=DENY, staff=OK, privacy=OK)
PRIVACY_OFFICER = rule(member=DENY, admin=DENY, owner=DENY, outsider=DENY, privacy=OK)
API = {r: KEY for r in ROLES}
PLATFORM_ADMIN = rule(member=DENY, admin=DENY, owner=DENY, outsider=DENY, platform=OK)
# A one-time link: anyone may open it; a made-up token answers 404 (REACHED allows that).
ONE_TIME_LINK = {r: REACHED for r in ROLES}
PERSON = lambda w: {"user_id": w.users["member"].id}  # noqa: E731
OWN_MEMORY = rule(admin=DENY, owner=DENY, outsider=DENY)  # the member's own memory: nobody else reaches it
HEALTH = {r: PROBE for r in ROLES}


@dataclass(frozen=True)
class Route:
    method: str
    rule: dict[str, str]
    args: Callable[[World], dict] = field(default=lambda w: {})
    last: bool = False  # ends the session (sign out): walked after everything else


ANY_ID = lambda w: {"contact_id": uuid.uuid4(), "conversation_id": uuid.uuid4(), "user_id": uuid.uuid4(),  # noqa: E731
                    "trace_id": uuid.uuid4()}

ACCESS: dict[str, Route] = {
    "static": Route("GET", PUBLIC, lambda w: {"filename": "console.css"}),
    "console.login": Route("GET", PUBLIC),
    "console.logout": Route("POST", {r: LOGIN for r in ROLES}, last=True),  # signs out: back to sign-in
    "console.switch_org": Route("POST", SIGNED_IN),
    "console.set_language": Route("POST", PUBLIC),  # the sign-in page has the switch too
    "console.home": Route("GET", SIGNED_IN),
    # review
    "review.queue": Route("GET", ORG),
    "review.detail": Route("GET", ORG_OBJECT | {"member": DENY}, lambda w: {"proposal_id": w.bank}),
    "review.approve": Route("POST", ADMIN_OBJECT, lambda w: {"proposal_id": w.bank}),
    "review.reject": Route("POST", ADMIN_OBJECT, lambda w: {"proposal_id": w.bank}),
    "review.edit": Route("POST", ADMIN_OBJECT, lambda w: {"proposal_id": w.bank}),
    "review.bulk": Route("POST", ORG),
    # memories and contacts
    "console.memories": Route("GET", ORG),
    "console.memory": Route("GET", ORG_OBJECT, lambda w: {"memory_id": w.memory}),
    "console.memory_edit": Route("POST", ADMIN_OBJECT, lambda w: {"memory_id": w.memory}),
    "console.memory_pin": Route("POST", ADMIN_OBJECT, lambda w: {"memory_id": w.memory}),
    "console.memory_restore": Route("POST", ADMIN_OBJECT, lambda w: {"memory_id": w.version}),
    "console.memory_delete": Route("POST", ADMIN_OBJECT, lambda w: {"memory_id": w.doomed}),
    "console.contacts": Route("GET", ORG),
    "console.contact": Route("GET", ORG_OBJECT, lambda w: {"contact_id": w.contact}),
    # staff and admins
    "console.traces": Route("GET", ADMIN_OR_STAFF),
    "console.trace": Route("GET", ADMIN_OR_STAFF_OBJECT, lambda w: {"trace_id": w.trace}),
    "console.usage": Route("GET", ADMIN_OR_STAFF),
    "console.jobs": Route("GET", ADMIN_OR_STAFF),
    "console.run_job": Route("POST", ADMIN, lambda w: {"job_name": "retention"}),
    "console.audit": Route("GET", AUDIT),
    # settings (owner/admin)
    "console.settings": Route("GET", ADMIN),
    "console.settings_mode": Route("POST", ADMIN),
    "console.settings_retention": Route("POST", ADMIN),
    "console.settings_language": Route("POST", ADMIN),
    "console.settings_exclusion_add": Route("POST", ADMIN),
    "console.settings_exclusion_change": Route("POST", ADMIN_OBJECT, lambda w: {"exclusion_id": w.exclusion}),
    "console.api_keys": Route("GET", ADMIN),
    "console.create_key": Route("POST", ADMIN),
    "console.revoke_key": Route("POST", ADMIN_OBJECT, lambda w: {"key_id": w.api_key}),
    # WhatsApp linking: a person's own account
    "console.link_whatsapp": Route("GET", SIGNED_IN),
    "console.link_whatsapp_code": Route("POST", ORG),
    "console.link_whatsapp_adopt": Route("POST", SIGNED_IN),
    # My memory: a person's own memory, any role; a memory of the member's is hers alone
    "console.my_memory_page": Route("GET", SIGNED_IN),
    "console.my_memory_export": Route("GET", SIGNED_IN),
    "console.my_memory_learning": Route("POST", SIGNED_IN),
    "console.my_memory_forget_subject": Route("POST", SIGNED_IN),
    "console.my_memory_edit": Route("POST", OWN_MEMORY, lambda w: {"memory_id": w.mine}),
    "console.my_memory_delete": Route("POST", OWN_MEMORY, lambda w: {"memory_id": w.mine}),
    # privacy officer
    "console.privacy": Route("GET", PRIVACY_OFFICER),
    "console.privacy_intake": Route("POST", PRIVACY_OFFICER),
    "console.privacy_request": Route("GET", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_progress": Route("GET", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_verify": Route("POST", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_reject": Route("POST", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_preview": Route("POST", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_execute": Route("POST", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_receipt": Route("GET", PRIVACY_OFFICER | {"privacy": REACHED},
                                     lambda w: {"request_id": w.privacy_request}),
    "console.privacy_export": Route("GET", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    "console.privacy_export_prepare": Route("POST", PRIVACY_OFFICER, lambda w: {"request_id": w.privacy_request}),
    # health probes: public, platform-wide facts only
    "health.healthz": Route("GET", HEALTH),
    "health.readyz": Route("GET", HEALTH),
    # tenancy: one-time links (public), org people (owner/admin), platform administration
    "console.setup": Route("GET", ONE_TIME_LINK, lambda w: {"token": "made-up-token"}),
    "console.accept_invitation": Route("GET", ONE_TIME_LINK, lambda w: {"token": "made-up-token"}),
    "console.reset_password": Route("GET", ONE_TIME_LINK, lambda w: {"token": "made-up-token"}),
    "console.people": Route("GET", ADMIN),
    "console.people_invite": Route("POST", ADMIN),
    "console.person": Route("GET", ADMIN_OBJECT, PERSON),
    "console.person_role": Route("POST", ADMIN_OBJECT, PERSON),
    "console.person_areas": Route("POST", ADMIN_OBJECT, PERSON),
    "console.person_active": Route("POST", ADMIN_OBJECT, PERSON),
    "console.person_reset_link": Route("POST", ADMIN_OBJECT, PERSON),
    "console.person_remove_preview": Route("GET", ADMIN_OBJECT, PERSON),
    "console.person_remove": Route("POST", ADMIN_OBJECT, PERSON),
    "console.phone_authorize": Route("POST", ADMIN),
    "console.phone_revoke": Route("POST", ADMIN_OBJECT, lambda w: {"auth_id": w.phone}),
    "console.platform_orgs": Route("GET", PLATFORM_ADMIN),
    "console.platform_org_create": Route("POST", PLATFORM_ADMIN),
    "console.platform_org_suspend": Route("POST", PLATFORM_ADMIN, lambda w: {"org_id": w.org}),
    "console.platform_people": Route("GET", PLATFORM_ADMIN),
    "console.platform_role_set": Route("POST", PLATFORM_ADMIN),
    "console.platform_keys": Route("GET", PLATFORM_ADMIN),
    "console.platform_key_create": Route("POST", PLATFORM_ADMIN),
    "console.platform_key_revoke": Route("POST", PLATFORM_ADMIN, lambda w: {"key_id": w.platform_key}),
    # the JSON API: API keys only, never a console session
    "api.openapi_document": Route("GET", PUBLIC),
    "api.context": Route("POST", API),
    "api.after_reply": Route("POST", API, ANY_ID),
    "api.create_link_code": Route("POST", API),
    "api.delete_contact": Route("DELETE", API, ANY_ID),
    "api.delete_conversation": Route("DELETE", API, ANY_ID),
    "api.delete_document": Route("DELETE", API),
    "api.end_membership": Route("DELETE", API, ANY_ID),
    "api.for_subjects": Route("POST", API),
    "api.history": Route("GET", API, ANY_ID),
    "api.ingest": Route("POST", API),
    "api.put_document": Route("PUT", API),
    "api.report_used": Route("POST", API, ANY_ID),
    "api.retrieve": Route("POST", API, ANY_ID),
    "api.search": Route("POST", API),
}


# Whole blueprints with one rule: every JSON API route needs an API key (a console session is no
# key). Its path arguments get fresh uuids. A route listed in ACCESS overrides its blueprint's rule.
BLUEPRINT_RULES: dict[str, str] = {"api": "API key in the Authorization header"}


def _table(app) -> dict[str, Route]:
    table = dict(ACCESS)
    for r in app.url_map.iter_rules():
        blueprint = r.endpoint.rsplit(".", 1)[0] if "." in r.endpoint else None
        if r.endpoint not in table and blueprint in BLUEPRINT_RULES:
            method = sorted(r.methods - {"HEAD", "OPTIONS"})[0]
            names = tuple(r.arguments)
            table[r.endpoint] = Route(method, API, lambda w, names=names: {n: uuid.uuid4() for n in names})
    return table


class World:
    """Org A (owner, admin, member who reads contacts) with one object of each kind; org B's owner is the
    outsider; staff, a privacy officer and a platform admin belong to no org."""

    def __init__(self, factory, s):
        org = factory.org("Org A")
        other = factory.org("Org B")
        self.users = {
            "owner": factory.member(org, role="owner"), "admin": factory.member(org, role="admin"),
            "member": factory.member(org, permissions={"contacts": "read"}),
            "outsider": factory.member(other, role="owner"),
            "staff": factory.user(platform_role="staff"), "privacy": factory.user(platform_role="privacy_officer"),
            "platform": factory.user(platform_role="platform_admin"),
        }
        self.org = org.id
        self.phone = factory.phone(org, "+34600000001").id
        self.platform_key = factory._save(PlatformApiKey(name="p", prefix="memp_x", key_hash="1" * 64)).id
        c = factory.contact(org)
        self.contact = c.id
        subject = f"contact:{c.id}"
        old = factory.memory(org, subject=subject, attribute="plazo", value="30", area="contacts",
                             category="customer", status="superseded",
                             valid_to=dt.datetime.now(dt.timezone.utc))
        self.version = old.id
        self.memory = factory.memory(org, subject=subject, attribute="plazo", value="60", area="contacts",
                                     category="customer").id
        self.doomed = factory.memory(org, subject=subject, attribute="otro", value="x", area="contacts",
                                     category="customer").id
        self.bank = factory.memory(org, subject=subject, attribute="cuenta_bancaria", value="ES00", area="contacts",
                                   category="customer", status="proposed", proposal_kind="bank_account").id
        self.mine = factory.memory(org, level="private", owner=self.users["member"], subject="org",
                                   attribute="nota", value="mine").id
        self.exclusion = factory._save(PolicyExclusion(org_id=org.id, kind="secret", name="x", pattern="x")).id
        self.api_key = factory._save(ApiKey(org_id=org.id, name="k", prefix="mk_x", key_hash="0" * 64)).id
        self.trace = factory._save(MemoryTrace(org_id=org.id, block_text="b", channel="web")).id
        self.privacy_request = factory._save(PrivacyRequest(
            kind="access", subject_type="user", subject_ref="nobody@example.test", requested_by="x",
            due_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30))).id


def _outcome(resp) -> str:
    code = resp.status_code
    if code >= 500:
        return f"server error {code}"
    if code in (301, 302, 303) and "/login" in resp.headers.get("Location", ""):
        return LOGIN
    if code == 401:
        return KEY
    if code in (403, 404):
        return DENY
    return OK


@pytest.mark.parametrize("role", ROLES)
def test_every_route_answers_each_role_as_the_access_table_says(app, factory, system_session, role):
    rules = {r.endpoint: r for r in app.url_map.iter_rules()}
    table = _table(app)
    unclassified = sorted(set(rules) - set(table))
    assert not unclassified, f"classify these routes in tests/test_route_authz.py ACCESS: {unclassified}"
    w = World(factory, system_session)
    client = app.test_client()
    if role == "anonymous":
        token = csrf_from(client.get("/login").get_data(as_text=True))
    else:
        token = csrf_from(login(client, w.users[role].email, PASSWORD).get_data(as_text=True))
    wrong = []
    walk = sorted((e for e in table if e in rules), key=lambda e: (table[e].last, table[e].method != "GET", e))
    for endpoint in walk:
        route = table[endpoint]
        with app.test_request_context():
            from flask import url_for

            url = url_for(endpoint, **route.args(w))
        data = {"csrf_token": token} if route.method == "POST" else None
        resp = client.open(url, method=route.method, data=data)
        got, want = _outcome(resp), route.rule[role]
        if want == REACHED and got in (OK, DENY) and resp.status_code != 403:
            continue
        if want == PROBE and resp.status_code in (200, 503):
            continue
        if got != want:
            wrong.append(f"{route.method} {url} ({endpoint}) as {role}: expected {want}, got {resp.status_code}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("role", ["member", "admin", "staff", "privacy", "platform"])
def test_every_page_a_role_opens_runs_only_statements_compiled_once(app, factory, system_session, role):
    """SQLAlchemy compiles a statement once and reuses it, unless the statement cannot be told apart from others
    by its shape (a VALUES list with its data, say): that one is compiled afresh on every request (the review
    counters' was, ~2.6 ms on each page of the console)."""
    from sqlalchemy import event
    from sqlalchemy.engine.interfaces import CacheStats

    w = World(factory, system_session)
    client = app.test_client()
    login(client, w.users[role].email, PASSWORD)
    compiled_each_time: set[str] = set()

    def note(conn, cursor, statement, parameters, context, executemany):
        if context.compiled is not None and context.cache_hit is CacheStats.NO_CACHE_KEY:
            compiled_each_time.add(" ".join(statement.split())[:300])

    engines = [e for e in (app.extensions["memoria.db"].engine, app.extensions["memoria.db"].read_engine) if e]
    for engine in engines:
        event.listen(engine, "after_cursor_execute", note)
    try:
        table = _table(app)
        for endpoint in sorted(e for e in table if table[e].method == "GET" and table[e].rule[role] == OK):
            with app.test_request_context():
                from flask import url_for

                url = url_for(endpoint, **table[endpoint].args(w))
            assert client.get(url).status_code < 500, url
    finally:
        for engine in engines:
            event.remove(engine, "after_cursor_execute", note)
    assert not compiled_each_time, sorted(compiled_each_time)


def test_table_rows_name_real_roles_and_outcomes():
    for endpoint, route in ACCESS.items():
        assert set(route.rule) == set(ROLES), endpoint
        assert set(route.rule.values()) <= {OK, DENY, LOGIN, KEY, REACHED, PROBE}, endpoint
        assert route.method in ("GET", "POST", "PUT", "DELETE"), endpoint


def test_an_unclassified_route_fails_the_walk(app):
    """The walk's first check, proven: registering a route the table does not know is caught."""
    app.add_url_rule("/__unclassified", "unclassified_probe", lambda: "x")
    app.add_url_rule("/__unclassified_two", "console_probe.page", lambda: "x")
    unknown = {r.endpoint for r in app.url_map.iter_rules()} - set(_table(app))
    assert unknown == {"unclassified_probe", "console_probe.page"}
