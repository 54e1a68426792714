"""A small typed client for memoria's agent HTTP API.

One module on purpose (~500 lines): a single file an agent can vendor, one method a route of the API.

Standard library only (http.client, urllib): it runs in an agent's own process, next to any web framework, and
imports nothing from the memoria server. Each thread keeps its connection to the server open between calls (no
TCP and TLS handshake a call), unless the environment names a proxy for the server (HTTP_PROXY, HTTPS_PROXY,
NO_PROXY), which urllib then goes through. Every call has a timeout; 429 and 5xx answers, timeouts and
connection errors are retried with exponential backoff and jitter (honouring Retry-After), a bounded
number of times. Other 4xx answers raise ApiError at once with the server's code, message and field.

    client = MemoriaClient("http://127.0.0.1:5000", api_key="mem_...")
    turn = client.turn(channel="web", conversation="chat-42", external_id="m-1", user_id=uid,
                       text="Factura a Talleres García")          # stores the message, returns its block
    block = turn["context"]                                         # None: send turn["message"]["reply"]
    ...                                                             # the model answers with block["text"]
    client.ingest(channel="web", conversation="chat-42", external_id="m-2", user_id=uid, role="assistant",
                  text=answer, used=(block["trace_id"], used_ids))  # the reply, and what it used
"""
from __future__ import annotations

import datetime as dt
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any, Literal, TypedDict

