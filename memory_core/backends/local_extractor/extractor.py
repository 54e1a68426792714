"""The local backend's extractor: deterministic rules over Spanish and English, no model, no network.

The message is data. Rules read fixed shapes of sentences; nothing in the text can change what the
extractor does, and values must look like what they claim to be (a name, a number of days, an IBAN).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import lru_cache

from memory_core.backends import RULE_READ_REMEMBER, RULE_READ_SPECIAL
from memory_core.backends.local_extractor.answers import asks_what_lasts, completed_answer, reads_as_reply
from memory_core.backends.local_extractor.business import BUSINESS_RULES, SUPPLIER_OF, SUPPLY_WORDS
from memory_core.backends.local_extractor.clauses import REMEMBER_PREFIX, is_order, statement
from memory_core.backends.local_extractor.fallback import (
    CONTACT_MORE_WORDS,
    THEY_FIRST,
    TRADE_SUBJECT,
    VALUE_MAX_CHARS,
    WRITER_NOTE_REMEMBER,
    business_in_talk,
    closer,
    describes_the_topic,
    generic_fact,
    not_as_it_is,
    note,
    says_more,
    standing_instruction,
    writer_statement,
)
from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import Mention, Pool, find_mentions, introduced_subjects, name_at
from memory_core.backends.local_extractor.personal import (
    KIN_FAMILIES,
    KIN_WORDS,
    PERSONAL_RULES,
    YEARLY_WORDS,
    rule_event,
    rule_yearly_on,
    yearly,
)
from memory_core.backends.local_extractor.sensitive import care_trade, injury, sensitive
from memory_core.backends.local_extractor.subjects import Subject, event_sentence, resolve_contact, sentence_for
from memory_core.backends.local_extractor.text import Sentence, fold, is_english, normalise_name
from memory_core.backends.local_extractor.third_person import event_what
from memory_core.backends.local_extractor.units import asks, units
from memory_core.backends.local_extractor.views import VIEW_CATEGORY, opens_on_dummy_it, states_a_view
from memory_core.domain.families import reuse_attribute
from memory_core.domain.model_port import ExtractionContext, Fact, GateDecision, KnownContact, Usage
from memory_core.domain.policy import find_bank_account
from memory_core.domain.protected_topics import without_passing_mentions
from memory_core.domain.value_shapes import EMAIL, PHONE, takes_back
from memory_core.domain.vocabulary import GATE_CATEGORIES, GATE_SCOPES, GateCategory, GateScope

MODEL = "local-extractor-v1"

# Every rule reads every sentence; the event rule only reads a sentence none of these found anything in.
RULES = BUSINESS_RULES + PERSONAL_RULES


# A message teaches at most this many generic notes (the units the gate scored highest).
MAX_NOTES = 4
# A unit the gate flags as a special category (GDPR art. 9) at this probability is refused alone.
SPECIAL_THRESHOLD = 0.5

# Judges units of text: the gate's decision for each, in order (the local backend gives its gate's).
Judge = Callable[[list[str]], list[GateDecision]]


class LocalExtractor:
    """Rule-based extraction of atomic facts from one message, sentence by sentence.

    With a `judge` (the local backend passes its gate), every unit the gate passes and no rule reads
    becomes a generic note of its own; without one, the message's first stating unit does, when the
    context carries the gate's category."""

    model = MODEL

    def __init__(self, judge: Judge | None = None):
        self.judge = judge

    def extract(self, context: ExtractionContext) -> tuple[list[Fact], Usage]:
        facts: dict[tuple[str, str], Fact] = {}
        pool = known_subjects(context)
        keep = pool.index.keep
        # "Le pagamos a 10 días", "el contacto allí es Marisa", "and they pay at 45 days": the subject named
        # just before, in this message, else the one the talk was on (`_recent`).
        recent, pool = _recent(context, pool)
        answered = self._answer_facts(context, pool, recent) or self._amended_facts(context.message or "", context, pool, recent)
        if answered:
            return answered, Usage(purpose="extract", model=MODEL)
        read: list[tuple[Sentence, list[Mention], list[Mention]]] = []
        bare: list[int] = []  # indexes in `read` of units no rule read
        self._at: list[int] = []  # the unit index of each entry of `read` (adjacent units continue each other)
        message_units = units(context.message or "", keep)
        # A bare "yes" or "no" is talk, unless it answers a question on the person ("Do you still ride horses?").
        answers = self.reply_statement(context.message or "", context.previous_assistant) is not None and \
            all(unit.phatic for unit in message_units)
        for unit in message_units:
            if unit.phatic and not answers:
                # Talk may still name what follows is about: "Re your question about Fenwick Florists: ... we've moved
                # them up to 15%".
                named, pool = _mentioned(Sentence.of(unit.raw), pool)
                recent = named or recent
                continue
            self._at.append(unit.index)
            s = Sentence.of(unit.raw) if unit.phatic else unit.sentence
            mentions, pool = _mentioned(s, pool)
            found = list(self._sentence_facts(s, context, mentions, recent)) or \
                self._amended_facts(s.text, context, pool, recent) or _taken_back(s, facts)  # "..., no, es a 45"
            named = _name_the_pet(s, facts)
            if named is not None:
                found = [named]
            # A name that is a value read ("the company name on invoices should be Baker & Co Ltd"), or the one it
            # replaces ("..., not Sam Baker Trading"), is no subject for the unit's note; a supplier named as the one
            # the business buys from still is ("Maderas Pino nos trae la madera los martes").
            read.append((s, [m for m in mentions if not _INSTEAD_OF.search(s.low[: m.start]) and not any(
                fold(s.text[m.start:m.end]) in fold(f.value) for f in found if not f.attribute.startswith(
                    SUPPLIER_OF))], recent))
            for fact in found:
                facts.pop((fact.subject, fact.attribute), None)  # the later statement in a message wins
                facts[(fact.subject, fact.attribute)] = fact
            if (not found or _tells_more(s, found, mentions)) and not unit.reason:
                bare.append(len(read) - 1)  # no rule read it, or it tells more than a rule read
            recent = mentions or recent
        for fact in self._notes(read, bare, context, bool(facts)):
            facts.setdefault((fact.subject, fact.attribute), fact)
        return list(facts.values()), Usage(purpose="extract", model=MODEL)

    def _answer_facts(self, context: ExtractionContext, pool: Pool, recent: list[Mention]) -> list[Fact]:
        """A short reply to a question, read as the statement it makes ("a 60" to "¿A cuántos días paga Talleres
        García?"): the typed facts the rules read from it, else none (the reply is then read as it is). A statement
        that names no one is about the subject the talk was on ("es el 655 31 20 98" to "¿Me das el número?")."""
        said = self.reply_statement(context.message or "", context.previous_assistant)
        if said is None:
            return []
        s = Sentence.of(said)
        return list(self._sentence_facts(s, context, _mentioned(s, pool)[0], recent))

    def _amended_facts(self, text: str, context: ExtractionContext, pool: Pool, recent: list[Mention]) -> list[Fact]:
        """A short correction of what was just said, naming no subject ("no perdona, a 90", "sorry, my mistake,
        it's 30 days"), a message or a unit of one: the statement it makes about the subject the talk was on, read by
        the rules, as a correction (the ladder replaces the value said before, as a later unit's value replaces an
        earlier one's in the message)."""
        said = amended_statement(text, recent[0].contact.name if recent else None,
                                 context.known_attributes.get(_subject_key(recent[0]) if recent else "", ()))
        if said is None or find_mentions(Sentence.of(text), pool):
            return []
        s = Sentence.of(said)
        return [replace(f, corrects=True) for f in self._sentence_facts(s, context, _mentioned(s, pool)[0], [])]

    def judged_as_stated(self, message: str, previous: str | None, decision: GateDecision) -> GateDecision:
        """The gate's decision on a short reply, or on the statement it makes when that one passes and the reply
        alone does not: "a las diez" leaves what it is about to "¿A qué hora abrís?", "abrimos a las diez" says
        it. The reply's policy flags are kept where they are higher."""
        said = None if decision.passes or self.judge is None else self.reply_statement(message, previous)
        stated = self.judge([said])[0] if said else None
        lasting = asks_what_lasts(previous) if stated is not None and not stated.passes else None
        if lasting is not None:
            # Whether they still do it, when the business opens: news however short ("sí" to "¿Sigues yendo al
            # coro?", "a las diez" to "¿A qué hora abrís?"), the person's or the business's as the question asks.
            stated = replace(stated, remember=max(stated.remember, RULE_READ_REMEMBER),
                             **(_news_of(lasting) if stated.top_category == GateCategory.NOTHING else {}))
        if stated is None or not stated.passes:
            return decision
        return replace(stated, special=max(stated.special, decision.special), insult=max(stated.insult,
                       decision.insult), bank_account=max(stated.bank_account, decision.bank_account))

    @staticmethod
    def reply_statement(message: str, previous: str | None) -> str | None:
        """The statement a short reply makes to the question before it ("a las diez" to "¿A qué hora abrís?" is
        "abrimos a las diez"), or None: a longer message, no question before it, or a question not read. An amount
        or a number said first and then gone on about is the reply too ("still about 1,200 euros, they keep saying
        next week" to "How much does Northwind owe us now?")."""
        if not previous:
            return None
        if reads_as_reply(message):
            return completed_answer(previous, message)
        head, *rest = re.split(r",(?!\d)", message, maxsplit=1)  # (not the comma of "1,200")
        return completed_answer(previous, head) if rest and re.search(r"\d", head) and reads_as_reply(head) else None

    @staticmethod
    def as_instruction(s: Sentence, decision: GateDecision) -> GateDecision:
        """A unit that is a standing instruction about a business it names passes as news of a customer, however the
        gate read its imperative ("ponle siempre el IVA aparte" to Reformas Ibarra scored 0.11)."""
        if (decision.passes and decision.top_category != GateCategory.NOTHING) or not standing_instruction(s):
            return decision
        return replace(decision, remember=max(decision.remember, RULE_READ_REMEMBER), **_news_of(GateCategory.CUSTOMER))

    def instructs(self, message: str, decision: GateDecision) -> GateDecision:
        """The message's decision, raised as `as_instruction` when some unit of it is a standing instruction."""
        for unit in units(message):
            if not unit.phatic:
                raised = self.as_instruction(unit.sentence, decision)
                if raised is not decision:
                    return raised
        return decision

    def writer_notes(self, message: str) -> bool:
        """Some unit of the message is a note worth keeping though the gate did not pass it alone."""
        if self.judge is None:
            return False
        texts = [u.text for u in units(message) if not u.phatic and told_plainly(u.text)]
        return any(note_worthy(d, t) and self.special(t, d) < SPECIAL_THRESHOLD and d.insult < SPECIAL_THRESHOLD
                   for t, d in zip(texts, self.judge(texts) if texts else []))

    def special(self, text: str, decision: GateDecision) -> float:
        """The gate's special-category answer for a unit, judged without the protected words that only name
        a cause, a field or an event ("a charity race for mental health" is no one's health) and without passing
        feelings ("estuve súper nerviosa")."""
        if decision.special < SPECIAL_THRESHOLD or self.judge is None:
            return decision.special
        if self.trades_with_care(text):
            return min(decision.special, RULE_READ_SPECIAL)
        masked = without_passing_mentions(text)
        return decision.special if masked == text else min(decision.special, self.judge([masked])[0].special)

    @staticmethod
    def trades_with_care(message: str) -> bool:
        """Some unit is the business trading with a doctor, dentist or physio ("la fisioterapeuta del barrio nos
        paga por transferencia") and no unit is on a special category: the care word is no one's health."""
        read = [u.sentence for u in units(message) if not u.phatic]
        return any(care_trade(s) for s in read) and not any(sensitive(s) for s in read)

    @staticmethod
    def tells_injury(message: str) -> bool:
        """Some unit tells of an injury or a pain ("Me he roto el brazo", "I sprained my ankle"): health."""
        return any(injury(u.sentence) for u in units(message) if not u.phatic)

    def rule_reads(self, message: str, previous: str | None = None) -> tuple[bool, bool]:
        """(a rule reads a typed fact in some unit of the message, that unit is on a protected topic):
        the local backend's gate takes a fact a rule can read as worth remembering. A short reply is read as the
        statement it makes to the question before it (`previous`)."""
        context = ExtractionContext(message=message, previous_assistant=previous)
        recent, pool = _recent(context, known_subjects(context))
        if self._answer_facts(context, pool, recent):
            return True, bool(sensitive(Sentence.of(message)))
        if amended_statement(message, "Acme") is not None:
            # A correction of a value just given ("sorry, my mistake, it's 30 days"): the extractor reads it
            # against the subject the talk was on (`_amended_facts`).
            return True, False
        for unit in units(message):
            if unit.phatic:
                continue
            s = unit.sentence
            if any(True for _ in self._sentence_facts(s, context, _mentioned(s, pool)[0], recent)):
                return True, bool(sensitive(s))
        return False, False

    def _notes(self, read, bare: list[int], context: ExtractionContext, any_rule_fact: bool) -> list[Fact]:
        """Generic notes: one per unit the judge passes (best first), or the old single note without one."""
        if self.judge is None:
            if any_rule_fact or context.gate_category is None:
                return []
            fact = generic_fact(read, context)
            return [fact] if fact is not None else []
        if context.gate_category is None or find_bank_account(context.message or ""):
            return []  # no gate passed the message, or a bank account: the rules and the policy decide
        candidates = [i for i in bare if statement(read[i][0]) or states_a_view(read[i][0].text)]
        if not candidates:
            return []
        decisions = [self.as_instruction(read[i][0], self.judged_as_stated(context.message or "",
                                                                             context.previous_assistant, d))
                     for i, d in zip(candidates, self.judge([_with_referent(read[i][0], read[i][2]) for i in candidates]))]
        continued = self._continuations(read, set(bare))
        ranked = sorted(zip(candidates, decisions), key=lambda pair: -pair[1].remember)
        worthy = [(i, d) for i, d in ranked if note_worthy(d, read[i][0].text, passed=True) and
                  self.special(read[i][0].text, d) < SPECIAL_THRESHOLD and d.insult < SPECIAL_THRESHOLD]
        if not worthy and not any_rule_fact and len(candidates) > 1:
            return self._whole_note([read[i] for i in candidates], context)
        # "Pottery is a huge part of my life - it helps me express my emotions": the unit that goes on about
        # a noted one ("it ...") is part of its note, not a note of its own with no referent.
        heads = {i for i, _ in worthy}
        merged = {i + 1 for i in heads if i + 1 in continued and i not in continued}
        # "I love this series. It has adventures, magic...": a noted unit that goes on about one the gate did not
        # pass takes that unit in front, which names what "it" is.
        led = {i for i in heads if i in continued and i - 1 not in heads and statement(read[i - 1][0])}
        out: list[Fact] = []
        for i, decision in worthy:
            if i in merged:
                continue
            s, mentions, recent = read[i]
            fact = None
            if i + 1 in merged:
                joined = _joined(s, read[i + 1][0])
                fact = note(joined, mentions, recent, context, _view_category(decision, joined), decision.top_scope)
            elif i in led:
                head, head_mentions, head_recent = read[i - 1]
                fact = note(_joined(head, s), head_mentions or mentions, head_recent, context,
                            decision.top_category, decision.top_scope)
            if fact is None:
                # A view the gate did not pass on its own is the writer's (see `views.states_a_view`).
                fact = note(s, mentions, recent, context, _view_category(decision, s), decision.top_scope)
            if fact is not None:
                out.append(fact)
            if len(out) >= MAX_NOTES:
                break
        return out

    def _whole_note(self, read, context: ExtractionContext) -> list[Fact]:
        """One note of a message the gate passed whole though none of its units passes alone ("Penrose have changed
        their day off — it's Tuesdays they're shut now": each half says half of it), as the gate judged it whole."""
        joined = read[0][0]
        for s, _, _ in read[1:]:
            joined = _joined(joined, s)
        [decision] = self.judge([context.message or ""])
        if not decision.passes or self.special(context.message or "", decision) >= SPECIAL_THRESHOLD or \
                decision.insult >= SPECIAL_THRESHOLD:
            return []
        mentions = [m for _, named, _ in read for m in named]
        fact = note(joined, mentions, read[0][2], context, decision.top_category, decision.top_scope)
        return [fact] if fact is not None else []

    def _continuations(self, read, bare: set[int]) -> set[int]:
        """Indexes in `read` of units that go on about the unit just before them in the message: they open
        on a pronoun for it ("it", "they", "this", "eso"), state something, and fit in one value with it."""
        at = getattr(self, "_at", [])
        out = set()
        for i in range(1, len(read)):
            s = read[i][0]
            if i in bare and i - 1 in bare and i < len(at) and at[i] == at[i - 1] + 1 and \
                    _CONTINUES.match(s.low) and not opens_on_dummy_it(s.text) and statement(s) and not asks(s.text) and \
                    len(read[i - 1][0].text) + len(s.text) + 2 <= VALUE_MAX_CHARS:
                out.add(i)
        return out

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
            found = list(rule_yearly_on(s, context.today)) or list(rule_event(s, context.today))
        # (the business's own values, "nos lleva todo Asesoría Elcano", stay names a contact's fact may be on)
        values = {f.value for f in found if f.target not in ("org", "self")}
        for f in found:
            if order and not f.imperative:
                continue
            closing = (closer(s, mentions) or ("",))[0] if f.target == "event" else ""
            if closing in ("mention", "name"):
                # Another business's closing days ("Muebles Soler cierra del 10 al 25 de agosto", "printwise is
                # shut until the 10th"): a note on that business with its days, as the generic note reads it, not
                # the writer's own event.
                fact = note(s, mentions, recent, context, "event", context.gate_scope)
                if fact is not None:
                    yield fact
                continue
            # The business's own closing days ("cerramos del 1 al 15 de agosto", "the shop will be closed from
            # the 24th") are the business's event, shared; the writer's own ("cierro por vacaciones") theirs.
            subject = Subject("org", "", "company") if closing == "org" else \
                self._subject(s, f, mentions, recent, values)
            if subject is None or (subject.key.startswith(("contact:", "name:")) and not_as_it_is(s.low)):
                continue  # "back in 2019 X used to deliver on fridays": not what X does now
            stored = tuple(context.known_attributes.get(subject.key, ()))
            attribute = reuse_attribute(f.attribute, stored)
            if f.target == "event":
                sentence = event_sentence(f.event_date, event_what(f.value, subject.key), is_english(s.text))
            else:
                sentence = sentence_for(f.attribute, subject, f.value, is_english(s.text))
            yield Fact(subject=subject.key, attribute=attribute, value=f.value, sentence=sentence,
                       category=self._category(f, subject), event_date=f.event_date, event_until=f.event_until,
                       confidence=round(min(f.confidence, subject.confidence), 2), adds=bool(_ALSO.search(s.low)))

    @staticmethod
    def _subject(s: Sentence, f: Found, mentions: list[Mention], recent: list[Mention],
                 values: set[str]) -> Subject | None:
        if f.target in ("self", "event"):
            return Subject("self", "", "person")
        if f.target == "org":
            return Subject("org", "", "company")
        if f.target == "self_or_contact" and not mentions:
            return Subject("self", "", "person")
        subject = resolve_contact(s, f, mentions, recent if f.target in ("contact", "contact_or_org") else [],
                                  values)
        if subject is None and f.target == "contact_or_org":
            return Subject("org", "", "company")  # no customer or supplier in sight: the business's own
        return subject

    @staticmethod
    def _category(f: Found, subject: Subject) -> str:
        if f.target == "event":
            return "event"
        if subject.key == "self":
            member = f.attribute.split("_", 1)[0] in _WHO_ONE_IS or f.attribute.startswith("hermanos_")
            return "person" if f.attribute in _WHO_ONE_IS or member else "preference"
        return subject.category


