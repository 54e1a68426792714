"""The Python client: retries on 429/5xx with backoff, timeouts, clear errors, and no server imports.

Real HTTP servers only: a scripted stdlib server for the failure modes, the real app for the rest."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from client.memoria_client import ApiError, MemoriaClient, TransportError

ROOT = Path(__file__).resolve().parent.parent


class Scripted:
    """A real HTTP server answering from a script: each entry (status, body, headers, delay) once, then 200.
    `keep_alive`: it speaks HTTP/1.1 and keeps a connection open between requests, but for those whose numbers
    (from 1) are in `drop_after`, after which it closes the connection without saying so."""

    def __init__(self, script, keep_alive=False, drop_after=()):
        self.script, self.requests, self.connections = list(script), [], []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
                outer.connections.append(self.client_address)
                if len(outer.requests) in drop_after:
                    self.close_connection = True
                status, body, headers, delay = outer.script.pop(0) if outer.script else (200, {"hits": []}, {}, 0)
                time.sleep(delay)
                raw = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: that is the point of the delay

            do_GET = do_POST = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_port}"


def _err(status, code="x", field=None):
    return {"error": {"code": code, "message": f"status {status}", "field": field}}


def test_retries_429_and_5xx_then_succeeds_honouring_retry_after():
    script = [(429, _err(429, "rate_limited"), {"Retry-After": "0"}, 0), (503, _err(503), {}, 0),
              (200, {"hits": [{"kind": "memory"}]}, {}, 0)]
    with Scripted(script) as srv:
        client = MemoriaClient(srv.url, "mem_test_key", backoff=0.01)
        assert client.search("frenos", user_id="u1") == [{"kind": "memory"}]
        assert len(srv.requests) == 3
        method, path, headers, body = srv.requests[-1]
        assert (method, path) == ("POST", "/api/v1/search")
        assert headers["Authorization"] == "Bearer mem_test_key" and json.loads(body)["query"] == "frenos"


def test_gives_up_after_max_retries_with_the_servers_error():
    with Scripted([(500, _err(500, "internal_error"), {}, 0)] * 5) as srv:
        client = MemoriaClient(srv.url, "k", max_retries=2, backoff=0.01)
        with pytest.raises(ApiError) as exc:
            client.search("x", user_id="u")
        assert exc.value.status == 500 and exc.value.code == "internal_error"
        assert len(srv.requests) == 3


def test_client_errors_are_not_retried_and_name_the_field():
    with Scripted([(422, _err(422, "invalid_input", "text"), {}, 0)]) as srv:
        with pytest.raises(ApiError) as exc:
            MemoriaClient(srv.url, "k", backoff=0.01).ingest(channel="web", conversation="c", external_id="m",
                                                            role="user", text="x", user_id="u")
        assert (exc.value.status, exc.value.code, exc.value.field) == (422, "invalid_input", "text")
        assert len(srv.requests) == 1


def test_a_redirect_is_an_error_naming_its_status_not_an_answer():
    with Scripted([(301, {}, {"Location": "https://memoria.example/api/v1/search"}, 0)]) as srv:
        with pytest.raises(ApiError) as exc:
            MemoriaClient(srv.url, "k", backoff=0.01).search("x", user_id="u")
    assert exc.value.status == 301 and len(srv.requests) == 1


def test_a_slow_server_times_out_and_is_retried_then_reported():
    with Scripted([(200, {"hits": []}, {}, 1.0)] * 3) as srv:
        client = MemoriaClient(srv.url, "k", timeout=0.2, max_retries=1, backoff=0.01)
        started = time.monotonic()
        with pytest.raises(TransportError):
            client.search("x", user_id="u")
        assert len(srv.requests) == 2 and time.monotonic() - started < 2


def test_an_unreachable_server_is_a_transport_error():
    with Scripted([]) as srv:
        url = srv.url
    with pytest.raises(TransportError):
        MemoriaClient(url, "k", max_retries=1, backoff=0.01, timeout=1).search("x", user_id="u")


def test_calls_share_one_connection_and_one_the_server_dropped_while_idle_is_opened_again():
    with Scripted([], keep_alive=True, drop_after=(2,)) as srv:
        client = MemoriaClient(srv.url, "k", max_retries=0)
        for _ in range(4):
            assert client.search("x", user_id="u") == []
    # One connection for the first two calls; the server closed it after the second without a word, and the third
    # went on a new one (sent once: no retry was left), which the fourth shared.
    assert len(srv.requests) == 4
    first, second, third, fourth = srv.connections
    assert first == second and third == fourth and second != third


def test_a_proxy_the_environment_names_is_gone_through_and_the_rest_of_the_process_is_left_alone(monkeypatch):
    with Scripted([]) as proxy, monkeypatch.context() as env:
        env.setenv("HTTP_PROXY", proxy.url)
        env.delenv("NO_PROXY", raising=False)
        env.delenv("no_proxy", raising=False)
        assert MemoriaClient("http://memoria.invalid:5000", "k", max_retries=0).search("x", user_id="u") == []
    [(method, path, headers, _)] = proxy.requests
    assert (method, path) == ("POST", "http://memoria.invalid:5000/api/v1/search")
    # The proxy was the client's alone: the process's own urllib calls go straight to their server afterwards
    # (urllib's global opener, built once, would have kept it for good).
    with Scripted([]) as srv:
        assert urllib.request.urlopen(f"{srv.url}/ping", timeout=5).status == 200
    assert [r[1] for r in srv.requests] == ["/ping"]


def test_the_client_imports_neither_flask_nor_server_code():
    code = ("import sys; import client.memoria_client; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('flask', 'werkzeug', 'memory_core', 'api', 'console', 'review', 'jobs', 'sqlalchemy', 'app')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# Each of the client's answer types and the API model it describes (the client imports no server code, so the
# answer's shape is written on both sides; this keeps the two from drifting apart).
CLIENT_TYPES = {"IngestResult": "IngestOut", "ContextItem": "ContextItemOut", "MemoryBlock": "ContextOut",
                "WriteResult": "WriteOut", "RememberResult": "RememberOut", "Hit": "HitOut", "Memory": "MemoryOut",
                "SubjectMemories": "SubjectsOut", "Message": "MessageOut", "Point": "PointOut",
                "Retrieved": "RetrieveOut", "History": "HistoryOut", "LinkCode": "LinkCodeOut", "Person": "PersonOut",
                "AuthorizedPhone": "PhoneOut", "Organization": "OrganizationOut", "MySource": "MySourceOut",
                "MyMemory": "MyMemoryOut", "MySubject": "MySubjectOut", "MySection": "MySectionOut",
                "MyMemories": "MyMemoriesOut", "MyEdit": "MyEditOut", "Learning": "LearningOut", "Turn": "TurnOut"}


def test_client_answer_types_name_every_field_the_api_answers_with():
    import typing

    import api.provisioning_schemas
    import api.schemas
    import client.memoria_client

    typed = {n for n, t in vars(client.memoria_client).items() if isinstance(t, type) and typing.is_typeddict(t)}
    assert typed == set(CLIENT_TYPES), "a client answer type without its API model in CLIENT_TYPES"
    for name, model in CLIENT_TYPES.items():
        fields = getattr(api.schemas, model, None) or getattr(api.provisioning_schemas, model)
        assert set(getattr(client.memoria_client, name).__annotations__) == set(fields.model_fields), name


def test_against_the_real_app(app, factory, system_session):
    from memory_core.tenancy.api_keys import create_api_key

    org = factory.org()
    ana = factory.member(org, role="owner")
    _, key = create_api_key(system_session, org.id, "client test", created_by=ana.id, actor_label="test")
    system_session.commit()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        client = MemoriaClient(url, key)
        first = client.ingest(channel="web", conversation="chat-1", external_id="m-1", role="user",
                              text="El CIF de Talleres García es B12345678.", user_id=str(ana.id))
        again = client.ingest(channel="web", conversation="chat-1", external_id="m-1", role="user",
                              text="El CIF de Talleres García es B12345678.", user_id=str(ana.id))
        assert first["stored"] and again["duplicate"] and again["message_id"] == first["message_id"]
        found = client.retrieve(first["conversation_id"], user_id=str(ana.id), query="B12345678")
        assert [m["text"] for m in found["messages"]] == ["El CIF de Talleres García es B12345678."]
        # a turn in two calls: the person's message with its block, then the reply with what it used
        factory.memory(org, attribute="plazo_pago", value="60 días", sentence="Talleres García paga a 60 días.")
        turn = client.turn(channel="web", conversation="chat-1", external_id="m-3", user_id=str(ana.id),
                           text="¿A cuántos días paga Talleres García?")
        block = turn["context"]
        assert turn["message"]["stored"] and "60 días" in block["text"]
        reply = client.ingest(channel="web", conversation="chat-1", external_id="m-4", role="assistant",
                              text="A 60 días.", user_id=str(ana.id), used=(block["trace_id"], block["memory_ids"]))
        assert reply["stored"] and reply["marked"] == len(block["memory_ids"]) >= 1
        with pytest.raises(ApiError) as exc:
            MemoriaClient(url, "mem_wrong_key", max_retries=0).search("x", user_id=str(ana.id))
        assert exc.value.status == 401 and exc.value.code == "unauthorized"
        with pytest.raises(ApiError) as exc:
            client.ingest(channel="web", conversation="chat-1", external_id="m-2", role="user", text="a\x00b",
                          user_id=str(ana.id))
        assert exc.value.status == 400 and exc.value.field == "text"
        assert "mem_" not in repr(client)
    finally:
        server.shutdown()
        thread.join(timeout=10)
