"""The worker's unit of work: one message, from stored to remembered.

`process_message` indexes the message for search and, when a person wrote it, runs gate, policy,
extraction and the write ladder, then tells the person what was saved (a "learnt" notification they
can undo). It rebuilds the writer's access from the database as it is now: a member who left
meanwhile teaches nothing. It runs inside the caller's transaction and never commits, so the outbox
row is marked done in the same transaction as everything learnt (at-least-once, idempotent: a second
run merges into what the first wrote and adds no source, notification or memory).

One module on purpose (~680 lines): the batch preparation, the unit of work, its notifications and their
undo share the Outcome, the Ledger and the batch cache; split apart, each would reach into the others.
"""
from __future__ import annotations

import datetime as dt
import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from sqlalchemy import bindparam, func, literal, select
from sqlalchemy.orm import Session, aliased
from sqlalchemy.orm.attributes import set_committed_value

from memory_core.adapters.array_param import ArrayParam
from memory_core.adapters.vector_binary import BinaryVector
from memory_core.backends.local_extractor.text import normalise_name
from memory_core.backends.local_extractor.units import units
from memory_core.domain import audit, clock, deferred_rows, policy, subject_locks
from memory_core.domain.access import Access, Principal, load_access, load_member_accesses
from memory_core.domain.change_words import CORRECTS
from memory_core.domain.errors import Conflict, NotFound
from memory_core.domain.exclusions import load_exclusions
from memory_core.domain.ladder import BANK_ATTRIBUTES, OWN_BANK, Source, WriteResult, requested_level, write_memory
from memory_core.domain.ledger import record_usage, usage_row
from memory_core.domain.model_port import ExtractionContext, Fact, GateDecision, KnownContact, ModelBackend, Usage
from memory_core.domain.models import Contact, Memory, MemorySource, Message, Notification, Organization
from memory_core.domain.policy import BANKS, Exclusion, PolicyVerdict, check_text
from memory_core.domain.protected_topics import without_topic_mentions
from memory_core.domain.text import fold
from memory_core.learning.amendments import amended_fact
from memory_core.learning.contact_candidates import ContactIndex, ContactRow
from memory_core.learning.context_reads import KnownToWriters, context_reads
from memory_core.learning.subjects import CARRY_OVER, resolve_subjects
from memory_core.privacy.my_memory import learning_paused, paused_among

log = logging.getLogger(__name__)

PREVIOUS_TURN_CHARS = 800
# The lock the worker holds on a message while it learns from it: FOR NO KEY UPDATE, which an edit, a deletion or
# another worker waits for, but not a row that only refers to the message. FOR UPDATE also held up the turn's own
# trace (memory_traces.message_id): a person's /context right after their message waited for the worker's whole
# batch (37% of turns at 5-30 ms each in bench/api_load.py, 2026-12-06; seconds with a remote model).
MESSAGE_LOCK = {"key_share": True}
_UUIDS = ArrayParam("uuid")

@dataclass
class Outcome:
    """What the pipeline did with one message (also what `memoria eval` scores)."""
    outcome: str  # skipped | forgotten | indexed | no_access | paused | ignored | refused | learnt | proposed | merged
    reason: str = ""
    policy: str | None = None  # secret | insult | special | bank_account, when policy decided
    decision: GateDecision | None = None
    facts: list[Fact] = field(default_factory=list)
    writes: list[WriteResult] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)

    @property
    def expect(self) -> str:
        """The outcome in the eval vocabulary: learn | propose | refuse | ignore."""
        if self.outcome in ("learnt", "merged"):
            return "learn"
        if self.outcome == "proposed":
            return "propose"
        if self.outcome == "refused":
            return "refuse"
        return "ignore"


class Ledger:
    """Records every model call of one message in the ledger, in the caller's transaction; `spent` also
    keeps them in memory, so a caller whose transaction fails can still record what was paid for."""

    def __init__(self, session: Session, org_id, message_id, run_tag, spent: list[Usage] | None = None,
                 record: bool = True):
        self.session, self.org_id, self.message_id, self.run_tag = session, org_id, message_id, run_tag
        self.spent = spent
        # False: the caller writes `spent` to the ledger itself (the worker, once per batch).
        self.record = record

    def __call__(self, usage: Usage) -> None:
        if self.record:
            record_usage(self.session, usage, org_id=self.org_id, message_id=self.message_id, run_tag=self.run_tag)
        if self.spent is not None:
            self.spent.append(usage)


# --------------------------------------------------------------------------- reading what the pipeline needs