# What the person's own facts of these attributes say is who they are (kin, name, work, home, the advisers they
# use) or what they have to see to (their car's inspection), not a taste: the profile does not let them fade as it
# does preferences.
_WHO_ONE_IS = frozenset({"nombre", "hijo", "hija", "hijos", "pareja", "madre", "padre", "hermano", "hermana",
                         "trabajo", "trabajo_anterior", "empleador", "residencia", "cumpleanos", "aniversario",
                         "contable", "gestoria", "abogado", "aseguradora", "vencimiento"})


def _news_of(who: str) -> dict:
    """The gate's category and scope for news of the person ("person", personal), or of the business or a customer
    ("company", "customer": shared)."""
    scope = GateScope.PERSONAL if who == GateCategory.PERSON else GateScope.SHARED
    return {"category": {c: float(c == who) for c in GATE_CATEGORIES},
            "scope": {s: float(s == scope) for s in GATE_SCOPES}}


def _recent(context: ExtractionContext, pool: Pool) -> tuple[list[Mention], Pool]:
    """The subject the talk was on before the message: named in the assistant's previous turn (a business it
    brings in by name too: "¿Qué tal va el cobro con Hierros Olano?" then "nos deben unos 2.400 euros"), else the
    conversation's; and the pool with the names that turn introduced."""
    question = Sentence.of(context.previous_assistant or "")
    asked = find_mentions(question, pool)
    if not asked and (introduced := introduced_subjects(question, pool, asked=True)):
        pool = pool + introduced
        asked = find_mentions(question, pool)
    if asked:
        return asked, pool
    carried = carried_over(context.recent_subjects, pool)
    if not carried and context.previous_said and reads_as_reply(context.message):
        # A reply about what the writer named just before, that nothing was learnt of yet.
        said = Sentence.of(context.previous_said)
        if not find_mentions(said, pool) and (introduced := introduced_subjects(said, pool)):
            pool = pool + introduced
        carried = [replace(m, start=0, end=0, confidence=0.7) for m in find_mentions(said, pool)[:1]]
    return carried, pool


