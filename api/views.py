"""The agent API views: parse (api.openapi.route does it), call one service, answer JSON.

One module on purpose (~550 lines): one blueprint of short views (one service call each) that share the
key's org and person checks (`principal_access`); split by tag, each file would import those checks back."""
from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from flask import current_app, g, jsonify, request
from sqlalchemy import select
from werkzeug.exceptions import HTTPException

from api import bp
from api.errors import HTTP_CODES, ApiError, error_response, from_domain
from api.openapi import PREFIX, build_document, route
from api.schemas import (
    AfterReplyIn,
    AfterReplyOut,
    ContextIn,
    ContextItemOut,
    ContextOut,
    CountsOut,
    DocumentIn,
    DocumentOut,
    DocumentRefQuery,
    ForgetSubjectIn,
    HistoryOut,
    HitOut,
    IngestIn,
    IngestOut,
    LearningIn,
    LearningOut,
    LinkCodeIn,
    LinkCodeOut,
    MemoryOut,
    MessageOut,
    MyEditIn,
    MyEditOut,
    MyExportOut,
    MyMemoriesOut,
    OpenApiOut,
    PointOut,
    PrincipalQuery,
    RememberIn,
    RememberOut,
    RemovedOut,
    RetrieveIn,
    RetrieveOut,
    SearchIn,
    SearchOut,
    SubjectsIn,
    SubjectsOut,
    TurnIn,
    TurnOut,
    UsedIn,
    UsedOut,
    WriteOut,
)
from memory_core.adapters.db import Scope, commit_without_waiting_for_disk, org_scope
from memory_core.adapters.outage import OUTAGE_ERRORS, RETRY_AFTER_SECONDS, describe, is_outage
from memory_core.domain.access import Access, load_access
from memory_core.domain.errors import MemoriaError, NotFound
from memory_core.domain.model_port import BackendError
from memory_core.domain.models import Contact, Conversation, Membership, Message, Organization, PhoneAuthorization, User
from web.sessions import has_request_session, move_request_session, request_read_session
from web.sessions import request_session as db

log = logging.getLogger(__name__)
ACTOR = "api key {}"


# ---------------------------------------------------------------------------- shared helpers

def _actor() -> str:
    return ACTOR.format(g.api_key_id)


# The scope each principal's access gave last time in this process, by (org, user, phone): its next request
# opens its transaction there (its own membership and numbers show in it as in the org's scope), so reading
# the access again and then working as the person takes no second set_config. Nothing is trusted from it:
# the access is read anew every time, and a scope that changed is set before anything else is read.
_LAST_SCOPE: dict[tuple[uuid.UUID, uuid.UUID | None, str | None], Scope] = {}
_LAST_SCOPE_MAX = 4096


def principal_access(org_id: uuid.UUID, user_id: uuid.UUID | None, phone: str | None) -> Access:
    """The principal's access in the key's org, rebuilt now; 404 when it has none there."""
    from memory_core.domain.phones import normalise_phone

    phone = normalise_phone(phone)
    key = (org_id, user_id, phone)
    first = org_scope(org_id)  # the key's org: its members, their numbers and the numbers it authorized
    # (both a person and a number: checked in the org's scope, where the number's owner shows only if a member)
    guess = _LAST_SCOPE.get(key) if user_id is None or phone is None else None
    if guess is not None and not has_request_session(first):
        first = guess
    opened = not has_request_session(first)
    s = db(first)
    if user_id is not None and phone is not None:
        # Both given: the number must be this person's, never someone else's.
        owner = s.scalar(select(User.phone).where(User.id == user_id))
        linked = s.scalar(select(PhoneAuthorization.id).where(
            PhoneAuthorization.org_id == org_id, PhoneAuthorization.phone == phone,
            PhoneAuthorization.user_id == user_id))
        if owner != phone and linked is None:
            raise NotFound("No such person in this organization.")
    access = load_access(s, org_id, user_id=user_id, phone=phone)
    if access is None:
        _LAST_SCOPE.pop(key, None)
        raise NotFound("No such person in this organization.")
    scope = access.scope()
    if opened and scope != first:
        # The person's reads and writes follow in the same transaction, under their own scope: one
        # connection checkout and one commit for the request instead of two.
        move_request_session(first, scope)
    if len(_LAST_SCOPE) >= _LAST_SCOPE_MAX:
        _LAST_SCOPE.clear()
    _LAST_SCOPE[key] = scope
    return access


