"""A short reply read as the statement its question asks for.

"a 60" to "¿A cuántos días paga Talleres García?" says "Talleres García paga a 60 días"; "at 45 days" to "When
does Harbor Foods pay?" says "Harbor Foods pays at 45 days"; "sí, cada dos jueves" to "¿Sigues yendo al coro?" says
"sigo yendo al coro, cada dos jueves". The rules that read typed facts (a payment term, a relative's name, where
someone lives) then read the reply as they read the statement, so it updates the fact it answers for instead of
sitting beside it as a note, and the local gate judges the statement when the reply alone says too little. Only
the plain shapes of a question are read: an interrogative, the verb and what follows it (Spanish); an
interrogative, "do/does" or "is/are", the subject and the verb (English); a yes/no question on the person asked
("¿Sigues yendo al coro?", "Do you still ride horses?", "Are you still learning Italian?") answered with a yes or
a no. A question on what the asker should do ("¿Le envío la factura?", "Shall I send it?") is no question on
the person and makes no statement.
"""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.text import clean_value, fold, split_sentences

# Read on the folded question: "¿A cuántos días paga Talleres García?", "¿Qué día os reparte Transportes Beltrán?",
# "¿Cómo se llama tu hija?", "¿A qué hora abrís?".
_ES_CLITIC = r"(?:(?:nos|os|te|le|les|me|se)\s+)?"
_ES = re.compile(
    rf"^(?:(?:a|en|de|con|desde|hasta|para)\s+)?(?:cuantos|cuantas)\s+(?P<unit>\w+)\s+(?P<verb>{_ES_CLITIC}\w+)"
    rf"(?:\s+(?P<subj>[^?]+?))?\s*\?$"
    rf"|^(?:(?:a|en|de|con|desde|hasta|para)\s+)?(?:que\s+(?!tal\b)\w+|cada cuanto|cuanto|cuando|donde|como|quien)\s+"
    rf"(?P<verb2>{_ES_CLITIC}\w+)(?:\s+(?P<subj2>[^?]+?))?\s*\?$")
# A yes/no question on the person asked, read on the folded question: "¿Sigues yendo al coro?", "¿Tenéis
# furgoneta?", "¿Todavía vives en Gijón?". Not one on what they want or need now, nor one they can or know.
_ES_YES_NO = re.compile(rf"^(?:(?:todavia|aun|ya)\s+)?(?P<verb>{_ES_CLITIC}\w+)\s+(?P<rest>[^?]+?)\s*\?$")
_ES_NOT_ON_THE_PERSON = re.compile(r"^(?:quier|necesit|pued|pod|sab|confirm|prefier|importa|parece)")
# ...nor one on the conversation ("¿Tienes alguna duda?", "¿Tienes algo más?").
_ES_ON_THE_TALK = re.compile(r"^(?:alguna (?:otra )?(?:duda|pregunta)|algo mas|mas preguntas|dudas|preguntas)\b")
# Read on the question as written: "When does Harbor Foods pay?", "Where does your sister live?", "How do you take
# your coffee?"; its subject a pronoun, a possessive and its noun, or a capitalised name.
_EN_SUBJECT = r"(?i:you|they|we|(?:your|my|the|his|her|their|our)\s+\w+)|[A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*)*"
_EN = re.compile(
    r"^(?i:how many (?P<unit>days|weeks)|how often|how much|how long|how|what (?:kind|sort|type) of \w+|what day|"
    r"what time|what|which \w+|when|where|who)\s+(?P<aux>(?i:does|do))"
    rf"\s+(?P<subj>{_EN_SUBJECT})\s+(?P<verb>[a-z]+)(?P<rest>[^?]*)\?$")
# "Where's your office?", "What's your son's name?", "When is the meeting?", "What's your dog called?".
_EN_BE = re.compile(r"^(?i:where|when|what time|what day|who|what|how old)(?P<be>'s|\s+is|\s+are)\s+(?P<subj>[^?]+?)"
                    r"(?P<called>\s+called)?\s*\?$")