def _turn_before(role: str, since=None):
    """The text of the last `role` turn before the Message row of the statement, in its conversation (`since`: not
    sent before then), as a scalar subquery correlated to it."""
    prev = aliased(Message)
    q = select(prev.text).where(
        prev.conversation_id == Message.conversation_id, prev.role == role, prev.deleted_at.is_(None),
        prev.created_at <= Message.created_at, prev.id != Message.id)
    if since is not None:  # by send time: imported history keeps its own (as `subjects.recent_subjects` reads it)
        q = q.where(func.coalesce(prev.sent_at, prev.created_at) >= since)
    return q.order_by(prev.created_at.desc(), prev.id.desc()).limit(1).correlate(Message).scalar_subquery()


def _turns_before() -> tuple:
    """The assistant's last turn, and the writer's own last message within CARRY_OVER, before the Message row."""
    return (_turn_before("assistant"),
            _turn_before("user", func.coalesce(Message.sent_at, Message.created_at) - CARRY_OVER))


def previous_turns(session: Session, message: Message) -> tuple[str | None, str | None]:
    """The assistant's last turn before this message (context for the gate and the extractor) and the writer's own
    message before it, if sent in the last CARRY_OVER (a reply that names no subject may answer about one it named:
    "Apunta el teléfono de Marisa, de Cerámicas Roig" ... "¿Me das el número?" ... "es el 655 31 20 98")."""
    assistant, said = session.execute(select(*_turns_before()).where(Message.id == message.id)).one()
    return _cut(assistant), _cut(said)


def _unless_secret(texts, verdict) -> tuple[str | None, ...]:
    """The texts, each None where its `verdict` finds a secret: context is not worth sending a secret to a model."""
    return tuple(None if text and verdict(text).secret else text for text in texts)


def _cut(text: str | None) -> str | None:
    return text[:PREVIOUS_TURN_CHARS] if text else None


def load_contacts(session: Session, org_id: uuid.UUID | None) -> ContactIndex:
    """The org's contacts, by name, indexed for `candidate_contacts`."""
    if org_id is None:
        return ContactIndex(())
    return ContactIndex(ContactRow(r.id, r.name, r.kind, r.tax_id, tuple(r.aliases or ())) for r in session.execute(
        select(Contact.id, Contact.name, Contact.kind, Contact.tax_id, Contact.aliases)
        .where(Contact.org_id == org_id).order_by(Contact.name)))


def candidate_contacts(session: Session, org_id: uuid.UUID | None, text: str,
                       contacts: ContactIndex | None = None) -> list[ContactRow]:
    """The org's contacts a fact in `text` may be about (all of them for a small org, see
    learning/contact_candidates.py); `contacts` are the org's when the caller already loaded them (the worker
    does, once per org per batch)."""
    if org_id is None:
        return []
    return (load_contacts(session, org_id) if contacts is None else contacts).candidates(text)


def extraction_context(session: Session, access: Access, text: str, previous: str | None,
                       today: dt.date | None = None, decision: GateDecision | None = None,
                       all_contacts: ContactIndex | None = None,
                       conversation_id: uuid.UUID | None = None,
                       sent_at: dt.datetime | None = None,
                       known_to_writers: KnownToWriters | None = None,
                       previous_said: str | None = None) -> ExtractionContext:
    """What the extractor reads besides the message: contacts, known attributes, the gate's reading, the
    subjects the conversation is about, and the message's send time (relative dates are resolved against it;
    `today` overrides its date). `known_to_writers`: the worker batch's cache of what each writer may see."""
    sent_at = sent_at or clock.now()
    contacts = candidate_contacts(session, access.org_id, text, all_contacts)
    names, recent, known = context_reads(session, access, ["self", "org", *(f"contact:{c.id}" for c in contacts)],
                                         conversation_id, sent_at, known_to_writers,
                                         mentioned_in=f"{text}\n{previous or ''}")
    return ExtractionContext(
        known_names=names, recent_subjects=recent,
        message=text, previous_assistant=previous, previous_said=previous_said,
        contacts=tuple(KnownContact(id=str(c.id), name=c.name, kind=c.kind, tax_id=c.tax_id,
                                    aliases=c.aliases) for c in contacts),
        known_attributes=known, today=today or sent_at.date(), reference_time=sent_at,
        gate_category=decision.top_category if decision is not None else None,
        gate_scope=decision.top_scope if decision is not None else None)


# --------------------------------------------------------------------------- policy helpers

_BANK_WORDS = re.compile(r"(iban|cuenta|account|bank|banco|swift|bic|ccc|remittance|transferencia)")