def reader(access: Access):
    """A session under the principal's row-level-security scope."""
    return db(access.scope())


def standby_reader(access: Access):
    """A session for reads that may lag the primary by a few milliseconds (the hot standby when
    DATABASE_READ_URL is set): the block's memories, search. What the turn just wrote is read with `reader`."""
    return request_read_session(access.scope())


def writer(access: Access):
    """A session for the principal's own writes: the same row-level-security scope as its reads."""
    return db(access.scope())


def _message(m) -> MessageOut:
    return MessageOut(id=m.id, role=m.role, text=m.text, created_at=m.created_at, sent_at=m.sent_at,
                      edited_at=m.edited_at)


def _point(p) -> PointOut:
    return PointOut(id=p["id"], section=p["section"], text=p["text"], message_ids=p["message_ids"],
                    retired=bool(p.get("retired")))


# ---------------------------------------------------------------------------- errors as JSON

@bp.errorhandler(ApiError)
def _api_error(err: ApiError):
    return error_response(err)


@bp.errorhandler(MemoriaError)
def _domain_error(exc: MemoriaError):
    return error_response(from_domain(exc))


@bp.errorhandler(BackendError)
def _model_unavailable(exc: BackendError):
    # The model provider failed after its retries: a temporary condition the client may retry.
    log.warning("model backend failed during an API request: %s", type(exc).__name__)
    return error_response(ApiError(503, "model_unavailable", "The model provider is unavailable; try again shortly.",
                                   headers={"Retry-After": "5"}))


def _unavailable(exc: Exception):
    # A server is down or restarting, or no connection was free in time: the client may retry.
    log.warning("API request hit a %s outage: %s %s (%s)", describe(exc), request.method, request.path,
                type(exc).__name__)
    return error_response(ApiError(503, "unavailable", "The service is briefly unavailable; try again shortly.",
                                   headers={"Retry-After": str(RETRY_AFTER_SECONDS)}))


for _outage in OUTAGE_ERRORS:
    bp.register_error_handler(_outage, _unavailable)


@bp.errorhandler(HTTPException)
def _http_error(exc: HTTPException):
    code = exc.code or 500
    return error_response(ApiError(code, HTTP_CODES.get(code, "error"), exc.description or exc.name))


@bp.errorhandler(Exception)
def _unexpected(exc: Exception):
    if is_outage(exc):
        return _unavailable(exc)
    log.exception("API request failed: %s %s", request.method, request.path)
    return error_response(ApiError(500, "internal_error", "Something went wrong on our side."))


def owns(path: str) -> bool:
    """Whether a path belongs to the API (its unrouted 404s and 405s answer in JSON, see app.py)."""
    return path.startswith(PREFIX + "/") or path == PREFIX


def unrouted_error(exc: HTTPException):
    """A 404 or 405 for an API path that matched no route, as the API's JSON error."""
    if exc.code == 405:
        return error_response(ApiError(405, "method_not_allowed", "Method not allowed on this endpoint.",
                                       headers={"Allow": ", ".join(exc.valid_methods or [])}))
    return error_response(ApiError(404, "not_found", "No such endpoint."))


# ---------------------------------------------------------------------------- the document

@route(bp, "/openapi.json", "GET", summary="This API's OpenAPI 3.1 document", tag="meta", response=OpenApiOut,
       public=True, errors=())
def openapi_document():
    """The OpenAPI document, generated from the route table and the pydantic models."""
    return jsonify(build_document())


# ---------------------------------------------------------------------------- messages

@route(bp, "/messages", "POST", summary="Ingest a message (new, edited or deleted); idempotent on channel + "
       "external_id", tag="messages", body=IngestIn, response=IngestOut, errors=(400, 401, 404, 409, 422))
def ingest(org_id, body: IngestIn):
    """Write one message event and kick the worker; with `used`, mark the reply's used memories in the same
    transaction (a trace the writer may not see is a 404, and nothing is stored)."""
    from memory_core.reading.context import record_usage

    s, _, result = _store(org_id, body.model_dump(exclude={"used"}))
    marked = None
    if body.used is not None:
        marked = record_usage(s, body.used.trace_id, body.used.memory_ids, org_id=org_id)
    s.commit()
    _kick_worker(result)
    return _ingest_out(result, marked=marked)


