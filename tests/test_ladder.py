"""The write ladder: who a fact belongs to, and supersede instead of overwrite."""
from __future__ import annotations

import uuid

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memory_core.domain.access import load_access
from memory_core.domain.ladder import Source, activate_proposal, write_memory
from memory_core.domain.model_port import Fact
from memory_core.domain.models import AuditLog, Memory, MemorySource
from tests.support.statements import sent_statements


def _fact(subject, attribute, value, category="customer", sentence=None):
    return Fact(subject=subject, attribute=attribute, value=value, category=category,
                sentence=sentence or f"{subject} {attribute} {value}")


def _active(session, subject):
    return session.scalars(select(Memory).where(Memory.subject == subject, Memory.status == "active")).all()


def test_editor_shares_a_customer_fact_in_the_contacts_area(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    c = factory.contact(org)
    access = load_access(system_session, org.id, user_id=admin.id)
    r = write_memory(system_session, access, org, _fact(f"contact:{c.id}", "plazo_pago", "60 días"))
    system_session.commit()
    assert r.outcome == "learnt"
    assert (r.memory.level, r.memory.area, r.memory.owner_user_id) == ("shared", "contacts", None)


def test_different_value_supersedes_and_keeps_the_old_version(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    first = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "30 días")).memory
    second = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días"))
    system_session.commit()
    assert second.outcome == "superseded"
    system_session.refresh(first)
    assert first.status == "superseded" and first.valid_to is not None and first.superseded_by == second.memory.id
    assert [m.value for m in _active(system_session, "contact:x")] == ["60 días"]


def _updates_of_memories(database):
    return sent_statements(database.system_engine, lambda statement: statement.startswith("UPDATE memories"))


def test_a_supersede_closes_the_old_version_and_points_it_at_the_new_one_in_one_update(
        factory, system_session, database):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    first = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "30 días")).memory
    with _updates_of_memories(database) as updates:
        second = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días")).memory
        system_session.commit()
    # Every UPDATE of a row puts its vector in the HNSW graph again: the old version is written once.
    assert len(updates) == 1, updates
    system_session.refresh(first)
    assert (first.status, first.superseded_by) == ("superseded", second.id)
    assert first.valid_to == second.valid_from
    assert second.id.version == 7 and second.id > first.id  # made here, ordered like the server's ids


def test_a_version_cannot_point_at_a_row_that_does_not_exist(factory, system_session):
    org = factory.org()
    old = factory.memory(org, subject="contact:x", attribute="plazo_pago", value="30 días")
    old.status, old.superseded_by = "superseded", uuid.uuid4()
    system_session.flush()  # checked at commit, so a new version may be pointed at before it is inserted
    with pytest.raises(IntegrityError, match="memories_superseded_by_fkey"):
        system_session.commit()


def test_a_fact_heard_again_gains_a_source_and_confidence_until_it_is_sure(factory, system_session, database):
    org = factory.org()
    admin = factory.member(org, role="admin")
    conversation = factory.conversation(org, admin)
    access = load_access(system_session, org.id, user_id=admin.id)
    said = [factory.message(conversation, f"Talleres García paga a 60 días ({n})") for n in range(3)]
    fact = Fact(subject="contact:x", attribute="plazo_pago", value="60 días", category="customer",
                sentence="Talleres García paga a 60 días.", confidence=0.9)
    first = write_memory(system_session, access, org, fact, source=Source(said[0].id, conversation.id)).memory
    again = write_memory(system_session, access, org, fact, source=Source(said[1].id, conversation.id))
    assert again.outcome == "merged" and again.memory is first and first.confidence == pytest.approx(0.95)
    system_session.commit()
    first.confidence = 1.0
    system_session.commit()
    with _updates_of_memories(database) as updates:
        sure = write_memory(system_session, access, org, fact, source=Source(said[2].id, conversation.id))
        system_session.commit()
    # Already sure: the row is left as it was (no UPDATE), and the third message is one more of its sources.
    assert sure.outcome == "merged" and updates == []
    assert set(system_session.scalars(select(MemorySource.message_id).where(MemorySource.memory_id == first.id))) \
        == {m.id for m in said}
    assert sorted(system_session.scalars(select(AuditLog.action).where(AuditLog.target_id == str(first.id)))) \
        == ["memory.learnt", "memory.merged", "memory.merged"]


def test_same_value_merges_instead_of_duplicating(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días"))
    r = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 Días."))
    system_session.commit()
    assert r.outcome == "merged" and len(_active(system_session, "contact:x")) == 1


def test_read_only_writer_keeps_a_private_memory_and_proposes(factory, system_session):
    org = factory.org()
    marta = factory.member(org, permissions={"contacts": "read"})
    access = load_access(system_session, org.id, user_id=marta.id)
    r = write_memory(system_session, access, org, _fact("contact:x", "dias_entrega", "martes"))
    system_session.commit()
    assert r.outcome == "proposed"
    assert (r.memory.level, r.memory.owner_user_id, r.memory.status) == ("private", marta.id, "active")
    assert (r.proposal.level, r.proposal.status, r.proposal.proposal_kind) == ("shared", "proposed", "low_permission")


def test_confirmation_mode_waits_for_the_author_unless_explicit(factory, system_session):
    org = factory.org(memory_mode="confirmation")
    owner = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=owner.id)
    bg = write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días"))
    assert bg.outcome == "proposed" and bg.proposal.proposal_kind == "confirmation"
    ex = write_memory(system_session, access, org, _fact("contact:y", "plazo_pago", "30 días"), explicit=True)
    assert ex.outcome == "learnt" and ex.memory.level == "shared"


