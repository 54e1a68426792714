"""The console's lists scale: contacts, privacy requests, job runs, the review queue and its history, traces and
the audit log page both ways with a total, sort, filter and search (memories: tests/test_console_pages.py)."""
from __future__ import annotations

import datetime as dt
import re

from memory_core.domain.models import JobRun, MemoryTrace, PrivacyRequest
from tests.conftest import sign_in
from tests.test_console_pages import w  # noqa: F401  (a fixture)

BASE = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.timezone.utc)


def _link(html: str, rel: str) -> str | None:
    m = re.search(rf'rel="{rel}" href="([^"]+)"', html)
    return m.group(1).replace("&amp;", "&") if m else None


def _total(html: str) -> str:
    return re.search(r'id="list-total">([^<]+)<', html).group(1)


def _walk_both_ways(client, url: str, marker: str) -> tuple[list[str], list[str]]:
    """Every page forwards from `url`, then back again: the markers found on each page."""
    pages, html = [], client.get(url).get_data(as_text=True)
    while True:
        pages.append(html)
        nxt = _link(html, "next")
        if not nxt:
            break
        html = client.get(nxt).get_data(as_text=True)
    back = [html]
    while prev := _link(back[-1], "prev"):
        back.append(client.get(prev).get_data(as_text=True))
    found = lambda h: re.findall(marker, h)  # noqa: E731
    return [x for p in pages for x in found(p)], [x for p in reversed(back) for x in found(p)]


def test_contacts_page_both_ways_with_a_total_sort_by_name_filter_by_kind_and_search(client, w, factory):  # noqa: F811
    for i in range(60):
        factory.contact(w.org, name=f"Cliente {i:02d} | Sur", tax_id=f"B{i:08d}",
                        kind="supplier" if i % 3 == 0 else "customer")
    sign_in(client, w.owner)
    first = client.get("/contacts?q=Cliente").get_data(as_text=True)
    assert _total(first) == "60 contacts" and _link(first, "prev") is None
    forwards, backwards = _walk_both_ways(client, "/contacts?q=Cliente", r"Cliente (\d\d) \| Sur")
    assert forwards == [f"{i:02d}" for i in range(60)] == backwards  # every one once, A to Z, both ways
    z_to_a = client.get("/contacts?q=Cliente&sort=name_desc").get_data(as_text=True)
    assert z_to_a.index("Cliente 59 | Sur") < z_to_a.index("Cliente 58 | Sur") and "Cliente 09 | Sur" not in z_to_a
    suppliers = client.get("/contacts?q=Cliente&kind=supplier").get_data(as_text=True)
    assert _total(suppliers) == "20 contacts" and "Cliente 01 | Sur" not in suppliers
    one = client.get("/contacts?q=B00000042").get_data(as_text=True)
    assert _total(one) == "1 contacts" and "Cliente 42 | Sur" in one
    assert client.get("/contacts?after=nonsense").status_code == 422
    assert client.get("/contacts?sort=shoe-size").status_code == 422


def test_contacts_list_still_hides_contacts_of_areas_the_member_may_not_read(client, w):  # noqa: F811
    sign_in(client, w.member)
    page = client.get("/contacts").get_data(as_text=True)
    assert "Talleres García S.L." in page and "Secret Supplier" not in page and _total(page) == "1 contacts"


def _privacy_requests(s, n: int):
    for i in range(n):
        status = ("received", "verified", "executed", "rejected", "delivered")[i % 5]
        kind = "access" if status == "delivered" else ("erasure", "portability")[i % 2]
        s.add(PrivacyRequest(kind=kind, subject_type="phone", subject_ref=f"+3461100{i:04d}",
                             requested_by=f"Persona {i:02d}, by email", status=status, progress={},
                             created_at=BASE + dt.timedelta(hours=i), due_at=BASE + dt.timedelta(days=30, hours=-i)))
    s.commit()