# "Do you still ride horses?", "Does your sister still live in Leeds?", "Are you still learning Italian?".
_EN_YES_NO = re.compile(rf"^(?P<aux>(?i:do|does|are|is))\s+(?P<subj>{_EN_SUBJECT})\s+(?P<rest>[^?]+?)\s*\?$")
_EN_NOT_ON_THE_PERSON = re.compile(r"^(?:want|need|mind|know|think|agree|remember|sure|ok|okay|ready|free|there|"
                                   r"around|available|happy|done|good|like me|have time|"
                                   r"have (?:any )?(?:other |more )?(?:questions|doubts)|have anything)\b")
_ES_PERSON = {"te": "me", "os": "nos", "tu": "mi", "tus": "mis", "vuestro": "nuestro", "vuestra": "nuestra",
              "vuestros": "nuestros", "vuestras": "nuestras", "ti": "mi", "contigo": "conmigo"}
_EN_PERSON = {"you": "I", "your": "my", "yours": "mine", "yourself": "myself"}
_EN_OBJECT = _EN_PERSON | {"you": "me"}  # after the verb: "How much do they owe you?" -> "they owe me"
# What a business does: "What time do you open?" is asked of the business, "we open at ten".
_EN_BUSINESS_VERBS = {"open", "close", "deliver", "ship", "charge", "invoice", "sell", "stock"}
# Second person to first: the irregular ones; the rest by their ending ("vives" -> "vivo", "abrís" -> "abrimos").
_ES_FIRST = {"eres": "soy", "estas": "estoy", "vas": "voy", "das": "doy", "has": "he", "sabes": "se",
             "tienes": "tengo", "vienes": "vengo", "haces": "hago", "sales": "salgo", "pones": "pongo",
             "dices": "digo", "traes": "traigo", "oyes": "oigo", "sois": "somos", "estais": "estamos",
             "vais": "vamos", "habeis": "hemos", "dais": "damos"}
# "¿Sigues yendo al coro?": "sí" is "voy al coro", "no" is "ya no voy al coro" (the gerund said in the present).
_GERUND_FIRST = {"yendo": "voy", "haciendo": "hago", "jugando": "juego", "dando": "doy", "viendo": "veo",
                 "saliendo": "salgo", "leyendo": "leo", "viniendo": "vengo", "teniendo": "tengo", "volviendo": "vuelvo"}
_BARE_NUMBER = re.compile(r"^(?:a\s+|at\s+)?(?:unos\s+|about\s+)?\d{1,3}$")
_YES = re.compile(r"^(?:si|yes|yeah|yep|yup|claro|of course|sure|por supuesto)\b[\s,.!]*")
_NO = re.compile(r"^(?:no|nope|nah|not anymore|ya no)\b[\s,.!]*")
# A reply that answers nothing: "no sé", "ni idea", "not sure yet".
_UNSURE = re.compile(r"^(?:no (?:se|lo se|estoy segur[oa])|ni idea|not sure|no idea|(?:i )?(?:don't|dont) know|"
                     r"dunno|depende|it depends)\b")


# Questions whose answer is worth keeping however short it is: whether the person or the business still does
# something ("¿Sigues yendo al coro?", "Do you still ride horses?": yes or no, it is news of a lasting habit), and
# when the business opens or closes ("¿A qué hora abrís?", "What time do you close?").
_STILL_ES = re.compile(r"^(?:(?:todavia|aun|ya)\s+)?(?:sigues|seguis)\s+\w+ndo\b|^(?:todavia|aun)\s+\w+s\b")
_STILL_EN = re.compile(r"^(?:do|does|are|is)\s+(?:you|your\s+\w+)\s+still\s+\w+", re.I)
_HOURS = re.compile(r"^(?:a\s+)?(?:que\s+(?:hora|dia|dias)|cuando)\s+(?:abris|abres|cerrais|cierras)\b|"
                    r"^(?:what time|what days?|when)\s+do\s+you\s+(?:open|close)\b", re.I)


def asks_what_lasts(turn: str) -> str | None:
    """"company" or "person" when the question a turn ends on asks whether the business or the person still does
    something, or when the business opens or closes; else None."""
    question = fold(question_of(turn).lstrip("¿"))
    if _HOURS.match(question):
        return "company"
    spanish = _STILL_ES.match(question)
    if spanish:
        return "company" if re.search(r"\w+is\b", spanish.group(0)) else "person"  # "¿Seguís abriendo...?"
    return "person" if _STILL_EN.match(question) else None