def _mentioned(s: Sentence, pool: Pool) -> tuple[list[Mention], Pool]:
    """The subjects the sentence names, and the pool with the names it introduces when it names no known one."""
    mentions = find_mentions(s, pool)
    if not mentions:
        introduced = introduced_subjects(s, pool)
        if introduced:
            pool = pool + introduced
            mentions = find_mentions(s, pool)
    return mentions, pool


def _view_category(decision: GateDecision, s: Sentence) -> str:
    """The gate's category for a unit, but a view it did not pass, or one it passed with no category, is the
    writer's (`views.VIEW_CATEGORY`): "It's so cool how taking care of ourselves helps us" is no business's;
    unless what it speaks of is the business's trade ("Refunds are only given as store credit")."""
    if opens_on_dummy_it(s.text) or ((not decision.passes or decision.top_category == "nothing") and
                                     states_a_view(s.text)):
        if TRADE_SUBJECT.match(s.low):
            return "company"
        return VIEW_CATEGORY  # "It's pretty cool to be working with such big brands" names no business
    return decision.top_category


# What a business's name stands for in place of the "they"/"their" a unit opens with.
_THEY_AS = {"they've": "{} have", "they're": "{} are", "they'll": "{} will", "they": "{}", "their": "{}'s"}


def _with_referent(s: Sentence, recent: list[Mention]) -> str:
    """A unit's text to judge, "they" in front put as the one business the talk is on ("Mills Timber have put their
    prices up. They've also stopped delivering on Saturdays"): the gate scores what is said of a business named, and
    a pronoun names none."""
    m = THEY_FIRST.match(s.text)
    business = business_in_talk(recent)
    if m is None or business is None:
        return s.text
    return _THEY_AS[m.group().lower()].format(business.contact.name) + s.text[m.end():]