def test_privacy_requests_page_both_ways_sort_filter_by_status_and_kind_and_search(client, w):  # noqa: F811
    _privacy_requests(w.s, 60)
    sign_in(client, w.privacy)
    first = client.get("/privacy").get_data(as_text=True)
    assert _total(first) == "60 requests" and "New request" in first
    forwards, backwards = _walk_both_ways(client, "/privacy", r"Persona (\d\d), by email")
    assert forwards == [f"{i:02d}" for i in range(59, -1, -1)] == backwards  # due soonest first
    newest = client.get("/privacy?sort=oldest").get_data(as_text=True)
    assert newest.index("Persona 00,") < newest.index("Persona 01,") and "Persona 59," not in newest
    open_ = client.get("/privacy?status=open").get_data(as_text=True)
    assert _total(open_) == "24 requests" and 'badge executed' not in open_ and 'badge delivered' not in open_
    closed = client.get("/privacy?status=closed&kind=access").get_data(as_text=True)
    assert _total(closed) == "12 requests" and "badge delivered" in closed and "badge received" not in closed
    found = client.get("/privacy?q=Persona+07").get_data(as_text=True)
    assert _total(found) == "1 requests" and "Persona 07, by email" in found
    assert client.get("/privacy?status=lost").status_code == 422
    assert client.get("/privacy?before=2026-13-01T00:00:00|x").status_code == 422


def test_job_runs_page_both_ways_filter_by_status_search_errors_and_sort(client, w):  # noqa: F811
    for i in range(60):
        w.s.add(JobRun(job="retention" if i % 2 else "subject_sheets", status="failed" if i % 10 == 0 else "succeeded",
                       started_at=BASE + dt.timedelta(minutes=i), finished_at=BASE + dt.timedelta(minutes=i, seconds=5),
                       counts={}, error=f"disk full on run {i}" if i % 10 == 0 else None, org_id=w.org.id,
                       triggered_by=f"console user {w.admin.id}" if i == 59 else f"schedule #{i:02d}"))
    w.s.commit()
    sign_in(client, w.admin)
    run = r"schedule #(\d\d)<"
    first = client.get("/jobs").get_data(as_text=True)
    assert _total(first) == "60 runs" and "schedule #58<" in first and "schedule #09<" not in first
    assert "Adam Admin" in first and w.admin.email in first  # who ran #59, as they are now
    forwards, backwards = _walk_both_ways(client, "/jobs", run)
    assert forwards == [f"{i:02d}" for i in range(58, -1, -1)] == backwards
    failed = client.get("/jobs?status=failed").get_data(as_text=True)
    assert _total(failed) == "6 runs" and re.findall(run, failed) == ["50", "40", "30", "20", "10", "00"]
    disk = client.get("/jobs?q=run+30").get_data(as_text=True)
    assert _total(disk) == "1 runs" and "disk full on run 30" in disk
    oldest = client.get("/jobs?sort=oldest&job=retention").get_data(as_text=True)
    assert re.findall(run, oldest)[:3] == ["01", "03", "05"]
    assert client.get("/jobs?status=asleep").status_code == 422


