"""Console pages: memories, contacts, traces, usage, audit log, settings, jobs and the dashboard, with
every action and permission rule, through the real routes (CSRF on).

One file on purpose (~670 lines): the pages share one set of fixtures (an org with a bit of everything)."""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from sqlalchemy import select, text

from memory_core.domain.models import (
    AuditLog,
    JobRun,
    Memory,
    MemorySource,
    MemoryTrace,
    Organization,
    PolicyExclusion,
    TraceItem,
    UsageLedger,
)
from tests.conftest import csrf_from, login, sign_in
from tests.factories import PASSWORD


class World:
    def __init__(self, factory, s):
        self.s = s
        self.org = factory.org("Talleres Demo")
        self.other = factory.org("Otra S.L.")
        self.owner = factory.member(self.org, role="owner", name="Olga Owner")
        self.admin = factory.member(self.org, role="admin", name="Adam Admin")
        self.member = factory.member(self.org, permissions={"contacts": "read"}, name="Marta Member")
        self.outsider = factory.member(self.other, role="owner", name="Otto Outsider")
        self.staff = factory.user(platform_role="staff", name="Sofía Staff")
        self.privacy = factory.user(platform_role="privacy_officer", name="Pau Privacy")
        self.contact = factory.contact(self.org, name="Talleres García S.L.")
        self.hidden_contact = factory.contact(self.org, name="Secret Supplier", tax_id="B00000000")
        self.hidden_contact.area = "invoices"
        s.commit()
        subj = f"contact:{self.contact.id}"
        conv = factory.conversation(self.org, self.owner)
        self.msg30 = factory.message(conv, "Talleres García paga a 30 días.")
        self.msg60 = factory.message(conv, "Ahora paga a 60 días.")
        now = dt.datetime.now(dt.timezone.utc)
        self.old = factory.memory(self.org, subject=subj, attribute="plazo_pago", value="30 días",
                                  sentence="Talleres García paga a 30 días.", category="customer", area="contacts",
                                  status="superseded", valid_from=now - dt.timedelta(days=40),
                                  valid_to=now - dt.timedelta(days=3), author_user_id=self.owner.id,
                                  created_at=now - dt.timedelta(days=40))
        self.current = factory.memory(self.org, subject=subj, attribute="plazo_pago", value="60 días",
                                      sentence="Talleres García paga a 60 días.", category="customer",
                                      area="contacts", valid_from=now - dt.timedelta(days=3),
                                      author_user_id=self.owner.id, created_at=now - dt.timedelta(days=3))
        self.old.superseded_by = self.current.id
        s.add_all([MemorySource(memory_id=self.old.id, message_id=self.msg30.id, conversation_id=conv.id),
                   MemorySource(memory_id=self.current.id, message_id=self.msg60.id, conversation_id=conv.id)])
        s.commit()
        self.company = factory.memory(self.org, subject="org", attribute="horario", value="8 a 15",
                                      sentence="La oficina abre de 8 a 15.", area="company")
        self.private_member = factory.memory(self.org, level="private", owner=self.member, subject="org",
                                             attribute="nota", value="llamar", sentence="Marta: llamar a Acme.",
                                             area="general")
        self.private_admin = factory.memory(self.org, level="private", owner=self.admin, subject="org",
                                            attribute="nota", value="admin", sentence="Nota privada del admin.")
        self.foreign = factory.memory(self.other, subject="org", attribute="x", value="foreign",
                                      sentence="Dato de otra empresa.")


@pytest.fixture
def w(factory, system_session):
    return World(factory, system_session)


def _rows(resp) -> str:
    """The table of a list page (its filters name every action too)."""
    return resp.get_data(as_text=True).split("<table", 1)[-1]


def _active(s, subject, attribute):
    s.expire_all()
    return s.scalars(select(Memory).where(Memory.subject == subject, Memory.attribute == attribute,
                                          Memory.status == "active")).all()


# ------------------------------------------------------------------------------------ memories

def test_admin_lists_shared_and_own_private_memories_but_not_others_private(client, w):
    sign_in(client, w.admin)
    page = client.get("/memories").get_data(as_text=True)
    assert "Talleres García paga a 60 días." in page and "La oficina abre de 8 a 15." in page
    assert "Nota privada del admin." in page
    assert "Marta: llamar a Acme." not in page and "Dato de otra empresa." not in page
    assert "paga a 30 días" not in page  # superseded versions only with the status filter