def _joined(first: Sentence, then: Sentence) -> Sentence:
    """Two adjacent units as one sentence for one note."""
    return Sentence.of(f"{first.text.rstrip(' .!;,')}. {then.text}")


# A unit that opens on a pronoun for what the unit before it was about.
_CONTINUES = re.compile(r"(?:it|it's|its|they|they're|they've|this|that|these|those|she|he|she's|he's|"
                        r"eso|esto|es|son|fue|era|lo|la|los|las|me|nos|tiene|tienen|tenia|trata|va|iba|come|comen|"
                        r"incluye)\b(?!\s*\?)")


KIN_MORE_WORDS = 2


def _tells_more(s: Sentence, found: list[Fact], mentions: list[Mention]) -> bool:
    """The unit tells more than the rules read from it: of the writer's life ("I took my turtles to the beach
    in Tampa yesterday": a pet, and a day out), or of a customer or supplier, beyond its name and the
    values read ("el gimnasio Vértice me alquila 20 bicis de spinning y me paga a 45 días": a term, and a
    rental), by a word more than the writer's."""
    if all(f.subject == "self" for f in found):
        # Of a relative or a pet only their name was read: two words more about them are news of them ("My son
        # Oliver is studying law at Edinburgh").
        told = [f.value for f in found] + [YEARLY_WORDS for f in found if yearly(f.attribute)][:1]
        if all(f.attribute.split("_")[0] in KIN_FAMILIES for f in found):
            return says_more(s, [*told, KIN_WORDS], KIN_MORE_WORDS)
        return says_more(s, told)
    names = [s.text[m.start:m.end] for m in mentions]
    if all(f.attribute.startswith(SUPPLIER_OF) for f in found):
        # Who the business buys a thing from: a word more is news of the supplier ("... nos trae la madera los martes").
        things = [f.attribute.removeprefix(SUPPLIER_OF) for f in found]
        return says_more(s, [f.value for f in found] + things + names + [SUPPLY_WORDS], 1)
    return says_more(s, [f.value for f in found] + names, CONTACT_MORE_WORDS)