# What may open a question typed without its "¿", before what it asks: "uf, cuánto te deben?", "y dónde vive?".
_OPENER = re.compile(r"^(?:(?:uf+|uy|vaya|jo|jope|ostras|hala|anda|ah|oh|eh|bueno|pues|vale|ok|okay|y|and|so|well|wow|"
                     r"hmm|sure|claro|perfecto|genial|great|of course|right|alright)\b[\s,!.]*)+", re.IGNORECASE)


def question_of(turn: str) -> str:
    """The question a turn ends on: its last sentence that asks one, from its "¿" when it has one, else without the
    words that open it ("uf, ..."); "" when it asks none."""
    asked = next((part for part in reversed(list(split_sentences(turn))) if part.endswith("?")), "")
    return clean_value(asked[asked.rfind("¿"):] if "¿" in asked else _OPENER.sub("", asked))


def _person(text: str, table: dict[str, str]) -> str:
    """Said back by the person who was asked: "tu hija" -> "mi hija", "your sister" -> "my sister"."""
    return re.sub(r"\b(\w+)\b", lambda m: table.get(m.group(1).lower(), m.group(1)), text)


def _second_person(verb: str) -> bool:
    """A Spanish verb (folded) said to "tú" or "vosotros": "vives", "abris", "sigues" (not "es")."""
    return verb.endswith("s") and verb != "es"


def _first_person(verb: str) -> str:
    """The Spanish verb (folded, second person) said by the one asked: "vives" -> "vivo", "sigues" -> "sigo",
    "abris" -> "abrimos", "conoces" -> "conozco"."""
    if verb in _ES_FIRST:
        return _ES_FIRST[verb]
    for ending, said in (("ais", "amos"), ("eis", "emos"), ("is", "imos"), ("gues", "go"), ("ces", "zco"),
                         ("ges", "jo"), ("as", "o"), ("es", "o")):
        if verb.endswith(ending):
            return verb[:-len(ending)] + said
    return verb


def _spanish_verb(written: str) -> tuple[str, bool]:
    """(the verb as the one asked says it, whether it was said to them): "te llamas" -> ("me llamo", True),
    "paga" -> ("paga", False), the verb as written (accents) when it stays."""
    *clitic, verb = written.split()
    if not _second_person(fold(verb)):
        return _person(written, _ES_PERSON), False
    return " ".join([*(_person(c, _ES_PERSON) for c in clitic), _first_person(fold(verb))]), True


def _asker_acts(verb: str) -> bool:
    """The question is on what the asker does ("¿Qué precio le pongo?", "¿Le envío la factura?"): a present in the
    first person, not a preterite ("pagó")."""
    return verb.lower().endswith("o")


def _third(verb: str) -> str:
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")


def _yes_or_no(reply: str) -> tuple[bool | None, str]:
    """(yes, no or neither, the rest of the reply): "sí, cada dos jueves" -> (True, "cada dos jueves")."""
    low = fold(reply)
    for said, pattern in ((True, _YES), (False, _NO)):
        m = pattern.match(low)
        if m:
            return said, reply[m.end():].strip(" ,.!")
    return None, reply


# A reply read with the question before it: up to this many words ("a las diez", "Marisa"), or up to
# YES_NO_REPLY_WORDS when it opens with a yes or a no ("yes, every other Thursday at the community center").
SHORT_ANSWER_WORDS = 6
YES_NO_REPLY_WORDS = 12


# A reply that is a place, a time or a manner, not a clause of its own: "en el polígono de Vallecas, nave 4", "at the
# back of the old market, next to the bakery", "con mucho hielo y una rodaja de limón" (read with its question up to
# YES_NO_REPLY_WORDS).
_PLACE_OR_TIME = re.compile(r"^(?:en (?:el|la|los|las|un|una|calle|avenida|plaza)|in (?:the|a|an)|on|at|near|cerca de|junto a|al lado de|"
                            r"a las|from|desde las|every|cada|next to|behind|detras de|opposite|enfrente de|"
                            r"con|sin|with|without)\b")
_CLAUSE = re.compile(r"\b(?:que|porque|because|but|pero|so|asi que|which|who|donde|where|when|cuando)\b")


