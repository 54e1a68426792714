"""The local backend's extractor: deterministic rules over Spanish and English, no model, no network.

The message is data. Rules read fixed shapes of sentences; nothing in the text can change what the
extractor does, and values must look like what they claim to be (a name, a number of days, an IBAN).
"""
from __future__ import annotations

from typing import Iterator

from memory_core.backends.base import ExtractionContext, Fact, Usage
from memory_core.backends.local_extractor.business import BUSINESS_RULES
from memory_core.backends.local_extractor.clauses import REMEMBER_PREFIX, is_order, statement
from memory_core.backends.local_extractor.fallback import generic_fact
from memory_core.backends.local_extractor.families import reuse_attribute
from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import Mention, find_mentions
from memory_core.backends.local_extractor.personal import PERSONAL_RULES, rule_event
from memory_core.backends.local_extractor.subjects import Subject, resolve_contact, sentence_for
from memory_core.backends.local_extractor.text import Sentence, split_sentences

MODEL = "local-extractor-v1"

# Every rule reads every sentence; the event rule only reads a sentence none of these found anything in.
RULES = BUSINESS_RULES + PERSONAL_RULES


class LocalExtractor:
    """Rule-based extraction of atomic facts from one message."""

    model = MODEL

    def extract(self, context: ExtractionContext) -> tuple[list[Fact], Usage]:
        facts: dict[tuple[str, str], Fact] = {}
        # "Le pagamos a 10 días", "el contacto allí es Marisa": the contact named just before, in this
        # message or else in the assistant's previous turn.
        recent = find_mentions(Sentence.of(context.previous_assistant or ""), context.contacts)
        read: list[tuple[Sentence, list[Mention], list[Mention]]] = []
        for raw in split_sentences(context.message or ""):
            s = Sentence.of(raw)
            mentions = find_mentions(s, context.contacts)
            read.append((s, mentions, recent))
            for fact in self._sentence_facts(s, context, mentions, recent):
                facts.pop((fact.subject, fact.attribute), None)  # the later statement in a message wins
                facts[(fact.subject, fact.attribute)] = fact
            recent = mentions or recent
        if not facts and context.gate_category is not None:
            # The gate judged the message worth remembering and no shape matched: keep it as one generic fact.
            fact = generic_fact(read, context)
            if fact is not None:
                facts[(fact.subject, fact.attribute)] = fact
        return list(facts.values()), Usage(purpose="extract", model=MODEL)

    def _sentence_facts(self, s: Sentence, context: ExtractionContext, mentions: list[Mention],
                        recent: list[Mention]) -> Iterator[Fact]:
        prefix = REMEMBER_PREFIX.match(s.low)
        if prefix and prefix.end():
            s = Sentence.of(s.text[prefix.end():])
            mentions = find_mentions(s, context.contacts)
        if not statement(s):
            return
        order = is_order(s)
        found: list[Found] = [f for rule in RULES for f in rule(s)]
        if not found:
            found = list(rule_event(s, context.today))
        values = {f.value for f in found}
        for f in found:
            if order and not f.imperative:
                continue
            subject = self._subject(s, f, mentions, recent, values)
            if subject is None:
                continue
            stored = tuple(context.known_attributes.get(subject.key, ()))
            attribute = reuse_attribute(f.attribute, stored)
            if f.target == "event":
                sentence = f"El {f.event_date:%d/%m/%Y}: {f.value}."
            else:
                sentence = sentence_for(f.attribute, subject, f.value)
            yield Fact(subject=subject.key, attribute=attribute, value=f.value, sentence=sentence,
                       category=self._category(f, subject), event_date=f.event_date,
                       confidence=round(min(f.confidence, subject.confidence), 2))

    @staticmethod
    def _subject(s: Sentence, f: Found, mentions: list[Mention], recent: list[Mention],
                 values: set[str]) -> Subject | None:
        if f.target in ("self", "event"):
            return Subject("self", "", "person")
        if f.target == "org":
            return Subject("org", "", "company")
        if f.target == "self_or_contact" and not mentions:
            return Subject("self", "", "person")
        return resolve_contact(s, f, mentions, recent if f.target == "contact" else [], values)

    @staticmethod
    def _category(f: Found, subject: Subject) -> str:
        if f.target == "event":
            return "event"
        if subject.key == "self":
            family = {"nombre", "hijo", "hija", "hijos", "pareja", "madre", "padre", "hermano", "hermana"}
            return "person" if f.attribute in family else "preference"
        return subject.category


def extract(context: ExtractionContext) -> tuple[list[Fact], Usage]:
    """Module-level shortcut for LocalExtractor().extract."""
    return LocalExtractor().extract(context)