def note_worthy(decision: GateDecision, text: str, passed: bool = False) -> bool:
    """A unit is kept as a note when the gate passes it, or when it is a first-person statement of the
    writer's own life or a description of what the talk is about the gate is less sure of (see `told_plainly`), the
    writer's statement read `loose` when the gate `passed` the message it is in."""
    return decision.passes or (decision.remember >= WRITER_NOTE_REMEMBER and told_plainly(text, loose=passed)) or \
        states_a_view(text)


def told_plainly(text: str, loose: bool = False) -> bool:
    """A first-person statement of the writer's life (`fallback.writer_statement`, `loose` as there), a description
    of what the talk is about (`fallback.describes_the_topic`) or a view of the writer's (`views.states_a_view`,
    kept whatever the gate gave it: its shape is the evidence, and the gate learnt from the day's messages)."""
    return writer_statement(text, loose=loose) or describes_the_topic(text) or states_a_view(text)


# What comes before the name a value replaces: "..., not Sam Baker Trading", "en vez de Transportes Gil".
_INSTEAD_OF = re.compile(r"\b(?:not|no|instead of|rather than|en vez de|en lugar de)\s+$")
# A value said beside the one known, not instead of it: "kingsley timber now also delivers on thursdays".
_ALSO = re.compile(r"\b(?:also|too|as well|tambien|ademas)\b")
# A message that takes back a value it just gave: "no perdona, es a 45", "sorry, my mistake, it's 30 days",
# "actually it's 60, I got it wrong".
_AMEND_DAYS = re.compile(r"\b(?:a|en|at|es a|son|it's|its|it is)\s+(\d{1,3})(?![.,]\d)(?:\s*(?:dias|days))?\b|"
                         r"\b(\d{1,3})\s*(?:dias|days)\b")


