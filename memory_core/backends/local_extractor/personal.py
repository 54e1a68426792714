"""Rules for facts about the person: name, tone, language, family, amounts shown, dated events."""
from __future__ import annotations

import datetime as dt
import re
from typing import Iterator

from memory_core.backends.local_extractor.dates import find_date
from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import name_at
from memory_core.backends.local_extractor.text import Sentence, clean_value, fold

_NAME_CUES = [
    (re.compile(r"\b(?:me llamo|mi nombre es|my name is|my name's|mi nombre completo es)\s+"), True),
    (re.compile(r"\b(?:llamame|llameme|puedes llamarme|me puedes llamar|prefiero que me llames|llamadme|"
                r"call me|you can call me|please call me)\s+"), True),
    (re.compile(r"(?:^|[,.]\s*)(?:hola,?\s+)?(?:soy)\s+"), False),
]


def _rule_name(s: Sentence) -> Iterator[Found]:
    for regex, strong in _NAME_CUES:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            name = name_at(s, m.end(), strong)
            if name:
                yield Found("nombre", name, "self", m.start(), imperative=True)
                return


_TONE = re.compile(r"\b(?:tratame|trateme|tratadme|hablame|hableme|llamame|dirigete a mi|dirijase a mi|"
                   r"puedes tratarme|prefiero que me trates|prefiero que me hables|me puedes tratar|trates|"
                   r"hables)\s+(?:siempre\s+)?de\s+(?P<v>tu|usted)\b")
_TUTEO = re.compile(r"\btute(?:ame|arme|arnos|a|es)\b")
_TONE_EN = re.compile(r"\b(?:be|talk to me|speak to me|write to me|address me|talk|speak|write)\s+(?:more\s+)?"
                      r"(?P<v>informal|informally|casual|casually|formal|formally)\b")


def _rule_tone(s: Sentence) -> Iterator[Found]:
    m = _TONE.search(s.low)
    if m:
        value = "tú" if m.group("v") == "tu" else "usted"
        if s.negated(m.start()):  # "no me hables de usted" asks for the other one
            value = "usted" if value == "tú" else "tú"
        yield Found("tono", value, "self", m.start(), imperative=True)
        return
    m = _TUTEO.search(s.low)
    if m:
        yield Found("tono", "usted" if s.negated(m.start()) else "tú", "self", m.start(), imperative=True)
        return
    m = _TONE_EN.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("tono", "usted" if m.group("v").startswith("formal") else "tú", "self", m.start(), imperative=True)


_LANGUAGES = {"ingles": "inglés", "espanol": "español", "castellano": "español", "catalan": "catalán",
              "gallego": "gallego", "euskera": "euskera", "frances": "francés", "aleman": "alemán",
              "portugues": "portugués", "italiano": "italiano", "english": "inglés", "spanish": "español",
              "french": "francés", "german": "alemán", "portuguese": "portugués",
              "italian": "italiano"}
_LANGUAGE = re.compile(r"\b(?:hablame|escribeme|respondeme|contestame|habla|escribe|responde|prefiero hablar|"
                       r"reply|answer|write|talk|speak|respond)(?: to me| me)?\s+(?:siempre\s+|always\s+)?"
                       r"(?:en|in)\s+(?P<v>" + "|".join(_LANGUAGES) + r")\b")


def _rule_language(s: Sentence) -> Iterator[Found]:
    m = _LANGUAGE.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("idioma", _LANGUAGES[m.group("v")], "self", m.start(), imperative=True)


_RELATIVES = {"hijo": "hijo", "hija": "hija", "hijos": "hijos", "hijas": "hijos", "mujer": "pareja",
              "esposa": "pareja", "marido": "pareja", "esposo": "pareja", "pareja": "pareja", "novia": "pareja",
              "novio": "pareja", "madre": "madre", "padre": "padre", "hermano": "hermano", "hermana": "hermana",
              "son": "hijo", "daughter": "hija", "sons": "hijos", "daughters": "hijos", "children": "hijos",
              "kids": "hijos", "wife": "pareja", "husband": "pareja", "partner": "pareja", "girlfriend": "pareja",
              "boyfriend": "pareja", "mother": "madre", "mum": "madre", "mom": "madre", "father": "padre",
              "dad": "padre", "brother": "hermano", "sister": "hermana", "socio": "socio", "socia": "socio",
              "business partner": "socio"}
_REL = "(?P<rel>" + "|".join(sorted(_RELATIVES, key=len, reverse=True)) + ")"
_FAMILY = [
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|pequenos|little|older|younger|eldest|youngest))?(?:'s names? (?:is|are)|\s+se llaman?|\s+is called|\s+is named|\s+are called)\s+"), True),
    (re.compile(rf"\btengo\s+(?:un|una|dos|tres)\s+{_REL}\s*(?:que se llaman?|llamad[oa]s?|,)\s*"), True),
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|little|older|younger))?(?:\s+(?:es|son|is|are)\s+|\s*,\s*|\s+)"), False),
]