def reads_as_reply(message: str) -> bool:
    """Whether a message is short enough to be read as the reply to the question before it."""
    words = len(message.split())
    low = fold(message.strip())
    return words <= SHORT_ANSWER_WORDS or (words <= YES_NO_REPLY_WORDS and bool(
        _YES.match(low) or _NO.match(low) or (_PLACE_OR_TIME.match(low) and not _CLAUSE.search(low))))


def completed_answer(turn: str, answer: str) -> str | None:
    """The statement a short reply makes to the question the turn before it ends on, or None when that question is
    not one of the shapes read here."""
    question = question_of(turn).lstrip("¿")
    reply = clean_value(answer).rstrip("!.")
    if not reply or "?" in reply or _UNSURE.match(fold(reply)):
        return None
    for read in (_contact_detail, _spanish, _english, _english_be, _english_yes_no, _spanish_yes_no):
        said = read(question, reply)
        if said is not False:
            return said
    return None


# A question asking for someone's phone or email ("¿Me das el número de Marisa?", "¿Cuál es el correo de Acme?",
# "What's Tom's mobile?", "What's the number for Roig Tiles?"); what it names ("de Marisa") is kept as written.
_DETAIL = r"(?:numero de telefono|telefono|numero|movil|correo electronico|correo|email|e-mail|phone number|phone|" \
          r"number|mobile|email address)"
_ASKS_DETAIL = re.compile(
    rf"^(?:(?:me\s+)?(?:das|dais|pasas|pasais|dices|decis)|cual es|tienes|teneis|what(?:'s| is)|can i have|"
    rf"could i have|do you have)\s+(?:el|la|su|tu|the|their|his|her)?\s*(?P<what>{_DETAIL})"
    rf"(?P<of>\s+(?:de|del|for|of|at)\s+[^?]+?)?\s*\??$"
    rf"|^what(?:'s| is)\s+(?P<who>[^?]+?)'s\s+(?P<what2>{_DETAIL})\s*\??$")
# What a reply puts before the detail it gives: "sí, es el 655...", "it's 07700...".
_DETAIL_LEAD = re.compile(r"^(?:(?:si|yes|yeah|yep|sure|claro|vale|ok)\b[\s,.!]*)?(?:es\s+(?:el\s+)?|it'?s\s+|"
                          r"it is\s+|apunta\s+|pon\s+)?", re.IGNORECASE)


def _contact_detail(question: str, reply: str) -> str | None | bool:
    low = fold(question)
    m = _ASKS_DETAIL.match(low)
    if not m:
        return False
    value = reply[_DETAIL_LEAD.match(fold(reply)).end():].strip()
    if not value or not re.search(r"\d{3}|@", value):
        return None
    english = low.startswith(("what", "can", "could", "do "))
    if m.group("who"):
        return f"{question[m.start('who'):m.end('who')]}'s {m.group('what2')} is {value}"
    of = question[m.start("of"):m.end("of")].strip() if m.group("of") else ""
    what = "phone" if english and m.group("what") in ("number", "mobile", "phone", "phone number") else m.group("what")
    what = {"numero": "teléfono", "numero de telefono": "teléfono", "telefono": "teléfono", "movil": "teléfono",
            "correo electronico": "correo"}.get(what, what)
    return f"{'The' if english else 'El'} {what} {of} {'is' if english else 'es'} {value}".replace("  ", " ")


def _spanish(question: str, reply: str) -> str | None | bool:
    m = _ES.match(fold(question))
    if not m:
        return False
    counted = m.group("verb") is not None
    verb, subj = ("verb", "subj") if counted else ("verb2", "subj2")
    written = question[m.start(verb):m.end(verb)]
    said, to_them = _spanish_verb(written)
    if _asker_acts(written.split()[-1]):
        return None
    if {fold(written).split()[-1], said.split()[-1]} & set(fold(reply).split()):
        return None  # "mi perro se llama Bailey": the reply says it whole
    subject = _person(question[m.start(subj):m.end(subj)], _ES_PERSON) if m.group(subj) else ""
    unit = question[m.start("unit"):m.end("unit")] if counted and _BARE_NUMBER.match(fold(reply)) else ""
    # Said to them, what follows the verb is no subject: "¿Dónde vives ahora?" -> "vivo ahora en Gijón".
    parts = (said, subject, reply, unit) if to_them else (subject, said, reply, unit)
    return " ".join(p for p in parts if p)