def _store(org_id, message: dict, embedder=None) -> tuple:
    """The session the message is written in (not committed yet), the writer's access (None for a link request)
    and what ingest_message made of the message (its vector made with `embedder`, when given)."""
    from memory_core.learning.ingest import LINK_CHANNELS, ingest_message, link_code_of
    from memory_core.tenancy.linking import confirm_link

    link_request = (message["channel"] in LINK_CHANNELS and message["role"] == "user" and message["event"] == "new"
                    and link_code_of(message["text"]) is not None)
    if link_request:
        # A VINCULAR message comes from a number that has no access yet: that is what it asks for. It runs
        # in the scope of the person who asked for the code, with the number (the code itself is checked
        # by a SECURITY DEFINER function).
        from memory_core.tenancy.linking import link_scope

        access, s = None, db(link_scope(db(Scope()), message["phone"], message["text"], org_id))
    else:
        # Everything else is written under the writer's own row-level-security scope.
        access = principal_access(org_id, message["user_id"], message["phone"])
        s = writer(access)
    return s, access, ingest_message(s, org_id=org_id, link_handler=confirm_link,
                                     embedder=None if link_request else embedder, **message)


def _kick_worker(result) -> None:
    from jobs.outbox import enqueue_drain

    if result.queued:
        enqueue_drain(settings=current_app.config.get("MEMORIA_SETTINGS"))


def _ingest_out(result, **extra) -> IngestOut:
    return IngestOut(**{k: getattr(result, k) for k in IngestOut.model_fields if hasattr(result, k)}, **extra)


def _reusing(embed, text: str, vector: list[float]):
    """`embed`, answering `vector` for `text` alone without embedding it again."""
    return lambda texts: [vector] if list(texts) == [text] else embed(texts)


# ---------------------------------------------------------------------------- reading

@route(bp, "/context", "POST", summary="Assemble the memory block for a turn (core, profile, related) and "
       "record its trace", tag="reading", body=ContextIn, response=ContextOut)
def context(org_id, body: ContextIn):
    """The fenced memory block for the principal's current message."""
    access = principal_access(org_id, body.user_id, body.phone)
    s = writer(access)
    if body.message_id is not None and body.conversation_id is None and s.scalar(
            select(Message.id).where(Message.id == body.message_id)) is None:
        raise NotFound("No such message.")  # the trace links it: only a message this principal may see
    # (with a conversation, assemble_context reads it with the conversation and answers the same)
    return _block(access, s, body.message, body.conversation_id, body.message_id)


@route(bp, "/turns", "POST", summary="Store the person's new message and assemble its memory block, in one call",
       tag="reading", body=TurnIn, response=TurnOut, errors=(400, 401, 404, 409, 422))
def turn(org_id, body: TurnIn):
    """POST /messages then POST /context for the person's message: one request before the model's turn. The
    message commits first (a block that fails loses no message); a retry stores nothing twice. The message's
    vector is made here, stored with it (the worker does not embed it again) and is the block's query vector."""
    from memory_core.backends import get_backend

    s, access, result = _store(org_id, body.model_dump() | {"role": "user", "event": "new"},
                               embedder=get_backend(current_app.config.get("MEMORIA_SETTINGS")))
    s.commit()
    _kick_worker(result)
    block = None
    if access is not None and result.reply is None:
        if result.message_id is not None:
            # The block reads the message as stored: its secrets are marks, which no model sees.
            block = _block(access, s, result.text, result.conversation_id, result.message_id,
                           known=result.embedded, redacted=True)
        else:  # a temporary conversation reads memory and stores nothing, its trace included
            block = _block(access, s, body.text, None, None)
    return TurnOut(message=_ingest_out(result), context=block)


