"""Ingest: one message row + its outbox row per event, idempotent, for any channel; temporary
conversations and link codes store nothing."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from memory_core.adapters.db import Scope
from memory_core.domain.errors import Conflict, InvalidInput
from memory_core.domain.models import Conversation, Message, Outbox
from memory_core.learning.ingest import MAX_TEXT_CHARS, ingest_message, link_code_of
from tests.support.fake_openai import fake_openai  # noqa: F401  (fixture)


def _count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def _web(session, org, user, external_id="m1", text="Talleres García paga a 60 días ahora, no a 30", **kw):
    args = dict(channel="web", conversation="chat-1", external_id=external_id, org_id=org.id, user_id=user.id,
                phone=None, role="user", text=text)
    args.update(kw)
    return ingest_message(session, **args)


def test_a_message_and_its_outbox_row_are_written_together(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana)
    system_session.commit()
    msg = system_session.get(Message, r.message_id)
    assert (msg.channel, msg.text, msg.org_id, msg.user_id, msg.role) == (
        "web", "Talleres García paga a 60 días ahora, no a 30", org.id, ana.id, "user")
    assert system_session.scalars(select(Outbox.event).where(Outbox.message_id == msg.id)).all() == ["new"]
    assert r.stored and r.queued and not r.duplicate


def test_nothing_is_written_when_the_caller_rolls_back(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    _web(system_session, org, ana)
    system_session.rollback()
    assert _count(system_session, Message) == 0 and _count(system_session, Outbox) == 0


def test_a_retry_of_the_same_message_returns_the_existing_row_and_queues_nothing(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    first = _web(system_session, org, ana)
    system_session.commit()
    again = _web(system_session, org, ana)
    system_session.commit()
    assert again.duplicate and again.message_id == first.message_id and not again.queued
    assert _count(system_session, Message) == 1 and _count(system_session, Outbox) == 1


def test_an_edit_updates_the_text_and_queues_an_edited_event_once(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana, text="Acme paga a 30 días")
    system_session.commit()
    _web(system_session, org, ana, text="Acme paga a 45 días", event="edited")
    _web(system_session, org, ana, text="Acme paga a 45 días", event="edited")  # the webhook retried
    system_session.commit()
    msg = system_session.get(Message, r.message_id)
    assert msg.text == "Acme paga a 45 días" and msg.edited_at is not None
    events = system_session.scalars(select(Outbox.event).where(Outbox.message_id == msg.id).order_by(Outbox.id)).all()
    assert events == ["new", "edited"]


def test_a_delete_blanks_the_text_and_queues_a_deleted_event(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana)
    system_session.commit()
    _web(system_session, org, ana, text="", event="deleted")
    _web(system_session, org, ana, text="", event="deleted")
    system_session.commit()
    msg = system_session.get(Message, r.message_id)
    assert msg.deleted_at is not None and msg.text == ""
    events = system_session.scalars(select(Outbox.event).where(Outbox.message_id == msg.id).order_by(Outbox.id)).all()
    assert events == ["new", "deleted"]
    # An edit after the delete does not bring the text back.
    _web(system_session, org, ana, text="resucitado", event="edited")
    system_session.commit()
    assert system_session.get(Message, r.message_id).text == ""


def test_a_temporary_conversation_stores_nothing(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana, temporary=True)
    system_session.commit()
    assert r.temporary and r.message_id is None
    assert (_count(system_session, Conversation), _count(system_session, Message),
            _count(system_session, Outbox)) == (0, 0, 0)


def test_any_channel_name_works_without_code_changes(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana, channel="telegram", conversation="tg-77", external_id="tg-1")
    system_session.commit()
    assert system_session.get(Message, r.message_id).channel == "telegram"
    conv = system_session.scalar(select(Conversation).where(Conversation.external_id == "tg-77"))
    assert conv.channel == "telegram"


@pytest.mark.parametrize("field,value", [
    ("channel", "Web Chat"), ("channel", ""), ("channel", "x" * 40), ("role", "admin"), ("area", "secret_area"),
    ("text", "hola\x00adios"), ("text", "a" * (MAX_TEXT_CHARS + 1)), ("external_id", ""), ("phone", "not a phone"),
    ("visibility", "public"), ("event", "moved"),
])
def test_bad_input_is_refused_with_the_field_named_and_nothing_stored(factory, system_session, field, value):
    org = factory.org()
    ana = factory.member(org, role="owner")
    with pytest.raises(InvalidInput) as err:
        _web(system_session, org, ana, **{field: value})
    assert err.value.field == field
    system_session.rollback()
    assert _count(system_session, Message) == 0


def test_a_message_needs_its_writer(factory, system_session):
    org = factory.org()
    with pytest.raises(InvalidInput):
        ingest_message(system_session, channel="web", conversation="c", external_id="x", org_id=org.id,
                       user_id=None, phone=None, role="user", text="hola")


def test_an_external_id_of_another_writer_is_a_conflict_not_a_retry(factory, system_session):
    org = factory.org()
    ana, bea = factory.member(org, role="owner"), factory.member(org)
    _web(system_session, org, ana, conversation="chat-a")
    system_session.commit()
    with pytest.raises(Conflict):
        _web(system_session, org, bea, conversation="chat-b")


def test_a_phone_number_is_stored_in_one_international_form(factory, system_session):
    org = factory.org()
    factory.phone(org, "+34611222333")
    r = ingest_message(system_session, channel="whatsapp", conversation="wa-34611222333", external_id="wamid.1",
                       org_id=org.id, user_id=None, phone="34 611 222 333", role="user", text="hola")
    system_session.commit()
    assert system_session.get(Message, r.message_id).phone == "+34611222333"


def test_ingest_works_under_the_writers_row_level_security_scope(database, factory):
    org = factory.org()
    ana = factory.member(org, role="owner")
    scope = Scope(mode="principal", org_id=org.id, user_id=ana.id, read_areas=("general",))
    with database.unit_of_work(scope) as uow:
        r = _web(uow.session, org, ana)
        uow.commit()
    with database.unit_of_work(scope) as uow:
        again = _web(uow.session, org, ana)
        assert again.duplicate and again.message_id == r.message_id


# ------------------------------------------------------------------------------------ VINCULAR

@pytest.mark.parametrize("text,code", [
    ("VINCULAR ABC123", "ABC123"), ("vincular abc123", "ABC123"), ("  Vincular   aBc 123 ", "ABC123"),
    ("VINCULAR: abc-123", "ABC123"), ("vincular Q7K2MZ\n", "Q7K2MZ"),
])
def test_a_link_code_is_recognised_whatever_the_case_and_spacing(text, code):
    assert link_code_of(text) == code


@pytest.mark.parametrize("text", ["vincular", "VINCULAR ABC12", "VINCULAR ABC1234", "quiero vincular ABC123",
                                  "VINCULAR ABC123 por favor", "vinculares ABC123"])
def test_other_messages_are_not_link_codes(text):
    assert link_code_of(text) is None


def test_vincular_goes_to_the_link_handler_before_any_model_and_is_not_stored(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    calls = []

    def link_handler(session, phone, code, org_id=None):
        # A real handler: it writes the link in the same transaction as ingest.
        calls.append((phone, code))
        user = session.get(type(ana), ana.id)
        user.phone = phone
        return "¡Listo! Tu WhatsApp ya está vinculado a tu cuenta."

    r = ingest_message(system_session, channel="whatsapp", conversation="wa-1", external_id="wamid.9",
                       org_id=None, user_id=None, phone="+34600111222", role="user", text="Vincular q7k2mz",
                       link_handler=link_handler)
    system_session.commit()
    assert r.link_request and r.reply == "¡Listo! Tu WhatsApp ya está vinculado a tu cuenta."
    assert calls == [("+34600111222", "Q7K2MZ")]
    assert (_count(system_session, Message), _count(system_session, Outbox)) == (0, 0)
    system_session.refresh(ana)
    assert ana.phone == "+34600111222"


def test_vincular_on_the_web_is_an_ordinary_message(factory, system_session):
    org = factory.org()
    ana = factory.member(org, role="owner")
    r = _web(system_session, org, ana, text="VINCULAR ABC123")
    assert not r.link_request and r.stored


def test_vincular_reaches_identity_linking_by_default(factory, system_session):
    from memory_core.domain.models import PhoneAuthorization, User
    from memory_core.tenancy.linking import create_link_code

    org = factory.org()
    ana = factory.member(org, role="owner")
    code = create_link_code(system_session, ana.id, org.id)
    system_session.commit()
    spaced = f"vincular {code[:3].lower()} {code[3:].lower()}"
    r = ingest_message(system_session, channel="whatsapp", conversation="wa-ana", external_id="wamid.link",
                       org_id=None, user_id=None, phone="+34 600 111 222", role="user", text=spaced)
    system_session.commit()
    assert r.link_request and r.reply.startswith("Listo")
    assert system_session.get(User, ana.id).phone == "+34600111222"
    owner = system_session.scalar(select(PhoneAuthorization.user_id).where(PhoneAuthorization.phone == "+34600111222"))
    assert owner == ana.id
    assert _count(system_session, Message) == 0


def test_a_message_embedded_at_ingest_is_stored_with_its_vector_and_without_it_when_the_embedding_fails(
        factory, system_session, fake_openai):  # noqa: F811
    from memory_core.backends.openai_backend import OpenAIBackend
    from memory_core.domain.models import UsageLedger

    org = factory.org()
    ana = factory.member(org, role="owner")
    backend = OpenAIBackend(api_key="sk-test", base_url=fake_openai.base_url, embed_model="text-embedding-3-small",
                            timeout=2.0, max_retries=0)
    embedded = _web(system_session, org, ana, external_id="m1", embedder=backend)
    fake_openai.fail_next(1, "status", status=503, path="/embeddings")
    failed = _web(system_session, org, ana, external_id="m2", embedder=backend)
    system_session.commit()

    first, second = system_session.get(Message, embedded.message_id), system_session.get(Message, failed.message_id)
    assert first.embedding is not None and first.embed_model == "text-embedding-3-small"
    assert embedded.embedded is not None and embedded.text == first.text
    assert failed.stored and failed.queued and second.embedding is None  # stored all the same: the worker embeds it
    ledger = system_session.scalars(select(UsageLedger.message_id).where(UsageLedger.purpose == "embed")).all()
    assert ledger == [first.id]


def test_the_org_s_own_exclusions_redact_in_a_new_and_in_an_existing_conversation(factory, system_session):
    """The conversation read brings the org's exclusion list: the first message (a new conversation) and the
    next (one that exists) are both stored with the org's secret replaced, and another org's rule is not applied."""
    from memory_core.domain.models import PolicyExclusion

    org, other = factory.org(), factory.org()
    ana = factory.member(org, role="owner")
    system_session.add_all([
        PolicyExclusion(org_id=org.id, kind="secret", name="proyecto_fenix", pattern=r"proyecto f(e|é)nix"),
        PolicyExclusion(org_id=other.id, kind="secret", name="talleres", pattern=r"talleres")])
    system_session.commit()
    first = _web(system_session, org, ana, external_id="m1", text="el proyecto Fénix arranca el lunes")
    second = _web(system_session, org, ana, external_id="m2", text="Talleres García y el proyecto Fenix, a 60 días")
    system_session.commit()
    texts = [system_session.get(Message, r.message_id).text for r in (first, second)]
    assert texts[0].startswith("el [secret") and "Fénix" not in texts[0]
    assert texts[1].startswith("Talleres García y el [secret") and "Fenix" not in texts[1]
    assert first.conversation_id == second.conversation_id
