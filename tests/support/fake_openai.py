"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI API for memoria's tests.

One module on purpose (~480 lines): the server, its scripted answers and its checks of what memoria
sends (schemas, parameters) are one fake of one provider.

POST /v1/chat/completions
    * a gate request (``logprobs: true``) is answered with the seven comma-separated digits of
      memoria's gate protocol, each answer token carrying ``top_logprobs`` drawn from a scripted
      distribution (plus a little mass on a non-answer token, as real models have);
    * an extraction request (``response_format.type == "json_schema"``) is answered with
      ``{"facts": [...]}`` as the message content; the schema sent is checked to be valid for strict
      mode (every property required, ``additionalProperties: false``) or the server answers 400.
    Answers are looked up in a table keyed by message text (a key matches when it occurs in the
    request's last user message, which memoria sends as a JSON document); unscripted text gets a
    "nothing to remember" gate answer and no facts.
POST /v1/embeddings
    deterministic bag-of-words vectors (``dimensions`` of them, 1536 by default), float or base64.

Every request is recorded (``server.requests``). The next requests can be made to fail:
``server.fail_next(n, kind, path=None)`` with kind one of

    "429"        HTTP 429 with ``Retry-After`` (``retry_after``, default "0")
    "500"        HTTP 500
    "status"     HTTP ``status`` (e.g. 400, 503)
    "hang"       wait ``hang_seconds`` before answering (longer than the client's timeout)
    "malformed"  HTTP 200 with wrong content: non-JSON extraction text, a non-digit gate answer,
                 embeddings of the wrong dimension
    "schema"     HTTP 200 with JSON that breaks the schema: a fact missing fields, a gate answer with
                 an out-of-range code, too few embeddings
    "badjson"    HTTP 200 whose body is not JSON at all

Use the ``fake_openai`` fixture (import it into the test module) or ``FakeOpenAI()`` as a context
manager.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory_core.backends.openai_backend import CATEGORY_CODES, GATE_QUESTIONS, SCOPE_CODES

FAILURE_KINDS = ("429", "500", "status", "hang", "malformed", "schema", "badjson")

# The gate answer for text nobody scripted: small talk.
DEFAULT_GATE = {
    "remember": 0.08, "category": {"nothing": 0.9, "person": 0.05, "preference": 0.05},
    "scope": {"personal": 0.8, "shared": 0.2}, "corrects": 0.02, "insult": 0.01, "special": 0.01,
    "bank_account": 0.01,
}
# Share of each answer position's probability mass given to a token that is no valid answer.
NOISE_MASS = 0.03


@dataclass
class Failure:
    kind: str
    path: str | None = None
    status: int = 500
    retry_after: str | None = "0"


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    answered: str = ""  # "ok" or the failure kind
    at: float = field(default_factory=time.monotonic)  # when it arrived (monotonic seconds)


@dataclass
class _GateScript:
    positions: list[dict[str, float]]


@dataclass
class _State:
    gate: dict[str, _GateScript] = field(default_factory=dict)
    facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failures: deque = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    cached_tokens: int = 0
    logprobs_supported: bool = True


def gate_positions(
    remember: float,
    category: dict[str, float] | str = "nothing",
    scope: dict[str, float] | str = "personal",
    corrects: float = 0.0,
    insult: float = 0.0,
    special: float = 0.0,
    bank_account: float = 0.0,
) -> list[dict[str, float]]:
    """memoria's gate answer, as one {digit: probability} per answer position."""
    if isinstance(category, str):
        category = {category: 1.0}
    if isinstance(scope, str):
        scope = {scope: 1.0}
    category_digit = {name: code for code, name in CATEGORY_CODES.items()}
    scope_digit = {name: code for code, name in SCOPE_CODES.items()}
    values = {
        "remember": {"1": remember, "0": 1.0 - remember},
        "category": {category_digit[name]: p for name, p in category.items()},
        "scope": {scope_digit[name]: p for name, p in scope.items()},
        "corrects": {"1": corrects, "0": 1.0 - corrects},
        "insult": {"1": insult, "0": 1.0 - insult},
        "special": {"1": special, "0": 1.0 - special},
        "bank_account": {"1": bank_account, "0": 1.0 - bank_account},
    }
    return [values[q.key] for q in GATE_QUESTIONS]


def _words(text: str) -> list[str]:
    return [w for w in "".join(ch.lower() if ch.isalnum() else " " for ch in text).split() if w]


def bag_of_words_vector(text: str, dims: int) -> list[float]:
    """Deterministic: the normalised sum of one pseudo-random vector per word."""
    acc = [0.0] * dims
    for word in _words(text) or [""]:
        seed = hashlib.sha256(word.encode()).digest()
        stream = b""
        counter = 0
        while len(stream) < 4 * dims:
            stream += hashlib.sha256(seed + counter.to_bytes(4, "little")).digest()
            counter += 1
        for i, (u,) in enumerate(struct.iter_unpack("<I", stream[: 4 * dims])):
            acc[i] += u / 2**31 - 1.0
    norm = math.sqrt(sum(x * x for x in acc)) or 1.0
    return [x / norm for x in acc]


def _count_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def _strict_schema_problem(schema: Any, where: str = "$") -> str | None:
    """Why a schema would be refused in strict mode, or None."""
    if not isinstance(schema, dict):
        return f"{where}: schema is not an object"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return f"{where}: additionalProperties must be false"
        if sorted(schema.get("required", [])) != sorted(props):
            return f"{where}: every property must be required"
        for name, sub in props.items():
            problem = _strict_schema_problem(sub, f"{where}.{name}")
            if problem:
                return problem
    if "array" in kinds:
        return _strict_schema_problem(schema.get("items"), f"{where}[]")
    return None


class FakeOpenAI:
    def __init__(self, hang_seconds: float = 3.0):
        self.hang_seconds = hang_seconds
        self._state = _State()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------------
    def script_gate(self, text: str, remember: float, category: dict[str, float] | str = "nothing",
                    scope: dict[str, float] | str = "personal", corrects: float = 0.0, insult: float = 0.0,
                    special: float = 0.0, bank_account: float = 0.0) -> None:
        positions = gate_positions(remember, category, scope, corrects, insult, special, bank_account)
        with self._lock:
            self._state.gate[text] = _GateScript(positions)

    def script_facts(self, text: str, facts: list[dict[str, Any]]) -> None:
        """Facts as the model would return them: subject, attribute, value, sentence, category, event_date,
        event_until (default null), source_sentence (default: the scripted text) and corrects (default false)."""
        with self._lock:
            self._state.facts[text] = [dict({"event_date": None, "event_until": None, "source_sentence": text,
                                             "corrects": False}, **f)
                                       for f in facts]

    def fail_next(self, n: int, kind: str, *, path: str | None = None, status: int = 500,
                  retry_after: str | None = "0") -> None:
        if kind not in FAILURE_KINDS:
            raise ValueError(f"kind must be one of {FAILURE_KINDS}")
        with self._lock:
            for _ in range(n):
                self._state.failures.append(Failure(kind, path, status, retry_after))

    def set_cached_tokens(self, n: int) -> None:
        with self._lock:
            self._state.cached_tokens = n

    def set_logprobs_supported(self, supported: bool) -> None:
        with self._lock:
            self._state.logprobs_supported = supported

    def reset(self) -> None:
        with self._lock:
            self._state = _State()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._state.requests)

    def requests_to(self, path_suffix: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith(path_suffix)]

    # -- internals used by the handler ----------------------------------------------------------
    def _take_failure(self, path: str) -> Failure | None:
        with self._lock:
            for i, failure in enumerate(self._state.failures):
                if failure.path is None or path.endswith(failure.path):
                    del self._state.failures[i]
                    return failure
        return None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._state.requests.append(request)

    def _lookup(self, table: dict[str, Any], content: str) -> Any:
        haystacks = [content]
        try:
            document = json.loads(content)
            if isinstance(document, dict):
                haystacks.append(str(document.get("mensaje") or ""))
        except ValueError:
            pass
        with self._lock:
            items = sorted(table.items(), key=lambda kv: -len(kv[0]))  # the most specific key wins
        for key, value in items:
            if any(key in h for h in haystacks):
                return value
        return None


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    # -- plumbing -------------------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload, ensure_ascii=False).encode(), headers)

    def _send_raw(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": kind}}, headers)

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server_fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        record = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        fake._record(record)
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            record.answered = "401"
            return self._error(401, "missing API key", "invalid_api_key")
        if not isinstance(body, dict):
            record.answered = "400"
            return self._error(400, "body is not a JSON object", "invalid_request_error")
        failure = fake._take_failure(self.path)
        record.answered = failure.kind if failure else "ok"
        if failure is not None:
            if failure.kind == "429":
                headers = {"Retry-After": failure.retry_after} if failure.retry_after is not None else {}
                return self._error(429, "Rate limit reached", "rate_limit_exceeded", headers)
            if failure.kind == "500":
                return self._error(500, "The server had an error", "server_error")
            if failure.kind == "status":
                return self._error(failure.status, f"scripted HTTP {failure.status}", "scripted")
            if failure.kind == "badjson":
                return self._send_raw(200, b'{"id": "chatcmpl-broken", "choices": [')
            if failure.kind == "hang":
                fake._stopping.wait(fake.hang_seconds)
                # then answer normally, long after the client gave up
        mode = failure.kind if failure is not None and failure.kind in ("malformed", "schema") else None
        if self.path.rstrip("/").endswith("/chat/completions"):
            return self._chat(body, mode)
        if self.path.rstrip("/").endswith("/embeddings"):
            return self._embeddings(body, mode)
        record.answered = "404"
        return self._error(404, f"no route {self.path}", "not_found")

    # -- chat completions -----------------------------------------------------------------------
    def _chat(self, body: dict[str, Any], mode: str | None) -> None:
        fake = self.server_fake
        messages = body.get("messages")
        model = body.get("model")
        if not model or not isinstance(messages, list) or not messages:
            return self._error(400, "model and messages are required", "invalid_request_error")
        user_content = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            spec = response_format.get("json_schema") or {}
            if spec.get("strict") is True:
                problem = _strict_schema_problem(spec.get("schema"))
                if problem:
                    return self._error(400, f"Invalid schema for response_format: {problem}", "invalid_request_error")
            content, tokens = self._extraction_content(user_content, mode)
            return self._chat_response(body, content, None, tokens)
        if body.get("logprobs"):
            top_n = body.get("top_logprobs")
            if not isinstance(top_n, int) or not 0 <= top_n <= 20:
                return self._error(400, "top_logprobs must be an integer in [0, 20]", "invalid_request_error")
            script = fake._lookup(fake._state.gate, user_content)
            positions = script.positions if script else gate_positions(**DEFAULT_GATE)
            return self._gate_response(body, positions, top_n, mode)
        return self._chat_response(body, "De acuerdo.", None, 3)

    def _extraction_content(self, user_content: str, mode: str | None) -> tuple[str, int]:
        fake = self.server_fake
        if mode == "malformed":
            return "Claro, aquí tienes los hechos: Acme paga a 60 días", 12
        if mode == "schema":
            bad = {"facts": [{"subject": "self", "attribute": "nombre", "category": "planet"}]}
            return json.dumps(bad), 20
        facts = fake._lookup(fake._state.facts, user_content) or []
        content = json.dumps({"facts": facts}, ensure_ascii=False)
        return content, _count_tokens(content)

    def _gate_response(self, body: dict[str, Any], positions: list[dict[str, float]], top_n: int,
                       mode: str | None) -> None:
        fake = self.server_fake
        if mode == "malformed":
            text_tokens = [("Sí", [("Sí", -0.1), ("No", -2.4)]), (",", [(",", 0.0)]), (" claro", [(" claro", -0.3)])]
        else:
            text_tokens = []
            for i, dist in enumerate(positions):
                if mode == "schema" and i == 1:
                    dist = {"9": 1.0}  # a code outside the category range
                total = sum(dist.values()) or 1.0
                candidates = [(d, (1.0 - NOISE_MASS) * p / total) for d, p in dist.items() if p > 0]
                candidates.append(("\n", NOISE_MASS))
                candidates.sort(key=lambda c: -c[1])
                chosen = max(((d, p) for d, p in candidates if d != "\n"), key=lambda c: c[1])
                top = [(tok, math.log(p)) for tok, p in candidates[:top_n]]
                text_tokens.append((chosen[0], top))
                if i < len(positions) - 1:
                    text_tokens.append((",", [(",", 0.0)]))
        content = "".join(t for t, _ in text_tokens)
        logprobs = None
        if fake._state.logprobs_supported:
            logprobs = {
                "content": [
                    {
                        "token": tok,
                        "logprob": next((lp for t, lp in top if t == tok), -0.01),
                        "bytes": list(tok.encode()),
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
                    }
                    for tok, top in text_tokens
                ],
                "refusal": None,
            }
        return self._chat_response(body, content, logprobs, len(text_tokens))

    def _chat_response(self, body: dict[str, Any], content: str, logprobs: Any, completion_tokens: int) -> None:
        fake = self.server_fake
        prompt_tokens = _count_tokens(body.get("messages"))
        cached = min(fake._state.cached_tokens, prompt_tokens)
        self._send_json(200, {
            "id": f"chatcmpl-fake{int(time.time() * 1000)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": logprobs,
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        })

    # -- embeddings -----------------------------------------------------------------------------
    def _embeddings(self, body: dict[str, Any], mode: str | None) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not body.get("model") or not isinstance(inputs, list) or not inputs:
            return self._error(400, "model and input are required", "invalid_request_error")
        if any(not isinstance(t, str) or t == "" for t in inputs):
            return self._error(400, "input must be non-empty strings", "invalid_request_error")
        dims = body.get("dimensions") or 1536
        if mode == "malformed":
            dims = dims // 2
        if mode == "schema":
            inputs = inputs[:-1] or []
        data = []
        for i, text in enumerate(inputs):
            vector = bag_of_words_vector(text, dims)
            if body.get("encoding_format") == "base64":
                embedding: Any = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode()
            else:
                embedding = vector
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        tokens = sum(max(1, len(_words(t))) for t in body["input"]) if isinstance(body["input"], list) else 1
        self._send_json(200, {"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


@pytest.fixture
def fake_openai():
    """A started FakeOpenAI on an ephemeral 127.0.0.1 port, stopped after the test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