def bank_facts(facts: list[Fact], verdict: PolicyVerdict, context: ExtractionContext,
               category: str = "supplier") -> list[Fact]:
    """In a message about a new bank account, every fact about a customer or supplier is that account (with no
    account number in it, every note about one): it is written as `cuenta_bancaria`, which the ladder only ever
    proposes (never applies). The business's own bank named without an account number (`OWN_BANK`) is no one's
    account change."""
    def bankish(f: Fact) -> bool:
        compact = re.sub(r"[\s\-]", "", f.value.upper())
        return (f.attribute in BANK_ATTRIBUTES or bool(_BANK_WORDS.search(fold(f.attribute)))
                or bool(verdict.bank_account and verdict.bank_account in compact))

    # With no account number in the message, a typed fact (a term, a way of paying, a contact) is what it says and
    # not the account: "a Papelera del Sur les pagamos a 30 días por transferencia, a la cuenta que acaba en 4410".
    contact_facts = [f for f in facts if f.subject.startswith(("contact:", "name:"))
                     and (verdict.bank_account or f.attribute.startswith("nota") or bankish(f))]
    # With no fact that is visibly the account, the message's facts about a contact are taken to be it.
    convert_all = not any(bankish(f) for f in contact_facts)
    out = []
    for f in facts:
        if f in contact_facts and (convert_all or bankish(f)):
            out.append(replace(f, attribute=BANK_ATTRIBUTES[0], value=verdict.bank_account or f.value))
        else:
            out.append(f)
    if not any(f.attribute in BANK_ATTRIBUTES for f in out) and not (
            verdict.bank_account is None and any(f.subject == "org" and f.attribute == OWN_BANK for f in out)):
        # The extractor found no fact about a contact. The change must still wait for an owner or
        # admin: link it to the one contact the message names, else to the name it mentions.
        named = [c for c in context.contacts if fold(c.name) in fold(context.message)
                 or any(fold(a) in fold(context.message) for a in c.aliases)]
        if len(named) == 1:
            subject, label = f"contact:{named[0].id}", named[0].name
            category = named[0].kind if named[0].kind in ("customer", "supplier") else "supplier"
        elif category in ("customer", "supplier"):
            label = mentioned_name(context.message) or "sin identificar"
            subject = f"name:{normalise_name(label)}"
        else:
            return out  # the org's own account, say: not a customer's or supplier's change
        out.append(Fact(subject=subject, attribute=BANK_ATTRIBUTES[0],
                        value=verdict.bank_account or context.message[:300],
                        sentence=f"{label}: nueva cuenta bancaria, sin verificar.", category=category,
                        confidence=0.5))
    return out


# Capitalised words that start a sentence or name a bank, not the customer or supplier.
_NOT_NAMES = {"a", "el", "la", "los", "las", "esto", "este", "esta", "ese", "esa", "admin", "note", "nota", "the",
              "mr", "mrs", "ms", "sr", "sra", "ai", "ia", "iban", *BANKS, "wise", "paypal", "urgente", "ojo", "oye",
              "hola"}
_CAPITALISED = re.compile(r"[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü'’&.-]*"
                          r"(?:\s+(?:de|del|y|e|&)?\s*[A-ZÁÉÍÓÚÑ][\wÁÉÍÓÚÑáéíóúñü'’&.-]*)*")


def mentioned_name(text: str) -> str | None:
    """The first capitalised name in the text that is no sentence opener or bank (several words first)."""
    found = [(m.start(), m.group().strip(" .'’")) for m in _CAPITALISED.finditer(text)]
    found = [(at, f) for at, f in found if fold(f) not in _NOT_NAMES and not re.fullmatch(r"[A-Z]{2}\d.*", f)]
    multi = [f for _, f in found if " " in f]
    # A single capitalised word opening the sentence is just the sentence's first word.
    single = [f for at, f in found if at > 0]
    return (multi or single or [None])[0]


# --------------------------------------------------------------------------- batches (the outbox worker)

