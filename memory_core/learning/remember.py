"""The explicit path: a person says "remember that..." and the agent saves it in the same turn.

It skips the gate's "is this worth remembering?" (the person said so), but not policy: secrets and
insults are refused; special-category data (GDPR art. 9) is kept private to the person, and only when
it is not about an identifiable third person; a customer's or supplier's bank account is only ever
proposed. Then the same extraction and the same write ladder as the background, with explicit=True.
The gate's policy questions (insult?, special?, bank account?) are still asked: they are one call.
"""
from __future__ import annotations

import re
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.domain import policy
from memory_core.domain.access import Access, contact_visible
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.exclusions import load_exclusions
from memory_core.domain.ladder import Source, requested_level
from memory_core.domain.model_port import Fact, ModelBackend
from memory_core.domain.models import Contact, Organization
from memory_core.domain.vocabulary import MEMORY_CATEGORIES
from memory_core.learning.ingest import MAX_TEXT_CHARS
from memory_core.learning.pipeline import (
    Ledger,
    Outcome,
    bank_facts,
    check_text,
    extraction_context,
    is_correction,
    write_all,
)
from memory_core.learning.subjects import resolve_subjects
from memory_core.privacy.my_memory import learning_paused

RememberResult = Outcome
NOTHING_FOUND = "No concrete fact to remember was found."


def remember(session: Session, access: Access, org: Organization | None, text: str | None = None,
             fact: Fact | None = None, *, backend: ModelBackend, source: Source | None = None,
             run_tag: str | None = None) -> Outcome:
    """Save what the person explicitly asked to remember, in this turn. Does not commit.

    Returns an Outcome: learnt | merged | proposed | refused | ignored, with the reason."""
    if (text is None) == (fact is None):
        raise InvalidInput("give either the text to remember or a fact", field="text")
    if fact is not None:
        _check_fact(fact)
        if fact.subject.startswith("contact:") and session.scalar(select(Contact.id).where(
                Contact.id == uuid.UUID(fact.subject.split(":", 1)[1]), contact_visible(access))) is None:
            raise NotFound("No such contact.")
        probe = f"{fact.sentence} {fact.value}"
    else:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("there is nothing to remember", field="text")
        if "\x00" in text or len(text) > MAX_TEXT_CHARS:
            raise InvalidInput(f"text must have no NUL bytes and at most {MAX_TEXT_CHARS} characters", field="text")
        probe = text
    if learning_paused(session, access.principal.user_id):
        return Outcome("refused", "Learning is paused by the person: nothing is saved until they resume it.",
                       policy="paused")
    ledger = Ledger(session, access.org_id, source.message_id if source else None, run_tag)
    verdict = check_text(probe, load_exclusions(session, org.id if org else None))
    ruling = policy.decide(verdict, probe, explicit=True)
    if ruling.refused:
        return Outcome("refused", ruling.reason, policy=ruling.refused)
    decision, usage = backend.decide(probe, None)
    ledger(usage)
    # The explicit path skips the gate threshold, not its reading of the message: the extractor may
    # fall back to a generic fact for phrasings no rule knows.
    context = extraction_context(session, access, probe, None, decision=decision)
    ruling = policy.decide(verdict, probe, decision, explicit=True, names=[c.name for c in context.contacts])
    if ruling.refused == "insult":
        return Outcome("refused", ruling.reason, policy="insult", decision=decision)
    if fact is not None:
        facts = [fact]
    else:
        facts, usage = backend.extract(context)
        ledger(usage)
        facts = resolve_subjects(facts, context.contacts, context.known_names)
    if ruling.bank:
        facts = bank_facts(facts, verdict, context, decision.top_category)
    if ruling.refused:
        return Outcome("refused", ruling.reason, policy=ruling.refused, decision=decision, facts=facts)
    if access.org_id is None:
        # A number not tied to one org: only what is about the person can be kept.
        facts = [f for f in facts if requested_level(f) == "personal"]
    if not facts:
        return Outcome("ignored", NOTHING_FOUND, decision=decision)
    if ruling.special and any(f.subject != "self" for f in facts):
        return Outcome("refused", policy.REASONS["special_other"], policy="special", decision=decision, facts=facts)
    out = Outcome("ignored", decision=decision, facts=facts,
                  policy="special" if ruling.special else "bank_account" if ruling.bank else None)
    # Special-category data about the person stays theirs alone: never shared, whatever the ladder says.
    write_all(session, access, org, facts, backend, ledger, source, out, explicit=True,
              level="private" if ruling.special else None, corrects=is_correction(probe, decision))
    return out


def _check_fact(fact: Fact) -> None:
    if not isinstance(fact, Fact):
        raise InvalidInput("fact must be a Fact", field="fact")
    if fact.category not in MEMORY_CATEGORIES or fact.category == "sheet":
        raise InvalidInput("unknown fact category", field="category")
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,99}", fact.attribute or ""):
        raise InvalidInput("attribute must be snake_case", field="attribute")
    if not re.fullmatch(r"self|org|contact:[0-9a-f\-]{36}|name:.{1,150}", fact.subject or ""):
        raise InvalidInput("subject must be self, org, contact:<id> or name:<name>", field="subject")
    for field in ("value", "sentence"):
        value = getattr(fact, field)
        if not isinstance(value, str) or not value.strip() or "\x00" in value or len(value) > 2000:
            raise InvalidInput(f"{field} must be a short non-empty text", field=field)


def remember_for_message(session: Session, access: Access, org: Organization | None, text: str, *,
                         backend: ModelBackend, message_id: uuid.UUID | None = None,
                         conversation_id: uuid.UUID | None = None) -> Outcome:
    """remember() with the message it came from as the source (so forgetting that message forgets it)."""
    return remember(session, access, org, text, backend=backend,
                    source=Source(message_id=message_id, conversation_id=conversation_id))