def test_member_sees_readable_areas_and_her_own_private_memory_only(client, w):
    sign_in(client, w.member)
    page = client.get("/memories").get_data(as_text=True)
    assert "Talleres García paga a 60 días." in page and "Marta: llamar a Acme." in page
    assert "La oficina abre de 8 a 15." not in page  # company: she may not read it
    assert "Nota privada del admin." not in page


def test_memories_filter_by_contact_area_status_and_full_text(client, w):
    sign_in(client, w.admin)
    page = client.get(f"/memories?contact={w.contact.id}&status=").get_data(as_text=True)
    assert "paga a 60 días" in page and "paga a 30 días" in page and "8 a 15" not in page
    page = client.get("/memories?area=company").get_data(as_text=True)
    assert "8 a 15" in page and "60 días" not in page
    page = client.get("/memories?q=oficina").get_data(as_text=True)
    assert "8 a 15" in page and "60 días" not in page
    page = client.get("/memories?owner=mine").get_data(as_text=True)
    assert "Nota privada del admin." in page and "8 a 15" not in page


def test_memories_with_a_bad_filter_say_what_is_wrong(client, w):
    sign_in(client, w.admin)
    resp = client.get("/memories?level=galactic")
    assert resp.status_code == 422 and "Unknown level" in resp.get_data(as_text=True)


def test_memories_paginate_with_a_next_page_link(client, w, factory):
    for i in range(55):
        factory.memory(w.org, subject="org", attribute=f"dato_{i}", value=str(i), sentence=f"Dato número {i}.")
    sign_in(client, w.admin)
    page = client.get("/memories").get_data(as_text=True)
    assert page.count('href="/memories/') == 50
    nxt = re.search(r'href="(/memories\?[^"]*after=[^"]+)"', page).group(1).replace("&amp;", "&")
    second = client.get(nxt).get_data(as_text=True)
    assert second.count('href="/memories/') >= 5 and "Dato número 54." not in second


def test_memories_page_both_ways_with_a_total_and_sort_oldest_first(client, w, factory):
    base = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for i in range(120):
        factory.memory(w.org, subject="org", attribute=f"dato_{i}", value=str(i), sentence=f"Dato número {i}.",
                       created_at=base + dt.timedelta(minutes=i))
    sign_in(client, w.admin)
    link = lambda html, rel: re.search(rf'rel="{rel}" href="([^"]+)"', html).group(1).replace("&amp;", "&")  # noqa: E731
    first = client.get("/memories?subject=org&q=dato").get_data(as_text=True)
    assert 'id="list-total">120 memories<' in first and 'rel="prev"' not in first
    assert "Dato número 119." in first and "Dato número 69." not in first
    second = client.get(link(first, "next")).get_data(as_text=True)
    assert "Dato número 69." in second and "Dato número 70." not in second and 'id="list-total">120 memories<' in second
    back = client.get(link(second, "prev")).get_data(as_text=True)
    assert "Dato número 119." in back and "Dato número 70." in back and 'rel="prev"' not in back
    oldest = client.get("/memories?subject=org&q=dato&sort=oldest").get_data(as_text=True)
    assert oldest.index("Dato número 0.") < oldest.index("Dato número 1.") and "Dato número 50." not in oldest
    assert client.get("/memories?before=not-a-cursor").status_code == 422


def test_memory_page_shows_the_version_timeline_with_sources(client, w):
    sign_in(client, w.admin)
    page = client.get(f"/memories/{w.current.id}").get_data(as_text=True)
    assert page.index("60 días") < page.index("30 días")  # newest first
    assert "Talleres García paga a 30 días." in page and "Ahora paga a 60 días." in page
    assert "superseded by" in page and "Olga Owner" in page and "Restore this version" in page


def test_memory_of_another_org_is_not_found(client, w):
    sign_in(client, w.admin)
    assert client.get(f"/memories/{w.foreign.id}").status_code == 404
    assert client.get(f"/memories/{w.private_member.id}").status_code == 404


def test_admin_restores_an_old_version_as_a_new_current_one(client, w):
    token = sign_in(client, w.admin)
    resp = client.post(f"/memories/{w.old.id}/restore", data={"csrf_token": token, "confirmed": "yes"})
    assert resp.status_code == 303
    active = _active(w.s, w.current.subject, "plazo_pago")
    assert [m.value for m in active] == ["30 días"] and active[0].id not in (w.old.id, w.current.id)
    assert active[0].origin == "restore"
    w.s.refresh(w.current)
    w.s.refresh(w.old)
    assert w.current.status == "superseded" and w.current.superseded_by == active[0].id
    assert w.old.status == "superseded"  # the restored version itself is never rewritten
    details = w.s.scalar(select(AuditLog.details).where(AuditLog.action == "memory.restored"))
    assert details["restored_from"] == str(w.old.id)
    sources = w.s.scalars(select(MemorySource.message_id).where(MemorySource.memory_id == active[0].id)).all()
    assert sources == [w.msg30.id]


