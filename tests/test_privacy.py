"""Erasure and access requests: intake, preview, export, execution, verification scan, receipt."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import uuid
import zipfile

import pytest
from sqlalchemy import select, text

from memory_core.domain.errors import Conflict, InvalidInput, NotFound
from memory_core.domain.models import (
    AuditLog,
    Document,
    Membership,
    Memory,
    MemorySource,
    Notification,
    Outbox,
    PrivacyRequest,
    UsageLedger,
)
from memory_core.privacy import requests as privacy
from memory_core.tenancy import linking, tokens

PHONE = "+34655443322"
EMAIL = "ana.erasable@example.test"
NAME = "Anacleta Borrable"


@pytest.fixture
def world(factory, system_session):
    """A person with a bit of everything memoria stores, and colleagues whose data must survive."""
    s = system_session
    org = factory.org("Erasure Org")
    boss = factory.member(org, role="owner", name="Jefa Superviviente")
    ana = factory.member(org, email=EMAIL, name=NAME, phone=PHONE)
    factory.phone(org, PHONE, user=ana)
    conv = factory.conversation(org, ana)
    wa = factory.conversation(org, ana, channel="whatsapp", phone=PHONE)
    m1 = factory.message(conv, "me gusta el té verde")
    m2 = factory.message(wa, "llámame al " + PHONE, phone=PHONE)
    factory.message(conv, "apuntado", role="assistant")
    boss_conv = factory.conversation(org, boss)
    boss_msg = factory.message(boss_conv, f"{NAME} se encarga de Acme; su correo es {EMAIL}")
    factory.message(boss_conv, "Acme paga a 60 días")
    pref = factory.memory(None, level="personal", owner=ana, category="preference", subject="self",
                          attribute="bebida", value="té verde", author_user_id=ana.id)
    factory.memory(None, level="personal", owner=ana, category="preference", subject="self", attribute="bebida",
                   value="café", status="superseded", superseded_by=pref.id, author_user_id=ana.id)
    factory.memory(org, level="private", owner=ana, attribute="nota", value="privada", author_user_id=ana.id)
    shared = factory.memory(org, level="shared", attribute="plazo", value="60 días", category="company",
                            author_user_id=ana.id, author_phone=PHONE)
    boss_fact = factory.memory(org, level="shared", attribute="responsable", value=NAME,
                               sentence=f"{NAME} lleva la cuenta de Acme", author_user_id=boss.id)
    for mem, msg in ((pref, m1), (shared, m2), (boss_fact, boss_msg)):
        s.add(MemorySource(memory_id=mem.id, message_id=msg.id, conversation_id=msg.conversation_id))
    s.add_all([Outbox(message_id=m1.id, conversation_id=m1.conversation_id),
               Outbox(message_id=boss_msg.id, conversation_id=boss_msg.conversation_id)])
    s.add(Notification(org_id=org.id, user_id=ana.id, memory_id=pref.id, kind="learnt", text="Aprendido: té verde"))
    s.add(UsageLedger(org_id=org.id, message_id=m1.id, purpose="gate", model="local", input_tokens=10))
    s.add_all([Document(org_id=org.id, kind="expense", external_ref="E-1", title="Taxi", owner_user_id=ana.id,
                        visibility="private_in_org"),
               Document(org_id=org.id, kind="invoice", external_ref="F-1", title="Factura 1", text="Importe 100",
                        owner_user_id=ana.id, legal_hold=True)])
    s.commit()
    s.execute(text("insert into memory_traces (id, org_id, conversation_id, user_id, block_text) "
                   "values (:t, :o, :c, :u, 'Prefiere té verde')"),
              {"t": (trace := uuid.uuid4()), "o": org.id, "c": conv.id, "u": ana.id})
    s.execute(text("insert into trace_items (trace_id, memory_id, block, rank, score, chars) "
                   "values (:t, :m, 'profile', 1, 0.9, 20)"), {"t": trace, "m": pref.id})
    s.execute(text("insert into conversation_summaries (conversation_id, content) values (:c, :j)"),
              {"c": conv.id, "j": json.dumps({"points": [{"text": "Prefiere té"}]})})
    s.execute(text("insert into login_attempts (key) values (:k)"), {"k": f"email:{EMAIL}"})
    s.commit()
    linking.create_link_code(s, ana.id, org.id)
    # one-time links: one sent to her email, her own reset link, and one she sent to someone else
    tokens.issue(s, "invite", EMAIL, org_id=org.id, role="member", created_by=boss.id)
    tokens.issue(s, "reset", EMAIL, user_id=ana.id)
    tokens.issue(s, "invite", "colleague@example.test", org_id=org.id, role="member", created_by=ana.id)
    s.commit()
    return {"org": org, "boss": boss, "ana": ana, "ana_id": ana.id, "boss_id": boss.id, "shared": shared,
            "boss_fact": boss_fact, "officer":
            factory.user(platform_role="privacy_officer", name="Oficial Privacidad")}


def _open(s, world, kind="erasure", ref=EMAIL, subject_type="user"):
    req = privacy.intake(s, kind=kind, subject_type=subject_type, subject_ref=ref,
                         requested_by=f"{NAME} <{EMAIL}> by email", basis="GDPR art. 17",
                         actor=world["officer"].id)
    s.commit()
    privacy.verify(s, req.id, "Replied from the account's own email address", world["officer"].id)
    s.commit()
    privacy.preview(s, req.id, world["officer"].id)
    s.commit()
    return req


def independent_scan(owner_engine, ids, strings) -> dict[str, int]:
    """Every text, uuid, json and array column of every table, read as the owner (no RLS)."""
    hits = {}
    with owner_engine.connect() as c:
        cols = c.execute(text(
            "select table_name, column_name, data_type, udt_name from information_schema.columns "
            "where table_schema = 'public' "
            "and table_name in (select tablename from pg_tables where schemaname = 'public') "
            "and (data_type in ('text', 'character varying', 'uuid', 'jsonb') or udt_name = '_text')")).all()
        assert len(cols) > 50
        for table, col, dtype, _udt in cols:
            if dtype == "uuid":
                n = c.execute(text(f'select count(*) from "{table}" where "{col}" = any(:v)'),
                              {"v": list(ids)}).scalar_one()
            else:
                expr = f'"{col}"::text' if dtype in ("jsonb", "ARRAY") else f'"{col}"'
                needles = [*strings, *(str(i) for i in ids)]
                n = c.execute(text(f"select count(*) from \"{table}\" where {expr} ilike any(:v)"),
                              {"v": [f"%{x}%" for x in needles]}).scalar_one()
            if n:
                hits[f"{table}.{col}"] = n
    return hits


def test_intake_needs_who_and_basis_and_sets_a_one_month_due_date(world, system_session):
    s = system_session
    with pytest.raises(InvalidInput):
        privacy.intake(s, kind="erasure", subject_type="user", subject_ref=EMAIL, requested_by="", basis="x")
    with pytest.raises(InvalidInput):
        privacy.intake(s, kind="erasure", subject_type="phone", subject_ref="not a phone", requested_by="a", basis="b")
    with pytest.raises(NotFound):
        privacy.intake(s, kind="erasure", subject_type="user", subject_ref="nobody@x.test", requested_by="a", basis="b")
    req = privacy.intake(s, kind="erasure", subject_type="user", subject_ref=EMAIL.upper(), requested_by="Ana",
                         basis="GDPR art. 17")
    s.commit()
    assert req.status == "received" and req.subject_ref == str(world["ana"].id)
    # due a calendar month after it arrived, both by the one clock (tests/test_dates.py runs it on tricky days)
    assert req.due_at == privacy.add_month(req.created_at)
    assert dt.timedelta(days=28) <= req.due_at - req.created_at <= dt.timedelta(days=31)
    assert privacy.add_month(dt.datetime(2026, 1, 31)) == dt.datetime(2026, 2, 28)
    with pytest.raises(Conflict):  # no preview before identity verification
        privacy.preview(s, req.id, None)


def test_preview_counts_what_will_be_deleted_anonymised_and_kept_before_anything_happens(world, system_session):
    s = system_session
    before = s.execute(text("select count(*) from memories")).scalar_one()
    req = _open(s, world)
    pv = req.preview
    assert req.status == "previewed"
    assert pv["delete"]["users"] == 1 and pv["delete"]["memories"] == 3  # preference, its old version, private
    assert pv["delete"]["messages"] == 3 and pv["delete"]["conversations"] == 2
    assert pv["delete"]["link_codes"] == 1 and pv["delete"]["phone_authorizations"] == 1
    assert pv["delete"]["documents"] == 1 and pv["delete"]["trace_items"] == 1
    assert pv["anonymise"]["memories"] == 2  # the shared fact she authored, the boss's fact naming her
    assert pv["anonymise"]["messages"] == 1  # the boss's message naming her
    assert pv["keep"]["documents"]["rows"] == 1 and "legal hold" in pv["keep"]["documents"]["why"]
    assert pv["keep"]["usage_ledger"]["rows"] == 1
    assert s.execute(text("select count(*) from memories")).scalar_one() == before


def test_export_contains_every_row_the_preview_counted_with_versions_and_sources(world, system_session):
    s = system_session
    req = _open(s, world, kind="access")
    data = privacy.export_zip(s, req.id, world["officer"].id)
    s.commit()
    zf = zipfile.ZipFile(io.BytesIO(data))
    tables = {n[:-5]: json.loads(zf.read(n)) for n in zf.namelist() if n.endswith(".json") and n != "manifest.json"
              and "/" not in n}
    for category in ("delete", "anonymise"):
        for table, n in req.preview[category].items():
            assert len(tables[table]) >= n, (category, table)
    for table, entry in req.preview["keep"].items():
        assert len(tables[table]) >= entry["rows"], table
    values = {m["value"]: m["status"] for m in tables["memories"]}
    assert values["café"] == "superseded" and values["té verde"] == "active"
    assert {str(x["memory_id"]) for x in tables["memory_sources"]} >= {str(world["shared"].id)}
    assert tables["users"][0]["email"] == EMAIL and "password_hash" not in tables["users"][0]
    assert all("embedding" not in m for m in tables["memories"])
    assert json.loads(zf.read("manifest.json"))["tables"]["messages"] == len(tables["messages"])
    # delivering an access request closes it without touching data
    assert privacy.execute(s, req.id, world["officer"].id).status == "delivered"
    assert s.execute(text("select count(*) from users where email = :e"), {"e": EMAIL}).scalar_one() == 1
    assert s.get(PrivacyRequest, req.id).receipt["exported"]["memories"] == len(tables["memories"])
    with pytest.raises(Conflict):
        privacy.export_zip(s, req.id, None)


def _assert_erased(s, owner_engine, world, receipt):
    assert receipt["verification"]["clean"] is True, receipt["verification"]
    hits = independent_scan(owner_engine, [world["ana_id"]], [EMAIL, PHONE, NAME, PHONE.lstrip("+")])
    audit_only = {k: v for k, v in hits.items() if not k.startswith("audit_log.")}
    assert audit_only == {}
    assert set(hits) <= {"audit_log.actor_user_id", "audit_log.target_id"}  # opaque ids, never email/phone/name
    # what others own survives, without her
    shared = s.get(Memory, world["shared"].id)
    assert shared is not None and shared.author_user_id is None and shared.author_phone is None
    assert "[erased]" in s.get(Memory, world["boss_fact"].id).sentence
    assert s.scalar(select(Membership.user_id).where(Membership.user_id == world["boss_id"]))
    assert s.execute(text("select count(*) from messages where text = 'Acme paga a 60 días'")).scalar_one() == 1
    ledger = s.scalars(select(UsageLedger)).all()
    assert len(ledger) == 1 and ledger[0].message_id is None and ledger[0].input_tokens == 10
    invoice = s.scalar(select(Document).where(Document.external_ref == "F-1"))
    assert invoice is not None and invoice.owner_user_id is None
    assert s.scalar(select(Document).where(Document.external_ref == "E-1")) is None


def test_erasure_hard_deletes_everything_identifying_and_the_scans_find_nothing(world, system_session, owner_engine):
    s = system_session
    req = _open(s, world)
    privacy.execute(s, req.id, world["officer"].id)
    s.expire_all()
    req = s.get(PrivacyRequest, req.id)
    assert req.status == "executed"
    _assert_erased(s, owner_engine, world, req.receipt)
    assert req.receipt["deleted"]["messages"] == 3 and req.receipt["kept"]["documents"]["rows"] == 1
    assert req.receipt["verification"]["tables_scanned"] >= 20
    # the receipt names no erased data, nor does the request itself any more
    dumped = json.dumps(req.receipt) + req.subject_ref + req.requested_by + req.verification + json.dumps(req.progress)
    for needle in (EMAIL, PHONE, NAME, str(world["ana_id"]), "té verde"):
        assert needle not in dumped
    actions = set(s.scalars(select(AuditLog.action).where(AuditLog.target_id == str(req.id))))
    assert {"privacy.received", "privacy.verified", "privacy.previewed", "privacy.execution_started",
            "privacy.executed"} <= actions


def test_interrupted_erasure_resumes_in_small_batches_to_the_same_result(world, system_session, owner_engine):
    s = system_session
    req = _open(s, world)
    privacy.execute(s, req.id, world["officer"].id, batch_size=1, max_batches=4)
    s.expire_all()
    partial = s.get(PrivacyRequest, req.id)
    assert partial.status == "previewed" and partial.progress["state"] == "running" and partial.progress["step"] > 0
    privacy.execute(s, req.id, world["officer"].id, batch_size=1)
    s.expire_all()
    req = s.get(PrivacyRequest, req.id)
    assert req.status == "executed"
    _assert_erased(s, owner_engine, world, req.receipt)
    assert req.receipt["deleted"]["messages"] == 3
    assert privacy.execute(s, req.id, None).status == "executed"  # a second run changes nothing


def test_phone_erasure_unlinks_the_number_and_keeps_the_account(world, system_session, owner_engine):
    s = system_session
    req = _open(s, world, ref="+34 655 44 33 22", subject_type="phone")
    privacy.execute(s, req.id, world["officer"].id)
    s.expire_all()
    req = s.get(PrivacyRequest, req.id)
    assert req.receipt["verification"]["clean"], req.receipt["verification"]
    hits = independent_scan(owner_engine, [], [PHONE, PHONE.lstrip("+")])
    assert hits == {}
    assert s.execute(text("select phone from users where email = :e"), {"e": EMAIL}).scalar_one() is None
    # her web conversation and its memories are hers, not the number's: they stay
    assert s.execute(text("select count(*) from memories where value = 'té verde'")).scalar_one() == 1


def test_contact_erasure_deletes_its_facts_and_keeps_invoices_under_legal_hold(factory, system_session):
    s = system_session
    org = factory.org()
    officer = factory.user(platform_role="privacy_officer")
    acme = factory.contact(org, name="Perico Autonomo", tax_id="12345678Z", kind="customer")
    factory.memory(org, subject=f"contact:{acme.id}", category="customer", area="contacts", attribute="plazo",
                   value="30 días")
    s.add_all([Document(org_id=org.id, kind="invoice", external_ref="F-9", title="Factura Perico Autonomo",
                        tax_id="12345678Z", contact_id=acme.id, legal_hold=True),
               Document(org_id=org.id, kind="quote", external_ref="P-9", title="Presupuesto", contact_id=acme.id)])
    s.commit()
    req = privacy.intake(s, kind="erasure", subject_type="contact", subject_ref=str(acme.id),
                         requested_by="the customer", basis="GDPR art. 17", actor=officer.id)
    privacy.verify(s, req.id, "signed letter", officer.id)
    privacy.preview(s, req.id, officer.id)
    s.commit()
    assert req.preview["delete"] == {"memories": 1, "documents": 1, "contacts": 1}
    privacy.execute(s, req.id, officer.id)
    s.expire_all()
    receipt = s.get(PrivacyRequest, req.id).receipt
    scan = receipt["verification"]
    assert scan["clean"] and {h["kind"] for h in scan["hits"]} <= {"legal_hold", "opaque_id_in_audit_log"}
    assert any(h["table"] == "documents" and h["kind"] == "legal_hold" for h in scan["hits"])
    invoice = s.scalar(select(Document))
    assert invoice.external_ref == "F-9" and invoice.contact_id is None and invoice.tax_id == "12345678Z"
    assert s.execute(text("select count(*) from memories")).scalar_one() == 0


def test_conversation_erasure_takes_its_messages_and_what_came_only_from_it(world, system_session):
    s = system_session
    conv_id = s.scalar(select(MemorySource.conversation_id).where(MemorySource.memory_id == world["shared"].id))
    req = _open(s, world, ref=str(conv_id), subject_type="conversation")
    privacy.execute(s, req.id, world["officer"].id)
    s.expire_all()
    assert s.get(PrivacyRequest, req.id).receipt["verification"]["clean"]
    assert s.execute(text("select count(*) from messages where conversation_id = :c"), {"c": conv_id}).scalar_one() == 0
    assert s.get(Memory, world["shared"].id) is not None  # shared: loses the source, stays


def test_a_rejected_request_forgets_its_subject_reference(world, system_session):
    s = system_session
    req = privacy.intake(s, kind="erasure", subject_type="user", subject_ref=EMAIL, requested_by="someone",
                         basis="art. 17")
    privacy.reject(s, req.id, "identity could not be verified", None)
    s.commit()
    assert req.status == "rejected" and req.subject_ref.startswith("digest:")
    with pytest.raises(Conflict):
        privacy.preview(s, req.id, None)


def test_a_large_erasure_runs_on_the_worker_to_the_same_result(world, system_session, owner_engine, redis_conn):
    from rq import SimpleWorker

    from jobs.privacy import enqueue_execution
    from memory_core.adapters.queue import get_queue

    s = system_session
    req = _open(s, world)
    enqueue_execution(req.id, world["officer"].id)
    queue = get_queue()
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    s.expire_all()
    req = s.get(PrivacyRequest, req.id)
    assert req.status == "executed"
    _assert_erased(s, owner_engine, world, req.receipt)


def test_each_request_kind_has_its_own_basis_when_none_is_typed(world, system_session):
    s = system_session
    kinds = {k: privacy.intake(s, kind=k, subject_type="user", subject_ref=EMAIL, requested_by="Ana", basis="")
             for k in ("erasure", "access", "portability")}
    assert "art. 17" in kinds["erasure"].basis and "art. 15" in kinds["access"].basis
    assert "art. 20" in kinds["portability"].basis
    typed = privacy.intake(s, kind="access", subject_type="user", subject_ref=EMAIL, requested_by="Ana",
                           basis="Ley Orgánica 3/2018, art. 13")
    assert typed.basis == "Ley Orgánica 3/2018, art. 13"


def test_the_export_is_readable_by_the_person_summary_and_spreadsheets(world, system_session, factory):
    s = system_session
    contact = factory.contact(world["org"], name="Talleres García S.L.")
    factory.memory(world["org"], subject=f"contact:{contact.id}", attribute="plazo_pago", value="60 días",
                   sentence="Talleres García paga a 60 días.", category="customer", area="contacts",
                   author_user_id=world["ana_id"])
    req = _open(s, world, kind="portability")
    zf = zipfile.ZipFile(io.BytesIO(privacy.export_zip(s, req.id, world["officer"].id)))
    summary = zf.read("summary.html").decode()
    assert "What memoria holds about you" in summary and "Talleres García S.L." in summary
    assert f"contact:{contact.id}" not in summary and "Payment term" in summary and "<script" not in summary
    rows = list(csv.reader(io.StringIO(zf.read("csv/memories.csv").decode())))
    assert rows[0][:4] == ["About", "What", "Value", "As a sentence"]
    assert ["Talleres García S.L.", "Payment term", "60 días"] in [r[:3] for r in rows[1:]]
    assert privacy.execute(s, req.id, world["officer"].id).status == "delivered"


def test_the_export_speaks_the_language_of_the_officer_who_prepares_it(world, system_session, factory):
    s = system_session
    contact = factory.contact(world["org"], name="Talleres García S.L.")
    factory.memory(world["org"], subject=f"contact:{contact.id}", attribute="plazo_pago", value="60 días",
                   sentence="Talleres García paga a 60 días.", category="customer", area="contacts",
                   author_user_id=world["ana_id"])
    req = _open(s, world, kind="access")
    zf = zipfile.ZipFile(io.BytesIO(privacy.export_zip(s, req.id, world["officer"].id, "es")))
    summary = zf.read("summary.html").decode()
    assert '<html lang="es">' in summary and "Lo que memoria guarda sobre ti" in summary
    assert "What memoria holds" not in summary and "Payment term" not in summary
    rows = list(csv.reader(io.StringIO(zf.read("csv/memories.csv").decode())))
    assert rows[0][:4] == ["Sobre", "Qué", "Valor", "Como frase"]
    assert ["Talleres García S.L.", "Plazo de pago", "60 días"] in [r[:3] for r in rows[1:]]