def _spanish_yes_no(question: str, reply: str) -> str | None | bool:
    m = _ES_YES_NO.match(fold(question))
    yes, rest = _yes_or_no(reply)
    if not m or yes is None:
        return False
    written = question[m.start("verb"):m.end("verb")]
    said, to_them = _spanish_verb(written)
    if not to_them or _ES_NOT_ON_THE_PERSON.match(fold(written).split()[-1]) or _ES_ON_THE_TALK.match(m.group("rest")):
        return None  # "¿Te preparo la factura?", "¿Necesitas algo más?": no question on the person
    what = _person(question[m.start("rest"):m.end("rest")], _ES_PERSON)
    gerund, _, tail = what.partition(" ")
    if said == "sigo" and fold(gerund).endswith(("ando", "iendo", "yendo")):
        said, what = _present(fold(gerund)), tail
    statement = f"{'' if yes else 'ya no ' if _STILL_ES.match(fold(question)) else 'no '}{said} {what}"
    return f"{statement}, {rest}" if rest else statement


def _present(gerund: str) -> str:
    """A gerund (folded) said in the present by the one asked: "yendo" -> "voy", "tocando" -> "toco"."""
    return _GERUND_FIRST.get(gerund, gerund[:-4] + "o" if gerund.endswith("ando") else gerund[:-5] + "o")


def _english(question: str, reply: str) -> str | None | bool:
    m = _EN.match(question)
    if not m:
        return False
    verb = m.group("verb")
    if re.search(rf"\b{verb}", fold(reply)) or re.match(r"(?:i|we|i'm|we're|my|our)\b", fold(reply)):
        return None  # "she lives in Leeds", "I teach": the reply says it whole
    if fold(m.group("aux")) == "does":
        verb = _third(verb)
    unit = m.group("unit") if m.group("unit") and _BARE_NUMBER.match(fold(reply)) else ""
    rest = _person(m.group("rest"), _EN_OBJECT)
    subject = "we" if m.group("subj").lower() == "you" and verb in _EN_BUSINESS_VERBS else \
        _person(m.group("subj"), _EN_PERSON)
    return " ".join(p for p in (subject, verb + rest, reply, unit) if p)


def _english_be(question: str, reply: str) -> str | None | bool:
    m = _EN_BE.match(question)
    if not m:
        return False
    subject = _person(m.group("subj"), _EN_PERSON)
    if fold(subject.split()[-1]) in fold(reply).split():
        return None  # "my office is on Baker Street": said whole
    if m.group("called"):
        return f"{subject}'s name is {reply}"  # "What's your dog called?": "my dog's name is Bailey"
    verb = "am" if subject == "I" else "are" if m.group("be").strip() == "are" else "is"
    return f"{subject} {verb} {reply}"


def _english_yes_no(question: str, reply: str) -> str | None | bool:
    m = _EN_YES_NO.match(question)
    yes, extra = _yes_or_no(reply)
    if not m or yes is None:
        return False
    rest = _person(m.group("rest"), _EN_PERSON)
    still = bool(re.match(r"still\s+", rest))
    rest = re.sub(r"^still\s+", "", rest)
    if _EN_NOT_ON_THE_PERSON.match(fold(rest)):
        return None
    subject, aux = _person(m.group("subj"), _EN_PERSON), fold(m.group("aux"))
    if aux in ("are", "is"):
        be = "am" if subject == "I" else aux
        statement = f"{subject} {be} {'still ' if yes and still else '' if yes else 'no longer ' if still else 'not '}{rest}"
    else:
        verb, _, tail = rest.partition(" ")
        if yes or still:
            verb = _third(verb) if aux == "does" else verb
            statement = f"{subject} {'still ' if yes else 'no longer '}{verb} {tail}" if still else \
                f"{subject} {verb} {tail}"
        else:
            statement = f"{subject} {'does' if aux == 'does' else 'do'} not {verb} {tail}"
    statement = re.sub(r"\s+", " ", statement).strip()
    return f"{statement}, {extra}" if extra else statement
