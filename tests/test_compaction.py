"""Conversation compaction: recent part verbatim, older part folded into points by operations."""
from __future__ import annotations

import datetime as dt

from rq import SimpleWorker
from sqlalchemy import select

from memory_core.backends.local_compactor import LocalCompactor
from memory_core.domain.model_port import Usage, critical_tokens
from memory_core.domain.models import ConversationSummary, JobRun, Message
from memory_core.reading.compaction import (
    Limits,
    active_points,
    apply_operations,
    compact_conversation,
    limits_for,
    needs_compaction,
    render_summary,
)

SMALL = Limits(keep_recent_tokens=50, threshold_tokens=400)

FIRST_PART = [
    ("user", "El cliente nuevo es Talleres García S.L., CIF B12345678, calle Mayor 3 de Burgos."),
    ("assistant", "Anotado: Talleres García S.L., CIF B12345678."),
    ("user", "Les facturé 1.250,00 € el 15/03/2026 por la reparación de frenos."),
    ("assistant", "Perfecto, factura F-2026-031 de 1.250,00 € con fecha 15/03/2026."),
    ("user", "Pagan a 60 días, no a 30."),
    ("user", "Prefiero que me trates de tú y que seas breve."),
    ("user",
     "Tengo que enviar el presupuesto de la furgoneta a Hierros Sánchez, CIF A87654321, antes del 2 de abril de 2026."),
    ("user", "¿Cuánto nos debe Talleres García en total?"),
]
SECOND_PART = [
    ("user", "Otro cliente: Panadería Ruiz, NIF 12345678Z, pide 300 € al mes."),
    ("assistant", "Apuntado: Panadería Ruiz, 300 € al mes."),
    ("user", "Ya he enviado el presupuesto de la furgoneta a Hierros Sánchez, hecho."),
    ("user", "Hablemos ahora del seguro del local y de la renovación del alquiler del taller."),
]
FILLER = [("user", "Seguimos con otros temas de la semana: proveedores, horarios y el inventario del almacén."),
          ("assistant", "De acuerdo, seguimos con esos temas cuando quieras.")]


def _add(factory, conv, turns, start):
    rows = []
    for i, (role, text) in enumerate(turns):
        rows.append(factory.message(conv, text, role=role,
                                    created_at=start + dt.timedelta(minutes=len(rows) + i)))
    return rows


def _summary(session, conv):
    session.expire_all()
    return session.get(ConversationSummary, conv.id)


def _identifiers(content) -> set[str]:
    return set().union(*(critical_tokens(p["text"]) for p in active_points(content))) if content else set()


def test_recent_part_stays_verbatim_and_older_part_is_folded(factory, system_session):
    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user)
    t0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc)
    older = _add(factory, conv, FIRST_PART, t0)
    recent = _add(factory, conv, FILLER, t0 + dt.timedelta(hours=1))
    result = compact_conversation(system_session, conv.id, compactor=LocalCompactor(), limits=SMALL)
    system_session.commit()
    assert result.compacted and result.folded_messages == len(older)
    summary = _summary(system_session, conv)
    assert summary.covered_until == older[-1].created_at
    assert summary.covered_until < recent[0].created_at
    cited = {m for p in summary.content["points"] for m in p["message_ids"]}
    assert cited <= {str(m.id) for m in older}
    assert all(p["id"] and p["section"] for p in summary.content["points"])


def test_two_successive_compactions_keep_every_tax_id_amount_and_date_of_the_first(factory, system_session):
    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user)
    t0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc)
    _add(factory, conv, FIRST_PART + FILLER, t0)
    compact_conversation(system_session, conv.id, compactor=LocalCompactor(), limits=SMALL)
    system_session.commit()
    first = _summary(system_session, conv).content
    first_ids = _identifiers(first)
    assert {"b12345678", "1.250,00€", "15/03/2026", "a87654321", "60días"} <= first_ids

    _add(factory, conv, SECOND_PART + FILLER, t0 + dt.timedelta(hours=2))
    compact_conversation(system_session, conv.id, compactor=LocalCompactor(), limits=SMALL)
    system_session.commit()
    second = _summary(system_session, conv)
    assert second.compactions == 2
    assert first_ids <= _identifiers(second.content)
    assert {"12345678z", "300€"} <= _identifiers(second.content)
    # the task said to be done became a decision, identifiers included, by an explicit operation
    task = next(p for p in second.content["points"] if "presupuesto de la furgoneta" in p["text"])
    assert task["section"] == "decisions" and task["text"].startswith("Hecho: ") and not task["retired"]


