"""A request's sessions: a read in one scope that decides the next (the key's org, then the person) is one
transaction on one connection, and row security sees the new scope at once."""
from __future__ import annotations

import dataclasses
import json

from sqlalchemy import select, text

from memory_core.adapters.config import get_settings
from memory_core.adapters.db import RequestSessions, org_scope, person_scope
from memory_core.domain.models import Conversation, Membership, Memory
from memory_core.tenancy.api_keys import create_api_key

_TX = text("select txid_current(), current_setting('memoria.mode', true), current_setting('memoria.user_id', true)")


def test_a_moved_session_works_in_the_persons_scope_in_the_same_transaction(database, factory):
    org = factory.org("Movida")
    ana = factory.member(org, role="owner")
    own = factory.memory(org, level="personal", subject="self", attribute="ciudad", value="Bilbao", owner=ana)
    sessions = RequestSessions(database)
    try:
        s = sessions.get(org_scope(org.id))
        assert s.scalar(select(Membership.role).where(Membership.user_id == ana.id)) == "owner"
        tx, mode, _ = s.execute(_TX).one()
        assert mode == "org" and s.scalar(select(Memory.id).where(Memory.id == own.id)) is None

        moved = sessions.move(org_scope(org.id), person_scope(ana.id))
        assert moved is s and sessions.get(person_scope(ana.id)) is s and not sessions.has(org_scope(org.id))
        assert tuple(moved.execute(_TX).one()) == (tx, "principal", str(ana.id))
        # row security reads the new scope: the person's own memory, which org scope does not show
        assert moved.scalar(select(Memory.id).where(Memory.id == own.id)) == own.id
        # a later request for the org scope gets a session of its own, in org scope
        again = sessions.get(org_scope(org.id))
        assert again is not s and again.execute(_TX).one()[1] == "org"
    finally:
        sessions.close()


def test_a_session_that_wrote_is_never_moved(database, factory):
    org = factory.org("Escrita")
    ana = factory.member(org, role="owner")
    sessions = RequestSessions(database)
    try:
        s = sessions.get(org_scope(org.id))
        s.add(Conversation(channel="web", external_id="c1", org_id=org.id, user_id=ana.id))
        s.flush()
        other = sessions.move(org_scope(org.id), person_scope(ana.id))
        assert other is not s and other.execute(_TX).one()[1] == "principal"
        assert s.in_transaction() and sessions.has(org_scope(org.id))  # its write still waits for a commit
    finally:
        sessions.close()


def test_an_agents_ingest_and_context_check_out_one_connection_each(database, redis_conn, factory, system_session,
                                                                    tmp_path):
    from app import create_app
    from memory_core.tenancy.api_keys import VERIFIED

    VERIFIED.forget()
    org = factory.org("Una conexión")
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()
    app = create_app({"TESTING": True}, settings=dataclasses.replace(get_settings(), profile_dir=str(tmp_path)))
    client = app.test_client()
    headers = {"Authorization": f"Bearer {key}"}

    def ingest(external_id: str):
        got = client.post("/api/v1/messages", headers=headers, json={
            "channel": "web", "conversation": "c1", "external_id": external_id, "role": "user",
            "text": "Hola, soy Ana", "user_id": str(ana.id)})
        assert got.status_code == 200, got.get_data(as_text=True)
        return got.get_json()

    def counts() -> dict:
        app.wsgi_app.write()
        [written] = tmp_path.glob("requests-*.json")
        return json.loads(written.read_text())

    ingest("m0")  # the key is looked up on its first use (then trusted for a few seconds): not counted
    before = counts()["POST /api/v1/messages"]["checkouts"]
    got = ingest("m1")
    block = client.post("/api/v1/context", headers=headers, json={
        "user_id": str(ana.id), "message": "Hola", "conversation_id": got["conversation_id"],
        "message_id": got["message_id"]})
    assert block.status_code == 200 and block.get_json()["trace_id"]
    after = counts()
    assert after["POST /api/v1/messages"]["checkouts"] - before == 1
    assert after["POST /api/v1/context"]["checkouts"] == 1


def test_a_persons_changed_access_applies_to_their_very_next_request(client, factory, system_session):
    """A person's requests open their transaction in the scope their access gave last time: a grant, a
    narrowing or a removal still applies at once (the access is read anew every request)."""
    from memory_core.tenancy.api_keys import VERIFIED

    VERIFIED.forget()
    org = factory.org("Cambios")
    owner = factory.member(org, role="owner")
    marta = factory.member(org, role="member")  # reads "general" only
    factory.memory(org, subject="org", attribute="plazo_pago", value="Pagamos a 60 días", area="contacts")
    _, key = create_api_key(system_session, org.id, "bot", created_by=owner.id, actor_label="test")
    system_session.commit()
    headers = {"Authorization": f"Bearer {key}"}

    def block() -> tuple[int, str]:
        got = client.post("/api/v1/context", headers=headers, json={"user_id": str(marta.id), "message": "hola"})
        return got.status_code, (got.get_json() or {}).get("text", "")

    status, text = block()
    assert status == 200 and "60 días" not in text
    membership = system_session.scalar(select(Membership).where(Membership.user_id == marta.id))
    membership.permissions = {"contacts": "read"}
    system_session.commit()
    assert "60 días" in block()[1]
    membership.permissions = {}
    system_session.commit()
    assert "60 días" not in block()[1]
    system_session.delete(membership)
    system_session.commit()
    assert block()[0] == 404


def test_prepared_statements_under_row_security_see_each_transactions_scope(database, factory):
    """psycopg prepares a statement run 5 times on a connection, and PostgreSQL may then run one generic plan:
    the scope set at each transaction's start still decides every row (the policies read the settings when
    the plan runs, never when it was made), even with the generic plan forced."""
    org = factory.org("Preparadas")
    ana, luis = factory.member(org, role="member"), factory.member(org, role="member")
    mine = {who.id: factory.memory(org, level="personal", subject="self", attribute="ciudad", value=city,
                                   owner=who).id for who, city in ((ana, "Bilbao"), (luis, "Soria"))}
    s = database.session(person_scope(ana.id))
    try:
        s.execute(text("select 1"))
        s.connection().exec_driver_sql("set plan_cache_mode = force_generic_plan")
        s.commit()
        read = select(Memory.id).where(Memory.id.in_(list(mine.values())))
        for i in range(12):
            who = (ana, luis)[i % 2]
            s.info["scope"] = person_scope(who.id)
            assert s.scalars(read).all() == [mine[who.id]]
            s.commit()
        assert s.connection().connection.driver_connection.prepare_threshold is not None  # psycopg prepares
    finally:
        s.rollback()
        s.connection().exec_driver_sql("reset plan_cache_mode")
        s.commit()
        s.close()