def _taken_back(s: Sentence, facts: dict[tuple[str, str], Fact]) -> list[Fact]:
    """A unit that takes back the value of the fact read just before it in the message, whatever its subject was
    named as ("Acme pays at 30 days, sorry, my mistake, it's 60 days"): that fact with the new value, as a
    correction."""
    if not facts:
        return []
    last = list(facts.values())[-1]
    said = amended_statement(s.text, "X", (last.attribute,))
    new = [f for rule in RULES for f in rule(Sentence.of(said))] if said else []
    value = next((f.value for f in new if f.attribute == last.attribute and f.value != last.value), None)
    if value is None:
        return []
    return [replace(last, value=value, sentence=last.sentence.replace(last.value, value), corrects=True)]


def _subject_key(mention: Mention) -> str:
    c = mention.contact
    return f"name:{c.id}" if c.kind == "named" else f"contact:{c.id}"


def amended_statement(message: str, subject: str | None, known: tuple[str, ...] = ()) -> str | None:
    """The statement a short correction makes about `subject` (the talk's last one): a new email, phone number
    or payment term ("a 90" or "90 días"; a bare number only where the subject has a payment term known).
    None when the message is no such correction."""
    low = fold(message)
    if subject is None or not takes_back(low):
        return None
    email = EMAIL.search(message)
    if email:
        return f"El email de {subject} es {email.group()}"
    phone = PHONE.search(message)
    if phone and 9 <= len(re.sub(r"\D", "", phone.group())) <= 13:
        return f"El teléfono de {subject} es {phone.group().strip()}"
    days = _AMEND_DAYS.search(low)
    if days:
        said = bool(re.search(r"\d\s*(?:dias|days)\b|\b(?:a|en|es a)\s+\d", low))
        n = int(days.group(1) or days.group(2))
        if 1 <= n <= 365 and (said or reuse_attribute("plazo_pago", known) in known):
            return f"{subject} paga a {n} días"
    return None