class ForgetfulModel:
    """A model that rewrote the summary from scratch: it mentions none of the old points and
    'changes' one so that it loses its tax ID."""
    name = "forgetful"

    def __init__(self, change_id: str):
        self.change_id = change_id

    def compact(self, points, messages):
        ops = [{"op": "add", "section": "facts", "text": "Se habló de otros temas.",
                "message_ids": [messages[0].id]},
               {"op": "change", "id": self.change_id, "text": "Talleres García es cliente."}]
        return ops, Usage(purpose="compact", model="forgetful", input_tokens=900, output_tokens=40, cost_usd=0.001)


def test_a_model_that_forgets_points_or_drops_identifiers_loses_nothing(factory, system_session):
    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user)
    t0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc)
    _add(factory, conv, FIRST_PART + FILLER, t0)
    compact_conversation(system_session, conv.id, compactor=LocalCompactor(), limits=SMALL)
    system_session.commit()
    first = _summary(system_session, conv).content
    cif_point = next(p for p in first["points"] if "B12345678" in p["text"])

    _add(factory, conv, SECOND_PART + FILLER, t0 + dt.timedelta(hours=2))
    result = compact_conversation(system_session, conv.id, compactor=ForgetfulModel(cif_point["id"]), limits=SMALL)
    system_session.commit()
    second = _summary(system_session, conv).content
    assert _identifiers(first) <= _identifiers(second)
    kept = next(p for p in second["points"] if p["id"] == cif_point["id"])
    assert kept["text"] == cif_point["text"] and not kept["retired"]
    assert any("would drop" in r for r in result.report.rejected)
    # the model's usage is in the ledger
    from memory_core.domain.models import UsageLedger
    assert system_session.scalar(select(UsageLedger.purpose).where(UsageLedger.model == "forgetful")) == "compact"


def test_a_point_is_retired_only_by_an_explicit_operation():
    content = {"points": [], "next_id": 1}
    content, _ = apply_operations(content, [
        {"op": "add", "section": "facts", "text": "CIF B12345678", "message_ids": ["m1"]},
        {"op": "add", "section": "open_tasks", "text": "Enviar presupuesto", "message_ids": ["m2"]},
    ], known_message_ids={"m1", "m2"}, compaction=1)
    assert [p["id"] for p in active_points(content)] == ["p1", "p2"]

    # operations that do not mention p1, or name it wrongly, leave it alone
    content, report = apply_operations(content, [
        {"op": "add", "section": "facts", "text": "Otra cosa", "message_ids": ["m3"]},
        {"op": "retire", "id": "p99"},
        {"op": "delete", "id": "p1"},
        {"op": "change", "id": "p2", "text": "Enviar presupuesto a Hierros", "message_ids": ["m3", "elsewhere"]},
    ], known_message_ids={"m1", "m2", "m3"}, compaction=2)
    assert [p["id"] for p in active_points(content)] == ["p1", "p2", "p3"]
    assert len(report.rejected) == 2
    p2 = next(p for p in content["points"] if p["id"] == "p2")
    assert p2["message_ids"] == ["m2", "m3"] and p2["previous"] == ["Enviar presupuesto"]

    content, report = apply_operations(content, [{"op": "retire", "id": "p1", "reason": "corrected"}],
                                       known_message_ids=set(), compaction=3)
    assert report.retired == ["p1"]
    assert [p["id"] for p in active_points(content)] == ["p2", "p3"]
    assert "B12345678" not in render_summary(content) and "[p2]" in render_summary(content)