def test_member_cannot_restore_a_version(client, w):
    token = sign_in(client, w.member)
    assert client.post(f"/memories/{w.old.id}/restore",
                       data={"csrf_token": token, "confirmed": "yes"}).status_code == 403
    assert [m.id for m in _active(w.s, w.current.subject, "plazo_pago")] == [w.current.id]


def test_restoring_the_current_version_is_refused_with_a_message(client, w):
    token = sign_in(client, w.admin)
    resp = client.post(f"/memories/{w.current.id}/restore", data={"csrf_token": token, "confirmed": "yes"})
    assert resp.status_code == 422 and "Only an older version can be restored." in resp.get_data(as_text=True)


def test_edit_saves_a_hand_edited_new_version_and_keeps_the_old(client, w):
    token = sign_in(client, w.admin)
    resp = client.post(f"/memories/{w.current.id}/edit", data={"csrf_token": token, "value": "90 días",
                                                                "sentence": "Talleres García paga a 90 días."})
    assert resp.status_code == 303
    [now] = _active(w.s, w.current.subject, "plazo_pago")
    assert (now.value, now.hand_edited, now.origin) == ("90 días", True, "console")
    w.s.refresh(w.current)
    assert w.current.status == "superseded" and w.current.superseded_by == now.id


def test_edit_with_empty_value_shows_the_error(client, w):
    token = sign_in(client, w.admin)
    resp = client.post(f"/memories/{w.current.id}/edit", data={"csrf_token": token, "value": " ", "sentence": "x"})
    assert resp.status_code == 422 and "The value cannot be empty." in resp.get_data(as_text=True)


def test_member_edits_her_private_memory_but_not_a_shared_one_she_only_reads(client, w):
    token = sign_in(client, w.member)
    assert client.post(f"/memories/{w.private_member.id}/edit", data={
        "csrf_token": token, "value": "llamar hoy", "sentence": "Marta: llamar hoy a Acme."}).status_code == 303
    assert client.post(f"/memories/{w.current.id}/edit", data={
        "csrf_token": token, "value": "1 día", "sentence": "x"}).status_code == 403
    page = client.get(f"/memories/{w.current.id}").get_data(as_text=True)
    assert "Save new version" not in page and "Restore this version" not in page


def test_pin_and_unpin(client, w):
    token = sign_in(client, w.owner)
    client.post(f"/memories/{w.company.id}/pin", data={"csrf_token": token, "pinned": "1"})
    w.s.refresh(w.company)
    assert w.company.pinned is True
    client.post(f"/memories/{w.company.id}/pin", data={"csrf_token": token, "pinned": "0"})
    w.s.refresh(w.company)
    assert w.company.pinned is False
    actions = w.s.scalars(select(AuditLog.action).where(AuditLog.target_id == str(w.company.id))).all()
    assert actions == ["memory.pinned", "memory.unpinned"]


def test_delete_removes_the_memory_and_its_versions(client, w):
    token = sign_in(client, w.admin)
    ids = [w.current.id, w.old.id]
    resp = client.post(f"/memories/{w.current.id}/delete", data={"csrf_token": token, "confirmed": "yes"},
                       follow_redirects=True)
    assert "Deleted the memory and its 1 older version." in resp.get_data(as_text=True)
    w.s.expire_all()
    assert not w.s.scalars(select(Memory.id).where(Memory.id.in_(ids))).all()
    assert w.s.scalar(select(AuditLog.details).where(AuditLog.action == "memory.deleted"))["versions"] == 2


def test_delete_without_confirmation_asks_what_will_happen_and_deletes_nothing(client, w):
    token = sign_in(client, w.admin)
    page = client.get(f"/memories/{w.current.id}").get_data(as_text=True)
    assert "<details class=\"confirm\">" in page and "This deletes 2 versions of this fact" in page
    resp = client.post(f"/memories/{w.current.id}/delete", data={"csrf_token": token})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "Delete this memory with its versions?" in html
    assert "This deletes 2 versions of this fact" in html and 'name="confirmed" value="yes"' in html
    w.s.expire_all()
    assert w.s.get(Memory, w.current.id) is not None and w.s.get(Memory, w.old.id) is not None


