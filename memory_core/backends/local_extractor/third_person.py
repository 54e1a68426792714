"""How a first-person clause reads in the third person, word for word: "I went to a pottery class" -> "The
person went to a pottery class", "cerramos en agosto" -> "La empresa cierra en agosto"."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.speaker import NO_SUBJECT
from memory_core.backends.local_extractor.text import fold, is_english

# First person to third: verbs of the person (singular) and of the business (plural), and pronouns.
_ES_SINGULAR = {"soy": "es", "estoy": "está", "tengo": "tiene", "vivo": "vive", "prefiero": "prefiere",
                "quiero": "quiere", "trabajo": "trabaja", "llevo": "lleva", "hago": "hace", "voy": "va",
                "puedo": "puede", "suelo": "suele", "uso": "usa", "necesito": "necesita", "odio": "odia",
                "facturo": "factura", "cobro": "cobra", "pago": "paga", "juego": "juega", "firmo": "firma",
                "miro": "mira", "leo": "lee", "conduzco": "conduce", "he": "ha", "salgo": "sale",
                "empiezo": "empieza", "entro": "entra", "cierro": "cierra", "abro": "abre", "me llamo": "se llama",
                # told in the past: "fui al concierto" -> "fue al concierto"
                "fui": "fue", "estuve": "estuvo", "tuve": "tuvo", "hice": "hizo", "asisti": "asistió",
                "visite": "visitó", "me he": "se ha", "me voy": "se va", "corri": "corrió", "conoci": "conoció", "empece": "empezó", "compre": "compró",
                "termine": "terminó", "acabe": "acabó", "vi": "vio", "gane": "ganó", "aprendi": "aprendió"}
_ES_PLURAL = {"somos": "es", "estamos": "está", "tenemos": "tiene", "hemos": "ha", "vamos": "va",
              "podemos": "puede", "solemos": "suele", "queremos": "quiere", "preferimos": "prefiere",
              "cerramos": "cierra", "hacemos": "hace", "damos": "da", "vendemos": "vende", "ofrecemos": "ofrece",
              "enviamos": "envía", "pedimos": "pide", "servimos": "sirve", "seguimos": "sigue"}
_ES_PRONOUNS = {"mi": "su", "mis": "sus", "me": "le", "conmigo": "con la persona", "nuestro": "su",
                "nuestra": "su", "nuestros": "sus", "nuestras": "sus", "nos": "le", "yo": "", "nosotros": "",
                "nosotras": ""}
_EN_START = {"i'm": "is", "i am": "is", "i've": "has", "i have": "has", "we're": "is", "we are": "is",
             "we've": "has", "we have": "has", "i'd rather": "would rather", "we'd rather": "would rather"}
_EN_PAST = frozenset("""had went got made took was were did saw met ran bought found lost gave came began brought
felt left kept thought told sold spent won wrote read built taught caught heard drew wore grew threw flew knew swam
sang rang drove rode spoke broke chose froze woke fell held stood understood sat hung fed led paid said sent slept
ate forgot hid shook became""".split())
_EN_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "our": "its", "us": "it", "i": "they",
                "we": "they"}


def third_person(clause: str, subject: str) -> str:
    """A plain third-person sentence from a first-person clause (best effort, word for word)."""
    low = fold(clause)
    english = is_english(clause)
    if subject not in ("self", "org"):
        return clause
    who = ("The person" if subject == "self" else "The business") if english else \
        ("La persona" if subject == "self" else "La empresa")
    words = clause.split()
    if english:
        for start, verb in _EN_START.items():
            if low.startswith(start + " "):
                rest = clause[len(start) + 1:]
                return f"{who} {verb} {_swap(rest, _EN_PRONOUNS)}"
        m = re.match(r"(?:i|we)\s+(?:(even|just|also|really|finally|still|never|always|already|recently|"
                     r"actually|totally)\s+)?(\w+)\s+(.*)$", low)
        if m and m.group(2) not in ("don't", "do", "can't", "won't"):
            verb = m.group(2)
            if not (verb.endswith("ed") or verb in _EN_PAST):
                verb = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")
            adverb = f"{m.group(1)} " if m.group(1) else ""
            return f"{who} {adverb}{verb} {_swap(clause[m.start(3):], _EN_PRONOUNS)}"
        if subject == "self" and NO_SUBJECT.match(low) and not low.startswith(("been ", "gonna", "gotta", "wanna")):
            return f"{who} {clause[:1].lower()}{_swap(clause[1:], _EN_PRONOUNS)}"  # "Lost my job" -> "The person lost their job"
        return f"{who}: {_swap(clause, _EN_PRONOUNS)}"
    table = _ES_SINGULAR if subject == "self" else {**_ES_SINGULAR, **_ES_PLURAL}
    skip = 1 if words and fold(words[0]) in ("yo", "nosotros", "nosotras") else 0
    rest_words = words[skip:]
    negation = ""
    if rest_words and fold(rest_words[0]) in ("no", "ya", "nunca", "tambien", "siempre"):
        negation, rest_words = rest_words[0].lower() + " ", rest_words[1:]
    if rest_words:
        first = fold(rest_words[0])
        two = fold(" ".join(rest_words[:2]))
        if two in table:
            return f"{who} {negation}{table[two]} {_swap(' '.join(rest_words[2:]), _ES_PRONOUNS)}".rstrip()
        verb = table.get(first)
        if verb is None and subject == "org" and re.fullmatch(r"\w{2,}(?:amos|emos|imos)", first):
            verb = re.sub(r"(?:amos)$", "a", re.sub(r"(?:emos|imos)$", "e", rest_words[0].lower()))
        if verb is not None:
            return f"{who} {negation}{verb} {_swap(' '.join(rest_words[1:]), _ES_PRONOUNS)}".rstrip()
    return f"{who}: {_swap(clause, _ES_PRONOUNS)}"


def event_what(value: str, subject: str) -> str:
    """What happened at an event, in the third person when it is told in the first ("I went to a pottery
    class" -> "The person went to a pottery class"), else as said ("reunión con Acme")."""
    value = value[:1].upper() + value[1:]
    said = third_person(value, subject)
    return value if re.match(r"(?:The person|The business|La persona|La empresa):", said) else said


# English first-person contractions and "I am/was" read in the third person ("I'm gonna" -> "they're gonna").
_EN_CONTRACTIONS = ((re.compile(r"\bI'm\b|\bI am\b", re.I), "they're"), (re.compile(r"\bI was\b", re.I), "they were"),
                    (re.compile(r"\bI'll\b", re.I), "they'll"), (re.compile(r"\bI'd\b", re.I), "they'd"))


def _swap(text: str, table: dict[str, str]) -> str:
    if table is _EN_PRONOUNS:
        for regex, said in _EN_CONTRACTIONS:
            text = regex.sub(said, text)
    out = re.sub(r"\b(\w+)\b", lambda m: table.get(m.group(1).lower(), m.group(1)), text)
    return re.sub(r"\s+", " ", out).strip()
