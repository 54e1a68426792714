"""Onboarding from a shell: the `memoria` commands against the real database, then the agent reads."""
from __future__ import annotations

import json
import re

from click.testing import CliRunner
from sqlalchemy import select

from app import cli
from memory_core.adapters.security import verify_password
from memory_core.domain.access import load_access
from memory_core.domain.models import AuditLog, Membership, User
from memory_core.tenancy import members

PASSWORD = "a long and unusual passphrase"


def run(*args, input=None, ok=True):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def _token(output: str, path: str) -> str:
    return re.search(rf"/{path}/([A-Za-z0-9_\-]+)", output).group(1)


def test_onboarding_through_the_command_line(client, system_session):
    out = run("admin", "create", input=f"root@example.test\nRoot\n{PASSWORD}\n{PASSWORD}\n")
    assert "platform administrator root@example.test created" in out
    assert "common" in run("admin", "create", "--email", "x@example.test", "--name", "X",
                           "--password", "password1234", ok=False)

    out = run("org", "create", "Acme", "--owner-email", "olga@example.test", "--owner-name", "Olga")
    members.accept_invitation(system_session, _token(out, "invitation"), password=PASSWORD)  # Olga opens her link
    system_session.commit()
    out = run("user", "invite", "--org", "acme", "--email", "ada@example.test", "--role", "admin")
    members.accept_invitation(system_session, _token(out, "invitation"), password=PASSWORD)
    system_session.commit()
    run("user", "create", "--email", "max@example.test", "--name", "Max", "--password", PASSWORD)
    run("member", "add", "--org", "Acme", "--email", "max@example.test", "--area", "contacts=read")
    assert "contacts=read, general=read" in run("member", "set-areas", "--org", "Acme", "--email",
                                                "max@example.test", "--area", "contacts=read")
    assert "area=read" in run("member", "set-areas", "--org", "Acme", "--email", "max@example.test",
                              "--area", "contacts", ok=False)
    assert "last owner" in run("member", "set-role", "--org", "Acme", "--email", "olga@example.test",
                               "--role", "admin", ok=False)
    key = run("org", "api-key", "Acme", "--name", "bot").rsplit(" ", 1)[1].strip()

    org_id = system_session.scalar(select(Membership.org_id).limit(1))
    max_id = system_session.scalar(select(User.id).where(User.email == "max@example.test"))
    access = load_access(system_session, org_id, user_id=max_id)
    assert access.can_read("contacts") and not access.can_edit("contacts") and not access.can_read("company")
    # the agent, with the key the command printed, writes and reads for Max
    headers = {"Authorization": f"Bearer {key}"}
    sent = client.post("/api/v1/messages", headers=headers, content_type="application/json", data=json.dumps(
        {"channel": "web", "conversation": "c-1", "external_id": "m-1", "role": "user", "user_id": str(max_id),
         "text": "Mañana llamo a Talleres García"}))
    assert sent.status_code == 200, sent.get_data(as_text=True)
    hits = client.post("/api/v1/search", headers=headers, content_type="application/json",
                       data=json.dumps({"user_id": str(max_id), "query": "Talleres García"})).get_json()["hits"]
    assert [h["kind"] for h in hits][:1] == ["message"]

    out = run("user", "reset-password", "--email", "max@example.test")
    members.reset_password(system_session, _token(out, "reset-password"), "a brand new passphrase")
    system_session.commit()
    assert verify_password(system_session.scalar(select(User.password_hash).where(User.id == max_id)),
                           "a brand new passphrase")

    out = run("member", "remove", "--org", "Acme", "--email", "max@example.test", input="n\n", ok=False)
    assert "0 private memories are deleted" in out
    assert load_access(system_session, org_id, user_id=max_id) is not None  # said no: nothing happened
    run("member", "remove", "--org", "Acme", "--email", "max@example.test", "--yes")
    assert load_access(system_session, org_id, user_id=max_id) is None
    assert "suspended" in run("org", "suspend", "Acme")
    assert "Acme (suspended)  members=2" in run("org", "list")
    actions = set(system_session.scalars(select(AuditLog.action)))
    assert {"user.created", "org.created", "invitation.created", "invitation.accepted", "membership.added",
            "membership.permissions_changed", "api_key.created", "password_reset.issued", "membership.ended",
            "org.suspended"} <= actions
    assert system_session.scalar(select(AuditLog.actor_label).where(AuditLog.action == "org.created")) == \
        "memoria command"


def test_up_without_demo_on_an_empty_database_prints_a_one_time_setup_link(database, system_session):
    import os
    import signal
    import socket
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    from memory_core.adapters.security import sha256
    from memory_core.domain.models import AccountToken, Organization

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The test's own servers (same data dir): `up` reuses them and leaves them running when it stops.
    up = subprocess.Popen([sys.executable, "-m", "app", "up", "--no-demo", "--no-worker", "--port", str(port)],
                          cwd=Path(__file__).resolve().parent.parent, env=dict(os.environ),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out: list[str] = []
    threading.Thread(target=lambda: out.extend(iter(up.stdout.readline, "")), daemon=True).start()
    try:
        deadline = time.monotonic() + 90
        while "/setup/" not in "".join(out) and time.monotonic() < deadline and up.poll() is None:
            time.sleep(0.3)
        printed = "".join(out)
        assert f"http://127.0.0.1:{port}/setup/" in printed, printed
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=60)
    token = _token(printed, "setup")
    assert system_session.scalars(select(AccountToken.token_hash).where(AccountToken.purpose == "setup")).all() == \
        [sha256(token)]
    assert system_session.scalar(select(Organization.id).limit(1)) is None  # no demo