def test_restore_without_confirmation_says_which_value_comes_back_and_changes_nothing(client, w):
    token = sign_in(client, w.admin)
    resp = client.post(f"/memories/{w.old.id}/restore", data={"csrf_token": token})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "Makes «30 días» current again" in html and "«60 días»" in html
    assert [m.id for m in _active(w.s, w.current.subject, "plazo_pago")] == [w.current.id]


def test_member_cannot_delete_a_shared_memory(client, w):
    token = sign_in(client, w.member)
    assert client.post(f"/memories/{w.current.id}/delete",
                       data={"csrf_token": token, "confirmed": "yes"}).status_code == 403
    w.s.expire_all()
    assert w.s.get(Memory, w.current.id) is not None


def test_staff_has_no_memories_page(client, w):
    sign_in(client, w.staff)
    assert client.get("/memories").status_code == 403
    assert client.get(f"/memories/{w.current.id}").status_code == 403


# ------------------------------------------------------------------------------------ contacts

def test_contacts_list_only_readable_areas_with_fact_counts(client, w):
    sign_in(client, w.member)
    page = client.get("/contacts").get_data(as_text=True)
    assert "Talleres García S.L." in page and "Secret Supplier" not in page
    assert client.get(f"/contacts/{w.hidden_contact.id}").status_code == 404


def test_contact_page_shows_its_memories_and_pending_proposals(client, w, factory):
    p = factory.memory(w.org, subject=f"contact:{w.contact.id}", attribute="iban", value="ES00", status="proposed",
                       proposal_kind="bank_account", sentence="Nueva cuenta sin verificar.", area="contacts",
                       category="customer")
    sign_in(client, w.admin)
    page = client.get(f"/contacts/{w.contact.id}").get_data(as_text=True)
    assert "Talleres García paga a 60 días." in page and "Nueva cuenta sin verificar." in page
    assert f"/review/{p.id}" in page
    assert "Talleres García" in client.get("/contacts?q=garcia").get_data(as_text=True)


# ------------------------------------------------------------------------------------ traces and usage

def _trace(s, org, conv=None, channel="web", block="Memoria: <<<paga a 60 días>>>", user=None):
    t = MemoryTrace(org_id=org.id, channel=channel, block_text=block, tokens=12,
                    conversation_id=conv.id if conv else None, user_id=user.id if user else None)
    s.add(t)
    s.flush()
    return t


def test_admin_reads_her_orgs_traces_with_each_memory(client, w, factory):
    t = _trace(w.s, w.org, user=w.admin)
    w.s.add_all([TraceItem(trace_id=t.id, memory_id=w.current.id, block="profile", rank=1, score=0.91, chars=30,
                           used=True)])
    _trace(w.s, w.other, block="other org block")
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/traces").get_data(as_text=True)
    assert f"/traces/{t.id}" in page and "other org block" not in page
    detail = client.get(f"/traces/{t.id}").get_data(as_text=True)
    assert "&lt;&lt;&lt;paga a 60 días&gt;&gt;&gt;" in detail and "0.910" in detail and "used" in detail
    assert "Talleres García paga a 60 días." in detail
    assert not w.s.scalar(select(AuditLog.id).where(AuditLog.action.like("staff.view%")))


def test_admin_sees_which_memories_went_into_a_members_turn_but_not_its_personal_block(client, w):
    t = _trace(w.s, w.org, block="Ana: <<<hijo Juan>>>", user=w.member)
    w.s.add(TraceItem(trace_id=t.id, memory_id=w.current.id, block="related", rank=1, score=0.5, chars=30))
    w.s.commit()
    sign_in(client, w.admin)
    detail = client.get(f"/traces/{t.id}").get_data(as_text=True)
    assert "hijo Juan" not in detail and "shown only to them and to platform staff" in detail
    assert "Talleres García paga a 60 días." in detail


def test_traces_list_says_who_and_the_first_words_only_where_the_reader_may_see_the_message(client, w, factory):
    conv_admin = factory.conversation(w.org, w.admin)
    conv_member = factory.conversation(w.org, w.member)
    own = _trace(w.s, w.org, conv_admin, user=w.admin)
    own.message_id = factory.message(conv_admin, "Factura a Talleres García el trabajo de frenos").id
    theirs = _trace(w.s, w.org, conv_member, user=w.member)
    theirs.message_id = factory.message(conv_member, "Mi hijo está enfermo, salgo antes").id
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/traces").get_data(as_text=True)
    assert "Adam Admin" in page and "Marta Member" in page
    assert "Factura a Talleres García el trabajo de frenos" in page
    assert "Mi hijo está enfermo" not in page and "not shown to you" in page