class BatchCache:
    """Per-org reads shared by the messages of one worker batch, each read once instead of per message.
    Exclusions and contacts are not written by the pipeline, so a batch (seconds) may reuse them."""

    def __init__(self):
        self._exclusions: dict = {}
        self._contacts: dict = {}
        self._access: dict = {}
        self._paused: dict = {}
        self._orgs: dict = {}
        self._verdicts: dict = {}
        # What each writer may see (names, attributes), kept up to date with what the batch writes.
        self.known = KnownToWriters()
        # The batch's messages, loaded (and locked) by `prepare_messages`: held here so the session's
        # identity map (weak references) still has them when each message is processed.
        self.messages: list[Message] = []

    def org(self, session: Session, org_id: uuid.UUID | None) -> Organization | None:
        if org_id is None:
            return None
        if org_id not in self._orgs:
            self._orgs[org_id] = session.get(Organization, org_id)
        return self._orgs[org_id]

    def access(self, session: Session, org_id: uuid.UUID | None, user_id: uuid.UUID | None,
               phone: str | None) -> Access | None:
        """The writer's access, rebuilt from the database once per batch (the batch is one transaction
        of a fraction of a second: a member who left before it started teaches nothing)."""
        key = (org_id, user_id, phone)
        if key not in self._access:
            self._access[key] = load_access(session, org_id, user_id=user_id, phone=phone)
        return self._access[key]

    def read_writers(self, session: Session, messages: Sequence[Message]) -> None:
        """The access and the learning pause of every writer of these messages, two statements in all: a batch
        learns for as many people as it has messages (each read apart, they were two statements a message).
        A writer on a number is read apart, by `access` (its number's authorization decides)."""
        members = {(m.org_id, m.user_id) for m in messages if m.role == "user" and m.org_id is not None
                   and m.user_id is not None and m.phone is None and (m.org_id, m.user_id, None) not in self._access}
        if members:
            for (org_id, user_id), access in load_member_accesses(session, members).items():
                self._access[(org_id, user_id, None)] = access
        users = {a.principal.user_id for a in self._access.values()
                 if a is not None and a.principal.user_id is not None} - self._paused.keys()
        if users:
            paused = paused_among(session, users)
            self._paused.update({u: u in paused for u in users})

    def paused(self, session: Session, user_id: uuid.UUID | None) -> bool:
        """Whether the writer paused learning, read once per batch like their access."""
        if user_id not in self._paused:
            self._paused[user_id] = learning_paused(session, user_id)
        return self._paused[user_id]

    def exclusions(self, session: Session, org_id: uuid.UUID | None) -> list[Exclusion]:
        if org_id not in self._exclusions:
            self._exclusions[org_id] = load_exclusions(session, org_id)
        return self._exclusions[org_id]

    def verdict(self, session: Session, org_id: uuid.UUID | None, text: str) -> PolicyVerdict:
        """The org's exclusion list run over `text`, once per batch (preparing and writing read it both)."""
        key = (org_id, text)
        if key not in self._verdicts:
            self._verdicts[key] = check_text(text, self.exclusions(session, org_id))
        return self._verdicts[key]

    def contacts(self, session: Session, org_id: uuid.UUID | None) -> ContactIndex:
        if org_id not in self._contacts:
            self._contacts[org_id] = load_contacts(session, org_id)
        return self._contacts[org_id]


@dataclass
class Prepared:
    """Model results computed for a batch before each message is written (in its own savepoint of the batch)."""
    text: str  # the text they were computed for: a message edited since is computed again
    message_id: uuid.UUID | None = None
    previous: str | None = None
    previous_said: str | None = None  # the writer's own message before it (`previous_turns`)
    vector: list[float] | None = None
    embed_usage: Usage | None = None
    decision: tuple[GateDecision, Usage] | None = None


def _share(usage: Usage, part: int, whole: int) -> Usage:
    """One text's share of a call that embedded several (by characters)."""
    ratio = part / whole if whole else 0.0
    return replace(usage, input_tokens=round(usage.input_tokens * ratio), output_tokens=0,
                   cost_usd=usage.cost_usd * ratio)


def _writer_paused(session: Session, cache: BatchCache, msg: Message) -> bool:
    """The writer paused learning: their message is indexed, never sent to the gate."""
    access = cache.access(session, msg.org_id, msg.user_id, msg.phone)
    return access is not None and cache.paused(session, access.principal.user_id)