def test_review_queue_and_its_history_page_both_ways_with_the_filtered_total_and_sort(client, w, factory):  # noqa: F811
    for i in range(55):
        factory.memory(w.org, subject="org", attribute=f"propuesta_{i}", value=str(i), area="contacts",
                       sentence=f"Propuesta número {i}.", status="proposed", proposal_kind="low_permission",
                       created_at=BASE + dt.timedelta(minutes=i))
    for i in range(52):
        factory.memory(w.org, subject="org", attribute=f"decidida_{i}", value=str(i), area="contacts",
                       sentence=f"Decidida número {i}.", status="rejected", proposal_kind="low_permission",
                       created_at=BASE, decided_at=BASE + dt.timedelta(minutes=i))
    sign_in(client, w.admin)
    first = client.get("/review/?q=propuesta").get_data(as_text=True)
    assert _total(first) == "55 waiting" and first.index("Propuesta número 0.") < first.index("Propuesta número 1.")
    forwards, backwards = _walk_both_ways(client, "/review/?q=propuesta", r"Propuesta número (\d+)\.")
    assert forwards == [str(i) for i in range(55)] == backwards
    newest = client.get("/review/?q=propuesta&sort=newest").get_data(as_text=True)
    assert newest.index("Propuesta número 54.") < newest.index("Propuesta número 53.")
    assert "No proposal matches these filters" in client.get("/review/?area=invoices").get_data(as_text=True)
    history = client.get("/review/?state=decided&q=decidida").get_data(as_text=True)
    assert _total(history) == "52 decisions" and history.index("Decidida número 51.") < history.index("Decidida número 50.")
    forwards, backwards = _walk_both_ways(client, "/review/?state=decided&q=decidida", r"Decidida número (\d+)\.")
    assert forwards == [str(i) for i in range(51, -1, -1)] == backwards
    oldest = client.get("/review/?state=decided&q=decidida&sort=oldest").get_data(as_text=True)
    assert oldest.index("Decidida número 0.") < oldest.index("Decidida número 1.")


def test_traces_search_the_words_of_the_turn_and_sort_oldest_first(client, w, factory):  # noqa: F811
    conv = factory.conversation(w.org, w.owner)
    for i, words in enumerate(("¿Cuándo paga Talleres García?", "Envía el presupuesto de la grúa", "Gracias")):
        msg = factory.message(conv, words)
        w.s.add(MemoryTrace(org_id=w.org.id, user_id=w.owner.id, message_id=msg.id, conversation_id=conv.id,
                            channel="web", tokens=10, block_text="", created_at=BASE + dt.timedelta(minutes=i)))
    w.s.commit()
    sign_in(client, w.owner)
    found = client.get("/traces?q=presupuesto").get_data(as_text=True)
    assert _total(found) == "1 turns" and "Envía el presupuesto" in found and "Talleres García?" not in found
    assert _total(client.get("/traces?q=Olga").get_data(as_text=True)) == "3 turns"  # who the turn was for
    oldest = client.get("/traces?sort=oldest").get_data(as_text=True)
    assert oldest.index("¿Cuándo paga") < oldest.index("Envía el presupuesto") < oldest.index("Gracias")
    newest = client.get("/traces").get_data(as_text=True)
    assert newest.index("Gracias") < newest.index("¿Cuándo paga")


def test_audit_log_sorts_oldest_first(client, w):  # noqa: F811
    from memory_core.domain import audit

    for action in ("memory.pinned", "memory.unpinned"):
        audit.record(w.s, actor_label="bot", action=action, org_id=w.org.id, details={})
    w.s.commit()
    sign_in(client, w.owner)
    oldest = client.get("/audit?q=memory&sort=oldest").get_data(as_text=True)
    assert oldest.index("bot pinned a memory") < oldest.index("bot unpinned a memory")
    newest = client.get("/audit?q=memory").get_data(as_text=True)
    assert newest.index("bot unpinned a memory") < newest.index("bot pinned a memory")


def _facts_cell(html: str, name: str) -> str:
    return re.search(rf">{re.escape(name)}</a></td><td>[^<]*</td><td>[^<]*</td><td>([^<]+)</td>", html).group(1)


def test_contacts_list_counts_a_contacts_facts_up_to_twenty(client, w, factory):  # noqa: F811
    many, few = factory.contact(w.org, name="Muchos Datos S.L."), factory.contact(w.org, name="Pocos Datos S.L.")
    for contact, n in ((many, 21), (few, 3)):
        for i in range(n):
            factory.memory(w.org, subject=f"contact:{contact.id}", attribute=f"dato_{i}", value=str(i),
                           category="customer", area="contacts")
    sign_in(client, w.member)
    page = client.get("/contacts?q=Datos").get_data(as_text=True)
    assert _facts_cell(page, "Muchos Datos S.L.") == "20+" and _facts_cell(page, "Pocos Datos S.L.") == "3"