def _block(access: Access, s, message: str, conversation_id, message_id, known=None,
           redacted: bool = False) -> ContextOut:
    """The block for `message`, its trace written and committed in `s` (the principal's writer). `redacted`:
    the message is the stored text, its secrets marks already (assemble_context does it otherwise).
    `known`: the (vector, model) of the message already made, used when the model is the query's."""
    from memory_core.reading.context import assemble_context
    from memory_core.reading.search import query_embedder

    commit_without_waiting_for_disk(s)  # it writes the block's trace only
    embed, model = query_embedder()
    if known is not None and known[1] == model:
        embed = _reusing(embed, message, known[0])
    block = assemble_context(standby_reader(access), access, conversation_id, message, embed=embed,
                             embed_model=model, message_id=message_id, primary=s, redacted=redacted)
    s.commit()
    return ContextOut(text=block.text, core=block.core, profile=block.profile, related=block.related,
                      memory_ids=block.memory_ids, trace_id=block.trace_id, tokens=block.tokens,
                      items=[ContextItemOut(memory_id=i.memory_id, block=i.block, rank=i.rank, score=i.score)
                             for i in block.items])


@route(bp, "/traces/<trace_id>/used", "POST", summary="Report which memories of a turn the model used",
       tag="reading", body=UsedIn, response=UsedOut)
def report_used(org_id, trace_id: uuid.UUID, body: UsedIn):
    """Mark used memories on one of the org's traces."""
    from memory_core.reading.context import record_usage

    s = db(org_scope(org_id))
    commit_without_waiting_for_disk(s)  # it marks the trace's items only
    marked = record_usage(s, trace_id, body.memory_ids, org_id=org_id)  # NotFound for another org's trace
    s.commit()
    return UsedOut(marked=marked)


@route(bp, "/memories/for-subjects", "POST", summary="The few most relevant memories of each subject, to attach "
       "to a tool result that returns it", tag="reading", body=SubjectsIn, response=SubjectsOut)
def for_subjects(org_id, body: SubjectsIn):
    """Memories about contacts (or self/org) the principal may see."""
    from memory_core.reading.context import memories_for_subjects, render_subject_memories

    access = principal_access(org_id, body.user_id, body.phone)
    s = standby_reader(access)
    found = memories_for_subjects(s, access, body.subjects, per_subject=body.per_subject)
    return SubjectsOut(text=render_subject_memories(s, access, found), memories={
        subject: [MemoryOut(id=m.id, subject=m.subject, attribute=m.attribute, value=m.value, sentence=m.sentence,
                            category=m.category, level=m.level) for m in rows] for subject, rows in found.items()})


@route(bp, "/search", "POST", summary="Hybrid search over what the principal may see", tag="reading",
       body=SearchIn, response=SearchOut)
def search(org_id, body: SearchIn):
    """Search messages, memories, contacts and host records for one principal."""
    from memory_core.reading.search import query_embedder
    from memory_core.reading.search import search as run_search

    access = principal_access(org_id, body.user_id, body.phone)
    embed, model = query_embedder()
    hits = run_search(standby_reader(access), access, body.query, kinds=body.kinds, limit=body.limit, embed=embed,
                      embed_model=model)
    return SearchOut(hits=[HitOut(kind=h.kind, id=h.id, title=h.title, snippet=h.snippet, score=h.score,
                                  subject=h.subject) for h in hits])


# ---------------------------------------------------------------------------- remember

@route(bp, "/remember", "POST", summary="Save what the person explicitly asked to remember, through the write "
       "ladder, in this turn: learnt, merged, proposed, refused or ignored, and why", tag="memories",
       body=RememberIn, response=RememberOut)
def remember(org_id, body: RememberIn):
    """The explicit path: no gate, same policy and ladder."""
    from memory_core.backends import get_backend
    from memory_core.domain.ladder import Source
    from memory_core.domain.model_port import Fact
    from memory_core.learning.remember import remember as save
    from memory_core.reading.retrieval import owned_conversation

    access = principal_access(org_id, body.user_id, body.phone)
    source = None
    if body.conversation_id is not None:
        conv = owned_conversation(reader(access), access, body.conversation_id)
        if body.message_id is not None and reader(access).scalar(select(Message.conversation_id).where(
                Message.id == body.message_id)) != conv.id:
            raise NotFound("No such message in this conversation.")
        source = Source(message_id=body.message_id, conversation_id=conv.id)
    # The ladder enforces the access it was given, and may file a proposal in an area the writer cannot
    # read (RLS in principal scope would refuse that insert): the ladder scope, not the worker's system.
    s = db(access.ladder_scope())
    fact = Fact(**body.fact.model_dump()) if body.fact else None
    out = save(s, access, s.get(Organization, org_id), body.text, fact, backend=get_backend(), source=source)
    s.commit()
    return RememberOut(outcome=out.outcome, reason=out.reason, policy=out.policy, writes=[
        WriteOut(outcome=w.outcome, memory_id=w.memory.id if w.memory else None,
                 level=w.memory.level if w.memory else None, proposal_id=w.proposal.id if w.proposal else None,
                 proposal_kind=w.proposal.proposal_kind if w.proposal else None, reason=w.reason)
        for w in out.writes])