def test_bank_account_change_is_an_unverified_proposal_that_never_replaces_the_old_one(factory, system_session):
    org = factory.org()
    owner = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=owner.id)
    old = factory.memory(org, subject="contact:x", attribute="cuenta_bancaria", value="ES91 0001",
                         category="customer", area="contacts")
    r = write_memory(system_session, access, org, _fact("contact:x", "cuenta_bancaria", "ES79 0002"), explicit=True)
    system_session.commit()
    assert r.outcome == "proposed" and r.proposal.proposal_kind == "bank_account"
    assert r.proposal.replaces_id == old.id
    assert [m.value for m in _active(system_session, "contact:x")] == ["ES91 0001"]
    approved = activate_proposal(system_session, r.proposal, decided_by=owner.id)
    system_session.commit()
    assert approved.outcome == "superseded"
    assert [m.value for m in _active(system_session, "contact:x")] == ["ES79 0002"]
    system_session.refresh(old)
    assert old.status == "superseded" and old.superseded_by == r.proposal.id


def test_personal_fact_is_owned_by_the_phone_when_no_account_is_behind_it(factory, system_session):
    org = factory.org()
    factory.phone(org, "+34611222333")
    access = load_access(system_session, org.id, phone="+34611222333")
    r = write_memory(system_session, access, org, _fact("self", "nombre", "Pablo", category="person"))
    system_session.commit()
    assert (r.memory.level, r.memory.owner_user_id, r.memory.owner_phone, r.memory.org_id) == (
        "personal", None, "+34611222333", None)


def test_caller_may_ask_for_less_but_never_more(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    r = write_memory(system_session, access, org, _fact("contact:x", "nota", "a"), level="private")
    assert r.memory.level == "private"
    r2 = write_memory(system_session, access, org, _fact("self", "nombre", "Ana", category="person"), level="shared")
    assert r2.memory.level == "personal"


def test_meaning_match_with_another_attribute_name_supersedes(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    same_vec = [1.0] + [0.0] * 511  # the two sentences mean the same thing
    embed = lambda texts: [same_vec for _ in texts]  # noqa: E731
    write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días"), embed=embed, embed_model="t")
    r = write_memory(system_session, access, org, _fact("contact:x", "condiciones_cobro", "90 días"),
                     embed=embed, embed_model="t")
    system_session.commit()
    assert r.outcome == "superseded"
    assert [m.value for m in _active(system_session, "contact:x")] == ["90 días"]


def test_a_note_said_again_in_other_words_merges_by_the_meaning_of_the_stored_vector(factory, system_session):
    """The ladder reads the subject's stored vectors in binary (vector_send) and compares them with the new
    fact's: read wrong (byte order, offset), the same meaning would look unrelated and be added twice."""
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    rng = np.random.default_rng(7)
    meaning = rng.standard_normal(512).astype(np.float32)
    meaning /= np.linalg.norm(meaning)
    nearby = meaning + np.float32(0.01) * rng.standard_normal(512).astype(np.float32)
    nearby /= np.linalg.norm(nearby)
    vectors = {"Talleres García cierra en agosto.": meaning, "En agosto Talleres García está cerrado.": nearby}

    def embed(texts):
        return [vectors[t].tolist() for t in texts]

    first = write_memory(system_session, access, org, _fact("contact:x", "nota_vacaciones", "cierra en agosto",
                                                            sentence="Talleres García cierra en agosto."),
                         embed=embed, embed_model="t").memory
    system_session.commit()
    system_session.expunge_all()  # what follows reads the stored row, not the one in memory
    again = write_memory(system_session, access, org, _fact("contact:x", "nota_agosto", "cerrado en agosto",
                                                            sentence="En agosto Talleres García está cerrado."),
                         embed=embed, embed_model="t")
    assert again.outcome == "merged" and again.memory.id == first.id
    assert np.array_equal(np.asarray(again.memory.embedding, dtype=np.float32), meaning)


def test_every_write_is_audited_in_the_same_transaction(factory, system_session):
    org = factory.org()
    admin = factory.member(org, role="admin")
    access = load_access(system_session, org.id, user_id=admin.id)
    write_memory(system_session, access, org, _fact("contact:x", "plazo_pago", "60 días"))
    system_session.rollback()
    assert system_session.scalar(select(AuditLog.id)) is None
    assert _active(system_session, "contact:x") == []


def test_two_children_and_two_dated_events_are_separate_facts(factory, system_session):
    import datetime as dt

    org = factory.org()
    user = factory.member(org)
    access = load_access(system_session, org.id, user_id=user.id)
    for name in ("Juan", "Pedro"):
        write_memory(system_session, access, org, _fact("self", "hijo", name, category="person"))
    for day, what in ((3, "Madrid"), (9, "Feria")):
        write_memory(system_session, access, org, Fact(subject="self", attribute="evento", value=what,
                                                        sentence=what, category="event",
                                                        event_date=dt.date(2026, 12, day)))
    system_session.commit()
    assert sorted(m.attribute for m in _active(system_session, "self")) == [
        "evento_2026-12-03", "evento_2026-12-09", "hijo_juan", "hijo_pedro"]


def test_business_fact_without_an_org_is_refused_not_written(factory, system_session):
    factory.phone(factory.org(), "+34611999000")
    from memory_core.domain.access import Access, Principal

    access = Access(principal=Principal(phone="+34611999000"), org_id=None)
    r = write_memory(system_session, access, None, _fact("contact:x", "plazo_pago", "60 días"))
    assert r.outcome == "refused" and r.memory is None
    assert _active(system_session, "contact:x") == []