def extract(context: ExtractionContext) -> tuple[list[Fact], Usage]:
    """Module-level shortcut for LocalExtractor().extract."""
    return LocalExtractor().extract(context)


def known_subjects(context: ExtractionContext) -> Pool:
    """The contacts, then the named subjects that are no contact (as kind "named"), for name lookups."""
    return _known_subjects(tuple(context.contacts), tuple(context.known_names),
                           tuple(s for s in context.recent_subjects if s.startswith("name:")))


@lru_cache(maxsize=64)
def _known_subjects(contacts: tuple[KnownContact, ...], known_names: tuple[str, ...],
                    recent_names: tuple[str, ...]) -> Pool:
    """Cached: a writer's messages in a batch share their contacts and names, so the pool and its index
    (names.Pool) are built once, not for every message."""
    contact_keys = {normalise_name(n) for c in contacts for n in (c.name, *c.aliases)}
    named, seen = [], set()
    for label in known_names:
        key = normalise_name(label)
        if key and key not in contact_keys and key not in seen:
            seen.add(key)
            named.append(KnownContact(id=key, name=label, kind="named"))
    for subject in recent_names:
        key = normalise_name(subject[len("name:"):])
        if key and key not in contact_keys and key not in seen:
            seen.add(key)
            named.append(KnownContact(id=key, name=subject[len("name:"):], kind="named"))
    return Pool((*contacts, *named))