def test_traces_filter_by_a_memory_was_used(client, w):
    used = _trace(w.s, w.org)
    unused = _trace(w.s, w.org)
    w.s.add_all([TraceItem(trace_id=used.id, memory_id=w.current.id, block="profile", rank=1, score=0.9, chars=30,
                           used=True),
                 TraceItem(trace_id=unused.id, memory_id=w.current.id, block="profile", rank=1, score=0.9, chars=30)])
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/traces?used=1").get_data(as_text=True)
    assert f"/traces/{used.id}" in page and f"/traces/{unused.id}" not in page


def test_traces_filter_by_channel_and_date(client, w):
    web = _trace(w.s, w.org, channel="web")
    wa = _trace(w.s, w.org, channel="whatsapp")
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/traces?channel=whatsapp").get_data(as_text=True)
    assert f"/traces/{wa.id}" in page and f"/traces/{web.id}" not in page
    assert f"/traces/{wa.id}" not in client.get("/traces?to=2000-01-01").get_data(as_text=True)
    assert client.get("/traces?from=yesterday").status_code == 422


def test_staff_reads_traces_of_every_org_and_each_view_is_audited(client, w):
    t = _trace(w.s, w.other, block="other org block")
    w.s.commit()
    sign_in(client, w.staff)
    assert f"/traces/{t.id}" in client.get("/traces").get_data(as_text=True)
    assert "other org block" in client.get(f"/traces/{t.id}").get_data(as_text=True)
    views = w.s.execute(select(AuditLog.action, AuditLog.org_id).where(AuditLog.actor_user_id == w.staff.id,
                                                                       AuditLog.action.like("staff.view%"))).all()
    assert ("staff.view.traces", None) in views and ("staff.view.trace", w.other.id) in views


def test_admin_cannot_open_another_orgs_trace_and_members_have_no_traces(client, w):
    t = _trace(w.s, w.other)
    w.s.commit()
    sign_in(client, w.admin)
    assert client.get(f"/traces/{t.id}").status_code == 404
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    sign_in(client, w.member)
    assert client.get("/traces").status_code == 403 and client.get("/usage").status_code == 403


def test_usage_sums_cost_and_calls_per_day_purpose_and_model_with_a_chart(client, w):
    now = dt.datetime.now(dt.timezone.utc)
    w.s.add_all([UsageLedger(org_id=w.org.id, purpose="gate", model="local", cost_usd=Decimal("0.0100"),
                             created_at=now),
                 UsageLedger(org_id=w.org.id, purpose="gate", model="local", cost_usd=Decimal("0.0200"),
                             created_at=now),
                 UsageLedger(org_id=w.org.id, purpose="extract", model="gpt-x", cost_usd=Decimal("0.5"),
                             created_at=now - dt.timedelta(days=2)),
                 UsageLedger(org_id=w.other.id, purpose="gate", model="local", cost_usd=Decimal("9"), created_at=now)])
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/usage").get_data(as_text=True)
    assert 'id="usage-total">$0.5300<' in page and 'id="usage-calls">3<' in page
    assert "<svg" in page and page.count("<rect") == 30 and "$0.0300" in page
    assert re.search(r"<td>gate</td><td>local</td><td>2</td>", page)
    assert client.get("/usage?since=2026-12-01&until=2026-01-01").status_code == 422


def test_staff_usage_covers_all_orgs_and_filters_by_org(client, w):
    now = dt.datetime.now(dt.timezone.utc)
    w.s.add_all([UsageLedger(org_id=w.org.id, purpose="gate", model="m", cost_usd=Decimal("1"), created_at=now),
                 UsageLedger(org_id=w.other.id, purpose="gate", model="m", cost_usd=Decimal("2"), created_at=now)])
    w.s.commit()
    sign_in(client, w.staff)
    assert 'id="usage-total">$3.0000<' in client.get("/usage").get_data(as_text=True)
    assert 'id="usage-total">$2.0000<' in client.get(f"/usage?org={w.other.id}").get_data(as_text=True)
    orgs = w.s.scalars(select(AuditLog.org_id).where(AuditLog.action == "staff.view.usage")
                       .order_by(AuditLog.id)).all()
    assert orgs == [None, w.other.id]


# ------------------------------------------------------------------------------------ audit log