def test_contact_page_shows_the_first_facts_and_oldest_proposals_and_links_to_every_fact(client, w, factory,  # noqa: F811
                                                                                          monkeypatch):
    from console.services import curation

    monkeypatch.setattr(curation, "CONTACT_FACTS", 2)
    monkeypatch.setattr(curation, "CONTACT_PROPOSALS", 1)
    subject = f"contact:{w.contact.id}"
    for i in range(3):
        factory.memory(w.org, subject=subject, attribute=f"dato_{i}", value=str(i), sentence=f"Dato {i}.",
                       category="customer", area="contacts")
        factory.memory(w.org, subject=subject, attribute=f"propuesta_{i}", value=str(i), area="contacts",
                       sentence=f"Propuesta {i}.", status="proposed", proposal_kind="low_permission",
                       created_at=BASE + dt.timedelta(minutes=i))
    sign_in(client, w.admin)
    page = client.get(f"/contacts/{w.contact.id}").get_data(as_text=True)
    assert "The first 2 are shown:" in page and f"/memories?contact={w.contact.id}" in page
    assert "Propuesta 0." in page and "Propuesta 1." not in page and "The oldest 1 are shown" in page
    every = client.get(f"/memories?contact={w.contact.id}").get_data(as_text=True)
    assert all(f"Dato {i}." in every for i in range(3))


def test_filter_lists_offer_every_action_channel_and_job_of_the_org_and_no_other(client, w, factory):  # noqa: F811
    from memory_core.domain import audit

    for org, action in ((w.org, "memory.pinned"), (w.org, "memory.edited"), (w.org, "memory.pinned"),
                        (w.other, "memory.restored")):
        audit.record(w.s, actor_label="bot", action=action, org_id=org.id, details={})
    for org, channel in ((w.org, "web"), (w.org, "whatsapp"), (w.org, "web"), (w.other, "telegram")):
        conv = factory.conversation(org, None)
        msg = factory.message(conv, "hola")
        w.s.add(MemoryTrace(org_id=org.id, message_id=msg.id, conversation_id=conv.id, channel=channel, tokens=1,
                            block_text=""))
    for org, job in ((w.org, "retention"), (w.org, "org_indexes"), (w.other, "compaction")):
        w.s.add(JobRun(job=job, status="succeeded", org_id=org.id, triggered_by="schedule"))
    w.s.commit()
    sign_in(client, w.owner)
    options = lambda url: re.findall(r'<option value="([^"]+)"', client.get(url).get_data(as_text=True))  # noqa: E731
    assert {"memory.pinned", "memory.edited"} <= set(options("/audit")) and "memory.restored" not in options("/audit")
    assert {"web", "whatsapp"} <= set(options("/traces")) and "telegram" not in options("/traces")
    assert {"retention", "org_indexes"} <= set(options("/jobs")) and "compaction" not in options("/jobs")
    assert options("/audit").count("memory.pinned") == 1  # each action once


def test_queue_total_is_its_counter_unless_filtered_by_area_or_words(client, w, factory):  # noqa: F811
    for i, kind in enumerate(("low_permission", "low_permission", "low_permission", "confirmation", "confirmation")):
        factory.memory(w.org, subject="org", attribute=f"propuesta_{i}", value=str(i), area="contacts",
                       sentence=f"Propuesta número {i}.", status="proposed", proposal_kind=kind,
                       author_user_id=w.member.id, created_at=BASE + dt.timedelta(minutes=i))
    sign_in(client, w.admin)
    page = client.get("/review/").get_data(as_text=True)
    counters = {k: int(n) for k, n in re.findall(r'id="count-(\w+)">(\d+)<', page)}
    assert _total(page) == f"{sum(counters.values())} waiting"
    low = client.get("/review/?kind=low_permission").get_data(as_text=True)
    assert _total(low) == f"{counters['low_permission']} waiting" and counters["low_permission"] >= 3
    assert _total(client.get("/review/?kind=confirmation&area=contacts").get_data(as_text=True)) == "2 waiting"