def prepare_messages(session: Session, message_ids: list[uuid.UUID], backend: ModelBackend,
                     cache: BatchCache, run_tag: str | None = None, *,
                     lock: bool = False, ledger_rows: list[dict] | None = None) -> dict[uuid.UUID, Prepared]:
    """Embed and gate a batch of messages with one model call each, applying the same rules as
    `process_message` (a secret reaches no model). Stores the message vectors (search index only,
    learns nothing) with their ledger rows, in one statement each; a failed call leaves the work to
    `process_message`, message by message, where a failure stays with its own message.

    `lock`: the messages are locked FOR NO KEY UPDATE (the worker then processes them in this same
    transaction, with `locked=True`, and finds them already loaded): an edit or an erasure waits for the batch, a
    row that only refers to the message does not (MESSAGE_LOCK). `ledger_rows`: the vectors' ledger rows are
    appended here (`ledger.usage_row`) instead of added to the session (the worker writes its batch's at once)."""
    # The turns before each message (`previous_turns`), read with the messages in one statement.
    # An array, not an IN list: one statement text whatever the batch's size (prepared, planned once).
    q = select(Message, *_turns_before()).where(Message.id == func.any(literal(list(message_ids), _UUIDS)))
    if lock:
        q = q.with_for_update(of=Message, **MESSAGE_LOCK)
    loaded = session.execute(q).all()
    messages = [m for m, _, _ in loaded]
    cache.messages.extend(messages)
    previous_of = {m.id: (_cut(assistant), _cut(said)) for m, assistant, said in loaded}
    by_id = {m.id: m for m in messages}
    cache.read_writers(session, messages)
    out: dict[uuid.UUID, Prepared] = {}
    to_embed: list[Prepared] = []
    to_gate: list[Prepared] = []
    for msg in messages:
        if msg.deleted_at is not None or not msg.text.strip():
            continue
        if cache.verdict(session, msg.org_id, msg.text).secret:
            continue
        p = out[msg.id] = Prepared(text=msg.text, message_id=msg.id)
        if msg.embedding is None or msg.embed_model != backend.embed_model:
            to_embed.append(p)
        if msg.role == "user" and not _writer_paused(session, cache, msg):
            p.previous, p.previous_said = _unless_secret(previous_of[msg.id],
                                                         partial(cache.verdict, session, msg.org_id))
            to_gate.append(p)
    if to_embed:
        try:
            vectors, usage = backend.embed([p.text for p in to_embed])
            whole = sum(len(p.text) for p in to_embed)
            for p, v in zip(to_embed, vectors, strict=True):
                p.vector, p.embed_usage = v, _share(usage, len(p.text), whole)
        except Exception as exc:  # noqa: BLE001 - retried per message, where a failure is recorded on its row
            log.warning("batch embedding failed (%s); embedding message by message", type(exc).__name__)
        else:
            _store_vectors(session, [by_id[p.message_id] for p in to_embed], to_embed, backend.embed_model, run_tag,
                           locked=lock, ledger_rows=ledger_rows)
    decide_many = getattr(backend, "decide_many", None)
    if to_gate and decide_many is not None:
        try:
            for p, decided in zip(to_gate, decide_many([(p.text, p.previous) for p in to_gate]), strict=True):
                p.decision = decided
        except Exception as exc:  # noqa: BLE001 - as above
            log.warning("batch gate failed (%s); deciding message by message", type(exc).__name__)
    return out


def _store_vectors(session: Session, messages: list[Message], prepared: list[Prepared], model: str,
                   run_tag: str | None, *, locked: bool = False, ledger_rows: list[dict] | None = None) -> None:
    """Write the batch's message vectors, each only if its message still has the text it was computed
    for (an edit meanwhile leaves it to `process_message`)."""
    table = Message.__table__
    session.connection().execute(
        table.update().where(table.c.id == bindparam("b_id"), table.c.text == bindparam("b_text"),
                             table.c.deleted_at.is_(None))
        .values(embedding=bindparam("b_vector", type_=BinaryVector()), embed_model=model),
        [{"b_id": p.message_id, "b_text": p.text, "b_vector": p.vector} for p in prepared])
    for msg, p in zip(messages, prepared, strict=True):
        if ledger_rows is None:
            record_usage(session, p.embed_usage, org_id=msg.org_id, message_id=msg.id, run_tag=run_tag)
        else:
            ledger_rows.append(usage_row(p.embed_usage, org_id=msg.org_id, message_id=msg.id, run_tag=run_tag))
        if locked:
            # Locked since it was read, so the text is the one embedded and the row was updated:
            # process_message, in this same transaction, finds the vector on the loaded message.
            set_committed_value(msg, "embedding", p.vector)
            set_committed_value(msg, "embed_model", model)
        p.vector = None  # stored: process_message finds it on the message


# --------------------------------------------------------------------------- the unit of work