def test_audit_log_is_searchable_and_scoped_to_the_org(client, w):
    from memory_core.domain import audit

    audit.record(w.s, actor_label="someone@else", action="memory.edited", org_id=w.other.id)
    audit.record(w.s, actor_label="olga@demo", action="settings.memory_mode", org_id=w.org.id)
    audit.record(w.s, actor_label="olga@demo", action="memory.pinned", org_id=w.org.id)
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/audit").get_data(as_text=True)
    assert "changed the memory mode" in page and "someone@else" not in page
    page = _rows(client.get("/audit?q=pinned"))
    assert "pinned a memory" in page and "changed the memory mode" not in page
    page = _rows(client.get("/audit?action=settings.memory_mode"))
    assert "changed the memory mode" in page and "pinned a memory" not in page


def test_audit_log_says_who_did_what_in_words_with_a_link_and_filters_by_who(client, w):
    from memory_core.domain import audit

    audit.record(w.s, actor_user_id=w.owner.id, actor_label="owner", action="memory.deleted", org_id=w.org.id,
                 details={"versions": 2})
    audit.record(w.s, actor_user_id=w.admin.id, actor_label="admin", action="memory.pinned", org_id=w.org.id,
                 target_type="memory", target_id=str(w.current.id))
    w.s.commit()
    w.admin.name = "Adam Renamed"  # the log shows people as they are now, not as they were
    w.s.commit()
    sign_in(client, w.owner)
    page = client.get("/audit").get_data(as_text=True)
    assert "Olga Owner deleted a memory with its 2 version(s)." in page and w.owner.email in page
    assert "Adam Renamed pinned a memory." in page and f'href="/memories/{w.current.id}"' in page
    assert "versions=2" not in page
    page = _rows(client.get(f"/audit?who={w.admin.id}"))
    assert "pinned a memory" in page and "deleted a memory" not in page
    page = _rows(client.get("/audit?q=renamed"))
    assert "pinned a memory" in page and "deleted a memory" not in page
    page = _rows(client.get(f"/audit?q={w.owner.email}"))
    assert "deleted a memory" in page and "pinned a memory" not in page


def test_audit_log_names_an_erased_operator_as_erased(client, w, factory):
    from memory_core.domain import audit

    gone = factory.member(w.org, role="admin", name="Gone Admin")
    audit.record(w.s, actor_user_id=gone.id, actor_label="admin", action="memory.pinned", org_id=w.org.id)
    w.s.commit()
    w.s.execute(text("delete from memberships where user_id = :u"), {"u": gone.id})
    w.s.execute(text("delete from users where id = :u"), {"u": gone.id})
    w.s.commit()
    sign_in(client, w.owner)
    page = client.get("/audit").get_data(as_text=True)
    assert "erased user pinned a memory." in page and "Gone Admin" not in page


def test_audit_log_has_no_way_to_change_entries(app):
    rules = [r for r in app.url_map.iter_rules() if r.rule.startswith("/audit")]
    assert rules and all(r.methods <= {"GET", "HEAD", "OPTIONS"} for r in rules)


def test_privacy_officer_and_staff_read_the_whole_audit_log_members_do_not(client, w):
    from memory_core.domain import audit

    audit.record(w.s, actor_label="someone@else", action="memory.edited", org_id=w.other.id)
    w.s.commit()
    for user in (w.privacy, w.staff):
        sign_in(client, user)
        assert "someone@else" in client.get("/audit").get_data(as_text=True)
        client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    sign_in(client, w.member)
    assert client.get("/audit").status_code == 403


# ------------------------------------------------------------------------------------ settings

def test_owner_switches_the_memory_mode_and_it_is_audited(client, w):
    token = sign_in(client, w.owner)
    resp = client.post("/settings/mode", data={"csrf_token": token, "memory_mode": "confirmation"},
                       follow_redirects=True)
    assert "Memory mode saved." in resp.get_data(as_text=True)
    w.s.expire_all()
    assert w.s.get(Organization, w.org.id).memory_mode == "confirmation"
    assert w.s.scalar(select(AuditLog.details).where(AuditLog.action == "settings.memory_mode")) == {
        "old": "automatic", "new": "confirmation"}
    resp = client.post("/settings/mode", data={"csrf_token": token, "memory_mode": "yolo"})
    assert resp.status_code == 422 and "Pick automatic or confirmation." in resp.get_data(as_text=True)


