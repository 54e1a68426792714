"""Issue 13, the flow: a message's own send time, corrections that supersede (and nothing else), partly
named subjects, one policy decision; with the local backend and the real database."""
from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from sqlalchemy import select

from memory_core.backends import get_backend
from memory_core.domain import policy
from memory_core.domain.access import load_access
from memory_core.domain.errors import InvalidSentAt
from memory_core.domain.ladder import attribute_family, write_memory
from memory_core.domain.model_port import Fact, GateDecision
from memory_core.domain.models import Memory, Message
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import is_correction, process_message
from memory_core.learning.subjects import resolve_subject

MONDAY = dt.datetime(2025, 3, 3, 10, 0, tzinfo=dt.timezone.utc)


def tell(session, org, user, text, backend, *, sent_at=MONDAY, conversation="chat-1"):
    """Ingest one message as sent at `sent_at`, let the worker process it, commit; returns the outcome."""
    r = ingest_message(session, channel="web", conversation=conversation, external_id=f"m-{uuid.uuid4()}",
                       org_id=org.id, user_id=user.id, phone=None, role="user", text=text, sent_at=sent_at)
    session.commit()
    out = process_message(session, r.message_id, backend)
    session.commit()
    return out


def active(session, **where):
    q = select(Memory).where(Memory.status == "active")
    for k, v in where.items():
        q = q.where(getattr(Memory, k) == v)
    return list(session.scalars(q.order_by(Memory.created_at)))


# ------------------------------------------------------------------------------------ time