def _rule_family(s: Sentence) -> Iterator[Found]:
    for regex, strong in _FAMILY:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        attribute = _RELATIVES[m.group("rel")]
        if attribute == "hijos":
            names = re.match(r"\s*([A-ZÁÉÍÓÚÑ]\w+(?:\s*,\s*[A-ZÁÉÍÓÚÑ]\w+)*\s+(?:y|and|e)\s+[A-ZÁÉÍÓÚÑ]\w+)", s.text[m.end():])
            if names:
                yield Found(attribute, names.group(1), "self", m.start())
                return
            continue
        name = name_at(s, m.end(), strong)
        if name:
            # A business partner belongs to the company, not to the person's family.
            yield Found(attribute, name, "org" if attribute == "socio" else "self", m.start())
            return



_EVENT_NOUNS = (r"reunion|reuniones|cita|viaje|vacaciones|feria|congreso|evento|comida|cena|visita|llamada|"
                r"videollamada|formacion|curso|entrega|boda|cumpleanos|inspeccion|auditoria|juicio|"
                r"meeting|appointment|trip|call|dinner|lunch|visit|conference|fair|holiday|holidays|vacation|"
                r"training|course|delivery|wedding|birthday|audit|trade show")
_EVENT_SHAPES = [
    # "estoy en Madrid" -> "en Madrid"
    (re.compile(r"^(?:yo\s+|nosotros\s+)?(?:estoy|estare|estaremos|estamos|voy a estar|vamos a estar|i'm|i am|"
                r"i'll be|i will be|we're|we are|we'll be|we will be)\s+(?=(?:en|fuera|de viaje|de vacaciones|"
                r"in|at|away|out|on holiday|on vacation|travelling|traveling)\b)"), "after"),
    # "tengo reunión con Acme" -> "reunión con Acme"
    (re.compile(rf"^(?:tengo|tenemos|hay|habra|i have|i've got|we have|we've got|i'm having|we're having)\s+"
                rf"(?:una\s+|un\s+|la\s+|el\s+|a\s+|an\s+|the\s+)?(?=(?:{_EVENT_NOUNS})\b)"), "after"),
    # "reunión con Acme"
    (re.compile(rf"^(?:la\s+|el\s+|una\s+|un\s+|a\s+|an\s+|the\s+|my\s+|our\s+|mi\s+|nuestra\s+)?(?={_EVENT_NOUNS}\b)"), "after"),
    # "me voy a Lisboa", "cerramos por vacaciones": the whole remainder
    (re.compile(r"^(?:me voy|nos vamos|voy|vamos|viajo|viajamos|i'm going|we're going|i'm flying|i fly|i travel|"
                r"we travel)\s+(?:a|de|to|on)\s+(?=[A-Za-zÁÉÍÓÚÑáéíóúñ])"), "whole"),
    (re.compile(r"^(?:cerramos|cierro|cerrado|cerrados|estamos cerrados|we're closed|we are closed|closed)\b"), "whole"),
]
_PAST = re.compile(r"\b(?:ayer|anoche|estuve|estuvimos|tuve|tuvimos|fui|fuimos|fue|was|were|had|went|yesterday|"
                   r"last week|la semana pasada|el mes pasado|last month)\b")
_TIME = re.compile(r"\b(?:a las|sobre las|at|a eso de las)\s+\d{1,2}(?:[:.h]\d{2})?(?:\s*(?:h|am|pm|horas))?\b")


def rule_event(s: Sentence, today: dt.date) -> Iterator[Found]:
    if _PAST.search(s.low):
        return
    found = find_date(s.low, today)
    if not found:
        return
    date, start, end = found
    if date < today:
        return
    rest = s.text[:start] + " " + s.text[end:]
    for m in reversed(list(_TIME.finditer(fold(rest)))):
        rest = rest[: m.start()] + " " + rest[m.end():]
    rest = re.sub(r"\s+", " ", rest).strip(" ,.;:")
    rest = re.sub(r"^(?:y|que|and|pues|also|también|tambien)\s+", "", rest, flags=re.IGNORECASE)
    low = fold(rest)
    for regex, mode in _EVENT_SHAPES:
        m = regex.match(low)
        if not m:
            continue
        value = clean_value(rest if mode == "whole" else rest[m.end():])
        if mode == "whole" and re.match(r"^(?:me voy|nos vamos|voy|vamos|i'm going|we're going)\s+(?:a|to)\s+\w+(?:ar|er|ir)\b", low):
            continue  # "voy a facturar": an intention, not a trip
        if 3 <= len(value) <= 120:
            yield Found("evento", value, "event", 0, event_date=date)
        return


PERSONAL_RULES = (_rule_name, _rule_tone, _rule_language, _rule_family)