def test_owner_fixes_the_memory_block_language_and_it_is_audited(client, w):
    token = sign_in(client, w.owner)
    resp = client.post("/settings/language", data={"csrf_token": token, "language": "en"}, follow_redirects=True)
    assert "Memory block language saved." in resp.get_data(as_text=True)
    w.s.expire_all()
    assert w.s.get(Organization, w.org.id).settings["language"] == "en"
    assert w.s.scalar(select(AuditLog.details).where(AuditLog.action == "settings.language")) == {
        "old": "auto", "new": "en"}
    resp = client.post("/settings/language", data={"csrf_token": token, "language": "klingon"})
    assert resp.status_code == 422 and "Pick Spanish, English or automatic." in resp.get_data(as_text=True)
    client.post("/settings/language", data={"csrf_token": token, "language": ""})
    w.s.expire_all()
    assert "language" not in w.s.get(Organization, w.org.id).settings


def test_retention_may_only_be_tightened(client, w):
    token = sign_in(client, w.admin)
    resp = client.post("/settings/retention", data={"csrf_token": token, "superseded_days": "400",
                                                    "proposal_days": "30"})
    assert resp.status_code == 422 and "a whole number from 1 to 365" in resp.get_data(as_text=True)
    client.post("/settings/retention", data={"csrf_token": token, "superseded_days": "180", "proposal_days": "30"})
    w.s.expire_all()
    assert w.s.get(Organization, w.org.id).settings["retention"] == {"superseded_days": 180, "proposal_days": 30}


def test_exclusion_list_add_toggle_and_remove_org_rules(client, w):
    token = sign_in(client, w.admin)
    resp = client.post("/settings/exclusions", data={"csrf_token": token, "kind": "secret", "name": "proyectos",
                                                     "pattern": "(unclosed", "description": ""})
    assert resp.status_code == 422 and "not a valid regular expression" in resp.get_data(as_text=True)
    client.post("/settings/exclusions", data={"csrf_token": token, "kind": "secret", "name": "proyectos",
                                              "pattern": r"\bproyecto atlas\b", "description": "Confidential"})
    row = w.s.scalar(select(PolicyExclusion).where(PolicyExclusion.org_id == w.org.id))
    assert (row.name, row.enabled) == ("proyectos", True)
    assert "proyecto atlas" in client.get("/settings").get_data(as_text=True)
    client.post(f"/settings/exclusions/{row.id}", data={"csrf_token": token, "op": "toggle"})
    w.s.refresh(row)
    assert row.enabled is False
    client.post(f"/settings/exclusions/{row.id}", data={"csrf_token": token, "op": "remove"})
    w.s.expire_all()
    assert w.s.scalar(select(PolicyExclusion).where(PolicyExclusion.org_id == w.org.id)) is None


def test_platform_exclusion_rules_cannot_be_changed_from_an_org(client, w):
    token = sign_in(client, w.owner)
    seeded = w.s.scalar(select(PolicyExclusion).where(PolicyExclusion.org_id.is_(None)).limit(1))
    resp = client.post(f"/settings/exclusions/{seeded.id}", data={"csrf_token": token, "op": "remove"})
    assert resp.status_code == 404
    w.s.expire_all()
    assert w.s.get(PolicyExclusion, seeded.id) is not None


def test_members_and_staff_have_no_settings(client, w):
    token = sign_in(client, w.member)
    assert client.get("/settings").status_code == 403
    assert client.post("/settings/mode", data={"csrf_token": token, "memory_mode": "confirmation"}).status_code == 403
    w.s.expire_all()
    assert w.s.get(Organization, w.org.id).memory_mode == "automatic"


# ------------------------------------------------------------------------------------ jobs and dashboard

def test_jobs_page_lists_runs_with_counts_and_errors(client, w):
    w.s.add_all([JobRun(job="retention", status="succeeded", counts={"versions_removed": 3}, org_id=w.org.id),
                 JobRun(job="subject_sheets", status="failed", error="boom", org_id=w.org.id)])
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/jobs").get_data(as_text=True)
    assert "Versions removed: 3" in page and "boom" in page
    page = client.get("/jobs?job=retention").get_data(as_text=True)
    assert "Versions removed: 3" in page and "boom" not in page