# ---------------------------------------------------------------------------- identity

@route(bp, "/link-codes", "POST", summary="A 6-character code the user sends from WhatsApp as VINCULAR <code>",
       tag="identity", body=LinkCodeIn, response=LinkCodeOut, status=201, errors=(400, 401, 404, 422, 429))
def create_link_code(org_id, body: LinkCodeIn):
    """Issue a link code for a member of the key's org."""
    from memory_core.tenancy.linking import issue_link_code

    principal_access(org_id, body.user_id, None)
    s = db(org_scope(org_id, body.user_id))  # the member's own code, in the key's org
    issued = issue_link_code(s, body.user_id, org_id)
    s.commit()
    return LinkCodeOut(code=issued.code, expires_at=issued.expires_at)


# ---------------------------------------------------------------------------- forgetting

@route(bp, "/conversations/<conversation_id>", "DELETE", summary="Delete a conversation and what was learnt "
       "only from it", tag="forgetting", response=CountsOut)
def delete_conversation(org_id, conversation_id: uuid.UUID):
    """Forget one of the org's conversations."""
    from memory_core.privacy.forgetting import delete_conversation

    return _forget(org_id, Conversation, conversation_id, delete_conversation, "No such conversation.")


@route(bp, "/contacts/<contact_id>", "DELETE", summary="Delete a contact and every fact about it",
       tag="forgetting", response=CountsOut)
def delete_contact(org_id, contact_id: uuid.UUID):
    """Delete one of the org's contacts."""
    from memory_core.privacy.forgetting import delete_contact

    return _forget(org_id, Contact, contact_id, delete_contact, "No such contact.")


def _forget(org_id: uuid.UUID, model: type[Conversation] | type[Contact], row_id: uuid.UUID,
            forget: Callable[..., dict[str, int]], missing: str) -> CountsOut:
    """Forget one of the key's org's rows with `forget`; another org's row is NotFound, like one that never was.

    No system scope: the personal and private memories it reaches go first, in each owner's own scope
    (one transaction each), then the rest in the org's."""
    from memory_core.privacy.forgetting import forget_owned, owner_scopes

    s = db(org_scope(org_id))
    if s.scalar(select(model.org_id).where(model.id == row_id)) != org_id:
        raise NotFound(missing)
    which = {"conversation_id": row_id} if model is Conversation else {"org_id": org_id, "contact_id": row_id}
    removed = 0
    for scope in owner_scopes(s, org_id, **{k: v for k, v in which.items() if k != "org_id"}):
        owner = db(scope)
        removed += forget_owned(owner, **which)
        owner.commit()
    counts = forget(s, row_id, actor_label=_actor(), removed_by_owners=removed)
    s.commit()
    return CountsOut(counts=counts)


@route(bp, "/memberships/<user_id>", "DELETE", summary="End a membership: private memories go, shared ones stay",
       tag="forgetting", response=CountsOut, errors=(400, 401, 404, 409, 422))
def end_membership(org_id, user_id: uuid.UUID):
    """A member leaves the key's org."""
    from memory_core.tenancy.leaving import member_leaves

    s = db(org_scope(org_id, user_id))  # the org's rows and the leaving member's own (their private memories)
    if s.scalar(select(Membership.id).where(Membership.org_id == org_id, Membership.user_id == user_id)) is None:
        raise NotFound("That person is not a member of this organization.")
    counts = member_leaves(s, org_id, user_id, actor_label=_actor())
    s.commit()
    return CountsOut(counts=counts)