def process_message(session: Session, message_id: uuid.UUID, backend: ModelBackend, *,
                    run_tag: str | None = None, today: dt.date | None = None, event: str = "new",
                    spent: list[Usage] | None = None, prepared: Prepared | None = None,
                    cache: BatchCache | None = None, locked: bool = False,
                    defer_usage: bool = False) -> Outcome:
    """Index one message and learn from it if a person wrote it. Does not commit.

    `event` is the outbox event: after an edit, what was learnt only from the old text is forgotten
    first, then the new text is learnt. The worker passes what it `prepared` for its batch and the
    batch's `cache`; results prepared for another text than the message's current one are ignored.
    `locked`: this transaction already holds the message's row lock (`prepare_messages(lock=True)`), so
    the loaded row is current. `defer_usage`: the model calls go to `spent` only, and the caller
    writes them to the ledger (the worker, once per batch)."""
    msg = session.get(Message, message_id) if locked else session.get(Message, message_id, with_for_update=MESSAGE_LOCK)
    if msg is None:
        return Outcome("skipped", "The message no longer exists.")
    if msg.deleted_at is not None or event == "edited":
        if cache is not None:
            cache.known.forget()  # what was learnt from it goes: every writer reads afresh
        if msg.deleted_at is not None:
            return forget_message(session, msg)
        forget_message(session, msg, keep_vector=True)
    if defer_usage and spent is None:
        raise ValueError("defer_usage needs a spent list")
    ledger = Ledger(session, msg.org_id, msg.id, run_tag, spent, record=not defer_usage)
    if prepared is not None and prepared.text != msg.text:
        prepared = None  # edited since the batch was prepared
    exclusions = cache.exclusions(session, msg.org_id) if cache else load_exclusions(session, msg.org_id)
    verdict = cache.verdict(session, msg.org_id, msg.text) if cache else check_text(msg.text, exclusions)
    # A message holding a secret is not embedded either: no model sees it (full-text search still finds it).
    if verdict.secret is None and msg.text.strip() and (
            msg.embedding is None or msg.embed_model != backend.embed_model):
        if prepared is not None and prepared.vector is not None:
            vectors, usage = [prepared.vector], prepared.embed_usage
        else:
            vectors, usage = backend.embed([msg.text])
        ledger(usage)
        msg.embedding, msg.embed_model = vectors[0], backend.embed_model
    if msg.role != "user" or not msg.text.strip():
        return Outcome("indexed", "Not written by a person: indexed for search only.")
    access = (cache.access(session, msg.org_id, msg.user_id, msg.phone) if cache is not None else
              load_access(session, msg.org_id, user_id=msg.user_id, phone=msg.phone))
    if access is None:
        return Outcome("no_access", "The writer has no access to this org any more: nothing is learnt.")
    if (cache.paused(session, access.principal.user_id) if cache is not None
            else learning_paused(session, access.principal.user_id)):
        return Outcome("paused", "The writer paused learning: nothing is learnt from their messages.")
    if cache is not None:
        org = cache.org(session, msg.org_id)
    else:
        org = session.get(Organization, msg.org_id) if msg.org_id else None
    channel = msg.channel
    if prepared is not None and prepared.decision is not None:
        # Read (and cleared of secrets) when the batch was prepared, a moment ago.
        previous, previous_said, decided = prepared.previous, prepared.previous_said, prepared.decision
    else:
        previous, previous_said = _unless_secret(previous_turns(session, msg),
                                                 partial(check_text, exclusions=exclusions))
        decided = None
    out = learn(session, access, org, msg.text, backend, ledger=ledger, previous=previous,
                previous_said=previous_said,
                source=Source(message_id=msg.id, conversation_id=msg.conversation_id), today=today,
                sent_at=msg.sent_at,
                verdict=verdict, decided=decided,
                all_contacts=cache.contacts(session, msg.org_id) if cache else None,
                known_to_writers=cache.known if cache else None)
    for w in out.writes:
        note = _notify(session, access, msg, w, channel)
        if note is not None:
            out.notifications.append(note)
    return out