def test_imported_history_keeps_its_send_time(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = ingest_message(system_session, channel="web", conversation="old", external_id="h-1", org_id=org.id,
                       user_id=ana.id, phone=None, role="user", text="Hola",
                       sent_at=dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    fresh = ingest_message(system_session, channel="web", conversation="old", external_id="h-2", org_id=org.id,
                           user_id=ana.id, phone=None, role="user", text="Hola otra vez")
    system_session.commit()
    assert system_session.get(Message, r.message_id).sent_at == dt.datetime(2023, 5, 8, 11, 56, tzinfo=dt.timezone.utc)
    assert abs(system_session.get(Message, fresh.message_id).sent_at - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(
        minutes=1)


@pytest.mark.parametrize("sent_at, says", [
    (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1), "future"),
    (dt.datetime(2025, 3, 3, 10, 0), "zone"),
])
def test_a_send_time_in_the_future_or_without_a_zone_is_refused(factory, system_session, sent_at, says):
    org = factory.org()
    ana = factory.member(org, role="owner")
    with pytest.raises(InvalidSentAt) as exc:
        ingest_message(system_session, channel="web", conversation="c", external_id="x", org_id=org.id,
                       user_id=ana.id, phone=None, role="user", text="Hola", sent_at=sent_at)
    assert exc.value.field == "sent_at" and says in str(exc.value)
    assert system_session.scalar(select(Message.id)) is None


def test_a_few_minutes_of_clock_drift_are_accepted(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = ingest_message(system_session, channel="web", conversation="c", external_id="x", org_id=org.id,
                       user_id=ana.id, phone=None, role="user", text="Hola",
                       sent_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=2))
    assert r.stored


@pytest.mark.parametrize("text, value", [
    ("La reunión con Acme es mañana", "reunión con Acme"),
    ("Our meeting with Acme is tomorrow", "meeting with Acme"),
])
def test_a_relative_date_is_resolved_against_when_the_message_was_sent(factory, system_session, backend, text,
                                                                      value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    tell(system_session, org, ana, text, backend, sent_at=MONDAY)  # processed today, sent on 3 March 2025
    [event] = active(system_session, category="event")
    assert event.event_date == dt.date(2025, 3, 4) and value in event.value
    assert event.valid_from == MONDAY  # the fact is known since the message was sent


def test_the_api_takes_sent_at_and_refuses_a_future_one_with_a_message(client, factory, system_session):
    from memory_core.tenancy.api_keys import create_api_key

    org = factory.org()
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "bot", created_by=ana.id, actor_label="test")
    system_session.commit()

    def post(**extra):
        body = {"channel": "web", "conversation": "chat-1", "external_id": f"m-{uuid.uuid4()}",
                "user_id": str(ana.id), "role": "user", "text": "Yesterday we closed the Acme deal", **extra}
        return client.post("/api/v1/messages", data=json.dumps(body), content_type="application/json",
                           headers={"Authorization": f"Bearer {key}"})

    ok = post(sent_at="2024-06-01T09:30:00+02:00")
    assert ok.status_code == 200, ok.get_data(as_text=True)
    stored = system_session.get(Message, uuid.UUID(ok.get_json()["message_id"]))
    assert stored.sent_at == dt.datetime(2024, 6, 1, 7, 30, tzinfo=dt.timezone.utc)
    future = post(sent_at=(dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat())
    assert future.status_code == 400
    err = future.get_json()["error"]
    assert err["field"] == "sent_at" and "future" in err["message"]
    naive = post(sent_at="2024-06-01T09:30:00")
    assert naive.status_code == 400 and naive.get_json()["error"]["field"] == "sent_at"
    doc = client.get("/api/v1/openapi.json").get_json()
    assert "sent_at" in json.dumps(doc["components"]) if "components" in doc else "sent_at" in json.dumps(doc)


def test_the_client_sends_the_send_time(app, factory, system_session):
    import threading

    from werkzeug.serving import make_server

    from client.memoria_client import ApiError, MemoriaClient
    from memory_core.tenancy.api_keys import create_api_key

    org = factory.org()
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "client test", created_by=ana.id, actor_label="test")
    system_session.commit()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = MemoriaClient(f"http://127.0.0.1:{server.server_port}", key)
        sent = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.timezone.utc)
        r = client.ingest(channel="web", conversation="c", external_id="m-1", role="user", text="Hi",
                          user_id=str(ana.id), sent_at=sent)
        assert system_session.get(Message, uuid.UUID(r["message_id"])).sent_at == sent
        with pytest.raises(ApiError) as exc:
            client.ingest(channel="web", conversation="c", external_id="m-2", role="user", text="Hi",
                          user_id=str(ana.id), sent_at="2999-01-01T00:00:00+00:00")
        assert exc.value.status == 400 and exc.value.field == "sent_at"
    finally:
        server.shutdown()
        thread.join(timeout=10)


# ------------------------------------------------------------------------------------ corrections

def _write(session, access, org, subject, attribute, value, sentence, category="company", corrects=False):
    b = get_backend()
    return write_memory(session, access, org, Fact(subject=subject, attribute=attribute, value=value,
                                                   sentence=sentence, category=category, corrects=corrects),
                        embed=lambda texts: b.embed(texts)[0], embed_model=b.embed_model)


@pytest.mark.parametrize("first, second", [
    (("Ramón", "Ramón lleva las cuentas"), ("Lucía Sanchis", "Ahora las lleva Lucía Sanchis")),
    (("Ramón", "Ramón keeps our books"), ("Lucía Sanchis", "Now Lucía Sanchis keeps them")),
])
def test_the_person_who_keeps_the_books_changes_and_one_fact_stays_active(factory, system_session, first, second):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    old = _write(system_session, access, org, "org", "persona_contacto", *first).memory
    new = _write(system_session, access, org, "org", "contacto", *second, corrects=True)
    system_session.commit()
    assert new.outcome == "superseded" and new.superseded.id == old.id
    assert [m.value for m in active(system_session, subject="org")] == ["Lucía Sanchis"]


@pytest.mark.parametrize("first, second", [
    ("Being a mom is awesome", "Thanks so much, Melanie!"),
    ("I'm wrapping up the business plan and looking for investors", "I'm using it to stay organized"),
    ("Ser madre es lo mejor que me ha pasado", "¡Muchas gracias, Marta!"),
    ("Estoy cerrando el plan de negocio y buscando inversores", "Lo uso para organizarme"),
])
def test_a_note_never_replaces_another_note(factory, system_session, first, second):
    org = factory.org()
    mel = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=mel.id)
    _write(system_session, access, org, "self", "nota_mom", first, first, category="person")
    r = _write(system_session, access, org, "self", "nota_mom", second, second, category="person")
    system_session.commit()
    assert r.outcome == "learnt"
    assert sorted(m.value for m in active(system_session, subject="self")) == sorted([first, second])
    assert system_session.scalar(select(Memory.id).where(Memory.status == "superseded")) is None


@pytest.mark.parametrize("first, second", [
    ("I love painting sunsets", "I really love painting sunsets"),
    ("Me encanta el pádel", "Me encanta mucho el pádel"),
])
def test_a_note_that_says_the_same_again_merges(factory, system_session, first, second):
    org = factory.org()
    mel = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=mel.id)
    _write(system_session, access, org, "self", "aficiones", first, first, category="person")
    r = _write(system_session, access, org, "self", "nota_hobby", second, second, category="person")
    system_session.commit()
    assert r.outcome == "merged" and [m.value for m in active(system_session, subject="self")] == [first]


@pytest.mark.parametrize("first, second", [
    ("Vivo en Valencia", "Ya no vivo en Valencia, ahora vivo en Madrid"),
    ("I live in Boston", "I no longer live in Boston, I live in Denver now"),
])
def test_a_correction_replaces_the_fact_it_corrects_under_another_attribute(factory, system_session, backend,
                                                                           first, second):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    _write(system_session, access, org, "self", "nota_vivo", first, first, category="person")
    assert is_correction(second)
    r = _write(system_session, access, org, "self", "ubicacion", second, second, category="person",
               corrects=is_correction(second))
    system_session.commit()
    assert r.outcome == "superseded" and [m.value for m in active(system_session, subject="self")] == [second]