# ---------------------------------------------------------------------------- host records

@route(bp, "/documents", "PUT", summary="Index or re-index a host record (invoice, quote, expense, document)",
       tag="documents", body=DocumentIn, response=DocumentOut)
def put_document(org_id, body: DocumentIn):
    """Upsert a host record by (kind, external_ref)."""
    from memory_core.reading.search import index_document, query_embedder

    s = db(org_scope(org_id))
    if body.owner_user_id is not None or body.owner_phone is not None:
        principal_access(org_id, body.owner_user_id, body.owner_phone)
    if body.contact_id is not None and s.scalar(select(Contact.org_id).where(Contact.id == body.contact_id)) != org_id:
        raise NotFound("No such contact.")
    from memory_core.domain.phones import normalise_phone

    data = body.model_dump() | {"owner_phone": normalise_phone(body.owner_phone)}
    embed, model = query_embedder()
    doc_id = index_document(s, org_id=org_id, embed=embed, embed_model=model, **data)
    s.commit()
    return DocumentOut(id=doc_id)


@route(bp, "/documents", "DELETE", summary="Remove a host record from the index", tag="documents",
       query=DocumentRefQuery, response=RemovedOut)
def delete_document(org_id, query: DocumentRefQuery):
    """Drop a host record by (kind, external_ref)."""
    from memory_core.reading.search import remove_document

    s = db(org_scope(org_id))
    removed = remove_document(s, org_id=org_id, kind=query.kind, external_ref=query.external_ref)
    s.commit()
    return RemovedOut(removed=removed)


# ---------------------------------------------------------------------------- conversations

@route(bp, "/conversations/<conversation_id>/retrieve", "POST", summary="Exact messages of a conversation, for "
       "its owner: by ids, by a summary point, or by a search inside it", tag="conversations",
       body=RetrieveIn, response=RetrieveOut)
def retrieve(org_id, conversation_id: uuid.UUID, body: RetrieveIn):
    """Messages word for word, so an agent can check a tax ID, amount or date."""
    from memory_core.reading.retrieval import retrieve_messages

    access = principal_access(org_id, body.user_id, body.phone)
    found = retrieve_messages(reader(access), access, conversation_id, message_ids=body.message_ids,
                              point_id=body.point_id, query=body.query, limit=body.limit)
    return RetrieveOut(messages=[_message(m) for m in found.messages],
                       point=_point(found.point) if found.point else None)


@route(bp, "/conversations/<conversation_id>/history", "GET", summary="The history to send: summary of the "
       "older part and the recent part verbatim", tag="conversations", query=PrincipalQuery, response=HistoryOut)
def history(org_id, conversation_id: uuid.UUID, query: PrincipalQuery):
    """Summary points and recent messages of one of the principal's conversations."""
    from memory_core.reading.retrieval import conversation_history

    access = principal_access(org_id, query.user_id, query.phone)
    h = conversation_history(reader(access), access, conversation_id)
    return HistoryOut(summary=h.summary, points=[_point(p) for p in h.points],
                      messages=[_message(m) for m in h.messages], covered_until=h.covered_until, tokens=h.tokens)


@route(bp, "/conversations/<conversation_id>/after-reply", "POST", summary="Report the prompt size after a "
       "reply; compacts the older part in the background when it passed the channel's threshold",
       tag="conversations", body=AfterReplyIn, response=AfterReplyOut)
def after_reply(org_id, conversation_id: uuid.UUID, body: AfterReplyIn):
    """Queue a compaction when the turn's prompt was too long."""
    from jobs.compaction import enqueue_compaction
    from memory_core.reading.compaction import needs_compaction
    from memory_core.reading.retrieval import owned_conversation

    access = principal_access(org_id, body.user_id, body.phone)
    conv = owned_conversation(reader(access), access, conversation_id)
    if not needs_compaction(reader(access), conv, body.prompt_tokens):
        return AfterReplyOut(compaction="not_needed")
    enqueue_compaction(conv.id)
    return AfterReplyOut(compaction="queued")


# ---------------------------------------------------------------------------- a person's own memory

ME_ERRORS = (400, 401, 403, 404, 422)