def test_dashboard_per_role(client, w, factory):
    factory.memory(w.org, subject="org", attribute="p", value="v", status="proposed", proposal_kind="bank_account",
                   area="contacts")
    factory.memory(w.org, subject="org", attribute="q", value="v", status="proposed",
                   proposal_kind="low_permission", area="contacts")
    w.s.add(UsageLedger(org_id=w.org.id, purpose="gate", model="m", cost_usd=Decimal("1.25")))
    w.s.commit()
    sign_in(client, w.admin)
    page = client.get("/").get_data(as_text=True)
    assert 'id="pending-bank_account">1<' in page and 'id="pending-low_permission">1<' in page
    assert 'id="cost-month">$1.25<' in page and re.search(r'id="learnt-24h">\d+<', page)
    client.post("/logout", data={"csrf_token": csrf_from(page)})
    page = login(client, w.member.email, PASSWORD).get_data(as_text=True)
    assert "pending-bank_account" not in page and "cost-month" not in page and 'id="pending-low_permission">0<' in page
    client.post("/logout", data={"csrf_token": csrf_from(page)})
    page = login(client, w.privacy.email, PASSWORD).get_data(as_text=True)
    assert 'id="open-privacy">0<' in page and "pending-" not in page


def test_member_does_not_read_someone_elses_private_source_message(client, w):
    sign_in(client, w.member)
    page = client.get(f"/memories/{w.current.id}").get_data(as_text=True)
    assert "Talleres García paga a 60 días." in page  # the shared fact she may read
    assert "Ahora paga a 60 días." not in page and "that you may not see" in page


def test_member_never_reads_an_unverified_bank_account_in_memories(client, w, factory):
    bank = factory.memory(w.org, subject=f"contact:{w.contact.id}", attribute="cuenta_bancaria", value="ES66 FRAUDE",
                          status="proposed", proposal_kind="bank_account", sentence="Cuenta nueva sin verificar.",
                          area="contacts", category="customer")
    sign_in(client, w.member)
    assert "ES66 FRAUDE" not in client.get("/memories?status=proposed").get_data(as_text=True)
    assert client.get(f"/memories/{bank.id}").status_code == 404
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    sign_in(client, w.admin)
    assert "Cuenta nueva sin verificar." in client.get("/memories?status=proposed").get_data(as_text=True)


# ------------------------------------------------------------------------------------ error pages

def test_404_and_403_pages_keep_the_navigation_and_offer_a_way_back(client, w):
    sign_in(client, w.member)
    missing = client.get("/memories/00000000-0000-0000-0000-000000000000",
                         headers={"Referer": "http://localhost/memories?q=acme"})
    html = missing.get_data(as_text=True)
    assert missing.status_code == 404 and "Page not found" in html and 'class="mainnav"' in html
    assert 'href="/memories?q=acme"' in html
    forbidden = client.get("/api-keys")
    html = forbidden.get_data(as_text=True)
    assert forbidden.status_code == 403 and "You may not open this page" in html and 'class="mainnav"' in html


def test_error_page_never_links_back_off_site(client, w):
    sign_in(client, w.member)
    for referer in ("http://evil.example/x", "http://localhost//evil.example/x"):
        html = client.get("/nowhere", headers={"Referer": referer}).get_data(as_text=True)
        assert "evil.example" not in html


def test_api_paths_still_answer_json_errors(client, w):
    resp = client.get("/api/v1/nowhere")
    assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "not_found"


def test_jobs_page_refreshes_itself_only_while_a_run_is_in_progress(client, w):
    from memory_core.domain.models import JobRun

    sign_in(client, w.staff)
    w.s.add(JobRun(job="retention", status="succeeded", counts={}, triggered_by="cron"))
    w.s.commit()
    assert 'hx-trigger="every 3s"' not in client.get("/jobs").get_data(as_text=True)
    w.s.add(JobRun(job="retention", status="running", counts={}, triggered_by="cron"))
    w.s.commit()
    page = client.get("/jobs").get_data(as_text=True)
    assert 'hx-trigger="every 3s"' in page and 'hx-select="#job-runs"' in page and "refreshes itself" in page


def test_audit_log_pages_both_ways_with_a_total_and_refuses_a_huge_cursor(client, w):
    from memory_core.domain import audit

    for i in range(60):
        audit.record(w.s, actor_label="bot", action="memory.pinned", org_id=w.org.id, details={"n": i})
    w.s.commit()
    sign_in(client, w.owner)
    first = client.get("/audit?action=memory.pinned").get_data(as_text=True)
    assert 'id="list-total">60 entries<' in first and first.count("pinned a memory.") == 50
    nxt = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    second = client.get(nxt).get_data(as_text=True)
    assert second.count("pinned a memory.") == 10
    prev = re.search(r'rel="prev" href="([^"]+)"', second).group(1).replace("&amp;", "&")
    assert client.get(prev).get_data(as_text=True).count("pinned a memory.") == 50
    huge = client.get("/audit?after=" + "9" * 40)
    assert huge.status_code == 422 and "page link is not valid" in huge.get_data(as_text=True)
