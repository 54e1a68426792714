"""A short reply read as the statement its question asks for.

"a 60" to "¿A cuántos días paga Talleres García?" says "Talleres García paga a 60 días"; "at 45 days" to "When
does Harbor Foods pay?" says "Harbor Foods pays at 45 days". The rules that read typed facts (a payment term, a
relative's name, where someone lives) then read the reply as they read the statement, so it updates the fact it
answers for instead of sitting beside it as a note. Only the plain shapes of a question are read: an
interrogative, the verb and its subject (Spanish); an interrogative, "do/does", the subject and the verb (English).
"""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.text import clean_value, fold, split_sentences

# Read on the folded question: "¿A cuántos días paga Talleres García?", "¿Qué día os reparte Transportes Beltrán?",
# "¿Cómo se llama tu hija?".
_ES_CLITIC = r"(?:(?:nos|os|te|le|les|me|se)\s+)?"
_ES = re.compile(
    rf"^(?:(?:a|en|de|con|desde|hasta|para)\s+)?(?:cuantos|cuantas)\s+(?P<unit>\w+)\s+(?P<verb>{_ES_CLITIC}\w+)"
    rf"\s+(?P<subj>[^?]+?)\s*\?$"
    rf"|^(?:(?:a|en|de|con|desde|hasta|para)\s+)?(?:que\s+\w+|cada cuanto|cuanto|cuando|donde|como|quien)\s+"
    rf"(?P<verb2>{_ES_CLITIC}\w+)\s+(?P<subj2>[^?]+?)\s*\?$")
# Read on the question as written: "When does Harbor Foods pay?", "Where does your sister live?", "Where do you
# live?"; its subject a pronoun, a possessive and its noun, or a capitalised name.
_EN = re.compile(
    r"^(?i:how many (?P<unit>days|weeks)|how often|how much|what day|what time|when|where|who)\s+(?P<aux>(?i:does|do))"
    r"\s+(?P<subj>(?i:you|they|we|(?:your|my|the|his|her|their|our)\s+\w+)|[A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*)*)"
    r"\s+(?P<verb>[a-z]+)(?P<rest>[^?]*)\?$")
_ES_PERSON = {"te": "me", "os": "nos", "tu": "mi", "tus": "mis", "vuestro": "nuestro", "vuestra": "nuestra",
              "vuestros": "nuestros", "vuestras": "nuestras"}
_EN_PERSON = {"you": "I", "your": "my", "yours": "mine"}
_BARE_NUMBER = re.compile(r"^(?:a\s+|at\s+)?(?:unos\s+|about\s+)?\d{1,3}$")


def question_of(turn: str) -> str:
    """The question a turn ends on: its last sentence that asks one, from its "¿" when it has one; else ""."""
    asked = next((part for part in reversed(list(split_sentences(turn))) if part.endswith("?")), "")
    return clean_value(asked[asked.rfind("¿"):] if "¿" in asked else asked)


def _person(text: str, table: dict[str, str]) -> str:
    """Said back by the person who was asked: "tu hija" -> "mi hija", "your sister" -> "my sister"."""
    return re.sub(r"\b(\w+)\b", lambda m: table.get(m.group(1).lower(), m.group(1)), text)


def completed_answer(turn: str, answer: str) -> str | None:
    """The statement a short reply makes to the question the turn before it ends on, or None when that question is
    not one of the shapes read here."""
    question = question_of(turn).lstrip("¿")
    reply = clean_value(answer).rstrip("!.")
    if not reply or "?" in reply:
        return None
    bare = bool(_BARE_NUMBER.match(fold(reply)))
    m = _ES.match(fold(question))
    if m:
        counted = m.group("verb") is not None
        verb, subj = ("verb", "subj") if counted else ("verb2", "subj2")
        if m.group(verb).split()[-1] in fold(reply).split():
            return None  # "mi perro se llama Bailey": the reply says it whole
        subject = _person(question[m.start(subj):m.end(subj)], _ES_PERSON)
        unit = question[m.start("unit"):m.end("unit")] if counted and bare else ""
        said = _person(question[m.start(verb):m.end(verb)], _ES_PERSON)  # as written, accents kept
        return " ".join(p for p in (subject, said, reply, unit) if p)
    m = _EN.match(question)
    if m:
        verb = m.group("verb")
        if re.search(rf"\b{verb}", fold(reply)):
            return None  # "she lives in Leeds": the reply says it whole
        if fold(m.group("aux")) == "does":
            verb += "es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s"
        unit = m.group("unit") if m.group("unit") and bare else ""
        return " ".join(p for p in (_person(m.group("subj"), _EN_PERSON), verb + m.group("rest"), reply, unit) if p)
    return None