def _mine(org_id, user_id, phone):
    """The person the key acts for, and a session under their row-level-security scope."""
    access = principal_access(org_id, user_id, phone)
    return access, reader(access)


@route(bp, "/me/memories", "GET", summary="What memoria knows about the person: personal memories, private ones "
       "in this org and the shared ones they may read, grouped by subject, with sources and dates", tag="my memory",
       query=PrincipalQuery, response=MyMemoriesOut)
def my_memories(org_id, query: PrincipalQuery):
    """The person's own memory, as the host shows it in its "manage memory" page."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, query.user_id, query.phone)
    since = my_memory.paused_since(s, access.principal)
    return MyMemoriesOut.model_validate({"learning_paused_at": since, "sections": [
        my_memory.section_json(sec) for sec in my_memory.sections(s, access)]})


@route(bp, "/me/memories/export", "GET", summary="Export what memoria knows about the person as JSON, with the "
       "older versions of their own memories", tag="my memory", query=PrincipalQuery, response=MyExportOut)
def my_memories_export(org_id, query: PrincipalQuery):
    """The same as the list, every own memory with its versions, as a download."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, query.user_id, query.phone)
    out = MyExportOut.model_validate(my_memory.export([(s, access)]))
    response = current_app.response_class(out.model_dump_json(), mimetype="application/json")
    response.headers["Content-Disposition"] = 'attachment; filename="my-memory.json"'
    response.headers["Cache-Control"] = "no-store"
    return response


@route(bp, "/me/memories/<memory_id>", "PATCH", summary="Correct one of the person's own memories: a new version "
       "marked edited by hand (kept when the conversation it came from is deleted); shared ones answer 403",
       tag="my memory", body=MyEditIn, response=MyEditOut, errors=ME_ERRORS)
def my_memory_edit(org_id, memory_id: uuid.UUID, body: MyEditIn):
    """Edit by hand."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, body.user_id, body.phone)
    row = my_memory.edit_own(s, access, memory_id, body.value, body.sentence, actor_label=_actor(), origin="api")
    s.commit()
    return MyEditOut(id=row.id, replaces=memory_id, value=row.value, sentence=row.sentence, hand_edited=row.hand_edited)


@route(bp, "/me/memories/<memory_id>", "DELETE", summary="Delete one of the person's own memories with every "
       "version of it; shared ones answer 403", tag="my memory", query=PrincipalQuery, response=CountsOut,
       errors=ME_ERRORS)
def my_memory_delete(org_id, memory_id: uuid.UUID, query: PrincipalQuery):
    """Delete with its versions."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, query.user_id, query.phone)
    n = my_memory.delete_own(s, access, memory_id, actor_label=_actor())
    s.commit()
    return CountsOut(counts={"memories_removed": n})


@route(bp, "/me/memories/forget-subject", "POST", summary="Forget everything of the person's own about one "
       "subject (self, org, contact:<id>): their personal and private memories about it, every version",
       tag="my memory", body=ForgetSubjectIn, response=CountsOut)
def my_memory_forget_subject(org_id, body: ForgetSubjectIn):
    """Forget a subject."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, body.user_id, body.phone)
    n = my_memory.forget_subject(s, access, body.subject, actor_label=_actor())
    s.commit()
    return CountsOut(counts={"memories_removed": n})


@route(bp, "/me/learning", "GET", summary="Whether learning is paused for the person", tag="my memory",
       query=PrincipalQuery, response=LearningOut)
def my_learning(org_id, query: PrincipalQuery):
    """Paused or learning."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, query.user_id, query.phone)
    since = my_memory.paused_since(s, access.principal)
    return LearningOut(paused=since is not None, paused_since=since)


@route(bp, "/me/learning", "PUT", summary="Pause or resume learning for the person: while paused nothing is "
       "learnt from their messages (they are still stored and searchable)", tag="my memory", body=LearningIn,
       response=LearningOut)
def my_learning_set(org_id, body: LearningIn):
    """Pause or resume."""
    from memory_core.privacy import my_memory

    access, s = _mine(org_id, body.user_id, body.phone)
    since = my_memory.set_learning_paused(s, access.principal, body.paused, actor_label=_actor(), org_id=org_id)
    s.commit()
    return LearningOut(paused=since is not None, paused_since=since)