def test_the_same_sentence_without_a_correction_word_is_added_not_replaced(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    _write(system_session, access, org, "self", "nota_vivo", "I live in Boston", "I live in Boston", category="person")
    r = _write(system_session, access, org, "self", "nota_denver", "I live in Denver too", "I live in Denver too",
               category="person")
    system_session.commit()
    assert r.outcome == "learnt" and len(active(system_session, subject="self")) == 2


def test_correction_words_in_both_languages():
    for text in ("Ahora las lleva Lucía", "Ya no trabajo allí", "Now Lucía keeps them", "I no longer work there"):
        assert is_correction(text)
    for text in ("Ramón lleva las cuentas", "Being a mom is awesome", "Lucía keeps the books"):
        assert not is_correction(text)


def test_families_name_the_same_attribute_under_its_variants():
    assert attribute_family("condiciones_de_pago") == "plazo_pago"
    assert attribute_family("contacto") == "persona_contacto"
    assert attribute_family("hijo_juan") == "hijo"
    assert attribute_family("nota_viaje__2") == "nota_viaje"


# ------------------------------------------------------------------------------------ subjects named in part

@pytest.mark.parametrize("first, correction", [
    ("Hierros Olano nos paga a 30 días", "Ahora Olano paga a 60 días"),
    ("Olano Steel pays us at 30 days", "Now Olano pays at 60 days"),
])
def test_a_correction_naming_a_business_by_part_of_its_name_keeps_one_subject(factory, system_session, backend,
                                                                              first, correction):
    org = factory.org()
    ana = factory.member(org, role="owner")
    tell(system_session, org, ana, first, backend)
    tell(system_session, org, ana, correction, backend, sent_at=MONDAY + dt.timedelta(days=1))
    facts = active(system_session, attribute="plazo_pago")
    assert [(m.subject.split(":")[0], m.value) for m in facts] == [("name", "60 días")]
    assert len({m.subject for m in system_session.scalars(select(Memory))}) == 1


def test_partial_and_variant_names_resolve_but_two_businesses_sharing_a_word_stay_apart():
    class C:
        def __init__(self, name, aliases=()):
            self.id, self.name, self.aliases = uuid.uuid4(), name, list(aliases)

    garcia = C("Talleres García S.L.")
    assert resolve_subject("name:talleres garcia", [garcia], []) == f"contact:{garcia.id}"
    assert resolve_subject("name:olano", [], ["hierros olano"]) == "name:hierros olano"
    assert resolve_subject("name:hierros", [], ["hierros olano", "hierros martin"]) == "name:hierros"
    assert resolve_subject("name:hierros martin", [], ["hierros olano"]) == "name:hierros martin"
    levante = [C("Construcciones Levante"), C("Farmacia Levante")]
    assert resolve_subject("name:farmacia levante", levante, []) == f"contact:{levante[1].id}"
    assert resolve_subject("name:levante", levante, []) == "name:levante"


# ------------------------------------------------------------------------------------ one policy

def _gate(**p):
    base = dict(remember=0.9, category={"company": 1.0}, scope={"shared": 1.0}, corrects=0.0, insult=0.0,
                special=0.0, bank_account=0.0)
    return GateDecision(**(base | p))


def test_one_policy_decision_for_background_and_explicit_in_one_language():
    clean = policy.PolicyVerdict()
    secret = policy.PolicyVerdict(secret="password")
    special = policy.PolicyVerdict(special="health")
    assert policy.decide(secret, "x").refused == "secret"
    assert policy.decide(clean, "Ramón es un inútil", _gate()).refused == "insult"
    assert policy.decide(clean, "Ramon is useless", _gate()).refused == "insult"
    assert policy.decide(special, "Tengo diabetes", _gate()).refused == "special"
    assert policy.decide(special, "Tengo diabetes", _gate(), explicit=True) == policy.Ruling(special=True)
    assert policy.decide(special, "My wife has diabetes", _gate(), explicit=True).refused == "special"
    reasons = [policy.decide(v, t, g, explicit=e).reason for v, t, g, e in (
        (secret, "x", None, False), (clean, "idiot", _gate(), True), (special, "my wife", _gate(), True),
        (special, "x", _gate(), False))]
    assert all(r and r.isascii() for r in reasons)  # English, like every other reason the pipeline gives


def test_remember_imports_no_private_name_of_the_pipeline():
    import ast
    import inspect

    import memory_core.learning.remember as remember

    tree = ast.parse(inspect.getsource(remember))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert not [name for name in imported if name.startswith("_")]