def learn(session: Session, access: Access, org: Organization | None, text: str, backend: ModelBackend, *,
          ledger, previous: str | None = None, previous_said: str | None = None, source: Source | None = None,
          today: dt.date | None = None,
          verdict: PolicyVerdict | None = None, decided: tuple[GateDecision, Usage] | None = None,
          all_contacts: ContactIndex | None = None, sent_at: dt.datetime | None = None,
          known_to_writers: KnownToWriters | None = None) -> Outcome:
    """Gate, policy, extraction and ladder for one background message. Does not commit.

    `decided` is the gate's answer when the worker already computed it for its batch; `all_contacts`
    the org's contacts when it already read them; `known_to_writers` the batch's cache of what each
    writer may see (told what this message wrote)."""
    if verdict is None:
        verdict = check_text(text, load_exclusions(session, org.id if org else None))
    ruling = policy.decide(verdict, text)
    if ruling.refused:
        # Before the gate: a secret never reaches a model, not even the gate.
        return Outcome("refused", ruling.reason, policy=ruling.refused)
    decision, usage = decided if decided is not None else backend.decide(text, previous)
    ledger(usage)
    ruling = policy.decide(verdict, text, decision)
    if ruling.refused == "special" and decision.special < policy.POLICY_THRESHOLD and verdict.special:
        # Only the exclusion list flagged it: refuse the sentences on a protected topic, learn from the rest.
        text = without_special_sentences(text, load_exclusions(session, org.id if org else None))
        if text:
            ruling = policy.Ruling(bank=ruling.bank)
    if ruling.refused:
        return Outcome("refused", ruling.reason, policy=ruling.refused, decision=decision)
    bank = ruling.bank
    amended = None if bank else amended_fact(session, access, text, source.conversation_id if source else None,
                                             sent_at or clock.now())
    if amended is not None:
        # "no perdona, es a 45", "actually it's 1,250": the number just given, taken back, whatever the gate said.
        out = Outcome("ignored", decision=decision, facts=[amended])
        write_all(session, access, org, [amended], backend, ledger, source, out, explicit=False, corrects=True,
                  at=sent_at)
        if known_to_writers is not None:
            known_to_writers.wrote(out.writes)
        return out
    if not decision.passes and verdict.bank_account is None:
        return Outcome("ignored", "Nothing durable to remember.", decision=decision)
    # Only a message the gate passed carries the gate's decision: a bank-account line it did not pass
    # gets no generic fact.
    context = extraction_context(session, access, text, previous, today,
                                 decision if decision.passes else None, all_contacts=all_contacts,
                                 conversation_id=source.conversation_id if source is not None else None,
                                 sent_at=sent_at, known_to_writers=known_to_writers, previous_said=previous_said)
    facts, usage = backend.extract(context)
    ledger(usage)
    # Nothing was written since the context was read: the names it read are still the known ones.
    facts = resolve_subjects(facts, context.contacts, context.known_names)
    if bank:
        facts = bank_facts(facts, verdict, context, decision.top_category)
    if access.org_id is None:
        # A number not tied to one org: only what is about the person can be kept.
        facts = [f for f in facts if requested_level(f) == "personal"]
    if not facts:
        return Outcome("ignored", "No fact could be extracted.", decision=decision,
                       policy="bank_account" if bank else None)
    out = Outcome("ignored", decision=decision, facts=facts, policy="bank_account" if bank else None)
    write_all(session, access, org, facts, backend, ledger, source, out, explicit=False,
              corrects=is_correction(text, decision), at=sent_at)
    if known_to_writers is not None:
        known_to_writers.wrote(out.writes)
    return out


def without_special_sentences(text: str, exclusions: list[Exclusion]) -> str:
    """The message without its sentences on a special category ("" when all of them are), so the rest
    of it ("We have two kids, Leo and Alba") is still learnt and the protected sentence never is. A sentence
    whose protected words only name a cause, a field or an event ("we sold paintings at the church fair")
    is no special category."""
    kept = [u.raw for u in units(text) if not u.phatic
            and not check_text(without_topic_mentions(u.raw), exclusions).special]
    return " ".join(k if k.rstrip()[-1:] in ".!?;" else f"{k}." for k in kept)


def _embedder(backend: ModelBackend, ledger):
    def embed(texts: list[str]) -> list[list[float]]:
        vectors, usage = backend.embed(texts)
        ledger(usage)
        return vectors
    return embed


CORRECTS_THRESHOLD = 0.5


def is_correction(text: str, decision: GateDecision | None = None) -> bool:
    """The message corrects something known: the gate says so, or it says "ahora", "ya no", "no longer"..."""
    return bool((decision is not None and decision.corrects >= CORRECTS_THRESHOLD) or CORRECTS.search(fold(text)))


def write_all(session, access, org, facts, backend, ledger, source, out: Outcome, *, explicit: bool,
              level: str | None = None, corrects: bool = False, at: dt.datetime | None = None) -> None:
    """Write the facts of one message down the ladder and sum up what happened in `out`."""
    embed = _embedder(backend, ledger)
    for fact in facts:
        if corrects and not fact.corrects:
            fact = replace(fact, corrects=True)
        out.writes.append(write_memory(session, access, org, fact, source=source, explicit=explicit, level=level,
                                       embed=embed, embed_model=backend.embed_model, at=at))
    outcomes = {w.outcome for w in out.writes}
    if "proposed" in outcomes:
        out.outcome = "proposed"
    elif outcomes & {"learnt", "superseded"}:
        out.outcome = "learnt"
    elif outcomes:
        out.outcome = "merged"
    out.reason = "; ".join(w.reason for w in out.writes)


# --------------------------------------------------------------------------- notifications and undo

