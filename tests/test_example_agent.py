"""The example agent (examples/agent.py) plays the Monday-web / Thursday-WhatsApp story over real HTTP:
the app served by werkzeug in a thread, a real `memoria worker` process draining the outbox."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from memory_core.domain.models import Memory, PhoneAuthorization, User
from memory_core.tenancy.api_keys import create_api_key

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def worker(servers, redis_conn, tmp_path):
    log = open(tmp_path / "worker.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "app", "worker"], cwd=ROOT, env=dict(os.environ),
                            stdout=log, stderr=subprocess.STDOUT)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


@pytest.mark.slow
def test_monday_on_the_web_reaches_thursday_on_whatsapp(live_server, worker, factory, system_session, tmp_path):
    from client.memoria_client import MemoriaClient
    from examples.agent import story

    org = factory.org("Sumalos Demo")
    ana = factory.member(org, role="owner", name="Ana Pérez")
    factory.contact(org, name="Talleres García S.L.", tax_id="B12345678", aliases=["Talleres García"])
    _, key = create_api_key(system_session, org.id, "example agent", created_by=ana.id, actor_label="test")
    system_session.commit()
    phone = "+34600123456"

    said: list[str] = []
    try:
        turns = story(MemoriaClient(live_server, key, timeout=30), user_id=str(ana.id), phone=phone, say=said.append)
    finally:
        print("\n".join(said))
        print((tmp_path / "worker.log").read_text()[-3000:])

    # Monday: learnt in the background by the worker, shared in the org's contacts area
    system_session.expire_all()
    term = system_session.scalar(select(Memory).where(Memory.status == "active", Memory.value.contains("60")))
    assert term is not None and term.level == "shared" and term.area == "contacts"
    assert turns["remember"].remembered["outcome"] == "learnt"
    # the number was linked by the code it sent, to Ana, with at most her permissions
    assert system_session.scalar(select(User.phone).where(User.id == ana.id)) == phone
    assert system_session.scalar(select(PhoneAuthorization.user_id).where(PhoneAuthorization.phone == phone)) == ana.id
    # Thursday: a WhatsApp turn that names nobody's payment terms gets them from memory
    thursday = turns["thursday"]
    assert thursday.channel == "whatsapp" and "60 días" in thursday.block["text"]
    assert str(term.id) in thursday.block["memory_ids"]
    assert "60 días" in thursday.reply and str(term.id) in thursday.used