def carried_over(recent_subjects: tuple[str, ...], pool: tuple[KnownContact, ...]) -> list[Mention]:
    """The subject the conversation was last about, as a mention at no place in the sentence."""
    for subject in recent_subjects[:1]:
        kind, _, ident = subject.partition(":")
        key = normalise_name(ident) if kind == "name" else None
        for c in pool:
            if (kind == "contact" and c.kind != "named" and c.id == ident) or \
                    (kind == "name" and c.kind == "named" and c.id == key):
                return [Mention(c, 0, 0, 0.7)]
    return []


_PET_NAMED = re.compile(r"^(?:and\s+|y\s+)?(?:her|his|its|their|su)\s+(?:name(?:'s|\s+is)|nombre es)\s+|^(?:y\s+)?se llama\s+|"
                        r"^(?:she|he|it)(?:'s|\s+is)\s+called\s+")


def _name_the_pet(s: Sentence, facts: dict[tuple[str, str], Fact]) -> Fact | None:
    """"I got a puppy! Her name's Coco": the sentence names the pet the previous one brought in."""
    m = _PET_NAMED.match(s.low)
    unnamed = [f for (subject, attribute), f in facts.items() if subject == "self" and
               attribute.startswith("mascota_") and " " not in f.value]
    if not m or not unnamed:
        return None
    name = name_at(s, m.end(), strong=False)
    if not name:
        return None
    pet = unnamed[-1]
    del facts[(pet.subject, pet.attribute)]
    value = f"{pet.value} {name}"
    return replace(pet, attribute=f"mascota_{fold(name).replace(' ', '_')}", value=value,
                   sentence=pet.sentence.replace(pet.value, value))