def _notify(session: Session, access: Access, msg: Message, w: WriteResult, channel: str) -> Notification | None:
    """The "learnt" event for one background save; a merge changed nothing the person must hear about."""
    if w.outcome == "merged":
        return None
    fact = (w.memory or w.proposal)
    if fact is None:
        return None
    sentence = fact.sentence.strip().rstrip(".")
    if w.outcome == "proposed":
        card = f"Pendiente de confirmar: {sentence}."
        said = (f"He tomado nota de que {sentence[:1].lower()}{sentence[1:]}; "
                "queda pendiente de que alguien con permiso lo confirme.")
    else:
        card = f"Lo he aprendido: {sentence}."
        said = f"Por cierto, he apuntado que {sentence[:1].lower()}{sentence[1:]}. Si no es así, dímelo y lo deshago."
    note = Notification(
        created_at=clock.now(),
        org_id=msg.org_id, user_id=access.principal.user_id, phone=msg.phone, conversation_id=msg.conversation_id,
        memory_id=(w.memory or w.proposal).id, kind="learnt",
        text=said if channel == "whatsapp" else card,
        data={"outcome": w.outcome, "card": card, "sentence": said,
              "memory_id": str(w.memory.id) if w.memory else None,
              "proposal_id": str(w.proposal.id) if w.proposal else None,
              "superseded_id": str(w.superseded.id) if w.superseded else None,
              "message_id": str(msg.id)})
    deferred_rows.add(session, note, flush=True)  # the worker writes its batch's notifications at once
    return note


def undo_learnt(session: Session, notification_id: uuid.UUID, principal: Principal) -> Notification:
    """Revert one background save: delete what it wrote and bring back what it superseded. Does not commit."""
    note = session.get(Notification, notification_id, with_for_update=True)
    owned = note is not None and note.kind == "learnt" and (
        (principal.user_id is not None and note.user_id == principal.user_id)
        or (principal.phone is not None and note.phone == principal.phone))
    if not owned:
        raise NotFound("No such notification.")
    if note.undone_at is not None:
        raise Conflict("This save was already undone.")
    data = note.data or {}
    ids = [uuid.UUID(i) for i in (data.get("memory_id"), data.get("proposal_id")) if i]
    written = list(session.scalars(select(Memory).where(Memory.id.in_(ids)).with_for_update()))
    for m in written:
        if m.status == "superseded":
            raise Conflict("A newer fact already replaced this one: undo that one first.")
        if str(m.id) == data.get("proposal_id") and m.status != "proposed":
            raise Conflict("This proposal was already decided by an owner or admin.")
    superseded = None
    if data.get("superseded_id"):
        superseded = session.get(Memory, uuid.UUID(data["superseded_id"]), with_for_update=True)
    # The notification points at the memory with ON DELETE CASCADE: repoint it before deleting.
    note.undone_at = clock.now()
    note.memory_id = superseded.id if superseded is not None else None
    session.flush()
    for m in written:
        session.delete(m)
    session.flush()  # the unique index allows one active row: remove the new one first
    if superseded is not None and superseded.status == "superseded":
        superseded.status, superseded.valid_to, superseded.superseded_by = "active", None, None
    audit.record(session, actor_label="memoria agent", actor_user_id=principal.user_id, action="memory.undone",
                 org_id=note.org_id, target_type="notification", target_id=note.id,
                 details={"deleted": [str(m.id) for m in written],
                          "restored": str(superseded.id) if superseded is not None else None})
    return note


# --------------------------------------------------------------------------- forgetting a deleted message

def forget_message(session: Session, msg: Message, *, keep_vector: bool = False) -> Outcome:
    """A deleted message teaches nothing: its personal and private memories that came only from it and
    that nobody edited by hand are removed; shared ones lose this source and stay."""
    if not keep_vector:
        msg.embedding, msg.embed_model = None, None
    sources = list(session.scalars(select(MemorySource).where(MemorySource.message_id == msg.id)))
    removed = 0
    for src in sources:
        memory = session.get(Memory, src.memory_id)
        if memory is not None:
            # Its subject first, then its row, as the ladder does: a worker never waits while holding.
            subject_locks.lock_subject(session, subject_locks.subject_key(
                memory.org_id, memory.level, memory.owner_user_id, memory.owner_phone, memory.subject))
            memory = session.get(Memory, src.memory_id, with_for_update={"nowait": subject_locks.nowait(session)},
                                 populate_existing=True)
        others = session.scalar(select(func.count()).select_from(MemorySource).where(
            MemorySource.memory_id == src.memory_id, MemorySource.id != src.id))
        if memory is not None and memory.level in ("personal", "private") and not memory.hand_edited and not others:
            _restore_previous(session, memory)
            removed += 1
        else:
            session.delete(src)
    session.flush()
    if removed:
        audit.record(session, actor_label="memoria worker", action="memory.forgotten_with_message",
                     org_id=msg.org_id, target_type="message", target_id=msg.id, details={"memories": removed})
    return Outcome("forgotten", f"Deleted message: {removed} memories that came only from it removed.")


def _restore_previous(session: Session, memory: Memory) -> None:
    previous = session.scalar(select(Memory).where(Memory.superseded_by == memory.id, Memory.status == "superseded"))
    session.delete(memory)
    session.flush()
    if previous is not None and memory.status == "active":
        previous.status, previous.valid_to, previous.superseded_by = "active", None, None