__all__ = ["MemoriaClient", "ApiError", "TransportError"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ApiError(Exception):
    """The API refused the request (4xx), or kept failing (5xx) after the retries."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(f"{status} {code}: {message}" + (f" (field {field})" if field else ""))
        self.status, self.code, self.message, self.field = status, code, message, field


class TransportError(Exception):
    """The server could not be reached (timeouts, refused connections) after the retries."""


# ---------------------------------------------------------------------------- response shapes

class IngestResult(TypedDict):
    message_id: str | None
    conversation_id: str | None
    stored: bool
    queued: bool
    duplicate: bool
    temporary: bool
    link_request: bool
    reply: str | None
    marked: int | None


class ContextItem(TypedDict):
    memory_id: str
    block: str
    rank: int
    score: float


class MemoryBlock(TypedDict):
    text: str
    core: str
    profile: str
    related: str
    memory_ids: list[str]
    items: list[ContextItem]
    trace_id: str | None
    tokens: int


class Turn(TypedDict):
    message: IngestResult
    context: MemoryBlock | None


class WriteResult(TypedDict):
    outcome: str
    memory_id: str | None
    level: str | None
    proposal_id: str | None
    proposal_kind: str | None
    reason: str


class RememberResult(TypedDict):
    outcome: Literal["learnt", "merged", "proposed", "refused", "ignored"]
    reason: str
    policy: str | None
    writes: list[WriteResult]


class Hit(TypedDict):
    kind: str
    id: str
    title: str
    snippet: str
    score: float
    subject: str | None


class Memory(TypedDict):
    id: str
    subject: str
    attribute: str
    value: str
    sentence: str
    category: str
    level: str


class SubjectMemories(TypedDict):
    memories: dict[str, list[Memory]]
    text: str


class Message(TypedDict):
    id: str
    role: str
    text: str
    created_at: str
    sent_at: str
    edited_at: str | None


class Point(TypedDict):
    id: str
    section: str
    text: str
    message_ids: list[str]
    retired: bool


class Retrieved(TypedDict):
    messages: list[Message]
    point: Point | None


class History(TypedDict):
    summary: str
    points: list[Point]
    messages: list[Message]
    covered_until: str | None
    tokens: int


class LinkCode(TypedDict):
    code: str
    expires_at: str


class Person(TypedDict):
    user_id: str
    external_id: str | None
    email: str
    name: str
    role: str
    permissions: dict[str, str]
    effective_permissions: dict[str, str]
    active: bool
    joined_at: str
    created: bool


class AuthorizedPhone(TypedDict):
    id: str
    external_id: str | None
    phone: str
    user_id: str | None
    permissions: dict[str, str]
    active: bool
    linked: bool


class Organization(TypedDict):
    id: str
    external_id: str | None
    name: str
    created: bool
    suspended: bool
    members: int | None
    owner_invitation_url: str | None


class MySource(TypedDict):
    at: str
    channel: str | None
    excerpt: str | None
    conversation_id: str | None
    message_id: str | None


class MyMemory(TypedDict):
    id: str
    org_id: str | None
    level: Literal["personal", "private", "shared"]
    area: str
    category: str
    subject: str
    attribute: str
    value: str
    sentence: str
    status: str
    pinned: bool
    hand_edited: bool
    origin: str
    event_date: str | None
    event_until: str | None
    valid_from: str
    valid_to: str | None
    created_at: str
    editable: bool
    sources: list[MySource]
    older_versions: list[dict[str, Any]]


class MySubject(TypedDict):
    subject: str
    label: str
    memories: list[MyMemory]


class MySection(TypedDict):
    kind: Literal["personal", "private", "shared"]
    org_id: str | None
    org_name: str | None
    editable: bool
    total: int
    truncated: bool
    subjects: list[MySubject]


class MyMemories(TypedDict):
    learning_paused_at: str | None
    sections: list[MySection]


class MyEdit(TypedDict):
    id: str
    replaces: str
    value: str
    sentence: str
    hand_edited: bool


class Learning(TypedDict):
    paused: bool
    paused_since: str | None


def _message(channel: str, conversation: str, external_id: str, text: str, user_id: str | None, phone: str | None,
             visibility: str, area: str, temporary: bool, sent_at: dt.datetime | str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"channel": channel, "conversation": conversation, "external_id": external_id,
                            "text": text, "visibility": visibility, "area": area, "temporary": temporary,
                            **_principal(user_id, phone)}
    if sent_at is not None:
        body["sent_at"] = sent_at.isoformat() if isinstance(sent_at, dt.datetime) else sent_at
    return body


def _principal(user_id: str | None, phone: str | None) -> dict[str, str]:
    if user_id is None and phone is None:
        raise ValueError("give user_id, phone, or both")
    return {k: str(v) for k, v in (("user_id", user_id), ("phone", phone)) if v is not None}


class MemoriaClient:
    """One org's API key (or a platform key, for the platform calls) against one memoria server."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 10.0, max_retries: int = 3,
                 backoff: float = 0.5, backoff_max: float = 8.0, user_agent: str = "memoria-client/1"):
        self.base_url = base_url.rstrip("/") + "/api/v1"
        self._api_key = api_key
        self.timeout, self.max_retries = timeout, max_retries
        self.backoff, self.backoff_max = backoff, backoff_max
        self.user_agent = user_agent
        self._server = urllib.parse.urlsplit(self.base_url)
        proxies = urllib.request.getproxies()
        proxied = self._server.scheme in proxies and not urllib.request.proxy_bypass(self._server.hostname or "")
        # The client's own opener (it reads the proxies now), never urllib's global one, which would keep them for
        # every later urlopen of the process.
        self._opener = urllib.request.build_opener() if proxied else None
        self._kept = threading.local()  # this thread's open connection to the server

    def __repr__(self) -> str:  # never print the key
        return f"MemoriaClient({self.base_url!r})"

    # ------------------------------------------------------------------ transport

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(self.backoff_max, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return min(self.backoff_max, self.backoff * 2 ** attempt) * (0.5 + random.random() / 2)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                query: dict[str, Any] | None = None) -> Any:
        """One API call with retries; the decoded JSON answer."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json",
                   "User-Agent": self.user_agent}
        if data is not None:
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            try:
                status, raw, retry_after = (self._through_proxy if self._opener else self._kept_alive)(
                    method, url, data, headers)
            except (OSError, http.client.HTTPException) as exc:  # timeouts, refused or dropped connections
                if attempt < self.max_retries:
                    time.sleep(self._delay(attempt, None))
                    attempt += 1
                    continue
                raise TransportError(f"{method} {path}: {getattr(exc, 'reason', exc)}") from None
            if status < 300:
                return json.loads(raw) if raw else None  # (a redirect is an error: the base URL is another)
            if status in RETRY_STATUSES and attempt < self.max_retries:
                time.sleep(self._delay(attempt, retry_after))
                attempt += 1
                continue
            raise _api_error(status, raw)

    def _kept_alive(self, method: str, url: str, data: bytes | None, headers: dict) -> tuple[int, bytes, str | None]:
        """One exchange on this thread's open connection; a connection the server closed while it sat idle is
        opened again once (the request never reached the server)."""
        target = urllib.parse.urlsplit(url)
        path = target.path + (f"?{target.query}" if target.query else "")
        while True:
            conn = self._connection()
            reused = conn.sock is not None  # closed, it is opened anew: the next pass is on a new connection
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()  # a timed-out or broken exchange leaves the connection unusable
                raise
            if resp.will_close:
                conn.close()
            return resp.status, raw, resp.getheader("Retry-After")

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._kept, "conn", None)
        if conn is None:
            kind = http.client.HTTPSConnection if self._server.scheme == "https" else http.client.HTTPConnection
            conn = self._kept.conn = kind(self._server.hostname, self._server.port, timeout=self.timeout)
        return conn

    def _through_proxy(self, method: str, url: str, data: bytes | None, headers: dict) -> tuple[int, bytes, str | None]:
        """One exchange through urllib, which goes through the proxy the environment names."""
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read(), None
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Retry-After")
        except urllib.error.URLError as exc:
            raise ConnectionError(exc.reason) from None

    # ------------------------------------------------------------------ messages

    def ingest(self, *, channel: str, conversation: str, external_id: str, role: str, text: str = "",
               user_id: str | None = None, phone: str | None = None, visibility: str = "private_in_org",
               area: str = "general", temporary: bool = False, event: str = "new",
               sent_at: dt.datetime | str | None = None,
               used: tuple[str, Sequence[str]] | None = None) -> IngestResult:
        """Write one message (new, edited or deleted); safe to retry: idempotent on channel + external_id.

        `sent_at`: when the person sent it (an aware datetime or ISO 8601 with its zone); default now.
        `used`: with the assistant's reply, (trace id, memory ids) of its block that it used (as report_used)."""
        body = _message(channel, conversation, external_id, text, user_id, phone, visibility, area, temporary,
                        sent_at) | {"role": role, "event": event}
        if used is not None:
            body["used"] = {"trace_id": used[0], "memory_ids": list(used[1])}
        return self.request("POST", "/messages", body)

    def turn(self, *, channel: str, conversation: str, external_id: str, text: str, user_id: str | None = None,
             phone: str | None = None, visibility: str = "private_in_org", area: str = "general",
             temporary: bool = False, sent_at: dt.datetime | str | None = None) -> Turn:
        """The person's new message stored (as ingest) and its memory block (as context), in one call; safe to
        retry. `context` is None when `message["reply"]` is set: send that reply instead of a model turn."""
        return self.request("POST", "/turns", _message(channel, conversation, external_id, text, user_id, phone,
                                                        visibility, area, temporary, sent_at))

    # ------------------------------------------------------------------ reading

    def context(self, *, message: str, user_id: str | None = None, phone: str | None = None,
                conversation_id: str | None = None, message_id: str | None = None) -> MemoryBlock:
        """The memory block for this turn, its memory ids and trace id."""
        body: dict[str, Any] = {"message": message, **_principal(user_id, phone)}
        if conversation_id:
            body["conversation_id"] = conversation_id
        if message_id:
            body["message_id"] = message_id
        return self.request("POST", "/context", body)

    def report_used(self, trace_id: str, memory_ids: Sequence[str]) -> int:
        """Tell memoria which memories of a turn the model used; how many were marked."""
        return self.request("POST", f"/traces/{trace_id}/used", {"memory_ids": list(memory_ids)})["marked"]

    def search(self, query: str, *, user_id: str | None = None, phone: str | None = None,
               kinds: Sequence[str] | None = None, limit: int = 10) -> list[Hit]:
        body: dict[str, Any] = {"query": query, "limit": limit, **_principal(user_id, phone)}
        if kinds:
            body["kinds"] = list(kinds)
        return self.request("POST", "/search", body)["hits"]

    def memories_for_subjects(self, subjects: Sequence[str], *, user_id: str | None = None,
                              phone: str | None = None, per_subject: int = 3) -> SubjectMemories:
        return self.request("POST", "/memories/for-subjects", {
            "subjects": list(subjects), "per_subject": per_subject, **_principal(user_id, phone)})

    def remember(self, *, text: str | None = None, fact: dict[str, Any] | None = None,
                 user_id: str | None = None, phone: str | None = None, conversation_id: str | None = None,
                 message_id: str | None = None) -> RememberResult:
        """An explicit "remember that...": learnt, merged, proposed, refused or ignored, and why."""
        body: dict[str, Any] = {**_principal(user_id, phone)}
        for k, v in (("text", text), ("fact", fact), ("conversation_id", conversation_id),
                     ("message_id", message_id)):
            if v is not None:
                body[k] = v
        return self.request("POST", "/remember", body)

    # ------------------------------------------------------------------ conversations

    def history(self, conversation_id: str, *, user_id: str | None = None, phone: str | None = None) -> History:
        """The summary of the compacted part and the recent part verbatim."""
        return self.request("GET", f"/conversations/{conversation_id}/history", query=_principal(user_id, phone))

    def retrieve(self, conversation_id: str, *, user_id: str | None = None, phone: str | None = None,
                 message_ids: Sequence[str] = (), point_id: str | None = None, query: str | None = None,
                 limit: int = 20) -> Retrieved:
        """Exact messages: by ids, by the ids a summary point cites, or by a search inside the conversation."""
        body: dict[str, Any] = {"message_ids": list(message_ids), "limit": limit, **_principal(user_id, phone)}
        if point_id:
            body["point_id"] = point_id
        if query:
            body["query"] = query
        return self.request("POST", f"/conversations/{conversation_id}/retrieve", body)

    def after_reply(self, conversation_id: str, *, user_id: str | None = None, phone: str | None = None,
                    prompt_tokens: int | None = None) -> str:
        """Report the turn's prompt size; 'queued' when memoria will compact the older part."""
        body: dict[str, Any] = {**_principal(user_id, phone)}
        if prompt_tokens is not None:
            body["prompt_tokens"] = prompt_tokens
        return self.request("POST", f"/conversations/{conversation_id}/after-reply", body)["compaction"]

    # ------------------------------------------------------------------ the person's own memory

    def my_memories(self, *, user_id: str | None = None, phone: str | None = None) -> MyMemories:
        """What memoria knows about the person: personal, private in this org, shared they may read."""
        return self.request("GET", "/me/memories", query=_principal(user_id, phone))

    def export_my_memories(self, *, user_id: str | None = None, phone: str | None = None) -> dict[str, Any]:
        """The same as JSON to download, with the older versions of their own memories."""
        return self.request("GET", "/me/memories/export", query=_principal(user_id, phone))

    def edit_my_memory(self, memory_id: str, *, value: str, sentence: str, user_id: str | None = None,
                       phone: str | None = None) -> MyEdit:
        """Correct one of the person's own memories (a new hand-edited version); shared ones raise 403."""
        return self.request("PATCH", f"/me/memories/{memory_id}",
                            {"value": value, "sentence": sentence, **_principal(user_id, phone)})

    def delete_my_memory(self, memory_id: str, *, user_id: str | None = None, phone: str | None = None) -> int:
        """Delete one of the person's own memories with its versions; how many rows went."""
        return self.request("DELETE", f"/me/memories/{memory_id}",
                            query=_principal(user_id, phone))["counts"]["memories_removed"]

    def forget_my_subject(self, subject: str, *, user_id: str | None = None, phone: str | None = None) -> int:
        """Forget the person's own memories about a subject (self, org, contact:<id>); how many went."""
        return self.request("POST", "/me/memories/forget-subject",
                            {"subject": subject, **_principal(user_id, phone)})["counts"]["memories_removed"]

    def my_learning(self, *, user_id: str | None = None, phone: str | None = None) -> Learning:
        return self.request("GET", "/me/learning", query=_principal(user_id, phone))

    def set_my_learning(self, paused: bool, *, user_id: str | None = None, phone: str | None = None) -> Learning:
        """Pause (True) or resume (False) learning for the person."""
        return self.request("PUT", "/me/learning", {"paused": paused, **_principal(user_id, phone)})

    # ------------------------------------------------------------------ identity, forgetting, host records

    def create_link_code(self, user_id: str) -> LinkCode:
        return self.request("POST", "/link-codes", {"user_id": user_id})

    def delete_conversation(self, conversation_id: str) -> dict[str, int]:
        return self.request("DELETE", f"/conversations/{conversation_id}")["counts"]

    def delete_contact(self, contact_id: str) -> dict[str, int]:
        return self.request("DELETE", f"/contacts/{contact_id}")["counts"]

    def end_membership(self, user_id: str) -> dict[str, int]:
        return self.request("DELETE", f"/memberships/{user_id}")["counts"]

    def index_document(self, *, kind: str, external_ref: str, title: str = "", text: str = "",
                       **fields: Any) -> str:
        """Index or re-index a host record (invoice, quote, expense, document); its id."""
        return self.request("PUT", "/documents", {"kind": kind, "external_ref": external_ref, "title": title,
                                                  "text": text, **fields})["id"]

    def remove_document(self, *, kind: str, external_ref: str) -> bool:
        return self.request("DELETE", "/documents", query={"kind": kind, "external_ref": external_ref})["removed"]


    # ------------------------------------------------------------------ provisioning (by the host's own ids)

    def upsert_person(self, ref: str, *, email: str, name: str = "", role: str = "member",
                      permissions: dict[str, str] | None = None, active: bool = True) -> Person:
        """Create or update the person the host knows as `ref` (any id without "/"): account, membership,
        role, areas. Idempotent."""
        return self.request("PUT", f"/people/{_ref(ref)}", {"email": email, "name": name, "role": role,
                                                             "permissions": permissions or {}, "active": active})

    def list_people(self) -> list[Person]:
        return self.request("GET", "/people")["people"]

    def removal_preview(self, ref: str) -> dict[str, int]:
        """What removing the person would forget (private memories) and keep (shared ones)."""
        return self.request("GET", f"/people/{_ref(ref)}/removal-preview")["counts"]

    def remove_person(self, ref: str) -> dict[str, int]:
        """Remove the person from the org: the member-leaves forgetting rule."""
        return self.request("DELETE", f"/people/{_ref(ref)}")["counts"]

    def upsert_phone(self, ref: str, *, phone: str, person: str | None = None,
                     permissions: dict[str, str] | None = None, active: bool = True) -> AuthorizedPhone:
        """Authorize a number (for the person the host knows as `person`, if any). Idempotent."""
        body: dict[str, Any] = {"phone": phone, "permissions": permissions or {}, "active": active}
        if person is not None:
            body["person"] = person
        return self.request("PUT", f"/phones/{_ref(ref)}", body)

    def list_phones(self) -> list[AuthorizedPhone]:
        return self.request("GET", "/phones")["phones"]

    def revoke_phone(self, ref: str) -> AuthorizedPhone:
        return self.request("DELETE", f"/phones/{_ref(ref)}")

    # ------------------------------------------------------------------ platform (with a platform key)

    def upsert_organization(self, ref: str, *, name: str, owner_email: str | None = None,
                            owner_name: str = "") -> Organization:
        """Create (or rename) the org the host knows as `ref`; on creation, the owner's invitation URL."""
        body: dict[str, Any] = {"name": name, "owner_name": owner_name}
        if owner_email is not None:
            body["owner_email"] = owner_email
        return self.request("PUT", f"/organizations/{_ref(ref)}", body)

    def list_organizations(self) -> list[Organization]:
        return self.request("GET", "/organizations")["organizations"]

    def create_organization_key(self, ref: str, name: str) -> str:
        """A new API key of the org (shown once): use it in a MemoriaClient for that org."""
        return self.request("POST", f"/organizations/{_ref(ref)}/api-keys", {"name": name})["key"]


def _ref(ref: str) -> str:
    return urllib.parse.quote(ref, safe="")


def _api_error(status: int, raw: bytes) -> ApiError:
    try:
        err = json.loads(raw)["error"]
        return ApiError(status, err.get("code", "error"), err.get("message", ""), err.get("field"))
    except (ValueError, KeyError, TypeError):
        return ApiError(status, "error", raw[:200].decode("utf-8", "replace"))
