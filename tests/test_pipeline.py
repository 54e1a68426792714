"""The worker's unit: index, gate, policy, extraction, ladder, notification; with the local backend."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from memory_core.domain.access import Principal
from memory_core.domain.errors import Conflict, NotFound
from memory_core.domain.models import (
    Membership,
    Memory,
    MemorySource,
    Message,
    Notification,
    PolicyExclusion,
    UsageLedger,
)
from memory_core.learning.ingest import ingest_message
from memory_core.learning.pipeline import process_message, undo_learnt


def say(session, org, text, *, user=None, phone=None, channel="web", conversation="chat-1", role="user",
        external_id=None, event="new"):
    """Ingest one message and commit; returns its id."""
    r = ingest_message(session, channel=channel, conversation=conversation,
                       external_id=external_id or f"{conversation}-{hash((text, role))}",
                       org_id=org.id if org else None,
                       user_id=user.id if user else None, phone=phone, role=role, text=text, event=event)
    session.commit()
    return r.message_id


def run(session, message_id, backend, **kw):
    out = process_message(session, message_id, backend, **kw)
    session.commit()
    return out


def active(session, **where):
    q = select(Memory).where(Memory.status == "active")
    for k, v in where.items():
        q = q.where(getattr(Memory, k) == v)
    return session.scalars(q).all()


def test_a_customer_fact_from_the_web_becomes_a_shared_fact_on_the_contact(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    garcia = factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días ahora, no a 30", user=ana)
    out = run(system_session, mid, backend)
    assert out.outcome == "learnt"
    [m] = active(system_session, subject=f"contact:{garcia.id}")
    assert (m.level, m.area, m.category, m.attribute, m.value, m.owner_user_id) == (
        "shared", "contacts", "customer", "plazo_pago", "60 días", None)
    assert m.author_user_id == ana.id and m.origin == "background" and m.embedding is not None
    assert system_session.scalars(select(MemorySource.message_id).where(MemorySource.memory_id == m.id)).all() == [mid]
    [note] = system_session.scalars(select(Notification)).all()
    assert note.kind == "learnt" and note.user_id == ana.id and note.text.startswith("Lo he aprendido:")
    assert "60 días" in note.text and note.memory_id == m.id


def test_every_model_call_is_in_the_usage_ledger(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=ana)
    run(system_session, mid, backend, run_tag="t1")
    purposes = sorted(system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.run_tag == "t1")))
    # the message's vector, the gate, the extraction, the fact's vector
    assert purposes == ["embed", "embed", "extract", "gate"]
    assert all(r.message_id == mid and r.org_id == org.id for r in system_session.scalars(select(UsageLedger)))


def test_the_message_is_indexed_for_search(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, "¿Qué facturé en septiembre?", user=ana)
    out = run(system_session, mid, backend)
    msg = system_session.get(Message, mid)
    assert msg.embedding is not None and len(msg.embedding) == 512 and msg.embed_model == backend.embed_model
    assert out.outcome == "ignored" and active(system_session) == []


def test_an_assistant_turn_is_indexed_but_never_learnt_from(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Entendido: Talleres García paga a 60 días.", user=ana, role="assistant")
    out = run(system_session, mid, backend)
    assert out.outcome == "indexed" and active(system_session) == []
    gate_calls = select(func.count()).select_from(UsageLedger).where(UsageLedger.purpose == "gate")
    assert system_session.scalar(gate_calls) == 0


def test_a_member_who_left_before_the_worker_ran_teaches_nothing(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=ana)
    membership = system_session.scalar(select(Membership).where(Membership.user_id == ana.id))
    membership.left_at = dt.datetime.now(dt.timezone.utc)
    system_session.commit()
    out = run(system_session, mid, backend)
    assert out.outcome == "no_access"
    assert active(system_session) == [] and system_session.scalars(select(Notification)).all() == []


def test_processing_the_same_message_twice_writes_nothing_new(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=ana)
    run(system_session, mid, backend)
    again = run(system_session, mid, backend)
    assert again.outcome == "merged"
    assert len(active(system_session)) == 1
    assert system_session.scalar(select(func.count()).select_from(MemorySource)) == 1
    assert system_session.scalar(select(func.count()).select_from(Notification)) == 1


def test_a_message_deleted_before_the_worker_ran_teaches_nothing(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=ana, external_id="m-del")
    say(system_session, org, "", user=ana, external_id="m-del", event="deleted")
    out = run(system_session, mid, backend)
    assert out.outcome == "forgotten" and active(system_session) == []


def test_deleting_a_message_removes_personal_memories_that_came_only_from_it(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    personal = say(system_session, org, "Me llamo Pablo", user=ana, external_id="m-name")
    shared = say(system_session, org, "Talleres García paga a 60 días", user=ana, external_id="m-terms")
    run(system_session, personal, backend)
    run(system_session, shared, backend)
    assert {m.level for m in active(system_session)} == {"personal", "shared"}
    say(system_session, org, "", user=ana, external_id="m-name", event="deleted")
    say(system_session, org, "", user=ana, external_id="m-terms", event="deleted")
    run(system_session, personal, backend)
    run(system_session, shared, backend)
    [left] = active(system_session)
    assert left.level == "shared" and left.value == "60 días"  # shared facts stay, without that source
    assert system_session.scalar(select(func.count()).select_from(MemorySource)) == 0


def test_a_secret_is_refused_before_any_model_sees_it(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, "La contraseña del banco es Almendro.2025", user=ana)
    out = run(system_session, mid, backend, run_tag="sec")
    assert (out.outcome, out.policy) == ("refused", "secret")
    assert active(system_session) == []
    assert system_session.scalars(select(UsageLedger.purpose).where(UsageLedger.run_tag == "sec")).all() == []
    assert system_session.get(Message, mid).embedding is None  # not even the embedding model saw it


def test_an_orgs_own_exclusion_row_is_applied(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    system_session.add(PolicyExclusion(org_id=org.id, kind="secret", name="proyecto_fenix",
                                       pattern=r"proyecto f(e|é)nix"))
    system_session.commit()
    mid = say(system_session, org, "Talleres García paga a 60 días por el proyecto Fénix", user=ana)
    out = run(system_session, mid, backend)
    assert (out.outcome, out.policy) == ("refused", "secret") and active(system_session) == []
    other = factory.org()
    bob = factory.member(other, role="owner")
    factory.contact(other, "Talleres García S.L.")
    mid2 = say(system_session, other, "Talleres García paga a 60 días por el proyecto Fénix", user=bob,
               conversation="chat-2")
    assert run(system_session, mid2, backend).outcome == "learnt"  # another org's list does not apply


def test_an_insult_about_a_named_person_is_refused(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    factory.contact(org, "Brillo Total")
    mid = say(system_session, org, "La de Brillo Total es una inútil, no limpia nada", user=ana)
    out = run(system_session, mid, backend)
    assert (out.outcome, out.policy) == ("refused", "insult") and active(system_session) == []


def test_special_category_data_is_never_learnt_in_the_background(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, "Estoy en tratamiento de quimioterapia, así que ten paciencia", user=ana)
    out = run(system_session, mid, backend)
    assert (out.outcome, out.policy) == ("refused", "special") and active(system_session) == []


@pytest.mark.parametrize("text", ["Voy a Alcohólicos Anónimos los lunes", "Ya no voy a misa los domingos",
                                  "My therapist says I should take Fridays off", "He dejado de fumar hace tres meses"])
def test_a_routine_that_tells_health_or_faith_is_never_learnt(factory, system_session, backend, text):
    org = factory.org()
    ana = factory.member(org, role="owner")
    out = run(system_session, say(system_session, org, text, user=ana), backend)
    # refused by the policy, or not even passed by the gate ("ya no voy a misa" teaches it nothing)
    assert out.outcome in ("refused", "ignored") and active(system_session) == []
    assert out.policy in ("special", None)
    mid = say(system_session, org, "Voy a pilates los martes", user=ana, conversation="chat-2")
    assert run(system_session, mid, backend).outcome == "learnt"  # a routine that tells neither is learnt


def test_a_new_bank_account_is_an_unverified_proposal_that_never_replaces_the_old_one(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    c = factory.contact(org, "Fijaciones Llorente", kind="supplier")
    old = factory.memory(org, subject=f"contact:{c.id}", attribute="cuenta_bancaria", value="ES9121000418450200051332",
                         category="supplier", area="contacts")
    mid = say(system_session, org, "Fijaciones Llorente nos ha pasado una cuenta nueva: ES14 0128 0010 9901 0012 3456",
              user=ana)
    out = run(system_session, mid, backend)
    assert (out.outcome, out.policy) == ("proposed", "bank_account")
    [proposal] = system_session.scalars(select(Memory).where(Memory.status == "proposed")).all()
    assert proposal.proposal_kind == "bank_account" and proposal.replaces_id == old.id
    assert [m.value for m in active(system_session, subject=f"contact:{c.id}")] == ["ES9121000418450200051332"]


def test_a_read_only_member_keeps_a_private_memory_and_proposes_it(factory, system_session, backend):
    org = factory.org()
    marta = factory.member(org, permissions={"contacts": "read"})
    c = factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=marta)
    out = run(system_session, mid, backend)
    assert out.outcome == "proposed"
    [private] = active(system_session, subject=f"contact:{c.id}")
    assert (private.level, private.owner_user_id) == ("private", marta.id)
    [note] = system_session.scalars(select(Notification)).all()
    assert note.text.startswith("Pendiente de confirmar")


def test_whatsapp_gets_a_sentence_instead_of_a_card(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner", phone="+34611000111")
    factory.phone(org, "+34611000111", user=ana)
    factory.contact(org, "Talleres García S.L.")
    mid = say(system_session, org, "Talleres García paga a 60 días", user=ana, phone="+34611000111",
              channel="whatsapp", conversation="wa-1")
    run(system_session, mid, backend)
    [note] = system_session.scalars(select(Notification)).all()
    assert note.text.startswith("Por cierto, he apuntado que") and "dímelo y lo deshago" in note.text
    assert note.data["card"].startswith("Lo he aprendido")


def test_undo_reverts_a_save_and_restores_what_it_superseded(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    c = factory.contact(org, "Talleres García S.L.")
    first = say(system_session, org, "Talleres García paga a 60 días", user=ana, external_id="a")
    second = say(system_session, org, "Talleres García paga a 90 días", user=ana, external_id="b")
    run(system_session, first, backend)
    run(system_session, second, backend)
    assert [m.value for m in active(system_session, subject=f"contact:{c.id}")] == ["90 días"]
    note = system_session.scalars(select(Notification).order_by(Notification.created_at.desc())).first()
    undo_learnt(system_session, note.id, Principal(user_id=ana.id))
    system_session.commit()
    [m] = active(system_session, subject=f"contact:{c.id}")
    assert m.value == "60 días" and m.valid_to is None and m.superseded_by is None
    with pytest.raises(Conflict):
        undo_learnt(system_session, note.id, Principal(user_id=ana.id))


def test_only_the_person_told_about_a_save_can_undo_it(factory, system_session, backend):
    org = factory.org()
    ana, bea = factory.member(org, role="owner"), factory.member(org, role="admin")
    factory.contact(org, "Talleres García S.L.")
    run(system_session, say(system_session, org, "Talleres García paga a 60 días", user=ana), backend)
    note = system_session.scalars(select(Notification)).one()
    with pytest.raises(NotFound):
        undo_learnt(system_session, note.id, Principal(user_id=bea.id))
    assert len(active(system_session)) == 1


def test_an_edit_forgets_what_only_the_old_text_taught_and_learns_the_new(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    mid = say(system_session, org, "Me llamo Pablo", user=ana, external_id="m-edit")
    run(system_session, mid, backend)
    say(system_session, org, "Me llamo Pedro", user=ana, external_id="m-edit", event="edited")
    run(system_session, mid, backend, event="edited")
    assert [(m.attribute, m.value) for m in active(system_session)] == [("nombre", "Pedro")]
    assert system_session.scalar(select(func.count()).select_from(Memory)) == 1


def test_a_number_with_no_org_keeps_only_facts_about_the_person(factory, system_session, backend):
    mid = say(system_session, None, "Me llamo Pablo", phone="+34699000111", channel="whatsapp", conversation="wa-x",
              external_id="wa-x-1")
    run(system_session, mid, backend)
    mid2 = say(system_session, None, "Talleres García paga a 60 días", phone="+34699000111", channel="whatsapp",
               conversation="wa-x", external_id="wa-x-2")
    out = run(system_session, mid2, backend)
    [m] = active(system_session)
    assert (m.level, m.owner_phone, m.org_id, m.value) == ("personal", "+34699000111", None, "Pablo")
    assert out.outcome == "ignored"


def test_undoing_a_proposal_withdraws_it_and_the_private_copy(factory, system_session, backend):
    org = factory.org()
    marta = factory.member(org, permissions={"contacts": "read"})
    factory.contact(org, "Talleres García S.L.")
    run(system_session, say(system_session, org, "Talleres García paga a 60 días", user=marta), backend)
    note = system_session.scalars(select(Notification)).one()
    undo_learnt(system_session, note.id, Principal(user_id=marta.id))
    system_session.commit()
    assert system_session.scalar(select(func.count()).select_from(Memory)) == 0
    assert system_session.get(Notification, note.id).undone_at is not None