def test_thresholds_are_per_channel_and_an_org_may_change_them(factory, system_session):
    assert limits_for("web") == Limits(4000, 20000)
    assert limits_for("whatsapp") == Limits(3000, 16000)
    assert limits_for("whatsapp", {"compaction": {"whatsapp": {"keep_recent_tokens": 1000,
                                                               "threshold_tokens": 8000}}}) == Limits(1000, 8000)
    assert limits_for("web", {"compaction": {"web": {"keep_recent_tokens": 9000, "threshold_tokens": 10}}}) \
        == Limits(4000, 20000)  # nonsense override ignored
    org = factory.org()
    user = factory.member(org)
    web = factory.conversation(org, user, channel="web")
    wa = factory.conversation(org, user, channel="whatsapp", phone="+34600111222")
    assert not needs_compaction(system_session, web, prompt_tokens=17000)
    assert needs_compaction(system_session, wa, prompt_tokens=17000)
    assert needs_compaction(system_session, web, prompt_tokens=20000)
    # without a reported size, the stored history is measured
    factory.message(web, "x" * 4 * 21000)
    assert needs_compaction(system_session, web)
    assert not needs_compaction(system_session, wa)


def test_the_compaction_job_runs_on_a_real_worker(factory, system_session, redis_conn):
    from jobs.compaction import enqueue_compaction
    from memory_core.adapters.queue import get_queue

    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user, channel="whatsapp", phone="+34600111222")
    t0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc)
    # 3,000 recent tokens kept on WhatsApp: a long history gets folded
    _add(factory, conv, FIRST_PART + [("user", "Más detalles del pedido de la semana. " * 60)] * 8, t0)
    enqueue_compaction(conv.id)
    enqueue_compaction(conv.id)  # queued twice: one job
    queue = get_queue()
    assert queue.count == 1
    SimpleWorker([queue], connection=redis_conn).work(burst=True)
    summary = _summary(system_session, conv)
    assert summary.compactions == 1 and "B12345678" in render_summary(summary.content)
    assert system_session.scalar(select(JobRun.status).where(JobRun.job == "compaction")) == "ok"
    uncovered = system_session.scalars(select(Message).where(Message.conversation_id == conv.id,
                                                             Message.created_at > summary.covered_until)).all()
    assert 0 < sum(len(m.text) / 4 + 4 for m in uncovered) <= 3000


def test_the_openai_compactor_sends_points_and_messages_and_its_operations_are_applied(factory, system_session):
    """A real HTTP server speaking the chat completions API: first a malformed answer, then operations."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import openai

    from memory_core.backends.openai_compactor import OpenAICompactor
    from memory_core.domain.models import UsageLedger

    org = factory.org()
    user = factory.member(org)
    conv = factory.conversation(org, user)
    t0 = dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc)
    rows = _add(factory, conv, FIRST_PART[:3] + FILLER, t0)
    requests, answers = [], ["this is not json", None]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            doc = json.loads(body["messages"][1]["content"])
            content = answers.pop(0) or json.dumps({"operations": [
                {"op": "add", "section": "facts", "text": "Talleres García S.L., CIF B12345678.",
                 "message_ids": [doc["messages"][0]["id"], "not-a-message"], "id": None, "reason": None}]})
            raw = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini",
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": content}}],
                              "usage": {"prompt_tokens": 500, "completion_tokens": 40, "total_tokens": 540}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = openai.OpenAI(api_key="test", base_url=f"http://127.0.0.1:{server.server_port}/v1", max_retries=0)
        result = compact_conversation(system_session, conv.id, compactor=OpenAICompactor(client), limits=SMALL)
        system_session.commit()
    finally:
        server.shutdown()
        server.server_close()
    assert len(requests) == 2  # the malformed answer was asked again
    sent = json.loads(requests[0]["messages"][1]["content"])
    assert [m["id"] for m in sent["messages"]] == [str(r.id) for r in rows[:3]]
    assert requests[0]["response_format"]["json_schema"]["strict"] is True
    point = _summary(system_session, conv).content["points"][0]
    assert point["message_ids"] == [str(rows[0].id)]  # an id outside the conversation was dropped
    assert result.report.added == ["p1"]
    ledger = system_session.scalar(select(UsageLedger).where(UsageLedger.purpose == "compact"))
    assert (ledger.input_tokens, ledger.output_tokens) == (1000, 80) and float(ledger.cost_usd) > 0
